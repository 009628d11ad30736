#pragma once
/// \file
/// TorchScript modules and TensorDicts: IValue conversions both ways, and parameters as TensorDicts
/// (from_module / to_module, scoped swaps and ensembles, as tensordict/module.h does for
/// torch::nn::Module).
///
/// \code
///   torch::jit::Module policy = torch::jit::load("policy.pt");
///   TensorDictModule actor(policy, {"observation"}, {"action"});  // dict or positional forward
///   TensorDict params = nn::from_module(policy);                  // {"body": {"0": {...}}}
///   params.memmap("ckpt");
/// \endcode
///
/// IValue conversion (to_ivalue / from_ivalue):
/// \code{.unparsed}
///   tensor                       <-> Tensor
///   nested TensorDict            <-> Dict[str, ...] (nested dicts)
///   str, int, float, bool        <-> str, int, float, bool (NonTensorData)
///   lists of those, nested lists <-> List[...] (NonTensorData; a NonTensorStack goes as its
///                                    nested list and comes back as one NonTensorData)
///   None                         <-> None (NonTensorData null)
/// \endcode
/// Anything else (a JSON object as non-tensor data, a mixed list, a tuple, a list of tensors, an
/// object) is a TypeError naming the key.

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>

#include <functional>
#include <vector>

#include "tensordict/module.h"
#include "tensordict/nn/module.h"

namespace tensordict::nn {

/// `td` as a TorchScript dict: Dict[str, V] where V is the one type of every value (Tensor for a
/// flat TensorDict of tensors), or Any when the values differ in type.
c10::IValue to_ivalue(const TensorDict& td);
/// One entry as an IValue; `key` names it in errors.
c10::IValue to_ivalue(const Value& value, const NestedKey& key);
/// A dict with str keys as a TensorDict of `batch_size` (nested dicts become nested TensorDicts
/// of the same batch size). TypeError for anything else, naming the key.
TensorDict from_ivalue(const c10::IValue& value, BatchSize batch_size = {});
/// One value as an entry; `batch_size` is that of the TensorDict it goes into.
Value value_from_ivalue(const c10::IValue& value, const BatchSize& batch_size,
                        const NestedKey& key);

/// The parameters and buffers of a TorchScript module, nested per submodule as
/// TensorDict::from_module does (leaves alias the module's tensors).
TensorDict from_module(const torch::jit::Module& module, bool as_module = false);
/// Puts `params` into `module` (its attributes then hold these tensors; `inplace` copies into
/// the module's own tensors instead) and returns the tensors it had when `return_swap`. Checks
/// every key before changing anything.
TensorDict to_module(const TensorDict& params, torch::jit::Module& module, bool inplace = false,
                     bool return_swap = true);
/// to_module until the returned guard is destroyed.
ModuleSwap to_module_scoped(const TensorDict& params, const torch::jit::Module& module);
/// ensemble_apply (tensordict/module.h) for a TorchScript module.
std::vector<at::Tensor> ensemble_apply(const TensorDict& params, const torch::jit::Module& module,
                                       const std::function<at::Tensor(int64_t)>& fn);

}  // namespace tensordict::nn
