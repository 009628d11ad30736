#pragma once
// Defences of the YAML front end against hostile or broken input, each reported as a diagnostic
// instead of a crash or an unbounded run: bytes YAML cannot hold, nesting depth, alias expansion.

#include <yaml-cpp/yaml.h>

#include <string>

#include "diagnostics.h"

namespace tcgen {

/// Deepest nesting accepted in a schema, for YAML nodes and for type expressions alike. Real
/// schemas nest a few levels; the bound keeps every recursive walk far from the stack's end.
constexpr int kMaxNesting = 64;
/// Most YAML nodes a schema may expand to, counting each use of an alias in full. Shipped schemas
/// have a few hundred; a "billion laughs" alias bomb stops here.
constexpr long kMaxExpandedNodes = 100000;

/// Reports a NUL byte or invalid UTF-8 (YAML text is Unicode) at its line and column; false then.
bool check_text(const std::string& text, const std::string& display, Diagnostics& diagnostics);

/// True when `text` is valid UTF-8.
bool is_utf8(const std::string& text);

/// Reports a tab in the indentation of the line a YAML syntax error points at (a common cause that
/// yaml-cpp words obscurely); false when the line has none.
bool explain_tab_indent(const std::string& text, const YAML::Mark& mark, const std::string& display,
                        Diagnostics& diagnostics);

/// Walks `root` as the reader will (aliases expanded); reports nesting past kMaxNesting or more
/// than kMaxExpandedNodes nodes. The walk stops at either bound, so its cost is bounded too.
bool check_size(const YAML::Node& root, const std::string& display, Diagnostics& diagnostics);

}  // namespace tcgen
