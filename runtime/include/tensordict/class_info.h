#pragma once
/// \file
/// memmap::ClassInfo: a tensorclass's identity on disk. Its own header so that a TensorDict can
/// remember the class it was loaded as without the memmap API (tensordict/memmap.h includes it).

#include <cstdint>
#include <string>

#include "tensordict/non_tensor.h"

namespace tensordict::memmap {

/// A tensorclass's identity on disk: its `_type` string and the non-tensor fields of its meta.json
/// (for ordinary classes the fields whose value is None).
struct ClassInfo {
  /// The `_type` string: "<class 'module.Name'>".
  std::string type;
  /// meta.json's other entries, in order.
  Json fields = Json::object();
  /// The version of the class's schema (0: none), saved as kSchemaVersionFile beside meta.json.
  int64_t schema_version = 0;
};

}  // namespace tensordict::memmap
