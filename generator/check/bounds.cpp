// Bounds for every front end: what tcgen accepts compiles in bounded time and memory, and
// `tcgen import` writes it as YAML within the YAML front end's bounds (nodes and nesting), so the
// YAML it writes is never refused.
#include "check/bounds.h"

#include <algorithm>
#include <string>

#include "frontend/input_checks.h"
#include "model/output_names.h"

namespace tcgen {
namespace {

using Json = nlohmann::ordered_json;

// Levels below a JSON value's own YAML node: 0 for a scalar or [], 1 for [1] or [[]].
int json_depth(const Json& value) {
  if (!value.is_structured() || value.empty()) return 0;
  int deepest = 0;
  for (const auto& item : value) deepest = std::max(deepest, json_depth(item));
  return deepest + 1;
}

// YAML nodes of `value` as check_size() counts them (keys too).
long json_nodes(const Json& value) {
  long nodes = 1;
  if (value.is_object()) {
    for (const auto& item : value) nodes += 1 + json_nodes(item);
  } else if (value.is_array()) {
    for (const auto& item : value) nodes += json_nodes(item);
  }
  return nodes;
}

// YAML nodes of the schema as `tcgen import` writes it (yaml_writer.cpp) and check_size()
// counts them: a key and its value are two, a list one more than its items.
long yaml_nodes(const Schema& schema) {
  auto list = [](size_t n) { return n ? 2 + static_cast<long>(n) : 0L; };
  auto text = [](bool present) { return present ? 2L : 0L; };
  long nodes = 1 + text(!schema.cpp_namespace.empty()) + text(schema.version != 0) +
               list(schema.includes.size()) + 2;
  for (const auto& cls : schema.classes) {
    nodes += 3 + text(!cls.doc.empty()) + text(!cls.python_name.empty()) +
             list(option_names(cls.options).size()) + list(cls.batch_dims.size()) +
             list(cls.cpp_includes.size()) + list(cls.methods.size()) + 2;
    for (const auto& field : cls.fields) {
      nodes += 5 + text(!field.doc.empty()) + list(field.renamed_from.size()) +
               text(field.deprecated.has_value());
      if (field.default_value) nodes += 1 + json_nodes(*field.default_value);
      if (nodes > kMaxExpandedNodes) return nodes;
    }
  }
  return nodes;
}

}  // namespace

void check_bounds(const Schema& schema, Diagnostics& diagnostics) {
  if (schema.classes.size() > kMaxClassesPerSchema) {
    const Class& cls = schema.classes[kMaxClassesPerSchema];
    diagnostics.error(cls.loc, "class '" + cls.name + "': a schema file holds at most " +
                                   std::to_string(kMaxClassesPerSchema) +
                                   " classes (split it into files that include each other)");
  }
  size_t fields = 0;
  bool schema_reported = false;
  for (const auto& cls : schema.classes) {
    if (cls.fields.size() > kMaxFieldsPerClass) {
      const Field& field = cls.fields[kMaxFieldsPerClass];
      diagnostics.error(field.loc, "field '" + field.name + "': class '" + cls.name +
                                       "' has more than " + std::to_string(kMaxFieldsPerClass) +
                                       " fields, the most a class may have");
    }
    if (!schema_reported && fields + cls.fields.size() > kMaxFieldsPerSchema) {
      const Field& field = cls.fields[kMaxFieldsPerSchema - fields];
      diagnostics.error(
          field.loc, "field '" + field.name + "' of class '" + cls.name +
                         "': a schema file holds at most " + std::to_string(kMaxFieldsPerSchema) +
                         " fields in all (split it into files that include each other)");
      schema_reported = true;
    }
    fields += cls.fields.size();
    for (const auto& field : cls.fields) {
      const int depth =
          kDefaultDepth + (field.default_value ? json_depth(*field.default_value) : 0);
      if (depth > kMaxNesting) {
        diagnostics.error(field.default_loc,
                          "default of field '" + field.name +
                              "' nests too deep for a schema file: its innermost value would "
                              "be at level " +
                              std::to_string(depth) + " of the YAML (the most is " +
                              std::to_string(kMaxNesting) + ")");
      }
    }
  }
  // Within the bounds above, long defaults or lists (methods, batch dims) can still pass it.
  const bool over_bounds = schema.classes.size() > kMaxClassesPerSchema || schema_reported;
  if (!over_bounds && yaml_nodes(schema) > kMaxExpandedNodes) {
    diagnostics.error(schema.loc, "the schema would be more than " +
                                      std::to_string(kMaxExpandedNodes) +
                                      " YAML nodes, more than a schema file may have");
  }
}

}  // namespace tcgen
