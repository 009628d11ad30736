#pragma once
/// \file
/// Python's TensorDictParams: a torch::nn::Module whose parameters and buffers are the leaves of
/// a TensorDict, so that parameters kept in a TensorDict (from_module, a memmap checkpoint, an
/// ensemble's stacked weights) are trained by a torch::optim optimizer and follow the module
/// through to(device), wherever the module is registered.
///
/// \code
///   TensorDictParams params(TensorDict::from_module(*net));
///   policy->register_module("params", params);          // its parameters are policy's too
///   torch::optim::Adam adam(policy->parameters());
///   ... loss.backward(); adam.step();                    // params->tensordict() sees the step
/// \endcode

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include "tensordict/tensordict.h"

namespace tensordict::nn {

/// The module behind TensorDictParams (TORCH_MODULE's holder).
class TensorDictParamsImpl : public torch::nn::Module {
 public:
  /// Registers every tensor leaf of `params` (nested keys joined with "_", as Python names them):
  /// float16/32/64 tensors as parameters that require grad, the others as buffers. With
  /// `no_convert` (Python's no_convert=True), only tensors that already require grad become
  /// parameters. The leaves are registered as they are, not copied: the TensorDict and the module
  /// share them. TypeError for a lazy stack (densify() it first); KeyError when two keys join to
  /// one name.
  explicit TensorDictParamsImpl(TensorDict params, bool no_convert = false);

  /// The TensorDict whose leaves are the parameters and buffers.
  const TensorDict& tensordict() const { return params_; }

 private:
  TensorDict params_;
};

/// Python's TensorDictParams, as a torch::nn module holder.
TORCH_MODULE(TensorDictParams);

}  // namespace tensordict::nn
