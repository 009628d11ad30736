#include "emit_python.h"

#include <kainjow/mustache.hpp>

#include <map>
#include <set>
#include <sstream>

#include "names.h"
#include "python_names.h"
#include "render.h"
#include "version.h"

namespace tcgen {
namespace {

using kainjow::mustache::data;

// Lines of a doc text, as the template's `{{#doc}}` section lists them.
data doc_lines(const std::string& doc) {
  data lines = data::type::list;
  std::istringstream in(doc);
  for (std::string line; std::getline(in, line);) lines.push_back(data("line", line));
  return lines;
}

// A docstring: triple-quoted where the text allows it, else an escaped literal.
std::string docstring(const std::string& doc) {
  const bool plain = doc.find("\"\"\"") == std::string::npos &&
                     doc.find('\\') == std::string::npos && doc.back() != '"';
  if (!plain) return python_string_literal(doc);
  std::string indented;  // continuation lines at the docstring's indentation (PEP 257)
  for (const char c : doc) indented += c == '\n' ? std::string("\n    ") : std::string(1, c);
  return "\"\"\"" + indented + "\"\"\"";
}

// The class keywords of the options set: Python's TensorClass takes them as
// `class C(TensorClass, nocast=True)`, spelled as schemas spell them.
std::string bases(const Class& cls) {
  std::string out = "TensorClass";
  for (const auto& option : option_names(cls.options)) out += ", " + option + "=True";
  return out;
}

struct ModuleView {
  std::set<std::string> typing;                           // Any, Optional
  std::map<std::string, std::set<std::string>> imported;  // module -> class names
  std::set<std::string> dataclasses;                      // field, KW_ONLY
  data classes = data::type::list;
};

// Whether a field without a default comes after one with a default: Python's dataclass refuses
// that order unless the later fields are keyword-only.
bool needs_keyword_only(const Class& cls) {
  bool defaulted = false;
  for (const auto& field : cls.fields) {
    const bool has_default = field.default_value || is_optional(field.type);
    if (defaulted && !has_default) return true;
    defaulted = defaulted || has_default;
  }
  return false;
}

// A field's view; notes the imports it needs in `module`.
data field_view(const Field& field, const Class& cls, const ClassIndex& classes,
                const std::set<std::string>& defined, ModuleView& module) {
  data item;
  item.set("name", field.name);
  std::string annotation = python_annotation(field.type, classes);
  const std::string nested = nested_class_name(field.type);
  if (!nested.empty()) {
    const Class& target = *classes.at(nested);
    if (python_module(target) != python_module(cls)) {
      module.imported[python_module(target)].insert(python_class_name(target));
    } else if (!defined.count(target.name)) {  // itself: not bound yet while its body runs
      annotation = python_string_literal(annotation);
    }
  }
  if (annotation.find("Any") != std::string::npos) module.typing.insert("Any");
  if (annotation.find("Optional[") != std::string::npos) module.typing.insert("Optional");
  item.set("annotation", annotation);
  // An optional field left out is None, in C++ (its Args member) and so in Python.
  if (field.default_value || is_optional(field.type)) {
    bool per_instance = false;
    std::string value = field.default_value
                            ? python_default(*field.default_value, field.type, per_instance)
                            : "None";
    if (per_instance) {
      value = "field(default_factory=lambda: " + value + ")";
      module.dataclasses.insert("field");
    }
    item.set("default", data("value", value));
  }
  // What the schema's evolution keys say, which Python tensordict does not act on.
  std::string doc = field.doc;
  if (field.deprecated) {
    doc += std::string(doc.empty() ? "" : "\n") + "Deprecated" +
           (field.deprecated->empty() ? "." : ": " + *field.deprecated);
  }
  if (!field.renamed_from.empty()) {
    doc += std::string(doc.empty() ? "" : "\n") + "Formerly " +
           comma_separated(field.renamed_from) + " (older directories hold that name).";
  }
  if (!doc.empty()) item.set("doc", doc_lines(doc));
  return item;
}

data class_view(const Class& cls, const ClassIndex& classes, const std::set<std::string>& defined,
                ModuleView& module) {
  data view;
  view.set("name", python_class_name(cls));
  view.set("bases", bases(cls));
  if (!cls.doc.empty()) view.set("docstring", docstring(cls.doc));
  view.set("gap", !cls.doc.empty() && !cls.fields.empty() ? "\n" : "");
  if (cls.doc.empty() && cls.fields.empty()) view.set("empty", true);
  const bool keyword_only = needs_keyword_only(cls);
  if (keyword_only) module.dataclasses.insert("KW_ONLY");
  bool marked = false;
  data fields = data::type::list;
  for (const auto& field : cls.fields) {
    data item = field_view(field, cls, classes, defined, module);
    // Fields from the first one with a default on are keyword-only (`_: KW_ONLY`).
    if (keyword_only && !marked && (field.default_value || is_optional(field.type))) {
      item.set("keyword_only", true);
      marked = true;
    }
    fields.push_back(item);
  }
  view.set("fields", fields);
  return view;
}

// The import lines of a module: the standard library's, then torch's and tensordict's and the
// modules of nested classes, as isort groups them.
std::string import_block(const ModuleView& module) {
  auto joined = [](const std::set<std::string>& names) {
    std::string out;
    for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
    return out;
  };
  std::string block;
  if (!module.dataclasses.empty())
    block += "from dataclasses import " + joined(module.dataclasses) + "\n";
  if (!module.typing.empty()) block += "from typing import " + joined(module.typing) + "\n";
  if (!block.empty()) block += "\n";
  block += "import torch\nfrom tensordict import TensorClass\n";
  for (const auto& [path, names] : module.imported)
    block += "from " + path + " import " + joined(names) + "\n";
  block.pop_back();  // the template ends the line
  return block;
}

}  // namespace

std::vector<Output> emit_python_schema(const Schema& schema, const ClassIndex& classes,
                                       const Templates& templates, Diagnostics& diagnostics) {
  Renderer renderer(templates, diagnostics, schema.display_path);
  std::map<std::string, ModuleView> modules;  // by module path, in order
  std::set<std::string> defined;
  for (const Class* cls : declaration_order(schema, classes)) {
    const std::string module = python_module(*cls);
    if (module.empty()) {
      diagnostics.error(cls->loc, "class '" + cls->name +
                                      "' has no Python module: give it `python: <module>." +
                                      cls->name + "` or a namespace");
      continue;
    }
    defined.insert(cls->name);
    ModuleView& view = modules[module];
    const data text = class_view(*cls, classes, defined, view);
    view.classes.push_back(
        data("class_text", trim_newlines(renderer.render("python_class", text))));
  }
  std::vector<Output> outputs;
  for (auto& [module, view] : modules) {
    data file;
    file.set("version", kTcgenVersion);
    file.set("schema_path", schema.display_path);
    file.set("imports", import_block(view));
    file.set("classes", view.classes);
    outputs.push_back(Output{python_module_file(module), renderer.render("python_module", file)});
  }
  return outputs;
}

}  // namespace tcgen
