#include "emit/python/modules.h"

#include <kainjow/mustache.hpp>

#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "emit/python/names.h"
#include "emit/render.h"
#include "model/field_spec.h"
#include "version.h"

namespace tcgen {
namespace {

// `a/b.py` beside `a/b/c.py`: Python imports `a.b` as the module, and `a.b.c` then fails ("a.b is
// not a package"), so one of the two modules could never be imported.
void refuse_module_packages(const std::map<std::string, const Schema*>& module_of,
                            Diagnostics& diagnostics) {
  for (const auto& [file, schema] : module_of) {
    const std::string package = file.substr(0, file.size() - 3) + "/";  // "a/b.py" -> "a/b/"
    const auto inside = module_of.lower_bound(package);
    if (inside == module_of.end() || inside->first.rfind(package, 0) != 0) continue;
    diagnostics.error(inside->second->loc,
                      "its classes' Python module '" + inside->first + "' lies in the package '" +
                          package + "', which is also the module '" + file + "' of " +
                          schema->display_path + ": Python could import only one of them");
  }
}

using kainjow::mustache::data;

// Lines of a doc text, as the template's `{{#doc}}` section lists them: a `#:` comment line per
// line of the text, each escaped (a CR would end the comment: Python ends lines at CR too).
data doc_lines(const std::string& doc) {
  data lines = data::type::list;
  std::istringstream in(doc);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(data("line", python_text(line, PythonText::Comment)));
  }
  return lines;
}

// Names an annotation or a default reads where it runs (the class body, then the module):
// identifiers that are neither attributes (`Tensor` of `torch.Tensor`) nor keyword arguments
// (`default_factory=`), outside the string literals python_text writes; keywords aside.
std::set<std::string> names_read(const std::string& expression) {
  std::set<std::string> names;
  const auto at = [&](size_t i) { return i < expression.size() ? expression[i] : '\0'; };
  const auto word = [&](size_t i) {
    return std::isalnum(static_cast<unsigned char>(at(i))) || at(i) == '_';
  };
  for (size_t i = 0; i < expression.size();) {
    if (at(i) == '"') {
      for (++i; i < expression.size() && at(i) != '"'; ++i) i += at(i) == '\\';
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(at(i)))) {
      while (word(i) || at(i) == '.') ++i;  // a number: 2.0, 1e-05
    } else if (word(i)) {
      const size_t begin = i;
      while (word(i)) ++i;
      const std::string name = expression.substr(begin, i - begin);
      const bool keyword_argument = at(i) == '=' && at(i + 1) != '=';
      if (at(begin - 1) != '.' && !keyword_argument && !is_python_keyword(name)) names.insert(name);
    } else {
      ++i;
    }
  }
  return names;
}

// The class keywords of the options set: Python's TensorClass takes them as
// `class C(TensorClass, nocast=True)`, each as its kClassOptions row spells it (a derived class
// repeats the ones it inherits).
std::string option_keywords(const Class& cls) {
  std::string out;
  for (const auto& row : tensordict::kClassOptions) {
    if (cls.options.has(row.option)) out += ", " + std::string(row.python_keyword) + "=True";
  }
  return out;
}

struct ModuleView {
  PythonImports imports;                                  // torch, TensorClass, Optional, ...
  std::map<std::string, std::set<std::string>> imported;  // nested classes: module -> names
  std::map<std::string, std::string> imported_from;       // class name -> module
  std::map<std::string, const Class*> declared;           // its classes, by Python name
  bool loads_old_names = false;                           // a class needs kPythonRenameHelper
  bool fills_defaults = false;                            // a class needs kPythonDefaultsHelper
  bool pytree_nodes = false;                              // a class needs kPythonPytreeHelper
  data classes = data::type::list;
};

// A class body as its fields are written: the names it binds (fields with a default) and the
// code of each field (`annotation = default`).
struct ClassBody {
  const Class& cls;
  const ClassIndex& classes;
  const std::set<std::string>& defined;
  ModuleView& module;
  Diagnostics& diagnostics;
  PythonBase python_base;
  std::map<std::string, const Field*> bound;
  std::vector<std::pair<const Field*, std::string>> code;
};

// Whether the Python field has a default: an optional field left out is None, in C++ (its Args
// member) and so in Python (a TypedTensorDict's optional field is NotRequired instead).
bool has_default(const Field& field) {
  return field.default_value.has_value() || is_optional(field.type);
}

