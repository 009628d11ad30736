#pragma once
/// \file
/// StateDict: the flat state dict of TensorDicts and tensorclasses (format spec §6), the C++ form
/// of Python's OrderedDict with its `_metadata` attribute.

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "tensordict/non_tensor.h"

namespace tensordict {

/// Dotted keys ("a", "b.c") -> tensors in visiting order, and per level (dotted prefix, "" = root)
/// the metadata {"batch_size", "device"}; tensorclass levels add "_type" and "_non_tensor".
struct StateDict {
  /// Dotted key and tensor of every leaf, in visiting order.
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  /// Python's `_metadata`: per level (dotted prefix, "" for the root) its metadata object.
  Json metadata = Json::object();
  /// state_dict(flatten = false): each nested level's own StateDict under its key (Python nests
  /// dicts; here they follow the tensors instead of being interleaved with them).
  std::vector<std::pair<std::string, StateDict>> nested;

  /// The tensor at `key`; KeyError when missing.
  const at::Tensor& at(const std::string& key) const;
};

}  // namespace tensordict
