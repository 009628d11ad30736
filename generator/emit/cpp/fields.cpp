#include "emit/cpp/fields.h"

#include <sstream>

#include "emit/cpp/names.h"
#include "model/kinds.h"

namespace tcgen {
namespace {

using kainjow::mustache::data;

std::string class_type(const Type& type, const FieldContext& ctx) {
  return qualified_class_name(*ctx.classes.at(type.class_name), ctx.cls.cpp_namespace);
}

std::string value_type(const Type& type, const FieldContext& ctx) {
  if (type.kind == TypeKind::Class) return class_type(type, ctx);
  if (is_optional(type)) return optional_of(value_type(type.args[0], ctx));
  return cpp_type(type, ctx.cls.cpp_namespace);
}

// `Field("obs", Kind::Tensor).with_dtype(at::kFloat)...`: one line when it fits (its indent and a
// comma), else one call per line, as clang-format breaks a member chain.
std::string spec_initializer(const Field& field, const FieldContext& ctx) {
  const Type& type = element_type(field.type);
  const std::string nested = type.kind == TypeKind::Class ? class_type(type, ctx) : "";
  const std::vector<std::string> calls = field_spec_calls(field, nested);
  std::string spec = field_spec_head(field);
  size_t length = ctx.spec_indent + spec.size() + 1;
  for (const auto& call : calls) length += call.size();
  const std::string separator =
      length <= kColumnLimit ? "" : "\n" + std::string(ctx.spec_indent + 4, ' ');
  for (const auto& call : calls) spec += separator + call;
  return spec;
}

// `value` is the setter's parameter (field.mustache).
data base_accessor(const Field& field, const FieldContext& ctx) {
  data view;
  view.set("doc", doc_lines(field.doc, 2));
  view.set("accessor", accessor_name(field));
  view.set("setter", setter_name(field));
  view.set("index", std::to_string(ctx.index));
  view.set("class", ctx.cls.name);
  view.set("stored", moved("value"));
  if (ctx.cls.options.frozen) view.set("frozen", true);
  return view;
}

// An Args member's type; `unset` when it is held as std::optional or Autocast, so that it starts
// as nullopt.
struct ArgType {
  std::string spelling;
  bool unset;
};

data arg_member(const Field& field, const ArgType& type, const FieldContext& ctx) {
  data arg;
  arg.set("doc", doc_lines(field.doc, 4));
  arg.set("name", accessor_name(field));
  arg.set("arg_type", type.spelling);
  // Every member has an initializer, so that `C({a, b})` leaving later members out does not trip
  // -Wmissing-field-initializers in users' code.
  std::string init;
  // A tensor default is made by the runtime, a tensor per instance (the member stays undefined).
  const bool tensor_default = form_of(field.type) == KindForm::Tensor && field.default_value;
  if (field.default_value && !tensor_default) {
    init = " = " + default_literal(*field.default_value, field.type);
  } else if (type.unset) {
    init = " = " + nullopt_literal();
  } else if (traits(element_type(field.type).kind).is_json) {
    init = " = " + json_null_literal();
  }
  arg.set("arg_init", init);
  // Hidden from the API: no Args member; the runtime gives new instances the field's default.
  if (field.deprecated) arg.set("deprecated", true);
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
    for (std::string word; std::getline(words, word, ' ');) {
      if (word.empty()) continue;               // a run of spaces
      word = cpp_text(word, CppText::Comment);  // a tab, CR, NUL, ... spelled out
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
  const std::string type = value_type(field.type, ctx);
  const std::string tensor = value_type(element_type(field.type), ctx);
  const bool optional = is_optional(field.type);
  view.accessor.set("return_type", optional ? type : const_ref(type));
  view.accessor.set("read", field_reader(field.type, tensor));
  view.accessor.set("param_type", type);
  view.arg = arg_member(field, {type, optional}, ctx);
  return view;
}

FieldView nested_field(const Field& field, const FieldContext& ctx) {
  FieldView view{base_accessor(field, ctx), {}, spec_initializer(field, ctx)};
  const std::string type = value_type(field.type, ctx);
  const std::string nested = value_type(element_type(field.type), ctx);
  view.accessor.set("return_type", type);
  view.accessor.set("read", field_reader(field.type, nested));
  view.accessor.set("param_type", type);
  view.accessor.set("stored", as_field(moved("value")));
  // Held as std::optional even when required: generated classes have no public default
  // constructor, and Args must stay default-constructible. Unset required fields throw KeyError.
  view.arg = arg_member(field, {optional_of(nested), true}, ctx);
  return view;
}

FieldView value_field(const Field& field, const FieldContext& ctx) {
  FieldView view{base_accessor(field, ctx), {}, spec_initializer(field, ctx)};
  const std::string type = value_type(field.type, ctx);
  const bool optional = is_optional(field.type);
  const KindTraits& kind = traits(element_type(field.type).kind);
  const std::string element = value_type(element_type(field.type), ctx);
  view.accessor.set("return_type", type);
  view.accessor.set("read", field_reader(field.type, element));
  view.accessor.set("param_type", type);
  if (is_number(kind) && !optional) view.accessor.set("stored", "value");
  // Autocast casts a tensor given for a plain field (Python's `int(t)`): both the constructor and
  // the setter take one.
  if (ctx.cls.options.autocast && kind.autocast) {
    view.accessor.set("param_type", autocast_of(element));
    view.accessor.set("stored", moved("value"));
    view.arg = arg_member(field, {autocast_of(element), true}, ctx);
    return view;
  }
  // A required field without a default is held as std::optional in Args, so that leaving it
  // unset is detected (KeyError) instead of silently storing 0 or "".
  const bool must_be_given = !optional && !field.default_value && !kind.is_json;
  view.arg = arg_member(
      field, must_be_given ? ArgType{optional_of(type), true} : ArgType{type, optional}, ctx);
  return view;
}

}  // namespace tcgen
