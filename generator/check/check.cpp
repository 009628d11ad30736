#include "check/check.h"

#include "check/bounds.h"
#include "check/cycles.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <sstream>

#include "frontend/input_checks.h"
#include "frontend/type_parser.h"
#include "model/kinds.h"
#include "model/name_rules.h"
#include "model/output_names.h"
#include "model/source_text.h"
#include "tensordict/tensor_default.h"

namespace tcgen {
namespace {

using Json = nlohmann::ordered_json;

bool is_tensor_like(const Type& type) {
  if (type.kind == TypeKind::Optional) return is_tensor_like(type.args.at(0));
  return type.kind == TypeKind::Tensor || type.kind == TypeKind::Class ||
         traits(type.kind).is_tensordict || type.wrapper != Wrapper::None;
}

bool fits(const Json& value, const Type& type) {
  switch (form_of(type)) {
    case KindForm::Optional:
      return value.is_null() || fits(value, type.args.at(0));
    case KindForm::Value:
      return traits(type.kind).holds_json(value);
    case KindForm::List:
      if (!value.is_array()) return false;
      for (const auto& item : value) {
        if (!fits(item, type.args.at(0))) return false;
      }
      return true;
    case KindForm::Tensor:
    case KindForm::Class:
      return false;  // only `null`, through optional[...]
  }
  return false;
}

bool has_non_finite(const Json& value) {
  if (value.is_number_float()) return !std::isfinite(value.get<double>());
  if (!value.is_structured()) return false;
  return std::any_of(value.begin(), value.end(), has_non_finite);
}

// Float-typed defaults spell .inf / .nan with std::numeric_limits; `any` ones are JSON text.
bool non_finite_in_any(const Json& value, const Type& type) {
  switch (form_of(type)) {
    case KindForm::Value:
      return traits(type.kind).is_json && has_non_finite(value);
    case KindForm::Optional:
      return non_finite_in_any(value, type.args.at(0));
    case KindForm::List:
      return value.is_array() && std::any_of(value.begin(), value.end(), [&](const Json& item) {
               return non_finite_in_any(item, type.args.at(0));
             });
    case KindForm::Tensor:
    case KindForm::Class:
      return false;
  }
  return false;
}

class Checker {
 public:
  explicit Checker(Diagnostics& diagnostics) : diagnostics_(diagnostics) {}

  ClassIndex run(const std::vector<Schema>& schemas) {
    for (const auto& schema : schemas) {
      for (const auto& cls : schema.classes) index_class(cls);
    }
    check_header_names(schemas);
    for (const auto& schema : schemas) {
      check_file_name(schema);
      check_namespace(schema);
      check_bounds(schema, diagnostics_);
      for (const auto& cls : schema.classes) check_class(cls);
    }
    check_nesting_cycles(index_, diagnostics_);
    return index_;
  }

 private:
  void index_class(const Class& cls) {
    if (cls.name.empty()) return;
    if (!is_identifier(cls.name) || is_cpp_keyword(cls.name)) return;  // reported by check_class
    auto [it, inserted] = index_.emplace(cls.name, &cls);
    if (!inserted) {
      diagnostics_.error(cls.loc, "duplicate class '" + cls.name + "'");
      diagnostics_.note(it->second->loc, "previously defined here");
    }
    // Fields may also name it with its namespace: `other_ns::Config`.
    if (!cls.cpp_namespace.empty()) index_.emplace(cls.cpp_namespace + "::" + cls.name, &cls);
  }

  // For every front end: a namespace the generated header can open, and not one of the
  // libraries' (the generated code names them from the root, `::at::Tensor`, so `mylib::at` is
  // fine, but `at::mine` would add to libtorch's namespace).
  void check_namespace(const Schema& schema) {
    if (schema.cpp_namespace.empty()) return;
    const std::string problem = namespace_problem(schema.cpp_namespace);
    if (!problem.empty()) {
      diagnostics_.error(schema.namespace_loc,
                         "namespace '" + schema.cpp_namespace + "' " + problem);
    }
  }

