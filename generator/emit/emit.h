#pragma once
// Emitting: model -> view models (all C++ spelling done here and in names.h) -> Mustache.

#include <string>

#include "emit/templates.h"
#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

struct Output {
  std::string file_name;  ///< relative to the output directory
  std::string content;
};

/// The header of one schema file (all its classes). Rendering problems (a template naming an
/// unknown variable, leftover `{{`) are reported to `diagnostics`.
Output emit_schema(const Schema& schema, const ClassIndex& classes, const Templates& templates,
                   Diagnostics& diagnostics);

}  // namespace tcgen
