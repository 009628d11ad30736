#pragma once
// Semantic checks over every loaded schema, once, after reading. Every problem is reported.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "diagnostics.h"
#include "model.h"

namespace tcgen {

/// Classes by name, across every loaded schema file.
using ClassIndex = std::map<std::string, const Class*>;

/// Adds the option `name`, written at `loc`, to `options`: the one reading of class options for
/// every front end. An unknown or repeated option is an error.
void add_option(const std::string& name, const SourceLoc& loc, Options& options,
                Diagnostics& diagnostics);

/// Reads a schema version written at `loc`: a positive integer, else an error (returns 0).
int64_t read_version(const std::string& text, const SourceLoc& loc, Diagnostics& diagnostics);

/// Indexes the classes (duplicates are reported) and checks names, options, types, defaults and
/// nesting. Returns the index.
ClassIndex check_schemas(const std::vector<Schema>& schemas, Diagnostics& diagnostics);

}  // namespace tcgen