  void check_name(const std::string& name, const SourceLoc& loc, const std::string& what) {
    if (!is_identifier(name)) {
      diagnostics_.error(loc, what + " name '" + name + "' is not a C++ identifier");
    } else if (is_cpp_keyword(name)) {
      diagnostics_.error(loc, what + " name '" + name + "' is a C++ keyword");
    } else if (is_macro_in_scope(name)) {
      diagnostics_.error(loc, what + " name '" + name +
                                  "' is a macro where the generated header is compiled (the C "
                                  "library's, glog's or libtorch's)");
    } else if (is_python_keyword(name)) {
      diagnostics_.error(loc, what + " name '" + name +
                                  "' is a Python keyword: the Python class could not declare it");
    }
  }

  void check_class(const Class& cls) {
    if (!cls.name.empty()) check_name(cls.name, cls.loc, "class");
    check_python_name(cls);
    check_options(cls);
    check_batch_dims(cls);
    std::map<std::string, const Field*> seen;
    for (size_t i = 0; i < cls.fields.size(); ++i) {
      const Field& field = cls.fields[i];
      // An inherited field was checked in its class; only what this class adds can refuse it.
      if (i < cls.inherited_fields) {
        check_inherited_field(cls, field);
      } else {
        check_field(cls, field);
      }
      auto [it, inserted] = seen.emplace(field.name, &field);
      if (!inserted && !field.name.empty()) {
        diagnostics_.error(field.loc,
                           "duplicate field '" + field.name + "' in class '" + cls.name + "'");
        diagnostics_.note(it->second->loc, "previously defined here");
      }
    }
    check_setter_clashes(cls);
    check_generated_spelling(cls);
    check_evolution(cls, seen);
  }

  // The front ends set python_loc exactly when the schema names the Python class.
  void check_python_name(const Class& cls) {
    if (cls.python_loc.line == 0 || is_python_dotted_name(cls.python_name)) return;
    diagnostics_.error(cls.python_loc, "python name '" + cls.python_name +
                                           "' is not a dotted name like pkg.module.Class");
  }

  // `renamed_from:` and `deprecated:`, the field-level part of schema evolution.
  void check_evolution(const Class& cls, const std::map<std::string, const Field*>& fields) {
    std::map<std::string, const Field*> old_names;
    for (const auto& field : cls.fields) {
      for (const auto& old : field.renamed_from) {
        if (!is_identifier(old)) {
          diagnostics_.error(field.loc, "renamed_from name '" + old + "' of field '" + field.name +
                                            "' is not an identifier");
        } else if (fields.count(old)) {
          diagnostics_.error(field.loc, "field '" + field.name + "' is renamed from '" + old +
                                            "', which is still a field of class '" + cls.name +
                                            "'");
        } else if (auto [it, fresh] = old_names.emplace(old, &field); !fresh) {
          diagnostics_.error(field.loc, "fields '" + it->second->name + "' and '" + field.name +
                                            "' are both renamed from '" + old + "'");
        }
      }
      // New instances no longer set it: it needs a value of its own.
      if (field.deprecated && !field.default_value && !is_optional(field.type) &&
          !traits(field.type.kind).is_json) {
        diagnostics_.error(field.loc, "deprecated field '" + field.name +
                                          "' needs a default or an optional[...] type (new "
                                          "instances no longer set it)");
      }
    }
  }

  // Names and text the generated header could not spell: whatever tcgen accepts must compile.
  void check_generated_spelling(const Class& cls) {
    // A class named like a member of its base would shadow that member inside the class; at
    // global scope, one named like a library's namespace would clash with it.
    if ((cls.cpp_namespace.empty() && is_global_name(cls.name)) || is_used_unqualified(cls.name) ||
        is_generated_member_name(cls.name) || is_tensorclass_member_name(cls.name)) {
      diagnostics_.error(
          cls.loc, "class name '" + cls.name + "' collides with a name the generated header uses");
    }
    check_doc(cls.doc, cls.loc, "class '" + cls.name + "'");
    for (const auto& include : cls.cpp_includes) check_cpp_include(cls, include);
    for (size_t i = cls.inherited_fields; i < cls.fields.size(); ++i) {
      const Field& field = cls.fields[i];
      if (is_used_unqualified(field.name)) {
        diagnostics_.error(field.loc, "field name '" + field.name +
                                          "' collides with a name the generated header uses");
      }
      if (!field.name.empty() && field.name == nested_class_name(field.type)) {
        diagnostics_.error(field.loc, "field name '" + field.name +
                                          "' is also its type's name (the generated class "
                                          "could no longer name the type)");
      }
      check_doc(field.doc, field.loc, "field '" + field.name + "'");
    }
  }

