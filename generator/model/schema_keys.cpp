#include "model/schema_keys.h"

#include <algorithm>

namespace tcgen {

const std::vector<SchemaKey>& schema_keys() {
  using S = KeyScope;
  // name, scope, yaml, annotation position, target, one name alone, lands (own reading)
  static const std::vector<SchemaKey> keys{
      {"namespace", S::Schema, true, 0, {}, false, "Schema::cpp_namespace"},
      {"version", S::Schema, true, 5, {}, false, "Schema::version (annotations: Class::version)"},
      {"include", S::Schema, true, 0, {}, false, "Schema::includes"},
      {"classes", S::Schema, true, 0, {}, false, "Schema::classes"},

      {"name", S::Class, true, 0, {}, false, "Class::name"},
      {"doc", S::Class, true, 0, &Class::doc, false, ""},
      {"python", S::Class, true, 2, {}, false, "Class::python_name, python_loc"},
      {"options", S::Class, true, 1, {}, false, "Class::options"},
      {"extends", S::Class, true, 0, {}, false, "Class::base, base_loc"},
      {"batch_dims", S::Class, true, 3, &Class::batch_dims, false, ""},
      {"methods", S::Class, true, 0, &Class::methods, false, ""},
      {"cpp_includes", S::Class, true, 4, &Class::cpp_includes, false, ""},
      {"fields", S::Class, true, 0, {}, false, "Class::fields"},

      {"name", S::Field, true, 0, {}, false, "Field::name"},
      {"type", S::Field, true, 0, {}, false, "Field::type"},
      {"dtype", S::Field, false, 1, {}, false, "Field::type's dtype"},
      {"shape", S::Field, false, 2, {}, false, "Field::type's shape"},
      {"default", S::Field, true, 3, {}, false, "Field::default_value, default_loc"},
      {"doc", S::Field, true, 4, &Field::doc, false, ""},
      {"renamed_from", S::Field, true, 5, &Field::renamed_from, true, ""},
      {"deprecated", S::Field, true, 6, {}, false, "Field::deprecated"},
  };
  return keys;
}

std::vector<const SchemaKey*> yaml_keys(KeyScope scope) {
  std::vector<const SchemaKey*> out;
  for (const auto& key : schema_keys()) {
    if (key.yaml && key.scope == scope) out.push_back(&key);
  }
  return out;
}

std::vector<const SchemaKey*> annotation_keys(KeyScope scope) {
  const bool field = scope == KeyScope::Field;
  std::vector<const SchemaKey*> out;
  for (const auto& key : schema_keys()) {
    if (key.annotation && (key.scope == KeyScope::Field) == field) out.push_back(&key);
  }
  std::sort(out.begin(), out.end(),
            [](const SchemaKey* a, const SchemaKey* b) { return a->annotation < b->annotation; });
  return out;
}

std::string key_names(const std::vector<const SchemaKey*>& keys) {
  std::string out;
  for (const auto* key : keys) out += (out.empty() ? "" : ", ") + std::string(key->name);
  return out;
}

const SchemaKey* find_key(const std::vector<const SchemaKey*>& keys, std::string_view name) {
  const auto found = std::find_if(keys.begin(), keys.end(),
                                  [&](const SchemaKey* key) { return key->name == name; });
  return found == keys.end() ? nullptr : *found;
}

}  // namespace tcgen
