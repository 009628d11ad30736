#pragma once
// The bounds every schema is held to, whichever front end read it (check/bounds.cpp).

#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// Reports a schema past tcgen's bounds: classes per file, fields per class and per file, the
/// nesting of defaults, and the YAML nodes `tcgen import` would write for it.
void check_bounds(const Schema& schema, Diagnostics& diagnostics);

}  // namespace tcgen
