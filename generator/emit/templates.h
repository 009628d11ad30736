#pragma once
// The Mustache templates: compiled into tcgen from templates/, overridable with --template-dir.

#include <map>
#include <set>
#include <string>

#include "model/diagnostics.h"

namespace tcgen {

/// Template name ("class") -> text.
using Templates = std::map<std::string, std::string>;

/// The templates built into tcgen (generated at build time from templates/*.mustache).
const Templates& builtin_templates();
/// The built-in templates, with those found in `dir` (`<name>.mustache`) replacing them. Reports
/// an unreadable directory, a template with a syntax error, and one that uses a name the built-in
/// template of that name does not use (tcgen provides no value for it: it would render empty).
Templates load_templates(const std::string& dir, Diagnostics& diagnostics);

/// The names a template's tags refer to (`{{x}}`, `{{&x}}`, `{{{x}}}`, sections `{{#x}}`,
/// `{{^x}}`); comments and closing tags add none.
std::set<std::string> template_names(const std::string& text);

}  // namespace tcgen
