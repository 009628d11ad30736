#include "model/field_spec.h"

#include "model/kinds.h"

namespace tcgen {

namespace {

// A default as the runtime reads it back: numbers of float fields as floats (2 -> 2.0), so that
// the value stored is the one Args' `2.0` gives.
nlohmann::ordered_json typed_default(const nlohmann::ordered_json& value, const Type& type) {
  const Type& element = element_type(type);
  if (traits(element.kind).tensors == TensorHolds::Floating && value.is_number_integer()) {
    return static_cast<double>(value.get<int64_t>());
  }
  if (element.kind != TypeKind::List || !value.is_array()) return value;
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const auto& item : value) items.push_back(typed_default(item, element.args.at(0)));
  return items;
}

}  // namespace

FieldSpecFacts field_spec_facts(const Field& field) {
  const Type& element = element_type(field.type);
  FieldSpecFacts facts;
  facts.kind = field_kind(element.kind);
  facts.optional = is_optional(field.type);
  if (element.kind == TypeKind::Class) facts.nested_class = element.class_name;
  facts.wrapper = element.wrapper;
  if (traits(element.kind).is_tensordict && element.args.size() == 2) {
    facts.tensor_values = true;
    facts.dtype = element.args[1].dtype;
  }
  if (element.kind == TypeKind::Tensor) {
    facts.dtype = element.dtype;
    if (element.shape) {
      facts.shape.emplace();
      for (const auto& d : *element.shape) facts.shape->push_back(d.name.empty() ? d.size : -1);
    }
  }
  // What loading a directory of an older schema version needs: the value of a field it lacks,
  // the names it may hold the field under.
  const auto& value = field.default_value;
  if (value && !value->is_null() && value->dump().find("null") == std::string::npos) {
    // (JSON spells .inf and .nan as null: such a default is left out, the field stays required)
    facts.default_json = typed_default(*value, field.type).dump(-1, ' ', true);
  }
  facts.old_names = field.renamed_from;
  facts.deprecated = field.deprecated.has_value();
  return facts;
}

}  // namespace tcgen
