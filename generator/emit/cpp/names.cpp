#include "emit/cpp/names.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include "model/field_spec.h"
#include "model/kinds.h"
#include "model/source_text.h"

namespace tcgen {

std::string aten_dtype(const std::string& dtype) {
  return "::at::k" + std::string(schema_dtype(dtype)->scalar_type);
}

std::string cpp_type(const Type& type, const std::string& current_namespace) {
  switch (form_of(type)) {
    case KindForm::Tensor:
    case KindForm::Value:
      return std::string(traits(type.kind).cpp_type);
    case KindForm::List:
      return "::std::vector<" + cpp_type(type.args.at(0), current_namespace) + ">";
    case KindForm::Optional:
      return optional_of(cpp_type(type.args.at(0), current_namespace));
    case KindForm::Class:
      return type.class_name;  // qualified by the emitter once the class is resolved
  }
  return "void";
}

std::string qualified_class_name(const Class& cls, const std::string& current_namespace) {
  // Inside a generated class, a member it inherits (TensorDict's `std`, ...) hides a class of
  // that name: such a class is named from the root.
  const bool hidden = is_tensorclass_member_name(cls.name) || is_tensordict_member_name(cls.name);
  if (cls.cpp_namespace == current_namespace && !hidden) return cls.name;
  if (cls.cpp_namespace.empty()) return hidden ? "::" + cls.name : cls.name;
  return "::" + cls.cpp_namespace + "::" + cls.name;
}

std::string optional_of(const std::string& type) { return "::std::optional<" + type + ">"; }

std::string autocast_of(const std::string& type) { return "::tensordict::Autocast<" + type + ">"; }

std::string const_ref(const std::string& type) { return "const " + type + "&"; }

std::string moved(const std::string& expr) { return "::std::move(" + expr + ")"; }

std::string as_field(const std::string& expr) { return "as_field(" + expr + ")"; }

std::string field_reader(const Type& type, const std::string& element) {
  const std::string prefix = is_optional(type) ? "optional_" : "";
  switch (form_of(element_type(type))) {
    case KindForm::Tensor:
      return prefix + "tensor_field";
    case KindForm::Class:
      return prefix + "nested_field<" + element + ">";
    case KindForm::Value:
      // None reads as null, as Python returns None
      if (traits(element_type(type).kind).is_json && prefix.empty()) return "any_field";
      break;
    case KindForm::List:
    case KindForm::Optional:
      break;
  }
  return prefix + "value_field<" + element + ">";
}

namespace {

std::string kind_constant(TypeKind kind) {
  return "Kind::" + std::string(tensordict::spelling(field_kind(kind)).enumerator);
}

std::string shape_initializer(const std::vector<int64_t>& sizes) {
  std::string dims;
  for (const int64_t size : sizes) dims += (dims.empty() ? "" : ", ") + std::to_string(size);
  return "{" + dims + "}";
}

}  // namespace

std::string field_spec_head(const Field& field) {
  return "Field(" + cpp_text(field.name, CppText::Literal) + ", " +
         kind_constant(element_type(field.type).kind) + ")";
}

namespace {

// JSON text in ASCII (`\uXXXX` for every other character, so no character that needs_escape
// reaches the header) as a raw string literal (which has no escapes), under a delimiter that the
// text does not close.
std::string json_literal(const std::string& text) {
  std::string delimiter;
  for (int n = 0; text.find(")" + delimiter + "\"") != std::string::npos; ++n) {
    delimiter = "tc" + std::to_string(n);
  }
  return "R\"" + delimiter + "(" + text + ")" + delimiter + "\"";
}

}  // namespace

std::vector<std::string> field_spec_calls(const Field& field, const std::string& nested) {
  const FieldSpecFacts facts = field_spec_facts(field);
  std::vector<std::string> calls;
  if (facts.optional) calls.push_back(".nullable()");
  if (!facts.nested_class.empty()) calls.push_back(".with_class(&" + nested + "::class_spec)");
  if (facts.tensor_values) calls.push_back(".with_tensor_values()");
  if (facts.wrapper == Wrapper::NonTensorData) calls.push_back(".as_non_tensor_data()");
  if (facts.wrapper == Wrapper::MetaData) calls.push_back(".as_metadata()");
  if (facts.dtype) calls.push_back(".with_dtype(" + aten_dtype(*facts.dtype) + ")");
  if (facts.shape) calls.push_back(".with_shape(" + shape_initializer(*facts.shape) + ")");
  if (facts.default_json)
    calls.push_back(".with_default(" + json_literal(*facts.default_json) + ")");
  if (!facts.old_names.empty()) {
    std::string names;
    for (const auto& old : facts.old_names)
      names += (names.empty() ? "" : ", ") + cpp_text(old, CppText::Literal);
    calls.push_back(".renamed_from({" + names + "})");
  }
  if (facts.deprecated) calls.push_back(".as_deprecated()");
  return calls;
}

std::string nullopt_literal() { return "::std::nullopt"; }

std::string json_null_literal() { return "nullptr"; }

namespace {

std::string float_literal(double value) {
  if (std::isnan(value)) return "::std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(value)) {
    return std::string(value < 0 ? "-" : "") + "::std::numeric_limits<double>::infinity()";
  }
  return nlohmann::ordered_json(value).dump();
}

std::string text_literal(const std::string& text) {
  // A NUL would end a plain literal's std::string early; give the length.
  if (text.find('\0') == std::string::npos) return cpp_text(text, CppText::Literal);
  return "::std::string(" + cpp_text(text, CppText::Literal) + ", " + std::to_string(text.size()) +
         ")";
}

std::string list_literal(const nlohmann::ordered_json& items, const Type& list) {
  std::string text;
  for (const auto& item : items) {
    text += (text.empty() ? "" : ", ") + default_literal(item, list.args.at(0));
  }
  return cpp_type(list, "") + "{" + text + "}";
}

std::string number_literal(const nlohmann::ordered_json& value, const Type& element) {
  if (traits(element.kind).tensors == TensorHolds::Floating && value.is_number_integer()) {
    return std::to_string(value.get<int64_t>()) + ".0";
  }
  if (value.is_number_float()) return float_literal(value.get<double>());
  // -9223372036854775808 would be the negation of a literal too large for int64_t (a warning).
  if (value.is_number_integer() && value.get<int64_t>() == std::numeric_limits<int64_t>::min()) {
    return "(-9223372036854775807 - 1)";
  }
  return value.dump();
}

}  // namespace

std::string default_literal(const nlohmann::ordered_json& value, const Type& type) {
  if (value.is_null()) return is_optional(type) ? nullopt_literal() : json_null_literal();
  const Type& element = element_type(type);
  if (traits(element.kind).is_json) {
    return "::tensordict::Json::parse(" + json_literal(value.dump(-1, ' ', true)) + ")";
  }
  if (value.is_string()) return text_literal(value.get_ref<const std::string&>());
  if (value.is_array()) return list_literal(value, element);
  return number_literal(value, element);
}

}  // namespace tcgen
