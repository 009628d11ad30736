// TensorDict <-> torch::nn::Module (module.h). C++ modules keep their parameters as tensor members
// (Linear::weight) besides the registered entry, and both handles share one TensorImpl; a swap
// therefore re-points that TensorImpl at the new storage (set_) instead of replacing the entry,
// so that forward() sees it.
#include "tensordict/module.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

namespace tensordict {
namespace {

std::string join_key(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

// The module's own parameter or buffer named `key`, or nullptr.
at::Tensor* own_tensor(torch::nn::Module& module, const std::string& key,
                       torch::OrderedDict<std::string, at::Tensor>& params,
                       torch::OrderedDict<std::string, at::Tensor>& buffers) {
  if (at::Tensor* p = params.find(key)) return p;
  return buffers.find(key);
}

void check_same_layout(const std::string& path, const at::Tensor& target, const at::Tensor& value) {
  if (target.scalar_type() != value.scalar_type()) {
    throw TypeError("to_module: key '" + path + "' has dtype " +
                    std::string(c10::toString(value.scalar_type())) +
                    " but the module's tensor has dtype " +
                    std::string(c10::toString(target.scalar_type())));
  }
  if (target.sizes() != value.sizes()) {
    throw ShapeError("to_module: key '" + path + "' has shape " + shape_str(value.sizes()) +
                     " but the module's tensor has shape " + shape_str(target.sizes()));
  }
}

// Checks every key first, so that a mismatch leaves the module untouched.
void check_fits(const TensorDict& td, torch::nn::Module& module, const std::string& prefix) {
  auto params = module.named_parameters(false);
  auto buffers = module.named_buffers(false);
  auto children = module.named_children();
  for (const auto& [key, value] : td.items()) {
    const std::string& name = key.front();
    const std::string path = join_key(prefix, name);
    if (value.is_tensordict()) {
      auto* child = children.find(name);
      if (child == nullptr) throw KeyError("to_module: the module has no submodule '" + path + "'");
      check_fits(value.tensordict(), **child, path);
      continue;
    }
    if (!value.is_tensor()) {
      throw TypeError("to_module: key '" + path + "' holds " + value.kind_name() +
                      ", not a tensor");
    }
    at::Tensor* target = own_tensor(module, name, params, buffers);
    if (target == nullptr) {
      throw KeyError("to_module: the module has no parameter or buffer '" + path + "'");
    }
    check_same_layout(path, *target, value.tensor());
  }
}

TensorDict swap_in(const TensorDict& td, torch::nn::Module& module, bool inplace,
                   bool return_swap) {
  auto params = module.named_parameters(false);
  auto buffers = module.named_buffers(false);
  auto children = module.named_children();
  TensorDict old;
  for (const auto& [key, value] : td.items()) {
    const std::string& name = key.front();
    if (value.is_tensordict()) {
      TensorDict child = swap_in(value.tensordict(), **children.find(name), inplace, return_swap);
      if (return_swap) old.set(name, child);
      continue;
    }
    at::Tensor& target = *own_tensor(module, name, params, buffers);
    if (return_swap) {
      // A detached alias keeps the old storage once target is re-pointed; a copy when in place.
      old.set(name, inplace ? target.detach().clone() : target.detach());
    }
    if (inplace) {
      target.detach().copy_(value.tensor());
    } else {
      target.set_(value.tensor());
    }
  }
  return old;
}

}  // namespace

TensorDict TensorDict::from_module(const torch::nn::Module& module, bool as_module) {
  TensorDict out;
  for (const auto& item : module.named_parameters(false)) {
    if (item.value().defined()) out.set(item.key(), item.value());
  }
  for (const auto& item : module.named_buffers(false)) {
    if (item.value().defined()) out.set(item.key(), item.value());
  }
  for (const auto& item : module.named_children()) {
    TensorDict child = from_module(*item.value());
    if (!child.is_empty()) out.set(item.key(), child);
  }
  if (as_module) out.lock_();
  return out;
}

TensorDict TensorDict::to_module(torch::nn::Module& module, bool inplace, bool return_swap) const {
  check_fits(*this, module, "");
  at::NoGradGuard no_grad;
  return swap_in(*this, module, inplace, return_swap);
}

ModuleSwap TensorDict::to_module_scoped(torch::nn::Module& module) const {
  return ModuleSwap(module, to_module(module));
}

void ModuleSwap::restore() noexcept {
  if (module_ == nullptr) return;
  torch::nn::Module* module = std::exchange(module_, nullptr);
  try {
    originals_.to_module(*module);
  } catch (...) {
    // The originals came from this module, so they fit it; nothing can be done in a destructor.
  }
}

std::vector<at::Tensor> ensemble_apply(const TensorDict& params, torch::nn::Module& module,
                                       const std::function<at::Tensor(int64_t)>& fn) {
  if (params.ndim() < 1) {
    throw ShapeError("ensemble_apply: the parameters need a leading ensemble dim (batch size " +
                     shape_str(params.batch_size()) + ")");
  }
  std::vector<at::Tensor> out;
  const int64_t members = params.batch_size()[0];
  out.reserve(static_cast<size_t>(members));
  for (int64_t i = 0; i < members; ++i) {
    ModuleSwap swap = params[i].to_module_scoped(module);
    out.push_back(fn(i));
  }
  return out;
}

}  // namespace tensordict
