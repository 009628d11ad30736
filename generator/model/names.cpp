#include "model/names.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include "model/kinds.h"
#include "model/python_names.h"
#include "model/source_text.h"

namespace tcgen {

std::string aten_dtype(const std::string& dtype) {
  return "::at::k" + std::string(schema_dtype(dtype)->scalar_type);
}

std::vector<std::string> option_names(const tensordict::ClassOptions& options) {
  std::vector<std::string> names;
  for (const auto& row : tensordict::kClassOptions) {
    if (options.has(row.option)) names.emplace_back(row.name);
  }
  return names;
}

std::string accessor_name(const Field& field) {
  const auto is_member = [](const std::string& name) {
    return is_tensorclass_member_name(name) || is_tensordict_member_name(name);
  };
  const bool hides_member =
      is_reserved_name(field.name) || is_member(field.name) || is_member("set_" + field.name);
  return hides_member ? std::string(tensordict::kReservedFieldPrefix) + field.name : field.name;
}

std::string setter_name(const Field& field) { return "set_" + accessor_name(field); }

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

std::string python_type_string(const Class& cls) {
  return "<class '" + python_dotted_name(cls) + "'>";
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

namespace {

// Octal escapes of a character's bytes: `\015`, `\342\200\250`.
std::string octal_escapes(const std::string& text, size_t at, size_t size) {
  std::string out;
  for (size_t i = at; i < at + size; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const char octal[] = {'\\', static_cast<char>('0' + (byte >> 6)),
                          static_cast<char>('0' + ((byte >> 3) & 7)),
                          static_cast<char>('0' + (byte & 7)), '\0'};
    out += octal;
  }
  return out;
}

}  // namespace

std::string cpp_text(const std::string& text, CppText form) {
  const bool literal = form != CppText::Comment;
  const std::string quote = form == CppText::Literal ? "\"" : "";
  std::string out = quote;
  for (size_t i = 0; i < text.size();) {
    const TextChar c = text_char_at(text, i);
    const bool trigraph = c.value == '?' && i > 0 && text[i - 1] == '?';
    if (literal && (c.value == '"' || c.value == '\\' || trigraph)) {
      out += '\\';
      out += static_cast<char>(c.value);
    } else if (!needs_escape(c)) {
      out.append(text, i, c.size);
    } else if (literal && c.value == '\n') {
      out += "\\n";
    } else {
      out += literal ? octal_escapes(text, i, c.size) : escape_sequence(c);
    }
    i += c.size;
  }
  return out + quote;
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

std::string header_name(const std::string& schema_path) {
  return std::filesystem::path(schema_path).stem().string() + ".h";
}

}  // namespace tcgen