  // The file name goes into a // comment, a string literal and #include "..." lines.
  // Each schema's header is included by its name alone (`#include "common.h"`): two schemas of the
  // same file name in different directories could not both be included.
  void check_header_names(const std::vector<Schema>& schemas) {
    std::map<std::string, const Schema*> seen;
    for (const auto& schema : schemas) {
      auto [it, inserted] = seen.emplace(header_name(schema.path), &schema);
      if (inserted) continue;
      diagnostics_.error(schema.loc, "schemas '" + it->second->display_path + "' and '" +
                                         schema.display_path + "' would both generate '" +
                                         it->first + "', which their users include by name");
    }
  }

  void check_file_name(const Schema& schema) {
    const std::string& name = schema.display_path;
    const bool ok = std::none_of(name.begin(), name.end(), [](char c) {
      return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
    });
    if (!ok || name.find("?\?") != std::string::npos) {
      diagnostics_.error(SourceLoc{name, 0, 0},
                         "the schema's file name cannot be written into the generated header "
                         "(it has a '\"', a '\\', '?\?' or a control character)");
    } else if (!is_plain_text(name)) {  // #include "..." has no escapes
      diagnostics_.error(SourceLoc{name, 0, 0},
                         "the schema's file name cannot be written into the generated header "
                         "(it has a control character, a line separator, a bidirectional control "
                         "character or a byte that is not UTF-8)");
    }
  }

  // A `//` comment line ending in a backslash (or `??/`, one under -trigraphs) continues onto
  // the next line; a bidirectional control character makes the header display differently from
  // what compiles ("Trojan Source"). Words as doc_lines (emit/cpp/fields.cpp) splits them: the
  // escapes cpp_text writes for other characters never end in a backslash.
  void check_doc(const std::string& doc, const SourceLoc& loc, const std::string& what) {
    for (size_t i = 0; i < doc.size();) {
      const TextChar c = text_char_at(doc, i);
      i += c.size;
      if (!c.valid || !is_bidi_control(c.value)) continue;
      diagnostics_.error(loc, "doc of " + what +
                                  " holds a bidirectional control character, which would make "
                                  "the generated header read differently from what compiles");
      return;
    }
    std::istringstream paragraphs(doc);
    for (std::string paragraph; std::getline(paragraphs, paragraph);) {
      std::istringstream words(paragraph);
      for (std::string word; std::getline(words, word, ' ');) {
        const bool splice =
            !word.empty() &&
            (word.back() == '\\' || (word.size() >= 3 && word.substr(word.size() - 3) == "?\?/"));
        if (!splice) continue;
        diagnostics_.error(loc, "doc of " + what + " has a word ending in a backslash ('" +
                                    cpp_text(word, CppText::Comment) +
                                    "'), which would continue a // comment onto the next line");
        return;
      }
    }
  }

  void check_cpp_include(const Class& cls, const std::string& include) {
    const bool angled = !include.empty() && include.front() == '<';
    const std::string path = angled ? include.substr(1, include.size() - 2) : include;
    bool ok = !path.empty() && (!angled || include.back() == '>');
    for (char c : path) ok = ok && c != '"' && c != '<' && c != '>';
    ok = ok && is_plain_text(path);  // #include <...> has no escapes
    if (!ok) {
      diagnostics_.error(cls.loc, "cpp_includes entry '" + cpp_text(include, CppText::Comment) +
                                      "' of class '" + cls.name +
                                      "' is not a header name like <vector> or my/header.h");
    }
  }

