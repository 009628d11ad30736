#include "emit_fields.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "names.h"

namespace tcgen {
namespace {

constexpr size_t kColumnLimit = 100;

using kainjow::mustache::data;
using Json = nlohmann::ordered_json;

const Type& element_type(const Type& type) {
  return type.kind == TypeKind::Optional ? type.args.at(0) : type;
}
bool is_optional(const Type& type) { return type.kind == TypeKind::Optional; }

// `kind` is a field's element type: optional[...] already removed.
std::string kind_constant(TypeKind kind) {
  return "Kind::" + std::string(tensordict::spelling(field_kind(kind)).enumerator);
}

std::string class_type(const Type& type, const FieldContext& ctx) {
  return qualified_class_name(*ctx.classes.at(type.class_name), ctx.cls.cpp_namespace);
}

std::string value_type(const Type& type, const FieldContext& ctx) {
  if (type.kind == TypeKind::Class) return class_type(type, ctx);
  if (type.kind == TypeKind::Optional)
    return "::std::optional<" + value_type(type.args[0], ctx) + ">";
  return cpp_type(type, ctx.cls.cpp_namespace);
}

std::string shape_initializer(const std::vector<Dim>& shape) {
  std::string dims;
  for (const auto& d : shape) {
    dims += (dims.empty() ? "" : ", ") + (d.name.empty() ? std::to_string(d.size) : "-1");
  }
  return "{" + dims + "}";
}

// `Field("obs", Kind::Tensor).with_dtype(at::kFloat)...`: one line when it fits (12 columns of
// indent and a comma), else one call per line, as clang-format breaks a member chain.
std::string spec_initializer(const Field& field, const FieldContext& ctx) {
  const Type& type = element_type(field.type);
  std::vector<std::string> calls;
  if (is_optional(field.type)) calls.push_back(".nullable()");
  if (type.kind == TypeKind::Class)
    calls.push_back(".with_class(&" + class_type(type, ctx) + "::class_spec)");
  if (type.kind == TypeKind::Tensor && type.dtype)
    calls.push_back(".with_dtype(" + aten_dtype(*type.dtype) + ")");
  if (type.kind == TypeKind::Tensor && type.shape)
    calls.push_back(".with_shape(" + shape_initializer(*type.shape) + ")");
  std::string spec = "Field(\"" + field.name + "\", " + kind_constant(type.kind) + ")";
  size_t length = 12 + spec.size() + 1;
  for (const auto& call : calls) length += call.size();
  const std::string separator = length <= kColumnLimit ? "" : "\n                ";
  for (const auto& call : calls) spec += separator + call;
  return spec;
}

// Escapes what cannot stand for itself in a "..." literal: quotes, backslashes, control
// characters (CR, NUL, ...; octal, which never swallows a following digit as \x would) and the
// second '?' of a pair (a trigraph under -trigraphs, a -Wtrigraphs warning otherwise).
std::string cpp_string_literal(const std::string& text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || (c == '?' && i > 0 && text[i - 1] == '?')) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (byte < 0x20 || byte == 0x7F) {
      const char octal[] = {'\\', static_cast<char>('0' + (byte >> 6)),
                            static_cast<char>('0' + ((byte >> 3) & 7)),
                            static_cast<char>('0' + (byte & 7)), '\0'};
      out += octal;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Raw string literal of `text`, with a delimiter that `text` does not close.
std::string cpp_raw_string_literal(const std::string& text) {
  std::string delimiter;
  for (int n = 0; text.find(")" + delimiter + "\"") != std::string::npos; ++n) {
    delimiter = "tc" + std::to_string(n);
  }
  return "R\"" + delimiter + "(" + text + ")" + delimiter + "\"";
}

std::string float_literal(double value) {
  if (std::isnan(value)) return "::std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(value)) {
    return std::string(value < 0 ? "-" : "") + "::std::numeric_limits<double>::infinity()";
  }
  return Json(value).dump();
}

// C++ spelling of a default value for an Args member of type `type`.
std::string literal(const Json& value, const Type& type) {
  if (value.is_null()) return is_optional(type) ? "::std::nullopt" : "nullptr";
  const Type& element = element_type(type);
  if (element.kind == TypeKind::Any) {
    return "::tensordict::Json::parse(" + cpp_raw_string_literal(value.dump()) + ")";
  }
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    // A NUL would end a plain literal's std::string early; give the length.
    if (text.find('\0') == std::string::npos) return cpp_string_literal(text);
    return "::std::string(" + cpp_string_literal(text) + ", " + std::to_string(text.size()) + ")";
  }
  if (value.is_array()) {
    std::string items;
    for (const auto& item : value) {
      items += (items.empty() ? "" : ", ") + literal(item, element.args.at(0));
    }
    return cpp_type(element, "") + "{" + items + "}";
  }
  if (element.kind == TypeKind::Float && value.is_number_integer()) {
    return std::to_string(value.get<int64_t>()) + ".0";
  }
  if (value.is_number_float()) return float_literal(value.get<double>());
  // -9223372036854775808 would be the negation of a literal too large for int64_t (a warning).
  if (value.is_number_integer() && value.get<int64_t>() == std::numeric_limits<int64_t>::min()) {
    return "(-9223372036854775807 - 1)";
  }
  return value.dump();
}

data base_accessor(const Field& field, const FieldContext& ctx) {
  data view;
  view.set("doc", doc_lines(field.doc, 2));
  view.set("accessor", accessor_name(field));
  view.set("setter", setter_name(field));
  view.set("index", std::to_string(ctx.index));
  view.set("class", ctx.cls.name);
  view.set("stored", "::std::move(value)");
  if (ctx.cls.options.frozen) view.set("frozen", true);
  return view;
}

data arg_member(const Field& field, const std::string& type, const FieldContext& ctx) {
  data arg;
  arg.set("doc", doc_lines(field.doc, 4));
  arg.set("name", accessor_name(field));
  arg.set("arg_type", type);
  // Every member has an initializer, so that `C({a, b})` leaving later members out does not trip
  // -Wmissing-field-initializers in users' code.
  std::string init;
  if (field.default_value) {
    init = " = " + literal(*field.default_value, field.type);
  } else if (type.rfind("::std::optional<", 0) == 0 ||
             type.rfind("::tensordict::Autocast<", 0) == 0) {
    init = " = ::std::nullopt";
  } else if (element_type(field.type).kind == TypeKind::Any) {
    init = " = nullptr";
  }
  arg.set("arg_init", init);
  return arg;
}

}  // namespace