// Reports what a TypedTensorDict field cannot say: Python's TypedTensorDict has no defaults and
// no hook for earlier names, takes no annotation starting with '_' as a key, and wants `shadow`
// for every TensorDictBase attribute, `data` too (which TensorClass allows without it).
void check_typed_field(const Class& cls, const Field& field, Diagnostics& diagnostics) {
  const std::string why = " (emit with --python-base TensorClass, which does)";
  if (field.default_value && !field.default_value->is_null()) {
    diagnostics.error(field.loc, "field '" + field.name +
                                     "' has a default, which a TypedTensorDict field cannot "
                                     "have: it is a key that a constructor call must give" +
                                     why);
  } else if (!field.renamed_from.empty()) {
    diagnostics.error(field.loc, "field '" + field.name +
                                     "' has earlier names (renamed_from), which a TypedTensorDict "
                                     "cannot load data under" +
                                     why);
  } else if (field.name == "data" && !cls.options.shadow) {
    diagnostics.error(field.loc,
                      "field name 'data' is a TensorDictBase attribute, which a "
                      "TypedTensorDict field may take only with option 'shadow'");
  } else if (!field.name.empty() && field.name.front() == '_') {
    diagnostics.error(field.loc, "field name '" + field.name +
                                     "' starts with '_', which a TypedTensorDict takes for an "
                                     "attribute, not a key" +
                                     why);
  }
}

// Reports a name the Python class would spell otherwise than the schema: one starting with '__'
// (mangled to `_Class__x`, or one of Python's own `__x__`), or `_` beside the keyword-only marker;
// a method TensorClass binds on every class whatever its fields (`from_tensordict`); and `self`
// where it must be passed by keyword (the constructor's first parameter is `self`).
// `has_marker`: the class has the keyword-only marker; `after_marker`: the field follows it.
void check_field_name(const Field& field, bool has_marker, bool after_marker,
                      const ClassBody& body) {
  const std::string& name = field.name;
  if (name.rfind("__", 0) == 0) {
    const bool dunder = name.size() >= 4 && name.compare(name.size() - 2, 2, "__") == 0;
    std::string owner = python_class_name(body.cls);
    owner.erase(0, owner.find_first_not_of('_'));
    body.diagnostics.error(
        field.loc, dunder ? "field name '" + name +
                                "' is one of Python's own '__x__' names, which its class "
                                "machinery reads"
                          : "field name '" + name + "' would be '_" + owner + name +
                                "' in the Python class (a class body mangles names starting "
                                "with '__')");
  } else if (name == "_" && has_marker) {
    body.diagnostics.error(field.loc,
                           "field name '_' is the Python class's keyword-only marker "
                           "('_: _KW_ONLY')");
  } else if (is_tensorclass_base_attribute(name)) {
    body.diagnostics.error(field.loc, "field name '" + name +
                                          "' is a method Python's TensorClass gives every class "
                                          "whatever its fields (option 'shadow' or not): the "
                                          "field's attribute and default would read back as it");
  } else if (name == "self" && after_marker && !has_default(field)) {
    body.diagnostics.error(field.loc,
                           "field 'self' would be keyword-only without a default in the Python "
                           "class, whose constructor takes its instance as 'self': no call could "
                           "pass it (give it a default, or no defaulted field before it)");
  }
}

// Notes `from <module> import <Name>` for `target`, a class of another module that `user` ("field
// 'x' nests", at `loc`) names; reports a name Python cannot import (a class of an included schema
// is checked here), or one the module binds to something else.
void import_class(const Class& target, const std::string& user, const SourceLoc& loc,
                  ClassBody& body) {
  const std::string name = python_class_name(target);
  const std::string from = python_module(target);
  const auto imported = body.module.imported_from.find(name);
  std::string clash;
  std::istringstream parts(python_dotted_name(target));
  for (std::string part; clash.empty() && std::getline(parts, part, '.');) {
    clash = python_name_problem(part);
  }
  if (!clash.empty()) {
    clash = "Python cannot import it (" + clash + ")";
  } else if (body.module.declared.count(name)) {
    clash = "it declares a class of that name";
  } else if (imported != body.module.imported_from.end() && imported->second != from) {
    clash = "it imports '" + imported->second + "." + name + "' under that name";
  } else if (is_bound_by_python_module(name)) {
    clash = "its generated code uses that name";
  }
  if (!clash.empty()) {
    body.diagnostics.error(loc, user + " '" + python_dotted_name(target) +
                                    "', which Python module '" + python_module(body.cls) +
                                    "' cannot import as '" + name + "': " + clash);
    return;
  }
  body.module.imported_from.emplace(name, from);
  body.module.imported[from].insert(name);
}

