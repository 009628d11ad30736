// tdtool verify --schema S.yaml DIR: a directory checked against a class of a schema (read with
// tcgen's front end and checks): `_type`, fields present or unknown, kinds, dtypes, shapes (batch
// dims and other named dims consistent), batch dims count, nested classes alike.
#include <ATen/ATen.h>

#include <algorithm>
#include <map>
#include <ostream>

#include "commands.h"
#include "driver/driver.h"
#include "frontend/type_parser.h"
#include "model/kinds.h"
#include "model/names.h"
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

class SchemaChecker {
 public:
  SchemaChecker(const tensordict::memmap::Loaded& loaded, const tcgen::ClassIndex& classes)
      : classes_(classes) {
    for (const auto& [key, info] : loaded.nested_classes) nested_.emplace(key.join("."), info);
  }

  // Checks `td` (with `info`: its `_type` and None fields) against `cls`.
  void check_class(const TensorDict& td, const tensordict::memmap::ClassInfo& info,
                   const tcgen::Class& cls, const std::vector<std::string>& path) {
    const std::string at = path.empty() ? "" : join(path) + ": ";
    const std::string expected = tcgen::python_type_string(cls);
    if (info.type != expected) {
      add(at + "_type is " + info.type + ", expected " + expected + " (class " + cls.name + ")");
    }
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
    // Stored entries: of every element of a lazy stack, each against the class's shapes less the
    // stack dim.
    std::vector<std::string> stored;
    if (td.is_lazy_stack()) {
      const auto stack_dim = static_cast<size_t>(td.stack_dim());
      for (size_t e = 0; e < td.tensordicts().size(); ++e) {
        const TensorDict& element = td.tensordicts()[e];
        std::vector<std::string> element_path = path;
        element_path.push_back(std::to_string(e));
        Bindings element_bound;
        for (size_t i = 0; i < cls.batch_dims.size() && i < batch.size(); ++i) {
          const size_t own = i < stack_dim ? i : i - 1;
          if (i != stack_dim && own < element.batch_size().size()) {
            element_bound.emplace(cls.batch_dims[i],
                                  Binding{element.batch_size()[own], "the batch size"});
          }
        }
        check_entries(element, cls, element_path, element_bound, stack_dim, stored);
      }
    } else {
      check_entries(td, cls, path, bound, std::nullopt, stored);
    }
    auto is_stored = [&](const std::string& name) {
      return std::find(stored.begin(), stored.end(), name) != stored.end();
    };
    for (const auto& [key, value] : info.fields.items()) {
      if (is_stored(key)) continue;
      const tcgen::Field* field = find_field(cls, key);
      if (!field) {
        add(at_field(path, key) + "not a field of class " + cls.name);
      } else if (!value.is_null()) {
        check_json_field(*field, value, path);
      } else if (!accepts_none(*field)) {
        add(at_field(path, key) + "is None, but its type " + tcgen::type_to_string(field->type) +
            " is not optional");
      }
    }
    for (const auto& field : cls.fields) {
      if (!is_stored(field.name) && !info.fields.contains(field.name)) {
        add(at_field(path, field.name) + "missing (class " + cls.name + " declares it, " +
            tcgen::type_to_string(field.type) + ")");
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

  void check_entries(const TensorDict& td, const tcgen::Class& cls,
                     const std::vector<std::string>& path, Bindings& bound,
                     std::optional<size_t> stack_dim, std::vector<std::string>& stored) {
    for (size_t i = 0; i < td.size(); ++i) {
      const std::string& key = td.key_at(i);
      if (std::find(stored.begin(), stored.end(), key) == stored.end()) stored.push_back(key);
      const tcgen::Field* field = find_field(cls, key);
      std::vector<std::string> field_path = path;
      field_path.push_back(key);
      if (!field) {
        add(join(field_path) + ": not a field of class " + cls.name);
        continue;
      }
      check_value(tcgen::element_type(field->type), td.value_at(i), field_path, bound, stack_dim);
    }
  }

  // A value kept in the tensorclass's meta.json (a non-tensor class's own fields).
  void check_json_field(const tcgen::Field& field, const Json& value,
                        const std::vector<std::string>& path) {
    check_value(tcgen::element_type(field.type), Value(tensordict::NonTensorData{value}),
                {join(path), field.name}, no_bindings_, std::nullopt);
  }

  void check_value(const tcgen::Type& type, const Value& value,
                   const std::vector<std::string>& path, Bindings& bound,
                   std::optional<size_t> stack_dim) {
    const std::string at = join(path) + ": ";
    const std::string expected = tcgen::type_to_string(type);
    auto wrong_kind = [&] { add(at + "expected " + expected + ", found " + describe(value)); };
    switch (tcgen::form_of(type)) {
      case tcgen::KindForm::Tensor:
        if (!value.is_tensor()) return wrong_kind();
        return check_tensor(type, value.tensor(), at, bound, stack_dim);
      case tcgen::KindForm::Value: {
        const tcgen::KindTraits& kind = tcgen::traits(type.kind);
        if (kind.is_json) return;
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
        const auto cls = classes_.find(type.class_name);
        const auto info = nested_.find(join(path));
        if (!value.is_tensordict() || info == nested_.end()) return wrong_kind();
        if (cls != classes_.end())
          check_class(value.tensordict(), info->second, *cls->second, path);
        return;
      }
      case tcgen::KindForm::Optional:
        return check_value(type.args.at(0), value, path, bound, stack_dim);
    }
  }

  void check_tensor(const tcgen::Type& type, const at::Tensor& t, const std::string& at,
                    Bindings& bound, std::optional<size_t> stack_dim) {
    const std::string dtype = tensordict::dtype_name(t.scalar_type());
    if (type.dtype && *type.dtype != dtype) {
      add(at + "dtype " + dtype + ", expected " + *type.dtype);
    }
    if (!type.shape) return;
    std::vector<tcgen::Dim> dims = *type.shape;
    if (stack_dim && *stack_dim < dims.size()) {  // an element of a lazy stack
      dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(*stack_dim));
    }
    tcgen::Type shown = type;
    shown.shape = dims;
    shown.dtype.reset();
    const std::string want = tcgen::type_to_string(shown).substr(std::string("tensor[").size());
    const std::string expected = want.substr(0, want.size() - 1);
    const auto sizes = t.sizes();
    if (sizes.size() != dims.size()) {
      add(at + "shape " + tensordict::shape_str(sizes) + " has " + std::to_string(sizes.size()) +
          " dims, expected " + std::to_string(dims.size()) + ": " + expected);
      return;
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      const tcgen::Dim& dim = dims[i];
      if (dim.name.empty()) {
        if (sizes[i] != dim.size) {
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
  std::map<std::string, tensordict::memmap::ClassInfo> nested_;
  std::vector<std::string> mismatches_;
  Bindings no_bindings_;
};

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

  SchemaChecker checker(loaded, schema.classes);
  if (!loaded.class_info || !loaded.value.is_tensordict()) {
    out << "mismatch: _type is " << type << ", not a tensorclass; expected "
        << tcgen::python_type_string(*cls) << " (class " << cls->name << ")\n";
    out << dir << ": 1 mismatch(es) with class " << cls->name << " of " << schema_path << "\n";
    return 1;
  }
  checker.check_class(loaded.value.tensordict(), *loaded.class_info, *cls, {});
  for (const auto& mismatch : checker.mismatches()) out << "mismatch: " << mismatch << "\n";
  if (checker.mismatches().empty()) {
    out << dir << ": OK, matches class " << cls->name << " of " << schema_path << "\n";
    return 0;
  }
  out << dir << ": " << checker.mismatches().size() << " mismatch(es) with class " << cls->name
      << " of " << schema_path << "\n";
  return 1;
}

}  // namespace tdtool
