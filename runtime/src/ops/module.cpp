// TensorDict <-> modules (module.h): one walk over detail::ModuleAccess for from_module,
// to_module, scoped swaps and ensembles; torch::nn::Module's access is here.
#include "tensordict/module.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "ops/util.h"

namespace tensordict {
namespace {

template <class Named>
auto* find_named(Named& items, const std::string& name) {
  for (auto& item : items) {
    if (item.first == name) return &item.second;
  }
  return static_cast<decltype(&items.front().second)>(nullptr);
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
void check_fits(const TensorDict& td, const detail::ModuleAccess& module,
                const std::string& prefix) {
  auto tensors = module.tensors();
  auto children = module.children();
  for (const auto& [key, value] : td.items()) {
    const std::string& name = key.front();
    const std::string path = detail::join_key(prefix, name);
    if (value.is_tensordict()) {
      auto* child = find_named(children, name);
      if (child == nullptr) throw KeyError("to_module: the module has no submodule '" + path + "'");
      check_fits(value.tensordict(), **child, path);
      continue;
    }
    if (!value.is_tensor()) {
      throw TypeError("to_module: key '" + path + "' holds " + value.kind_name() +
                      ", not a tensor");
    }
    const at::Tensor* target = find_named(tensors, name);
    if (target == nullptr) {
      throw KeyError("to_module: the module has no parameter or buffer '" + path + "'");
    }
    check_same_layout(path, *target, value.tensor());
  }
}

TensorDict swap_in(const TensorDict& td, detail::ModuleAccess& module, bool inplace,
                   bool return_swap) {
  auto tensors = module.tensors();
  auto children = module.children();
  TensorDict old;
  for (const auto& [key, value] : td.items()) {
    const std::string& name = key.front();
    if (value.is_tensordict()) {
      TensorDict child =
          swap_in(value.tensordict(), **find_named(children, name), inplace, return_swap);
      if (return_swap) old.set(name, child);
      continue;
    }
    const at::Tensor& target = *find_named(tensors, name);
    if (return_swap) {
      // A detached alias keeps the old storage once target is re-pointed; a copy when in place.
      old.set(name, inplace ? target.detach().clone() : target.detach());
    }
    if (inplace) {
      target.detach().copy_(value.tensor());
    } else {
      module.assign(name, value.tensor());
    }
  }
  return old;
}

// C++ modules keep their parameters as tensor members (Linear::weight) besides the registered
// entry, and both handles share one TensorImpl: assign() re-points that TensorImpl at the new
// storage (set_) instead of replacing the entry, so that forward() sees it.
class NnModuleAccess final : public detail::ModuleAccess {
 public:
  explicit NnModuleAccess(torch::nn::Module& module) : module_(module) {}

  std::vector<std::pair<std::string, at::Tensor>> tensors() const override {
    std::vector<std::pair<std::string, at::Tensor>> out;
    for (const auto& item : module_.named_parameters(false)) {
      if (item.value().defined()) out.emplace_back(item.key(), item.value());
    }
    for (const auto& item : module_.named_buffers(false)) {
      if (item.value().defined()) out.emplace_back(item.key(), item.value());
    }
    return out;
  }
  std::vector<std::pair<std::string, std::unique_ptr<ModuleAccess>>> children() const override {
    std::vector<std::pair<std::string, std::unique_ptr<ModuleAccess>>> out;
    for (const auto& item : module_.named_children()) {
      out.emplace_back(item.key(), std::make_unique<NnModuleAccess>(*item.value()));
    }
    return out;
  }
  void assign(const std::string& name, const at::Tensor& value) override {
    // The dicts are copies holding handles of the module's tensors: kept alive while `find`'s
    // pointer into them is used (a temporary's would dangle), and set_ reaches the module's.
    auto params = module_.named_parameters(false);
    at::Tensor* target = params.find(name);
    auto buffers = module_.named_buffers(false);
    if (target == nullptr) target = buffers.find(name);
    if (target == nullptr) {
      throw KeyError("module " + module_.name() + " has no parameter or buffer '" + name + "'");
    }
    target->set_(value);
  }
  std::string name() const override { return module_.name(); }

 private:
  torch::nn::Module& module_;
};

}  // namespace

namespace detail {

std::unique_ptr<ModuleAccess> access(torch::nn::Module& module) {
  return std::make_unique<NnModuleAccess>(module);
}

TensorDict from_module(const ModuleAccess& module, bool as_module) {
  TensorDict out;
  for (const auto& [name, tensor] : module.tensors()) out.set(name, tensor);
  for (const auto& [name, child] : module.children()) {
    TensorDict child_params = from_module(*child, false);
    if (!child_params.is_empty()) out.set(name, child_params);
  }
  if (as_module) out.lock_();
  return out;
}

TensorDict to_module(const TensorDict& td, ModuleAccess& module, bool inplace, bool return_swap) {
  check_fits(td, module, "");
  at::NoGradGuard no_grad;
  return swap_in(td, module, inplace, return_swap);
}

std::vector<at::Tensor> ensemble_apply(const TensorDict& params, ModuleAccess& module,
                                       const std::function<at::Tensor(int64_t)>& fn) {
  if (params.ndim() < 1) {
    throw ShapeError("ensemble_apply: the parameters need a leading ensemble dim (batch size " +
                     shape_str(params.batch_size()) + ")");
  }
  std::vector<at::Tensor> out;
  const int64_t members = params.batch_size()[0];
  out.reserve(static_cast<size_t>(members));
  for (int64_t i = 0; i < members; ++i) {
    TensorDict member = params[i];
    ModuleSwap swap(module, to_module(member, module, false, true));
    out.push_back(fn(i));
  }
  return out;
}

}  // namespace detail

TensorDict TensorDict::from_module(const torch::nn::Module& module, bool as_module) {
  // Only read through the access; the const_cast never leads to a write.
  return detail::from_module(NnModuleAccess(const_cast<torch::nn::Module&>(module)), as_module);
}

TensorDict TensorDict::to_module(torch::nn::Module& module, bool inplace, bool return_swap) const {
  NnModuleAccess access(module);
  return detail::to_module(*this, access, inplace, return_swap);
}

ModuleSwap TensorDict::to_module_scoped(torch::nn::Module& module) const {
  auto access = detail::access(module);
  TensorDict originals = detail::to_module(*this, *access, false, true);
  return ModuleSwap(std::move(access), std::move(originals));
}

void ModuleSwap::restore() noexcept {
  if (module_ == nullptr) return;
  detail::ModuleAccess* module = std::exchange(module_, nullptr);
  try {
    detail::to_module(originals_, *module, false, false);
  } catch (...) {
    // The originals came from this module, so they fit it; nothing can be done in a destructor.
  }
}

std::vector<at::Tensor> ensemble_apply(const TensorDict& params, torch::nn::Module& module,
                                       const std::function<at::Tensor(int64_t)>& fn) {
  NnModuleAccess access(module);
  return detail::ensemble_apply(params, access, fn);
}

}  // namespace tensordict