// Reports a field whose default binds a name that a field's annotation or default reads: Python
// looks names up in the class body first (a field `torch` with a default turns a later
// `torch.Tensor` into an attribute of its value; annotations evaluated lazily, as from Python
// 3.14, or after the value, as `x: ann = value` does, see every field bound).
void check_reads(const ClassBody& body) {
  for (const auto& [field, code] : body.code) {
    for (const auto& name : names_read(code)) {
      const auto binder = body.bound.find(name);
      if (binder == body.bound.end()) continue;
      body.diagnostics.error(binder->second->loc,
                             "field '" + name + "' of class '" + body.cls.name +
                                 "' would hide, in the Python class, the '" + name +
                                 "' that field '" + field->name + "' reads (`" + code + "`)");
      body.diagnostics.note(field->loc, "field '" + field->name + "' declared here");
    }
  }
}

// Whether a field without a default comes after one with a default: Python's dataclass refuses
// that order unless the later fields are keyword-only.
bool needs_keyword_only(const Class& cls) {
  bool defaulted = false;
  for (const auto& field : cls.fields) {
    if (defaulted && !has_default(field)) return true;
    defaulted = defaulted || has_default(field);
  }
  return false;
}

// A field's view; notes the imports it needs in the module, and the name it binds in `body`.
data field_view(const Field& field, ClassBody& body) {
  ModuleView& module = body.module;
  data item;
  item.set("name", field.name);
  const bool typed = body.python_base == PythonBase::TypedTensorDict;
  const bool not_required = typed && is_optional(field.type);
  std::string annotation = python_annotation(not_required ? field.type.args.at(0) : field.type,
                                             body.classes, module.imports);
  const std::string nested = nested_class_name(field.type);
  if (!nested.empty()) {
    const Class& target = *body.classes.at(nested);
    if (python_module(target) != python_module(body.cls)) {
      import_class(target, "field '" + field.name + "' nests", field.loc, body);
    } else if (!body.defined.count(target.name)) {
      // Itself, or a class of a cycle defined further down: not bound yet while this body runs.
      annotation = python_text(annotation, PythonText::Literal);
    }
  }
  // Outside the quotes: TypedTensorDict reads NotRequired when the class is made, before a
  // class named further down can be resolved.
  if (not_required) {
    annotation = module.imports.use("typing", "NotRequired") + "[" + annotation + "]";
  }
  item.set("annotation", annotation);
  if (typed) {
    body.code.emplace_back(&field, annotation);
  } else if (has_default(field)) {
    bool per_instance = false;
    std::string value = field.default_value ? python_default(*field.default_value, field.type,
                                                             per_instance, module.imports)
                                            : "None";
    if (per_instance) {
      value =
          module.imports.use("dataclasses", "field") + "(default_factory=lambda: " + value + ")";
    }
    item.set("default", data("value", value));
    body.code.emplace_back(&field, annotation + " = " + value);
    body.bound.emplace(field.name, &field);
  } else {
    body.code.emplace_back(&field, annotation);
  }
  // What the schema's evolution keys say (the renames act through class_view's decorator).
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

// `{"old": "new", ...}`: each earlier name of a field, in the order the C++ class tries them.
std::string old_names_literal(const Class& cls) {
  std::string out;
  for (const auto& field : cls.fields) {
    for (const auto& old : field.renamed_from) {
      out += (out.empty() ? "{" : ", ") + python_text(old, PythonText::Literal) + ": " +
             python_text(field.name, PythonText::Literal);
    }
  }
  return out.empty() ? out : out + "}";
}

// `("note", "source")`: the fields that loading data saved before they were added gives their
// default, the ones the C++ class fills (a FieldSpec default); empty when none.
std::string added_fields_literal(const Class& cls) {
  std::vector<std::string> names;
  for (const auto& field : cls.fields) {
    if (field_spec_facts(field).default_json) {
      names.push_back(python_text(field.name, PythonText::Literal));
    }
  }
  if (names.empty()) return "";
  return "(" + comma_separated(names) + (names.size() == 1 ? ",)" : ")");
}

// The Python base of the class: its schema base (imported from its module when need be), else
// TensorClass.
std::string base_name(ClassBody& body) {
  const Class& cls = body.cls;
  if (cls.base.empty())
    return body.module.imports.use("tensordict", body.python_base == PythonBase::TypedTensorDict
                                                     ? "TypedTensorDict"
                                                     : "TensorClass");
  const Class& base = *body.classes.at(cls.base);
  if (python_module(base) != python_module(cls)) {
    import_class(base, "class '" + cls.name + "' extends", cls.base_loc, body);
  }
  return python_class_name(base);
}

data class_view(ClassBody body) {
  const Class& cls = body.cls;
  ModuleView& module = body.module;
  data view;
  // Python's TensorClass gives a field that loaded data lacks None: a decorator gives it its
  // default instead, as the C++ class does for data written before the field was added.
  const bool typed = body.python_base == PythonBase::TypedTensorDict;
  const std::string added = typed ? "" : added_fields_literal(cls);
  if (!added.empty()) {
    data defaults;
    defaults.set("helper", kPythonDefaultsHelper);
    const std::string old_names = old_names_literal(cls);
    defaults.set("fields", added + (old_names.empty() ? "" : ", " + old_names));
    view.set("defaults", defaults);
    module.fills_defaults = true;
  }
  // Python's TensorClass refuses keys that are no field: a decorator makes the class take data
  // saved under a field's old name as the field, as the C++ class does.
  const std::string old_names = typed ? "" : old_names_literal(cls);
  if (!old_names.empty()) {
    data renames;
    renames.set("helper", kPythonRenameHelper);
    renames.set("old_names", old_names);
    view.set("renames", renames);
    module.loads_old_names = true;
  }
  // A pytree node torch.export can record, named by its Python dotted name (what the C++ side
  // looks the class up by). A TypedTensorDict, which tensordict does not register and which is no
  // dataclass, names its fields in order.
  data pytree;
  pytree.set("helper", kPythonPytreeHelper);
  pytree.set("type_name", python_text(python_dotted_name(cls), PythonText::Literal));
  if (typed) {
    std::string names;
    for (const auto& field : cls.fields) {
      names += python_text(field.name, PythonText::Literal) + ", ";
    }
    if (cls.fields.size() > 1) {
      names.resize(names.size() - 2);
    } else if (!names.empty()) {
      names.pop_back();  // ("a",): a tuple of one keeps its comma
    }
    pytree.set("names", "(" + names + ")");
  }
  view.set("pytree", pytree);
  module.pytree_nodes = true;
  view.set("name", python_class_name(cls));
  view.set("bases", base_name(body) + option_keywords(cls));
  if (!cls.doc.empty()) view.set("docstring", python_text(cls.doc, PythonText::Docstring));
  const bool own_fields = cls.fields.size() > cls.inherited_fields;
  view.set("gap", !cls.doc.empty() && own_fields ? "\n" : "");
  if (cls.doc.empty() && !own_fields) view.set("empty", true);
  const bool keyword_only = !typed && needs_keyword_only(cls);
  bool marked = false, defaulted = false;
  data fields = data::type::list;
  for (size_t i = 0; i < cls.fields.size(); ++i) {
    const Field& field = cls.fields[i];
    defaulted = defaulted || has_default(field);
    if (i < cls.inherited_fields) continue;  // declared by its base's Python class
    // Fields from the first one with a default on (its own or inherited) are keyword-only
    // (`_: KW_ONLY`).
    const bool marks = keyword_only && !marked && defaulted;
    marked = marked || marks;
    check_field_name(field, keyword_only, marked, body);
    if (typed) check_typed_field(cls, field, body.diagnostics);
    data item = field_view(field, body);
    if (marks)
      item.set("keyword_only", data("marker", module.imports.use("dataclasses", "KW_ONLY")));
    fields.push_back(item);
  }
  check_reads(body);
  view.set("fields", fields);
  return view;
}

// The import lines of a module: the standard library's, then torch's and tensordict's and the
// modules of nested classes (by their own names: annotations show them).
std::string import_block(const ModuleView& module) {
  std::string block = module.imports.lines();
  for (const auto& [path, names] : module.imported) {
    std::string listed;
    for (const auto& name : names) listed += (listed.empty() ? "" : ", ") + name;
    block += "\nfrom " + path + " import " + listed;
  }
  return block;  // the template ends the line
}

// Declares the classes of `order` in their modules; reports a Python name that Python cannot
// declare, that would hide what the module imports or uses, or that two classes share. False when
// one was reported.
bool declare_classes(const std::vector<const Class*>& order,
                     std::map<std::string, ModuleView>& modules, Diagnostics& diagnostics) {
  bool ok = true;
  for (const Class* cls : order) {
    const std::string module = python_module(*cls);
    if (module.empty()) {
      diagnostics.error(cls->loc, "class '" + cls->name +
                                      "' has no Python module: give it `python: <module>." +
                                      cls->name + "` or a namespace");
      ok = false;
      continue;
    }
    const std::string dotted = python_dotted_name(*cls);
    const std::string name = python_class_name(*cls);
    const std::string top = dotted.substr(0, dotted.find('.'));
    std::string problem;
    std::istringstream parts(dotted);
    for (std::string part; problem.empty() && std::getline(parts, part, '.');) {
      problem = python_name_problem(part);
    }
    if (problem.empty()) problem = python_top_module_problem(top);
    if (problem.empty() && is_bound_by_python_module(name)) {
      problem = "a class '" + name + "' would hide the '" + name + "' that generated modules use";
    } else if (problem.empty() && name == "TensorClass") {
      problem =
          "Python tensordict takes any class named 'TensorClass' for its own base, which it does "
          "not make a tensorclass";
    }
    const bool given = !cls->python_name.empty();
    const SourceLoc& loc = given && cls->python_loc.line > 0 ? cls->python_loc : cls->loc;
    if (!problem.empty()) {
      diagnostics.error(loc, given ? "python name '" + dotted + "' cannot be generated: " + problem
                                   : "class '" + cls->name + "' would be the Python class '" +
                                         dotted + "' (its namespace and name): " + problem +
                                         " (give it `python: <module>." + cls->name + "`)");
      ok = false;
      continue;
    }
    const auto [first, fresh] = modules[module].declared.emplace(name, cls);
    if (!fresh) {
      diagnostics.error(loc, "classes '" + first->second->name + "' and '" + cls->name +
                                 "' would both be the Python class '" + dotted + "'");
      diagnostics.note(
          first->second->python_loc.line > 0 ? first->second->python_loc : first->second->loc,
          "class '" + first->second->name + "' declared here");
      ok = false;
    }
  }
  return ok;
}

}  // namespace

