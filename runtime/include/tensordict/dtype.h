#pragma once
/// \file
/// dtype names as Python spells them ("float32"; on disk "torch.float32").

#include <c10/core/ScalarType.h>

#include <optional>
#include <string>
#include <string_view>

namespace tensordict {

/// "float32", "int64", "bool", ... (torch's canonical name, no "torch." prefix).
std::string dtype_name(at::ScalarType dtype);
/// Parses "float32" or "torch.float32" (canonical names only, as Python's reader); nullopt when
/// unknown.
std::optional<at::ScalarType> dtype_from_name(std::string_view name);

}  // namespace tensordict
