#pragma once
// Helpers shared by the tensorclass sources (private to the runtime).

#include <ATen/core/Tensor.h>

#include <string>

#include "tensordict/class_spec.h"
#include "tensordict/json.h"

namespace tensordict::detail::tc {

/// `Class.field`, as messages name a field.
std::string where(const ClassSpec& spec, const FieldSpec& field);
/// Python's name of a JSON value's type ("str", "int", "list", ..., "None"), for messages.
std::string json_kind(const Json& json);
/// The schema's spelling of a field kind ("str", "tensor", ...).
std::string kind_name(FieldKind kind);
/// A tensor's values as JSON: a number for 0 dims, else nested lists (Python's tolist()).
Json tensor_to_json(const at::Tensor& t);
/// Whether `json` is a number, a bool, or a non-empty nested list of them.
bool is_numeric_tree(const Json& json);
/// The tensor torch.tensor(json) makes of numbers and nested lists of them (bool, int64 or
/// float32); ShapeError for a ragged list.
at::Tensor numbers_to_tensor(const Json& json);

}  // namespace tensordict::detail::tc
