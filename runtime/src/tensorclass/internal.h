#pragma once
// Helpers shared by the tensorclass sources (private to the runtime).

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>

#include "core/tensor_json.h"
#include "tensordict/class_spec.h"
#include "tensordict/json.h"

namespace tensordict::detail::tc {

/// `Class.field`, as messages name a field.
std::string where(const ClassSpec& spec, const FieldSpec& field);
/// Python's name of a JSON value's type ("str", "int", "list", ..., "None"), for messages.
std::string json_kind(const Json& json);
/// The schema's spelling of a field kind ("str", "tensor", ...).
std::string kind_name(FieldKind kind);
/// A JSON mapping as a TensorDict of `batch`: numbers and lists of them as tensors, mappings as
/// nested TensorDicts, anything else as NonTensorData (values.cpp).
TensorDict mapping_to_tensordict(const Json& mapping, const BatchSize& batch,
                                 std::optional<at::Device> device);
/// A list given to a field, as Python's list_to_stack policy stores it: a tensor of numbers or a
/// NonTensorStack along the batch dims, or with the policy off one NonTensorData (values.cpp).
Value list_value(const Json& list, const BatchSize& batch);

}  // namespace tensordict::detail::tc
