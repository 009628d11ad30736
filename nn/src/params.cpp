// TensorDictParams (tensordict/nn/params.h): a TensorDict's leaves registered with a module.
#include "tensordict/nn/params.h"

#include "tensordict/errors.h"

namespace tensordict::nn {

TensorDictParamsImpl::TensorDictParamsImpl(TensorDict params, bool no_convert)
    : params_(std::move(params)) {
  if (params_.is_lazy_stack()) {
    throw TypeError(
        "TensorDictParams: a lazy stack has no leaves to register (densify() it first)");
  }
  for (const auto& [key, value] : params_.items(/*include_nested=*/true, /*leaves_only=*/true)) {
    const at::Tensor* tensor = value.tensor_if();
    if (tensor == nullptr) continue;  // non-tensor data stays in the TensorDict only
    const std::string name = key.join("_");
    if (named_parameters(false).contains(name) || named_buffers(false).contains(name)) {
      throw KeyError("TensorDictParams: key " + key.repr() +
                     " and another key both give the name '" + name + "'");
    }
    const bool parameter =
        no_convert ? tensor->requires_grad()
                   : (tensor->scalar_type() == at::kFloat || tensor->scalar_type() == at::kDouble ||
                      tensor->scalar_type() == at::kHalf);
    if (parameter) {
      register_parameter(name, *tensor, /*requires_grad=*/true);
    } else {
      register_buffer(name, *tensor);
    }
  }
}

}  // namespace tensordict::nn
