#pragma once
// Emitting Python: the TensorClass subclasses of a schema, so that Python code reads and writes
// the same data as the C++ classes (the `_type` strings match: a module per Python module path).

#include <vector>

#include "emit/emit.h"
#include "emit/templates.h"
#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// One Python module per module path the schema's classes name (`python:`, else the C++
/// namespace): `a/b/c.py` for module `a.b.c`. Classes of other modules (includes) are imported.
/// Fields keep the schema's order: where a field without a default follows one with a default
/// (which a dataclass refuses), the fields from that one on are keyword-only (`_: KW_ONLY`). A
/// class without a module (no `python:` name, no namespace) is reported to `diagnostics`.
std::vector<Output> emit_python_schema(const Schema& schema, const ClassIndex& classes,
                                       const Templates& templates, Diagnostics& diagnostics);

}  // namespace tcgen
