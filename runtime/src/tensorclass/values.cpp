// The values fields take from JSON: a mapping as a TensorDict, a list as Python's list_to_stack
// stores it; and the schema defaults of fields (a tensor field's from tensordict/tensor_default.h).
#include <ATen/ATen.h>

#include <algorithm>

#include "tensorclass/internal.h"
#include "tensordict/errors.h"
#include "tensordict/tensor_default.h"
#include "tensordict/tensorclass.h"

namespace tensordict::detail::tc {

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

TensorDict mapping_to_tensordict(const Json& mapping, const BatchSize& batch,
                                 std::optional<at::Device> device) {
  TensorDict td = detail::make_tensordict(batch, device);
  for (const auto& [key, item] : mapping.items()) {
    if (item.is_object()) {
      td.set(key, mapping_to_tensordict(item, batch, device));
    } else if (is_numeric_tree(item)) {
      td.set(key, numbers_to_tensor(item));
    } else {
      td.set_non_tensor(key, item);
    }
  }
  return td;
}

Value list_value(const Json& list, const BatchSize& batch) {
  if (!list_to_stack()) return Value(NonTensorData{list});
  if (list.empty()) return Value(at::empty({0}));
  if (is_numeric_tree(list)) return Value(numbers_to_tensor(list));
  return Value(NonTensorStack::from_list(list, std::max<int64_t>(1, batch.size())));
}

FieldValue default_of(const FieldSpec& field) {
  if (!field.default_json) return FieldValue();
  if (field.kind == FieldKind::Tensor) return FieldValue(tensor_default(field));
  return FieldValue(Json::parse(field.default_json));
}

}  // namespace tensordict::detail::tc