  // `set_x` would be both the setter of `x` and the accessor of a field `set_x`.
  void check_setter_clashes(const Class& cls) {
    std::map<std::string, const Field*> accessors;
    for (const auto& field : cls.fields) {
      auto [it, inserted] = accessors.emplace(accessor_name(field), &field);
      if (inserted || field.name == it->second->name) continue;  // duplicates: reported apart
      diagnostics_.error(field.loc, "field '" + field.name + "' would have the accessor '" +
                                        it->first + "()' of field '" + it->second->name +
                                        "' (a reserved name's accessor takes the 'field_' prefix)");
      diagnostics_.note(it->second->loc, "field '" + it->second->name + "' declared here");
    }
    for (const auto& field : cls.fields) {
      auto clash = accessors.find(setter_name(field));
      if (clash == accessors.end() || cls.options.frozen) continue;
      diagnostics_.error(clash->second->loc, "field name '" + clash->second->name +
                                                 "' clashes with the setter of field '" +
                                                 field.name + "'");
      diagnostics_.note(field.loc, "field '" + field.name + "' declared here");
    }
  }

  // The exclusions of kClassOptions: a pair whose rows list each other is reported once; an
  // option that alone lists others reports the first of them that is set.
  void check_options(const Class& cls) {
    const Options& o = cls.options;
    for (const auto& row : tensordict::kClassOptions) {
      if (!o.has(row.option)) continue;
      for (const auto& other : tensordict::kClassOptions) {
        if (!(row.excludes & tensordict::option_bit(other.option)) || !o.has(other.option)) {
          continue;
        }
        if (!(other.excludes & tensordict::option_bit(row.option))) {
          diagnostics_.error(o.loc, "option '" + std::string(row.name) + "' excludes '" +
                                        std::string(other.name) + "'");
          break;
        }
        if (row.option < other.option) {
          diagnostics_.error(o.loc, "options '" + std::string(row.name) + "' and '" +
                                        std::string(other.name) + "' exclude each other");
        }
      }
    }
  }

  void check_batch_dims(const Class& cls) {
    std::set<std::string> seen;
    for (const auto& dim : cls.batch_dims) {
      if (!is_identifier(dim)) {
        diagnostics_.error(
            cls.loc, "batch dim '" + dim + "' of class '" + cls.name + "' is not an identifier");
      } else if (!seen.insert(dim).second) {
        diagnostics_.error(cls.loc,
                           "batch dim '" + dim + "' of class '" + cls.name + "' is given twice");
      }
    }
  }

  // What a derived class's own name and options ask of a field of its base.
  void check_inherited_field(const Class& cls, const Field& field) {
    if (field.name == cls.name) {
      diagnostics_.error(cls.loc,
                         "class name '" + cls.name + "' is also the name of a field it inherits");
    }
    if (cls.options.tensor_only && !is_tensor_like(field.type)) {
      const SourceLoc& at = cls.options.loc.line > 0 ? cls.options.loc : cls.loc;
      diagnostics_.error(at, "class '" + cls.name + "' is 'tensor_only', but field '" + field.name +
                                 "' it inherits has type '" + type_to_string(field.type) + "'");
    }
  }

