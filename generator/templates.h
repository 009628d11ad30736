#pragma once
// The Mustache templates: compiled into tcgen from templates/, overridable with --template-dir.

#include <map>
#include <string>

#include "diagnostics.h"

namespace tcgen {

/// Template name ("class") -> text.
using Templates = std::map<std::string, std::string>;

/// The templates built into tcgen (generated at build time from templates/*.mustache).
const Templates& builtin_templates();
/// The built-in templates, with those found in `dir` (`<name>.mustache`) replacing them. Reports
/// an unreadable directory or a template with a syntax error.
Templates load_templates(const std::string& dir, Diagnostics& diagnostics);

}  // namespace tcgen
