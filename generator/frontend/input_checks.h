#pragma once
// Defences of the YAML front end against hostile or broken input, each reported as a diagnostic
// instead of a crash or an unbounded run: bytes YAML cannot hold, nesting depth, alias expansion.

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>

#include "model/diagnostics.h"

namespace tcgen {

/// Deepest nesting accepted in a schema, for YAML nodes and for type expressions alike. Real
/// schemas nest a few levels; the bound keeps every recursive walk far from the stack's end.
constexpr int kMaxNesting = 64;
/// Most YAML nodes a schema may expand to, counting each use of an alias in full. Shipped schemas
/// have a few hundred; a "billion laughs" alias bomb stops here.
constexpr long kMaxExpandedNodes = 100000;
/// Most classes of one schema file, fields of one class, and fields of one schema file, for every
/// front end: what tcgen accepts must compile in bounded time and memory. Each class instantiates
/// TensorClass<C> (about 22 ms and 0.85 MB of g++ -O3 each; 10,000 annotated structs made a
/// header that failed to compile after 6 minutes), fields cost little. Shipped schemas have two
/// classes of at most nine fields.
constexpr size_t kMaxClassesPerSchema = 500;
constexpr size_t kMaxFieldsPerClass = 1000;
constexpr size_t kMaxFieldsPerSchema = 5000;
/// The YAML level of a field's default in a schema file (under the file map, the classes list, a
/// class map, the fields list and the field map): a default whose innermost value lies more than
/// kMaxNesting - kDefaultDepth levels below it cannot be written as YAML the YAML front end reads.
constexpr int kDefaultDepth = 5;

/// Reports a NUL byte or invalid UTF-8 (YAML text is Unicode) at its line and column; false then.
bool check_text(const std::string& text, const std::string& display, Diagnostics& diagnostics);

/// True when `text` is valid UTF-8.
bool is_utf8(const std::string& text);

/// Reports a tab in the indentation of the line a YAML syntax error points at (a common cause that
/// yaml-cpp words obscurely); false when the line has none.
bool explain_tab_indent(const std::string& text, const YAML::Mark& mark, const std::string& display,
                        Diagnostics& diagnostics);

/// Reports each `type:` of a `{...}` mapping whose plain value holds brackets (`{name: x, type:
/// tensor[float32, (B, 3)]}`), when the first lies before the YAML syntax error at `mark`: a flow
/// mapping's value ends at ',' or '[', so it must be quoted there. False when there is none.
bool explain_flow_types(const std::string& text, const YAML::Mark& mark, const std::string& display,
                        Diagnostics& diagnostics);

/// Walks `root` as the reader will (aliases expanded); reports nesting past kMaxNesting or more
/// than kMaxExpandedNodes nodes. The walk stops at either bound, so its cost is bounded too.
bool check_size(const YAML::Node& root, const std::string& display, Diagnostics& diagnostics);

}  // namespace tcgen