  void check_field(const Class& cls, const Field& field) {
    if (field.name.empty()) return;
    check_name(field.name, field.loc, "field");
    if (is_identifier(field.name) && !is_cpp_keyword(field.name) && is_reserved_name(field.name) &&
        !cls.options.shadow) {
      diagnostics_.error(field.loc, "field name '" + field.name +
                                        "' is reserved by TensorDict (use option 'shadow' to "
                                        "allow it)");
    }
    if (const std::string problem = internal_name_problem(field.name); !problem.empty()) {
      diagnostics_.error(field.loc, "field name '" + field.name + "' " + problem);
    }
    if (is_generated_member_name(field.name) || field.name == cls.name) {
      diagnostics_.error(field.loc, "field name '" + field.name +
                                        "' clashes with a member of the generated class '" +
                                        cls.name + "'");
    }
    if (!check_type(field.type)) return;
    if (cls.options.tensor_only && !is_tensor_like(field.type)) {
      diagnostics_.error(field.type.loc, "field '" + field.name + "' has type '" +
                                             type_to_string(field.type) +
                                             "', but a 'tensor_only' class holds only tensors "
                                             "and tensorclasses");
    }
    check_shape(cls, field);
    check_batch_trap(cls, field);
    if (form_of(element_type(field.type)) == KindForm::Tensor && field.default_value &&
        !field.default_value->is_null()) {
      check_tensor_default(field);
    } else if (field.default_value && !fits(*field.default_value, field.type)) {
      diagnostics_.error(field.default_loc,
                         "default " + field.default_value->dump() + " of field '" + field.name +
                             "' does not fit its type '" + type_to_string(field.type) + "'");
    } else if (field.default_value && non_finite_in_any(*field.default_value, field.type)) {
      diagnostics_.error(field.default_loc, "default of field '" + field.name +
                                                "' holds .inf or .nan where the type is 'any' "
                                                "(JSON has no such numbers)");
    }
  }

  // A tensor field's default (tensordict/tensor_default.h): a literal or a factory call whose
  // shape fits the field's fixed dims; on a field that is not optional (an optional tensor left
  // out is None, which a default would make unreachable).
  void check_tensor_default(const Field& field) {
    const std::string what =
        "default " + field.default_value->dump() + " of field '" + field.name + "'";
    if (is_optional(field.type)) {
      diagnostics_.error(field.default_loc,
                         what +
                             " is a tensor, but the field is optional: left out, it is None "
                             "(give it a default only without optional[...])");
      return;
    }
    std::string error;
    const auto made = tensordict::read_tensor_default(*field.default_value, error);
    if (!made) {
      diagnostics_.error(field.default_loc, what + " is not a tensor default: " + error);
      return;
    }
    const auto& shape = field.type.shape;
    if (!shape) return;
    bool fits = shape->size() == made->sizes.size();
    for (size_t d = 0; fits && d < shape->size(); ++d) {
      fits = !(*shape)[d].name.empty() || (*shape)[d].size == made->sizes[d];
    }
    if (!fits) {
      std::string sizes;
      for (const int64_t size : made->sizes)
        sizes += (sizes.empty() ? "" : ", ") + std::to_string(size);
      diagnostics_.error(field.default_loc, what + " has shape (" + sizes +
                                                "), which does not fit its type '" +
                                                type_to_string(field.type) + "'");
    }
  }

  // Returns false when the type is unusable (so later checks do not pile up on it).
  // `depth`: of `type` in the field's type; bounded for every front end as the YAML type parser
  // bounds it (a header's std::vector nested 100 deep generated code g++ could not compile).
  bool check_type(const Type& type, int depth = 1) {
    if (depth > kMaxNesting) {
      diagnostics_.error(type.loc,
                         "type nested deeper than " + std::to_string(kMaxNesting) + " levels");
      return false;
    }
    switch (form_of(type)) {
      case KindForm::Class:
        if (type.class_name.empty()) return false;  // parse error, already reported
        if (!index_.count(type.class_name)) {
          report_unknown_type(type);
          return false;
        }
        return true;
      case KindForm::Optional:
        if (type.args.empty()) return false;
        if (type.args[0].kind == TypeKind::Optional) {
          diagnostics_.error(type.loc, "optional[optional[...]] is redundant");
          return false;
        }
        return check_type(type.args[0], depth + 1);
      case KindForm::List: {
        if (type.args.empty()) return false;
        const Type& element = type.args[0];
        // An unknown name (`list[Tensor]`) is first of all unknown.
        const bool known = form_of(element) != KindForm::Class || index_.count(element.class_name);
        const std::string problem = list_element_problem(element);
        if (known && !problem.empty()) {
          diagnostics_.error(element.loc, problem);
          return false;
        }
        return check_type(element, depth + 1);
      }
      case KindForm::Value:
      case KindForm::Tensor:
        return true;
    }
    return false;
  }

