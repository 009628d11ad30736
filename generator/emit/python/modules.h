#pragma once
// Emitting Python: the TensorClass subclasses of a schema, so that Python code reads and writes
// the same data as the C++ classes (the `_type` strings match: a module per Python module path).

#include <vector>

#include "emit/output.h"
#include "emit/templates.h"
#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// What the Python classes derive from: Python's `TensorClass` (dataclass fields, defaults, the
/// schema's evolution keys), or `TypedTensorDict` (a TensorDict with declared keys: no defaults,
/// an optional field is `NotRequired`, options are class keywords as for TensorClass).
enum class PythonBase { TensorClass, TypedTensorDict };

/// One Python module per module path the schema's classes name (`python:`, else the C++
/// namespace): `a/b/c.py` for module `a.b.c`. Classes of other modules (includes) are imported.
/// Fields keep the schema's order: where a field without a default follows one with a default
/// (which a dataclass refuses), the fields from that one on are keyword-only (`_: KW_ONLY`). A
/// class without a module (no `python:` name, no namespace) is reported to `diagnostics`. Under
/// PythonBase::TypedTensorDict, what such a class cannot say is reported too: a default, an
/// earlier name (`renamed_from`), a field whose name starts with '_' (it would not be a key).
std::vector<Output> emit_python_schema(const Schema& schema, const ClassIndex& classes,
                                       const Templates& templates, Diagnostics& diagnostics,
                                       PythonBase base = PythonBase::TensorClass);
/// The modules of every schema of `emitted`, each by emit_python_schema; two schemas writing one
/// module, or a module that is also the package of another (`a/b.py` beside `a/b/c.py`), are
/// reported to `diagnostics`.
std::vector<Output> emit_python_modules(const std::vector<const Schema*>& emitted,
                                        const ClassIndex& classes, const Templates& templates,
                                        Diagnostics& diagnostics, PythonBase base);

}  // namespace tcgen
