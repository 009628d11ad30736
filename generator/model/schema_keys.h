#pragma once
// The keys a schema is written with, in one place: one row per key (schema_keys.cpp) says which
// mapping of a YAML schema holds it, whether TC_CLASS / TC_FIELD take it, and where it lands in
// the model. Both front ends take from it the keys they accept (and so their unknown-key
// messages), and read the plain keys (text, lists of names) through it; a key that needs reading
// of its own (a type, a default, options) is read by each front end by name.

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/model.h"

namespace tcgen {

/// The mapping of a YAML schema that holds a key. Annotations have no file level: TC_CLASS takes
/// the keys of the schema and of the class (a header is one schema), TC_FIELD those of the field.
enum class KeyScope { Schema, Class, Field };

/// Where a plain key's value lands: text, or a list of names (a YAML list, or a comma-separated
/// annotation value), in the class or the field. Empty for a key read by the front ends' own code.
using KeyTarget =
    std::variant<std::monostate, std::string Class::*, std::vector<std::string> Class::*,
                 std::string Field::*, std::vector<std::string> Field::*>;

/// One key.
struct SchemaKey {
  /// As written: `python:` in YAML, `"python=..."` in TC_CLASS.
  std::string_view name;
  KeyScope scope;
  /// Whether YAML schemas take it.
  bool yaml;
  /// Its position among the keys of TC_CLASS or TC_FIELD, from 1, as their messages list them
  /// (an order of their own, older than this table); 0 when annotations do not take it.
  int annotation;
  /// Where a plain key lands.
  KeyTarget target;
  /// A list of names that YAML also takes as one name alone (`renamed_from: old`).
  bool one_name_alone;
  /// The model members a key read by the front ends' own code fills (empty for plain keys).
  std::string_view lands;
};

/// Every key, in YAML's order within each scope (the order of its messages).
const std::vector<SchemaKey>& schema_keys();

/// The keys YAML takes in `scope`'s mapping, in table order.
std::vector<const SchemaKey*> yaml_keys(KeyScope scope);
/// The keys TC_FIELD (`scope` Field) or TC_CLASS (otherwise) takes, in their position's order.
std::vector<const SchemaKey*> annotation_keys(KeyScope scope);
/// Their names, comma-separated: the "(allowed: ...)" of a message.
std::string key_names(const std::vector<const SchemaKey*>& keys);
/// The key of `keys` named `name`, else nullptr.
const SchemaKey* find_key(const std::vector<const SchemaKey*>& keys, std::string_view name);

}  // namespace tcgen