data doc_lines(const std::string& text, size_t indent) {
  const size_t width = kColumnLimit - indent - 4;  // "/// "
  data lines = data::type::list;
  auto add = [&lines](const std::string& line) {
    data item;
    item.set("line", line);
    lines.push_back(item);
  };
  std::istringstream paragraphs(text);
  for (std::string paragraph; std::getline(paragraphs, paragraph);) {
    std::istringstream words(paragraph);
    std::string line;
    for (std::string word; words >> word;) {
      if (!line.empty() && line.size() + 1 + word.size() > width) {
        add(line);
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    add(line);
  }
  return lines;
}

FieldView tensor_field(const Field& field, const FieldContext& ctx) {
  FieldView view{base_accessor(field, ctx), {}, spec_initializer(field, ctx)};
  const bool optional = is_optional(field.type);
  view.accessor.set("return_type",
                    optional ? "::std::optional<::at::Tensor>" : "const ::at::Tensor&");
  view.accessor.set("read", optional ? "optional_tensor_field" : "tensor_field");
  view.accessor.set("param_type", optional ? "::std::optional<::at::Tensor>" : "::at::Tensor");
  view.arg = arg_member(field, optional ? "::std::optional<::at::Tensor>" : "::at::Tensor", ctx);
  return view;
}

FieldView nested_field(const Field& field, const FieldContext& ctx) {
  FieldView view{base_accessor(field, ctx), {}, spec_initializer(field, ctx)};
  const std::string type = value_type(field.type, ctx);
  const std::string nested = class_type(element_type(field.type), ctx);
  const bool optional = is_optional(field.type);
  view.accessor.set("return_type", type);
  view.accessor.set("read", (optional ? "optional_nested_field<" : "nested_field<") + nested + ">");
  view.accessor.set("param_type", type);
  view.accessor.set("stored", "as_field(::std::move(value))");
  // Held as std::optional even when required: generated classes have no public default
  // constructor, and Args must stay default-constructible. Unset required fields throw KeyError.
  view.arg = arg_member(field, "::std::optional<" + nested + ">", ctx);
  return view;
}

FieldView value_field(const Field& field, const FieldContext& ctx) {
  FieldView view{base_accessor(field, ctx), {}, spec_initializer(field, ctx)};
  const std::string type = value_type(field.type, ctx);
  const bool optional = is_optional(field.type);
  const TypeKind kind = element_type(field.type).kind;
  const std::string element = cpp_type(element_type(field.type), ctx.cls.cpp_namespace);
  view.accessor.set("return_type", type);
  if (kind == TypeKind::Any && !optional) {
    view.accessor.set("read", "any_field");  // None reads as null, as Python returns None
  } else {
    view.accessor.set("read",
                      (optional ? "optional_value_field<" : "value_field<") + element + ">");
  }
  view.accessor.set("param_type", type);
  const bool scalar = kind == TypeKind::Int || kind == TypeKind::Float || kind == TypeKind::Bool;
  if (scalar && !optional) view.accessor.set("stored", "value");
  // Autocast casts a tensor given for a plain field (Python's `int(t)`): both the constructor and
  // the setter take one.
  if (ctx.cls.options.autocast && (scalar || kind == TypeKind::Str)) {
    const std::string cast = "::tensordict::Autocast<" + element + ">";
    view.accessor.set("param_type", cast);
    view.accessor.set("stored", "::std::move(value)");
    view.arg = arg_member(field, cast, ctx);
    return view;
  }
  // A required field without a default is held as std::optional in Args, so that leaving it
  // unset is detected (KeyError) instead of silently storing 0 or "".
  const bool must_be_given = !optional && !field.default_value && kind != TypeKind::Any;
  view.arg = arg_member(field, must_be_given ? "::std::optional<" + type + ">" : type, ctx);
  return view;
}

}  // namespace tcgen
