#pragma once
// Tensors as JSON and back, as Python's tolist() and torch.tensor(list) make them (private to the
// runtime): what from_dict / to_dict and the tensorclass casts convert with.

#include <ATen/core/Tensor.h>

#include "tensordict/json.h"

namespace tensordict::detail {

/// A tensor's values as JSON: a number for 0 dims, else nested lists (Python's tolist()).
Json tensor_to_json(const at::Tensor& t);
/// Whether `json` is a number, a bool, or a non-empty nested list of them.
bool is_numeric_tree(const Json& json);
/// The tensor torch.tensor(json) makes of numbers and nested lists of them (bool, int64 or
/// float32); ShapeError for a ragged list.
at::Tensor numbers_to_tensor(const Json& json);

}  // namespace tensordict::detail
