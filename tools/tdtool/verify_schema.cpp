// tdtool verify --schema S.yaml DIR: a directory checked against a class of a schema (read with
// tcgen's front end and checks). First by the loader's own rules: the runtime loads the directory
// with the ClassSpec the generated class has (an older schema version's data evolved: fields
// renamed, fields added since given their default), collecting what it refuses (`_type`, fields
// unknown or missing, dtypes, shapes). Then by the declared types, on the data as loaded: kinds,
// named dims consistent, batch dims count, None where the type is not optional, nested classes
// alike, lazy stacks element by element.
#include <ATen/ATen.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <utility>

#include "commands.h"
#include "driver/driver.h"
#include "frontend/type_parser.h"
#include "model/kinds.h"
#include "model/output_names.h"
#include "schema_spec.h"
#include "tensordict/class_load_check.h"
#include "tensordict/dtype.h"

namespace tdtool {
namespace {

using tensordict::Json;
using tensordict::TensorDict;
using tensordict::Value;

// Whether a stored tensor of `dtype` holds a value of a kind whose tensors are `holds`.
bool holds(tcgen::TensorHolds holds, at::ScalarType dtype) {
  switch (holds) {
    case tcgen::TensorHolds::None:
      return false;
    case tcgen::TensorHolds::Bool:
      return dtype == at::kBool;
    case tcgen::TensorHolds::Integral:
      return at::isIntegralType(dtype, false);
    case tcgen::TensorHolds::Floating:
      return at::isFloatingType(dtype);
    case tcgen::TensorHolds::Any:
      return true;
  }
  return false;
}

std::string join(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& part : path) out += (out.empty() ? "" : ".") + part;
  return out;
}

std::string dims_text(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// What a value is, for messages: "NonTensorData (string)", "tensor of dtype int64", ...
std::string describe(const Value& value) {
  if (value.is_tensor()) {
    return "a tensor of dtype " + tensordict::dtype_name(value.tensor().scalar_type());
  }
  if (value.is_non_tensor_data()) {
    return std::string("NonTensorData (") + value.non_tensor_data().data.type_name() + ")";
  }
  if (value.is_non_tensor_stack()) return "a NonTensorStack";
  return "a TensorDict";
}

// The checks of the declared types that loading does not make (the loader's own rules are the
// runtime's, tensordict::check_class_load): batch dims count, the kind of each value, named dims
// bound consistently, None in a field that is not optional, nested classes alike, and the shapes
// of a lazy stack's elements. Run on the TensorDict as the class loads it (old names renamed,
// added fields given their default).
class SchemaChecker {
 public:
  // `reported`: the fields the loader reported, by the key path of their class ("a.b") and name.
  SchemaChecker(const tcgen::ClassIndex& classes,
                std::set<std::pair<std::string, std::string>> reported)
      : classes_(classes), reported_(std::move(reported)) {}

  void check_class(const TensorDict& td, const tcgen::Class& cls,
                   const std::vector<std::string>& path) {
    const std::string at = path.empty() ? "" : join(path) + ": ";
    Bindings bound;
    const tensordict::BatchSize& batch = td.batch_size();
    if (!cls.batch_dims.empty()) {
      if (batch.size() != cls.batch_dims.size()) {
        add(at + "batch size " + tensordict::shape_str(batch) + " has " +
            std::to_string(batch.size()) + " dims, class " + cls.name + " declares " +
            std::to_string(cls.batch_dims.size()) + " (" + dims_text(cls.batch_dims) + ")");
      } else {
        for (size_t i = 0; i < batch.size(); ++i) {
          if (batch[i] >= 0) bound.emplace(cls.batch_dims[i], Binding{batch[i], "the batch size"});
        }
      }
    }
    std::vector<std::string> stored;
    check_stored(td, cls, path, bound, {}, stored);
    for (const auto& field : cls.fields) {
      const bool is_stored = std::find(stored.begin(), stored.end(), field.name) != stored.end();
      if (!is_stored && !accepts_none(field) && !reported_.count({join(path), field.name})) {
        add(at_field(path, field.name) + "is None, but its type " +
            tcgen::type_to_string(field.type) + " is not optional");
      }
    }
  }

  const std::vector<std::string>& mismatches() const { return mismatches_; }

 private:
  struct Binding {
    int64_t size;
    std::string where;  // "the batch size", or the field that bound it
  };
  using Bindings = std::map<std::string, Binding>;

  static std::string at_field(const std::vector<std::string>& path, const std::string& name) {
    std::vector<std::string> full = path;
    full.push_back(name);
    return join(full) + ": ";
  }

  static const tcgen::Field* find_field(const tcgen::Class& cls, const std::string& name) {
    for (const auto& field : cls.fields) {
      if (field.name == name) return &field;
    }
    return nullptr;
  }

  static bool accepts_none(const tcgen::Field& field) {
    return tcgen::is_optional(field.type) || tcgen::traits(field.type.kind).is_json ||
           (field.default_value && field.default_value->is_null());
  }

  void add(std::string message) { mismatches_.push_back(std::move(message)); }

  // The entries of `td`: a lazy stack's element by element (stacks of stacks too), each against
  // the class's shapes less the stacked dims `removed` (indices into the class's batch dims).
  void check_stored(const TensorDict& td, const tcgen::Class& cls,
                    const std::vector<std::string>& path, const Bindings& bound,
                    const std::vector<size_t>& removed, std::vector<std::string>& stored) {
    if (td.is_lazy_stack()) {
      // The stack dim among the dims `td` has, as an index into the class's batch dims.
      size_t dim = 0;
      for (int64_t own = 0;; ++dim) {
        if (std::find(removed.begin(), removed.end(), dim) != removed.end()) continue;
        if (own++ == td.stack_dim()) break;
      }
      std::vector<size_t> element_removed = removed;
      element_removed.push_back(dim);
      for (size_t e = 0; e < td.tensordicts().size(); ++e) {
        const TensorDict& element = td.tensordicts()[e];
        std::vector<std::string> element_path = path;
        element_path.push_back(std::to_string(e));
        // The element's batch sizes bind the class's dims it keeps.
        Bindings element_bound;
        size_t own = 0;
        for (size_t i = 0; i < cls.batch_dims.size(); ++i) {
          if (std::find(element_removed.begin(), element_removed.end(), i) !=
              element_removed.end()) {
            continue;
          }
          if (own < element.batch_size().size() && element.batch_size()[own] >= 0) {
            element_bound.emplace(cls.batch_dims[i],
                                  Binding{element.batch_size()[own], "the batch size"});
          }
          ++own;
        }
        check_stored(element, cls, element_path, element_bound, element_removed, stored);
      }
      return;
    }
    Bindings own_bound = bound;
    for (size_t i = 0; i < td.size(); ++i) {
      const std::string& key = td.key_at(i);
      if (std::find(stored.begin(), stored.end(), key) == stored.end()) stored.push_back(key);
      const tcgen::Field* field = find_field(cls, key);
      if (!field) continue;  // the loader's: not a field of the class
      std::vector<std::string> field_path = path;
      field_path.push_back(key);
      check_value(tcgen::element_type(field->type), td.value_at(i), field_path, own_bound, removed);
    }
  }

  void check_value(const tcgen::Type& type, const Value& value,
                   const std::vector<std::string>& path, Bindings& bound,
                   const std::vector<size_t>& removed) {
    const std::string at = join(path) + ": ";
    const std::string expected = tcgen::type_to_string(type);
    auto wrong_kind = [&] { add(at + "expected " + expected + ", found " + describe(value)); };
    switch (tcgen::form_of(type)) {
      case tcgen::KindForm::Tensor:
        if (!value.is_tensor()) return wrong_kind();
        return check_tensor(type, value.tensor(), at, bound, removed);
      case tcgen::KindForm::Value: {
        const tcgen::KindTraits& kind = tcgen::traits(type.kind);
        if (kind.is_json) return;
        if (kind.is_tensordict) {
          if (!value.is_tensordict()) wrong_kind();
          return;
        }
        const Json* data = value.is_non_tensor_data() ? &value.non_tensor_data().data : nullptr;
        const bool fits = value.is_tensor() ? holds(kind.tensors, value.tensor().scalar_type())
                                            : data && kind.holds_json(*data);
        if (!fits) wrong_kind();
        return;
      }
      case tcgen::KindForm::List: {
        const tcgen::TypeKind element = type.args.at(0).kind;
        if (value.is_non_tensor_stack()) {
          if (element != tcgen::TypeKind::Str) return;
          for (const Json& item : value.non_tensor_stack().items()) {
            if (!item.is_string()) return wrong_kind();
          }
          return;
        }
        if (value.is_non_tensor_data() && value.non_tensor_data().data.is_array()) return;
        if (value.is_tensor() && element != tcgen::TypeKind::Str) return;
        return wrong_kind();
      }
      case tcgen::KindForm::Class: {
        // Anything but a TensorDict is the loader's to refuse; a nested class's `_type` too.
        const auto cls = classes_.find(type.class_name);
        if (value.is_tensordict() && cls != classes_.end()) {
          check_class(value.tensordict(), *cls->second, path);
        }
        return;
      }
      case tcgen::KindForm::Optional:
        return check_value(type.args.at(0), value, path, bound, removed);
    }
  }

  // A tensor's named dims against those bound before. Its dtype, and the shape of a tensor that
  // is not in a lazy stack, are the loader's rules; an element of a lazy stack, whose shape the
  // loader does not check, is checked here against the class's shape less the stacked dims.
  void check_tensor(const tcgen::Type& type, const at::Tensor& t, const std::string& at,
                    Bindings& bound, const std::vector<size_t>& removed) {
    if (!type.shape) return;
    const bool element = !removed.empty();
    std::vector<tcgen::Dim> dims;
    for (size_t i = 0; i < type.shape->size(); ++i) {
      if (std::find(removed.begin(), removed.end(), i) == removed.end()) {
        dims.push_back((*type.shape)[i]);
      }
    }
    tcgen::Type shown = type;
    shown.shape = dims;
    shown.dtype.reset();
    const std::string want = tcgen::type_to_string(shown).substr(std::string("tensor[").size());
    const std::string expected = want.substr(0, want.size() - 1);
    const auto sizes = t.sizes();
    if (sizes.size() != dims.size()) {
      if (element) {
        add(at + "shape " + tensordict::shape_str(sizes) + " has " + std::to_string(sizes.size()) +
            " dims, expected " + std::to_string(dims.size()) + ": " + expected);
      }
      return;
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      const tcgen::Dim& dim = dims[i];
      if (dim.name.empty()) {
        if (element && sizes[i] != dim.size) {
          add(at + "dim " + std::to_string(i) + " is " + std::to_string(sizes[i]) + ", expected " +
              std::to_string(dim.size) + ": shape " + tensordict::shape_str(sizes) + ", expected " +
              expected);
        }
        continue;
      }
      const auto [it, fresh] =
          bound.emplace(dim.name, Binding{sizes[i], at.substr(0, at.size() - 2)});
      if (!fresh && it->second.size != sizes[i]) {
        add(at + "dim " + std::to_string(i) + " (" + dim.name + ") is " + std::to_string(sizes[i]) +
            ", but " + dim.name + " is " + std::to_string(it->second.size) + " in " +
            it->second.where);
      }
    }
  }

  const tcgen::ClassIndex& classes_;
  std::set<std::pair<std::string, std::string>> reported_;
  std::vector<std::string> mismatches_;
};

// Where a problem of the loader lies, as a key path relative to the verified directory `root`:
// empty for the directory itself, {"child", "v"} for `DIR/_tensordict/child/_tensordict/v`.
std::vector<std::string> relative(const std::string& dir, const std::string& root) {
  std::vector<std::string> parts;
  if (dir.compare(0, root.size(), root) != 0) return {dir};
  const std::string rest = dir.substr(root.size());
  for (size_t at = 0; at < rest.size();) {
    const size_t next = std::min(rest.find('/', at + 1), rest.size());
    const std::string part = rest.substr(at + 1, next - at - 1);
    if (part != "_tensordict" && !part.empty()) parts.push_back(part);
    at = next;
  }
  return parts;
}

}  // namespace

int run_verify_schema(const std::string& dir, const std::string& schema_path,
                      const std::string& class_name, std::ostream& out, std::ostream& err) {
  tcgen::Diagnostics template_problems;
  const tcgen::Compilation schema =
      tcgen::compile({schema_path}, tcgen::load_templates("", template_problems));
  if (schema.diagnostics.has_errors()) {  // warnings are the schema author's business
    schema.diagnostics.print(err);
    return 2;
  }

  const auto problems = verify_tree(dir);
  if (!problems.empty()) {  // the tree does not load: what verify without --schema says
    for (const auto& problem : problems) out << "problem: " << problem << "\n";
    out << dir << ": " << problems.size() << " problem(s)\n";
    return 1;
  }
  const tensordict::memmap::Loaded loaded = load_tree(dir, at::Device("meta"));
  const std::string type = loaded.class_info ? loaded.class_info->type : loaded.type;

  // The class: --class, else the schema's class of the directory's `_type`, else its only class.
  std::vector<const tcgen::Class*> requested;
  for (size_t i = 0; i < schema.requested; ++i) {
    for (const auto& cls : schema.schemas[i].classes) requested.push_back(&cls);
  }
  const tcgen::Class* cls = nullptr;
  if (!class_name.empty()) {
    const auto it = schema.classes.find(class_name);
    if (it == schema.classes.end()) {
      err << "tdtool: error: " << schema_path << " has no class '" << class_name << "'\n";
      return 2;
    }
    cls = it->second;
  } else {
    for (const tcgen::Class* candidate : requested) {
      if (tcgen::python_type_string(*candidate) == type) cls = candidate;
    }
    if (!cls && requested.size() == 1) cls = requested.front();
    if (!cls) {
      std::vector<std::string> names;
      for (const tcgen::Class* candidate : requested) names.push_back(candidate->name);
      err << "tdtool: error: no class of " << schema_path << " is " << type
          << " (classes: " << dims_text(names) << "); name one with --class\n";
      return 2;
    }
  }

  if (!loaded.class_info || !loaded.value.is_tensordict()) {
    out << "mismatch: _type is " << type << ", not a tensorclass; expected "
        << tcgen::python_type_string(*cls) << " (class " << cls->name << ")\n";
    out << dir << ": 1 mismatch(es) with class " << cls->name << " of " << schema_path << "\n";
    return 1;
  }
  // The loader's verdict, by the runtime's own rules, on the ClassSpec the generated class has;
  // then what the declared types say of the data as the class loads it.
  const SchemaSpecs specs(schema.classes);
  const tensordict::ClassLoadCheck check =
      tensordict::check_class_load(specs.of(cls->name), dir, at::Device("meta"));
  std::vector<std::string> mismatches;
  std::set<std::pair<std::string, std::string>> reported;
  for (const auto& problem : check.problems) {
    const std::string at = join(relative(problem.dir, dir));
    mismatches.push_back((at.empty() ? "" : at + ": ") + problem.message);
    if (!problem.field.empty()) reported.emplace(at, problem.field);
  }
  if (check.loaded) {
    SchemaChecker checker(schema.classes, std::move(reported));
    checker.check_class(*check.loaded, *cls, {});
    mismatches.insert(mismatches.end(), checker.mismatches().begin(), checker.mismatches().end());
  }
  for (const auto& mismatch : mismatches) out << "mismatch: " << mismatch << "\n";
  if (mismatches.empty()) {
    out << dir << ": OK, matches class " << cls->name << " of " << schema_path << "\n";
    return 0;
  }
  out << dir << ": " << mismatches.size() << " mismatch(es) with class " << cls->name << " of "
      << schema_path << "\n";
  return 1;
}

}  // namespace tdtool
