#include "emit/cpp/headers.h"

#include <kainjow/mustache.hpp>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "emit/cpp/fields.h"
#include "emit/cpp/names.h"
#include "emit/render.h"
#include "model/kinds.h"
#include "version.h"

namespace tcgen {
namespace {

using kainjow::mustache::data;

FieldView field_view(const Field& field, const FieldContext& ctx) {
  switch (form_of(element_type(field.type))) {
    case KindForm::Tensor:
      return tensor_field(field, ctx);
    case KindForm::Class:
      return nested_field(field, ctx);
    case KindForm::Value:
    case KindForm::List:
    case KindForm::Optional:  // not an element type
      return value_field(field, ctx);
  }
  return value_field(field, ctx);
}

bool fits(const std::string& text, const std::string& marker) {
  size_t at = text.find(marker);
  if (at == std::string::npos) return true;
  size_t begin = text.rfind('\n', at) + 1;  // npos + 1 == 0
  size_t end = text.find('\n', at);
  return (end == std::string::npos ? text.size() : end) - begin <= kColumnLimit;
}

// Getter and setter on one line each when they fit in the column limit, else with the body on
// its own line, as clang-format lays them out (`name`: field.mustache or field_definition).
std::string render_field(kainjow::mustache::data view, Renderer& renderer,
                         const std::string& name = "field") {
  view.set("getter_fits", true);
  view.set("setter_fits", true);
  const std::string one_line = renderer.render(name, view);
  view.set("getter_fits", fits(one_line, "() const {"));
  view.set("setter_fits", fits(one_line, " value) {"));
  return trim_newlines(renderer.render(name, view));
}

// `prefix` followed by `params`, as clang-format lays out a parameter list that does not fit on
// one line: as many parameters per line as fit, later lines aligned after the opening parenthesis.
std::string packed_parameters(const std::string& prefix, const std::vector<std::string>& params) {
  std::string text = prefix;
  size_t line_start = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string item = params[i] + (i + 1 == params.size() ? ")" : ",");
    const bool first_on_line = text.size() - line_start == prefix.size();
    if (!first_on_line && text.size() - line_start + 1 + item.size() > kColumnLimit) {
      text += "\n";
      line_start = text.size();
      text += std::string(prefix.size(), ' ');
    } else if (!first_on_line) {
      text += " ";
    }
    text += item;
  }
  return text;
}

// `.with(Option::frozen)...` for each option set (after `tensordict::ClassOptions()`).
std::string options_initializer(const Options& o) {
  std::string text;
  for (const auto& name : option_names(o)) text += ".with(Option::" + name + ")";
  return text;
}

// A class's text: its body, and what is defined after it (`out_of_class`, placed after the body
// of `due`; empty when it follows the body or there is none).
struct ClassText {
  std::string body;
  std::string out_of_class;
  std::string due;
  std::set<std::string> named_ahead;  // the later classes its declarations name
};

// `later`: the classes of the header that come after this one (a cycle of classes that hold each
// other): what needs them complete is declared in the class and defined after the last of them.
ClassText class_text(const Class& cls, const ClassIndex& classes,
                     const std::vector<std::string>& later, Renderer& renderer) {
  data view;
  view.set("name", cls.name);
  view.set("doc", doc_lines(cls.doc, 0));
  view.set("python_type", cpp_text(python_type_string(cls), CppText::InLiteral));
  view.set("options", options_initializer(cls.options));
  view.set("has_options", !option_names(cls.options).empty());
  view.set("has_fields", !cls.fields.empty());
  view.set("indent", std::string(cls.name.size() + 12, ' '));
  view.set("field_count", std::to_string(cls.fields.size()));
  view.set("args_members", renderer.partial("args_members"));
  view.set("field_values", renderer.partial("field_values"));
  view.set("spec_body", renderer.partial("spec_body"));
  view.set("out_of_class", renderer.partial("out_of_class"));
  ClassText text;
  const auto position = [&](const std::string& name) {
    return std::find(later.begin(), later.end(), name) - later.begin();
  };
  for (const auto& field : cls.fields) {
    const std::string nested = nested_class_name(field.type);
    const auto at = position(nested);
    if (at == static_cast<std::ptrdiff_t>(later.size())) continue;
    text.named_ahead.insert(nested);
    if (text.due.empty() || at > position(text.due)) text.due = nested;
  }
  const bool holds_later = !text.due.empty();
  // A class with a field of its own type (optional: the checker refuses it otherwise) is
  // incomplete inside its body: its Args, which hold that field, and what uses them are defined
  // after it (the same partials, indented by `pad`); so is all that needs a later class complete.
  const bool recursive = std::any_of(cls.fields.begin(), cls.fields.end(), [&](const Field& f) {
    return nested_class_name(f.type) == cls.name;
  });
  const bool args_after = recursive || holds_later;
  view.set(args_after ? "args_after" : "args_inside", data("pad", args_after ? "  " : "    "));
  view.set("after_here", args_after && !holds_later);
  view.set("definition_head", packed_parameters("inline " + cls.name + "::" + cls.name + "(",
                                                {"Args args", "::tensordict::BatchSize batch_size",
                                                 "::std::optional<::at::Device> device",
                                                 "::std::optional<::tensordict::DimNames> names"}));
  if (cls.version) view.set("version", std::to_string(cls.version));
  data fields = data::type::list, specs = data::type::list, accessors = data::type::list;
  data definitions = data::type::list;
  for (size_t i = 0; i < cls.fields.size(); ++i) {
    FieldView field =
        field_view(cls.fields[i], FieldContext{cls, classes, i, holds_later ? 10u : 12u});
    fields.push_back(field.arg);
    data spec;
    spec.set("spec", field.spec);
    specs.push_back(spec);
    if (cls.fields[i].deprecated) continue;  // hidden from the API: no accessor, no setter
    const bool defined_after = position(nested_class_name(cls.fields[i].type)) !=
                               static_cast<std::ptrdiff_t>(later.size());
    if (defined_after) {
      definitions.push_back(
          data("text", render_field(field.accessor, renderer, "field_definition")));
      field.accessor.set("declared", true);
    }
    data accessor;
    accessor.set("text", render_field(field.accessor, renderer));
    accessors.push_back(accessor);
  }
  view.set("fields", fields);
  data spec_view("pad", holds_later ? "  " : "    ");
  spec_view.set("field_specs", specs);
  view.set(holds_later ? "spec_after" : "spec_inside", spec_view);
  view.set("definitions", definitions);
  view.set("accessors", accessors);
  data methods = data::type::list;
  for (const auto& declaration : cls.methods) {
    data method;
    method.set("declaration", declaration);
    methods.push_back(method);
  }
  view.set("methods", methods);
  view.set("has_methods", !cls.methods.empty());
  // No member between the registration and `private:` (a class without fields): one blank line.
  view.set("bare", accessors.is_empty_list() && cls.methods.empty());
  // A derived class converts to each of its bases, aliasing its data (a Python instance of a
  // subclass is one of its bases).
  data bases = data::type::list;
  for (const Class* base : bases_of(cls, classes)) {
    const std::string name = qualified_class_name(*base, cls.cpp_namespace);
    const std::string one_line = "  operator " + name + "() const { return " + name +
                                 "::from_tensordict(*this, {}, false); }";
    data item;
    item.set("base", name);
    item.set("fits", one_line.size() <= kColumnLimit);
    bases.push_back(item);
  }
  view.set("bases", bases);
  // The wrapping constructor on one line when it fits, else as clang-format breaks it.
  view.set("wrap_fits", true);
  text.body = renderer.render("class", view);
  if (!fits(text.body, "WrapTag, ::tensordict::TensorDict td) : ")) {
    view.set("wrap_fits", false);
    text.body = renderer.render("class", view);
  }
  text.body = trim_newlines(text.body);
  if (holds_later) text.out_of_class = trim_newlines(renderer.render("out_of_class", view));
  return text;
}

// The display paths of the other schema files whose classes `schema` nests.
std::set<std::string> nested_schemas(const Schema& schema, const ClassIndex& classes) {
  std::set<std::string> out;
  for (const auto& cls : schema.classes) {
    for (const Class* base : bases_of(cls, classes)) {
      if (base->schema_path != schema.display_path) out.insert(base->schema_path);
    }
    for (const auto& field : cls.fields) {
      const std::string nested = nested_class_name(field.type);
      if (nested.empty()) continue;
      const std::string& path = classes.at(nested)->schema_path;
      if (path != schema.display_path) out.insert(path);
    }
  }
  return out;
}

// 64-bit FNV-1a of a header's text after its first line (the stamp naming its source file, which
// a schema kept as a header or as YAML spells differently), in hex: what its includers record.
std::string fingerprint(const std::string& header) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = header.find('\n') + 1; i < header.size(); ++i) {
    hash = (hash ^ static_cast<unsigned char>(header[i])) * 0x100000001b3ull;
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(hash));
  return out;
}

