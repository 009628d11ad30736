#pragma once
// TensorDict and torch::nn::Module: parameters as a TensorDict (TensorDict::from_module), put
// back into a module (to_module), swapped in for a scope (to_module_scoped), and ensembles of
// modules that share one structure. The only runtime header that includes <torch/nn/module.h>.
//
//   TensorDict params = TensorDict::from_module(model);     // {"0": {"weight", "bias"}, ...}
//   params.memmap("ckpt", {4});                             // checkpoint
//   TensorDict::load_memmap("ckpt").to_module(model, true); // restore (copied into the model)
//   {
//     auto swap = other.to_module_scoped(model);            // model runs with `other`
//     model->forward(x);
//   }                                                       // model has its own tensors again

#include <torch/nn/module.h>

#include <functional>
#include <utility>
#include <vector>

#include "tensordict/tensordict.h"

namespace tensordict {

/// Guard of TensorDict::to_module_scoped: puts the module's original tensors back when destroyed
/// (or at restore()). Movable, not copyable.
class ModuleSwap {
 public:
  ModuleSwap(torch::nn::Module& module, TensorDict originals)
      : module_(&module), originals_(std::move(originals)) {}
  ModuleSwap(ModuleSwap&& other) noexcept
      : module_(std::exchange(other.module_, nullptr)), originals_(std::move(other.originals_)) {}
  ModuleSwap& operator=(ModuleSwap&&) = delete;
  ModuleSwap(const ModuleSwap&) = delete;
  ModuleSwap& operator=(const ModuleSwap&) = delete;
  ~ModuleSwap() { restore(); }

  /// Puts the original tensors back now; later calls (and the destructor) do nothing.
  void restore() noexcept;
  /// The tensors the module had before the swap.
  const TensorDict& originals() const { return originals_; }

 private:
  torch::nn::Module* module_;
  TensorDict originals_;
};

/// Runs `fn` once per member of an ensemble: `params` holds the members' parameters stacked along
/// dim 0 (tensordict::stack of from_module results); member i is swapped into `module` while
/// `fn(i)` runs. Returns fn's results in order. The module's own tensors are back afterwards,
/// also when `fn` throws.
std::vector<at::Tensor> ensemble_apply(const TensorDict& params, torch::nn::Module& module,
                                       const std::function<at::Tensor(int64_t)>& fn);

}  // namespace tensordict
