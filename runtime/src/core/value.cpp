#include <ATen/ATen.h>

#include "tensordict/tensordict.h"

namespace tensordict {
namespace {

[[noreturn]] void wrong_kind(const Value& value, const char* wanted) {
  throw TypeError(std::string("expected a ") + wanted + " entry, got a " + value.kind_name());
}

}  // namespace

// Python's torch.as_tensor on scalars: bool -> bool, int -> int64, float -> float32.
Value::Value(bool b) : v_(at::scalar_tensor(b, at::kBool)) {}
Value::Value(int64_t v) : v_(at::scalar_tensor(v, at::kLong)) {}
Value::Value(double v) : v_(at::scalar_tensor(v, at::kFloat)) {}

const at::Tensor& Value::tensor() const {
  if (!is_tensor()) wrong_kind(*this, "Tensor");
  return std::get<at::Tensor>(v_);
}
at::Tensor& Value::tensor() {
  if (!is_tensor()) wrong_kind(*this, "Tensor");
  return std::get<at::Tensor>(v_);
}
const TensorDict& Value::tensordict() const {
  if (!is_tensordict()) wrong_kind(*this, "TensorDict");
  return std::get<TensorDict>(v_);
}
const NonTensorData& Value::non_tensor_data() const {
  if (!is_non_tensor_data()) wrong_kind(*this, "NonTensorData");
  return std::get<NonTensorData>(v_);
}
const NonTensorStack& Value::non_tensor_stack() const {
  if (!is_non_tensor_stack()) wrong_kind(*this, "NonTensorStack");
  return std::get<NonTensorStack>(v_);
}
NonTensorStack& Value::non_tensor_stack() {
  if (!is_non_tensor_stack()) wrong_kind(*this, "NonTensorStack");
  return std::get<NonTensorStack>(v_);
}

const char* Value::kind_name() const {
  switch (kind()) {
    case Kind::Tensor:
      return "Tensor";
    case Kind::TensorDict:
      return "TensorDict";
    case Kind::NonTensorData:
      return "NonTensorData";
    case Kind::NonTensorStack:
      return "NonTensorStack";
  }
  return "?";
}

std::optional<std::vector<int64_t>> Value::shape() const {
  switch (kind()) {
    case Kind::Tensor:
      return tensor().sizes().vec();
    case Kind::TensorDict:
      return tensordict().batch_size();
    case Kind::NonTensorData:
      return std::nullopt;
    case Kind::NonTensorStack:
      return non_tensor_stack().shape();
  }
  return std::nullopt;
}

std::string shape_str(at::IntArrayRef shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

}  // namespace tensordict