// Headers of other schema files whose classes this file nests (each with its fingerprint), and
// the hand-written includes, as one block of #include lines (<...> before "...", each sorted, as
// clang-format orders them).
std::string include_block(const Schema& schema, const ClassIndex& classes,
                          const Fingerprints& fingerprints) {
  std::set<std::string> system, local;
  for (const auto& path : nested_schemas(schema, classes)) {
    const auto it = fingerprints.find(path);
    local.insert("\"" + header_name(path) + "\"" +
                 (it == fingerprints.end() ? "" : "  // generated as " + it->second));
  }
  for (const auto& cls : schema.classes) {
    for (const auto& include : cls.cpp_includes) {
      if (include.front() == '<') {
        system.insert(include);
      } else {
        local.insert("\"" + include + "\"");
      }
    }
  }
  std::string block;
  for (const auto& set : {system, local}) {
    for (const auto& header : set) block += "#include " + header + "\n";
  }
  return block.empty() ? "" : "\n" + block;
}

}  // namespace

Output emit_schema(const Schema& schema, const ClassIndex& classes, const Templates& templates,
                   const Fingerprints& fingerprints, Diagnostics& diagnostics) {
  Renderer renderer(templates, diagnostics, schema.display_path);
  data view;
  view.set("version", kTcgenVersion);
  view.set("schema_path", cpp_text(schema.display_path, CppText::Comment));
  view.set("abi_version", std::to_string(tensordict::kAbiVersion));
  view.set("header", cpp_text(header_name(schema.display_path), CppText::InLiteral));
  view.set("include_block", include_block(schema, classes, fingerprints));
  const std::vector<const Class*> order = declaration_order(schema, classes);
  std::vector<std::string> later;
  for (const Class* cls : order) later.push_back(cls->name);
  std::vector<std::string> bodies;
  std::map<std::string, std::string> after;  // by the class whose body it follows
  std::set<std::string> named_ahead;
  for (const Class* cls : order) {
    later.erase(later.begin());
    ClassText text = class_text(*cls, classes, later, renderer);
    bodies.push_back(std::move(text.body));
    if (!text.due.empty()) after[text.due] += "\n\n" + text.out_of_class;
    named_ahead.insert(text.named_ahead.begin(), text.named_ahead.end());
  }
  // The file's blocks, each after a blank line: the namespace's opening, the classes declared
  // ahead (named before their definition by a class of a cycle that comes first), the classes,
  // the namespace's end.
  std::vector<std::string> blocks;
  if (!schema.cpp_namespace.empty()) blocks.push_back("namespace " + schema.cpp_namespace + " {");
  std::string declarations;
  for (const Class* cls : order) {
    if (named_ahead.count(cls->name)) declarations += "class " + cls->name + ";\n";
  }
  if (!declarations.empty()) blocks.push_back(trim_newlines(declarations));
  for (size_t i = 0; i < order.size(); ++i) blocks.push_back(bodies[i] + after[order[i]->name]);
  if (!schema.cpp_namespace.empty()) {
    blocks.push_back("}  // namespace " + schema.cpp_namespace);
  }
  data block_list = data::type::list;
  for (const auto& text : blocks) block_list.push_back(data("text", text));
  view.set("blocks", block_list);
  return Output{header_name(schema.display_path), renderer.render("file", view)};
}

std::vector<Output> emit_headers(const std::vector<Schema>& schemas,
                                 const std::vector<const Schema*>& emitted,
                                 const ClassIndex& classes, const Templates& templates,
                                 Diagnostics& diagnostics) {
  std::map<std::string, const Schema*> by_path;
  for (const auto& schema : schemas) by_path.emplace(schema.display_path, &schema);
  std::map<std::string, Output> done;  // by display path
  // Emits `schema` after the headers it includes, whose fingerprints it records (schema files
  // include each other without cycles: tcgen's checks refuse them).
  std::function<const Output&(const Schema&)> emit = [&](const Schema& schema) -> const Output& {
    const auto found = done.find(schema.display_path);
    if (found != done.end()) return found->second;
    Fingerprints fingerprints;
    for (const auto& path : nested_schemas(schema, classes)) {
      const auto it = by_path.find(path);
      if (it != by_path.end()) fingerprints[path] = fingerprint(emit(*it->second).content);
    }
    return done
        .emplace(schema.display_path,
                 emit_schema(schema, classes, templates, fingerprints, diagnostics))
        .first->second;
  };
  std::vector<Output> out;
  for (const Schema* schema : emitted) out.push_back(emit(*schema));
  return out;
}

}  // namespace tcgen
