// Tensors made from JSON: numbers and nested lists of them (as torch.tensor makes them), and the
// schema defaults of fields (a tensor field's from tensordict/tensor_default.h).
#include <ATen/ATen.h>

#include <algorithm>

#include "tensorclass/internal.h"
#include "tensordict/errors.h"
#include "tensordict/tensor_default.h"
#include "tensordict/tensorclass.h"

namespace tensordict::detail::tc {

bool is_numeric_tree(const Json& json) {
  if (json.is_number() || json.is_boolean()) return true;
  if (!json.is_array() || json.empty()) return false;
  return std::all_of(json.begin(), json.end(), is_numeric_tree);
}

namespace {

void flatten_numbers(const Json& json, std::vector<double>& out, bool& any_float, bool& all_bool) {
  if (json.is_array()) {
    for (const auto& item : json) flatten_numbers(item, out, any_float, all_bool);
    return;
  }
  any_float = any_float || json.is_number_float();
  all_bool = all_bool && json.is_boolean();
  out.push_back(json.is_boolean() ? (json.get<bool>() ? 1.0 : 0.0) : json.get<double>());
}

}  // namespace

at::Tensor numbers_to_tensor(const Json& json) {
  std::vector<int64_t> shape;
  for (const Json* level = &json; level->is_array(); level = &level->front()) {
    shape.push_back(static_cast<int64_t>(level->size()));
    if (level->empty()) break;
  }
  std::vector<double> flat;
  bool any_float = false, all_bool = true;
  flatten_numbers(json, flat, any_float, all_bool);
  auto dtype = all_bool ? at::kBool : any_float ? at::kFloat : at::kLong;
  at::Tensor t = at::tensor(flat, at::kDouble);
  if (t.numel() != c10::multiply_integers(shape)) {
    throw ShapeError("cannot make a tensor of a ragged list " + json.dump());
  }
  return t.reshape(shape).to(dtype);
}

namespace {

// A new tensor of `field`'s default (tensordict/tensor_default.h): torch's dtype for the literal or
// the factory, then the field's when the schema gives one.
at::Tensor tensor_default(const FieldSpec& field) {
  std::string error;
  const auto made = read_tensor_default(Json::parse(field.default_json), error);
  if (!made) {  // tcgen checked it: a field table written by hand
    throw TypeError("default of tensor field '" + std::string(field.name) + "': " + error);
  }
  at::Tensor t;
  switch (made->form) {
    case TensorDefault::Form::Literal:
      t = numbers_to_tensor(made->literal);
      break;
    case TensorDefault::Form::Zeros:
      t = at::zeros(made->sizes, at::kFloat);
      break;
    case TensorDefault::Form::Ones:
      t = at::ones(made->sizes, at::kFloat);
      break;
    case TensorDefault::Form::Full:
      t = made->fill_is_bool ? at::full(made->sizes, made->fill == "true", at::kBool)
          : made->fill_is_float
              ? at::full(made->sizes, std::stod(made->fill), at::kFloat)
              : at::full(made->sizes, static_cast<int64_t>(std::stoll(made->fill)), at::kLong);
      break;
  }
  return field.dtype ? t.to(*field.dtype) : t;
}

}  // namespace

FieldValue default_of(const FieldSpec& field) {
  if (!field.default_json) return FieldValue();
  if (field.kind == FieldKind::Tensor) return FieldValue(tensor_default(field));
  return FieldValue(Json::parse(field.default_json));
}

}  // namespace tensordict::detail::tc
