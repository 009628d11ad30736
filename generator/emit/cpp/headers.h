#pragma once
// Emitting C++: model -> view models (all C++ spelling done here and in emit/cpp/names.h) ->
// Mustache.

#include <map>
#include <string>
#include <vector>

#include "emit/output.h"
#include "emit/templates.h"
#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// The fingerprint of each generated header a header includes, by its schema's display path
/// (emit_headers computes them).
using Fingerprints = std::map<std::string, std::string>;

/// The header of one schema file (all its classes). Each #include of another schema's header
/// carries that header's fingerprint (`fingerprints`): a header changes whenever one it includes
/// does, so a build tool that knows only the listed headers as outputs (Ninja) recompiles their
/// users in the same build. Rendering problems (a template naming an unknown variable, leftover
/// `{{`) are reported to `diagnostics`.
Output emit_schema(const Schema& schema, const ClassIndex& classes, const Templates& templates,
                   const Fingerprints& fingerprints, Diagnostics& diagnostics);

/// The headers of `emitted` (pointers into `schemas`), with the fingerprints of every header
/// they include, transitively, computed from `schemas` (emitted or not).
std::vector<Output> emit_headers(const std::vector<Schema>& schemas,
                                 const std::vector<const Schema*>& emitted,
                                 const ClassIndex& classes, const Templates& templates,
                                 Diagnostics& diagnostics);

}  // namespace tcgen
