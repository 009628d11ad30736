#pragma once
// Helpers shared by the tensorclass sources (private to the runtime).

#include <ATen/core/Tensor.h>

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

}  // namespace tensordict::detail::tc
