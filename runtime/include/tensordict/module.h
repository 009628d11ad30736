#pragma once
/// \file
/// TensorDict and torch::nn::Module: parameters as a TensorDict (TensorDict::from_module), put
/// back into a module (to_module), swapped in for a scope (to_module_scoped), and ensembles of
/// modules that share one structure. The only runtime header that includes <torch/nn/module.h>.
///
/// \code
///   TensorDict params = TensorDict::from_module(model);     // {"0": {"weight", "bias"}, ...}
///   params.memmap("ckpt", {4});                             // checkpoint
///   TensorDict::load_memmap("ckpt").to_module(model, true); // restore (copied into the model)
///   {
///     auto swap = other.to_module_scoped(model);            // model runs with `other`
///     model->forward(x);
///   }                                                       // model has its own tensors again
/// \endcode

#include <torch/nn/module.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensordict/tensordict.h"

namespace tensordict {

namespace detail {
/// A module as from_module / to_module walk it. torch::nn::Module here; TensorClass::nn adapts
/// TorchScript modules, so that both share one walk, one set of checks and one swap guard.
class ModuleAccess {
 public:
  virtual ~ModuleAccess() = default;
  /// This module's own parameters, then its buffers (undefined ones skipped), by name.
  virtual std::vector<std::pair<std::string, at::Tensor>> tensors() const = 0;
  /// The direct submodules, in registration order.
  virtual std::vector<std::pair<std::string, std::unique_ptr<ModuleAccess>>> children() const = 0;
  /// Makes parameter or buffer `name` (one of tensors()) hold `value`'s storage.
  virtual void assign(const std::string& name, const at::Tensor& value) = 0;
  /// Where the module's name is needed in messages, e.g. "Linear".
  virtual std::string name() const = 0;
};

/// TensorDict::from_module / to_module over any ModuleAccess.
TensorDict from_module(const ModuleAccess& module, bool as_module);
TensorDict to_module(const TensorDict& td, ModuleAccess& module, bool inplace, bool return_swap);
/// Access to a torch::nn::Module (which must outlive it).
std::unique_ptr<ModuleAccess> access(torch::nn::Module& module);
}  // namespace detail

/// Guard of TensorDict::to_module_scoped: puts the module's original tensors back when destroyed
/// (or at restore()). Movable, not copyable.
class ModuleSwap {
 public:
  /// Owns `module`; `originals` are the tensors to put back.
  ModuleSwap(std::unique_ptr<detail::ModuleAccess> module, TensorDict originals)
      : owned_(std::move(module)), module_(owned_.get()), originals_(std::move(originals)) {}
  /// Borrows `module`, which must outlive the guard.
  ModuleSwap(detail::ModuleAccess& module, TensorDict originals)
      : module_(&module), originals_(std::move(originals)) {}
  /// Takes over `other`'s swap; `other` then restores nothing.
  ModuleSwap(ModuleSwap&& other) noexcept
      : owned_(std::move(other.owned_)),
        module_(std::exchange(other.module_, nullptr)),
        originals_(std::move(other.originals_)) {}
  ModuleSwap& operator=(ModuleSwap&&) = delete;
  ModuleSwap(const ModuleSwap&) = delete;
  ModuleSwap& operator=(const ModuleSwap&) = delete;
  ~ModuleSwap() { restore(); }

  /// Puts the original tensors back now; later calls (and the destructor) do nothing.
  void restore() noexcept;
  /// The tensors the module had before the swap.
  const TensorDict& originals() const { return originals_; }

 private:
  std::unique_ptr<detail::ModuleAccess> owned_;
  detail::ModuleAccess* module_;
  TensorDict originals_;
};

/// Runs `fn` once per member of an ensemble: `params` holds the members' parameters stacked along
/// dim 0 (tensordict::stack of from_module results); member i is swapped into `module` while
/// `fn(i)` runs. Returns fn's results in order. The module's own tensors are back afterwards,
/// also when `fn` throws.
std::vector<at::Tensor> ensemble_apply(const TensorDict& params, torch::nn::Module& module,
                                       const std::function<at::Tensor(int64_t)>& fn);

/// ensemble_apply for a module holder (torch::nn::Linear, torch::nn::Sequential, ...).
template <class Holder, class = typename Holder::ContainedType>
std::vector<at::Tensor> ensemble_apply(const TensorDict& params, const Holder& module,
                                       const std::function<at::Tensor(int64_t)>& fn) {
  return ensemble_apply(params, static_cast<torch::nn::Module&>(*module.ptr()), fn);
}

/// \cond
// The definition of a member documented in tensordict.h.
template <class Holder, class>
ModuleSwap TensorDict::to_module_scoped(const Holder& module) const {
  return to_module_scoped(static_cast<torch::nn::Module&>(*module.ptr()));
}
/// \endcond

namespace detail {
/// ensemble_apply over any ModuleAccess.
std::vector<at::Tensor> ensemble_apply(const TensorDict& params, ModuleAccess& module,
                                       const std::function<at::Tensor(int64_t)>& fn);
}  // namespace detail

}  // namespace tensordict
