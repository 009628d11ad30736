#pragma once
// Values that every front end reads from text the same way (a YAML scalar, a TC_CLASS argument, a
// command-line flag): class options and schema versions.

#include <cstdint>
#include <string>

#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// Adds the option `name`, written at `loc`, to `options`: the one reading of class options for
/// every front end. An unknown or repeated option is an error.
void add_option(const std::string& name, const SourceLoc& loc, Options& options,
                Diagnostics& diagnostics);

/// Reads a schema version written at `loc`: a positive integer, else an error (returns 0).
int64_t read_version(const std::string& text, const SourceLoc& loc, Diagnostics& diagnostics);

}  // namespace tcgen