std::vector<Output> emit_python_schema(const Schema& schema, const ClassIndex& classes,
                                       const Templates& templates, Diagnostics& diagnostics,
                                       PythonBase base) {
  Renderer renderer(templates, diagnostics, schema.display_path);
  std::map<std::string, ModuleView> modules;  // by module path, in order
  const std::vector<const Class*> order = declaration_order(schema, classes);
  if (!declare_classes(order, modules, diagnostics)) return {};
  std::set<std::string> defined;
  for (const Class* cls : order) {
    ModuleView& view = modules[python_module(*cls)];
    const data text =
        class_view(ClassBody{*cls, classes, defined, view, diagnostics, base, {}, {}});
    defined.insert(cls->name);  // bound once its body has run: a field of its own type is quoted
    view.classes.push_back(
        data("class_text", trim_newlines(renderer.render("python_class", text))));
  }
  std::vector<Output> outputs;
  for (auto& [module, view] : modules) {
    data file;
    if (view.loads_old_names) {
      data helper;
      helper.set("name", kPythonRenameHelper);
      helper.set("staticmethod", view.imports.use("builtins", "staticmethod"));
      file.set("rename_helper", helper);
    }
    if (view.fills_defaults) {
      data helper;
      helper.set("name", kPythonDefaultsHelper);
      helper.set("classmethod", view.imports.use("builtins", "classmethod"));
      helper.set("dataclasses", view.imports.use_module("dataclasses"));
      file.set("defaults_helper", helper);
    }
    if (view.pytree_nodes) {
      data helper;
      helper.set("name", kPythonPytreeHelper);
      helper.set("dataclasses", view.imports.use_module("dataclasses"));
      helper.set("torch", view.imports.use_module("torch"));
      helper.set("is_tensor_collection", view.imports.use("tensordict", "is_tensor_collection"));
      helper.set("json", view.imports.use_module("json"));
      file.set("pytree_helper", helper);
    }
    file.set("version", kTcgenVersion);
    file.set("schema_path", python_text(schema.display_path, PythonText::Comment));
    file.set("imports", import_block(view));
    file.set("classes", view.classes);
    outputs.push_back(Output{python_module_file(module), renderer.render("python_module", file)});
  }
  return outputs;
}

std::vector<Output> emit_python_modules(const std::vector<const Schema*>& emitted,
                                        const ClassIndex& classes, const Templates& templates,
                                        Diagnostics& diagnostics, PythonBase base) {
  std::vector<Output> outputs;
  std::map<std::string, const Schema*> module_of;  // Python module file -> its schema
  for (const Schema* schema : emitted) {
    for (auto& output : emit_python_schema(*schema, classes, templates, diagnostics, base)) {
      const auto [it, fresh] = module_of.emplace(output.file_name, schema);
      if (!fresh) {
        diagnostics.error(schema->loc, "its classes' Python module '" + output.file_name +
                                           "' is also written from " + it->second->display_path +
                                           ": one module's classes belong in one schema file");
      }
      outputs.push_back(std::move(output));
    }
  }
  refuse_module_packages(module_of, diagnostics);
  return outputs;
}

}  // namespace tcgen
