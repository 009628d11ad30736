#pragma once
// Semantic checks over every loaded schema, once, after reading. Every problem is reported.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// Indexes the classes (duplicates are reported) and checks names, options, types, defaults and
/// nesting. Returns the index.
ClassIndex check_schemas(const std::vector<Schema>& schemas, Diagnostics& diagnostics);

}  // namespace tcgen