  // A class name that is none: Python's spelling of a type, or a misspelt type or class.
  void report_unknown_type(const Type& type) {
    const std::string& name = type.class_name;
    const std::string advice = python_spelling_advice(name);
    if (!advice.empty()) {
      diagnostics_.error(type.loc, "type '" + name + "' " + advice);
      return;
    }
    if (type_names_.empty()) {
      type_names_ = builtin_type_names();
      for (const auto& [known, cls] : index_) type_names_.push_back(known);
    }
    // Hostile schemas name thousands of unknown types: no hint for errors that are not kept.
    const std::string close = diagnostics_.keeps_errors() ? closest_name(name, type_names_) : "";
    diagnostics_.error(type.loc, "unknown type '" + name + "'" +
                                     (close.empty() ? "" : " (did you mean '" + close + "'?)"));
  }

  void check_shape(const Class& cls, const Field& field) {
    const Type& type = field.type.kind == TypeKind::Optional ? field.type.args[0] : field.type;
    if (type.kind != TypeKind::Tensor || !type.shape || cls.batch_dims.empty()) return;
    const auto& shape = *type.shape;
    bool leads = shape.size() >= cls.batch_dims.size();
    for (size_t i = 0; leads && i < cls.batch_dims.size(); ++i) {
      leads = shape[i].name == cls.batch_dims[i];
    }
    if (!leads) {
      std::string dims;
      for (const auto& d : cls.batch_dims) dims += (dims.empty() ? "" : ", ") + d;
      diagnostics_.error(type.loc, "shape of field '" + field.name +
                                       "' must start with the batch dims (" + dims + ")");
    }
  }

  // Python's @tensorclass stores some plain values as tensors of their own shape (checked against
  // tensordict 0.14): every int/float/bool/list[number] and their optionals in default mode,
  // optional scalars under autocast, lists of numbers under nocast. Such a tensor cannot fit a
  // batch dim, so a class with batch dims could hold the field only when batch-less.
  void check_batch_trap(const Class& cls, const Field& field) {
    if (cls.batch_dims.empty()) return;
    const bool optional = field.type.kind == TypeKind::Optional;
    const Type& inner = optional ? field.type.args.at(0) : field.type;
    if (inner.wrapper != Wrapper::None) return;  // NonTensorData / MetaData: never a tensor
    const bool scalar = is_number(traits(inner.kind));
    const bool numbers = inner.kind == TypeKind::List && !inner.args.empty() &&
                         is_number(traits(inner.args[0].kind));
    if (!scalar && !numbers) return;
    // Whether the value becomes a tensor under each mode: default, autocast, nocast.
    const bool as_tensor[] = {true, scalar && optional, numbers};
    const char* modes[] = {"default mode", "option 'autocast'", "option 'nocast'"};
    const int mode = cls.options.autocast ? 1 : cls.options.nocast ? 2 : 0;
    if (!as_tensor[mode]) return;
    std::string keeps;
    for (int m = 1; m < 3; ++m) {
      if (!as_tensor[m]) keeps += std::string(keeps.empty() ? "" : " or ") + modes[m];
    }
    std::string dims;
    for (const auto& d : cls.batch_dims) dims += (dims.empty() ? "" : ", ") + d;
    diagnostics_.warning(field.type.loc,
                         "field '" + field.name + "' of type '" + type_to_string(field.type) +
                             "' is stored as a tensor of its own shape under " + modes[mode] +
                             " (as by Python's @tensorclass), which does not fit the batch dims (" +
                             dims + "): only a batch-less instance can hold it" +
                             (keeps.empty() ? "" : "; " + keeps + " keeps it a plain value"));
  }

  Diagnostics& diagnostics_;
  ClassIndex index_;
  std::vector<std::string> type_names_;  // built-in and class names, for "did you mean"
};

}  // namespace

ClassIndex check_schemas(const std::vector<Schema>& schemas, Diagnostics& diagnostics) {
  return Checker(diagnostics).run(schemas);
}

}  // namespace tcgen
