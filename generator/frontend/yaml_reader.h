#pragma once
// YAML front end: one schema file -> Schema. Strict: unknown or duplicate keys, wrong node kinds
// and malformed types are reported (all of them) with their 1-based file positions.

#include <string>

#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// Why `path` cannot be read as a schema ("not found", "is a directory", "cannot be read: Too
/// many levels of symbolic links", ...), or "" when it can.
std::string schema_file_problem(const std::string& path);

/// Reads `path` (its `display` spelling is used in messages). Include paths are resolved relative
/// to the file; they are not read here.
Schema read_yaml_schema(const std::string& path, const std::string& display,
                        Diagnostics& diagnostics);
/// Same, from text (for tests).
Schema read_yaml_text(const std::string& text, const std::string& display,
                      Diagnostics& diagnostics);

}  // namespace tcgen
