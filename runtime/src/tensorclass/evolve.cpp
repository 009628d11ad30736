// Loading a tensorclass directory that another version of the class's schema may have written
// (docs/schema.md, "Versions"): fields are found under their old names, fields added since take
// their default, and what the change does not allow is a FormatError naming the field, the
// directory and both versions.
#include "tensorclass/evolve.h"

#include "core/tensordict_impl.h"
#include "tensordict/errors.h"
#include "tensordict/memmap.h"

namespace tensordict::detail::tc {
namespace {

std::string version_name(int64_t version) {
  return version ? "schema version " + std::to_string(version) : "no schema version";
}

// " (written by schema version 1, Sample is schema version 3)"; empty when both are unversioned.
std::string versions(const ClassSpec& spec, const LoadOrigin& from) {
  if (from.written_version == spec.version) {
    return spec.version ? " (" + version_name(spec.version) + ")" : "";
  }
  return " (written by " + version_name(from.written_version) + ", " + spec.name + " is " +
         version_name(spec.version) + ")";
}

// A problem: thrown as a FormatError naming the directory, or collected (check_class_load).
class Problems {
 public:
  explicit Problems(std::vector<ClassLoadProblem>* out) : out_(out) {}
  // `field`: the field or key concerned.
  void report(const ClassSpec& spec, const LoadOrigin& from, const std::string& field,
              const std::string& what) const {
    if (!out_) throw FormatError("'" + from.dir + "': " + what + versions(spec, from));
    out_->push_back({from.dir, what + versions(spec, from), field});
  }
  std::vector<ClassLoadProblem>* sink() const { return out_; }

 private:
  std::vector<ClassLoadProblem>* out_;
};

// A field stored under an old name takes its new one, in the TensorDict (every element of a lazy
// stack) and among the None fields of meta.json.
void rename_old_keys(TensorDict& td, Json& meta_fields, const ClassSpec& spec) {
  for (const FieldSpec& field : spec.fields) {
    for (const char* old : field.old_names) {
      if (td.is_lazy_stack()) {
        for (TensorDict element : td.tensordicts()) {
          if (element.contains(old) && !element.contains(field.name))
            element.rename_key_(old, field.name);
        }
      } else if (td.contains(old) && !td.contains(field.name)) {
        td.rename_key_(old, field.name);
      }
      auto it = meta_fields.find(old);
      if (it != meta_fields.end() && !meta_fields.contains(field.name)) {
        Json value = std::move(*it);
        meta_fields.erase(old);
        meta_fields[field.name] = std::move(value);
      }
    }
  }
}

void check_known(const std::vector<std::string>& names, const ClassSpec& spec,
                 const LoadOrigin& from, const Problems& problems) {
  for (const std::string& name : names) {
    if (spec.field_index(name) >= 0) continue;
    problems.report(spec, from, name,
                    "'" + name + "' is not a field of " + spec.name +
                        "; a field removed from a schema stays readable as a deprecated field");
  }
}

// Fields of meta.json: None (absent from the TensorDict) or, for data-like classes, values.
void apply_meta_fields(TensorDict& td, const ClassSpec& spec, const Json& fields,
                       const LoadOrigin& from, const Problems& problems) {
  for (const auto& [name, value] : fields.items()) {
    if (spec.field_index(name) < 0) continue;  // reported by check_known
    const bool stored = td.contains(name);
    if (stored && !value.is_null()) {
      problems.report(spec, from, name, "field '" + name + "' is stored twice");
    } else if (!stored && !value.is_null()) {
      td.set_non_tensor(name, value);
    }
  }
}

// A field neither stored nor listed as None was added after the directory was written.
void add_missing_fields(TensorDict& td, const Json& meta_fields, const ClassSpec& spec,
                        const LoadOrigin& from, const Problems& problems) {
  for (size_t i = 0; i < spec.fields.size(); ++i) {
    const FieldSpec& field = spec.fields[i];
    if (td.contains(field.name) || meta_fields.contains(field.name)) continue;
    if (field.default_json) {
      set(td, spec, i, default_of(field));
    } else if (!field.optional && field.kind != FieldKind::Any) {
      problems.report(spec, from, field.name,
                      "field '" + std::string(field.name) + "' of " + spec.name +
                          " is missing; a field added to a schema needs a default or an "
                          "optional[...] type");
    }
  }
}

void check_tensors(const TensorDict& td, const ClassSpec& spec, const LoadOrigin& from,
                   const Problems& problems) {
  if (td.is_lazy_stack()) {  // element by element (ragged entries cannot be stacked)
    for (const TensorDict& element : td.tensordicts()) check_tensors(element, spec, from, problems);
    return;
  }
  for (const FieldSpec& field : spec.fields) {
    if (field.kind != FieldKind::Tensor || !td.contains(field.name)) continue;
    const Value value = td.get_value(field.name);
    if (!value.is_tensor()) continue;
    std::string problem = dtype_problem(field, value.tensor());
    // A lazy stack's elements lack the stacked dim: their shapes are not the class's.
    if (problem.empty() && !from.in_lazy_stack) problem = shape_problem(field, value.tensor());
    if (!problem.empty()) {
      problems.report(spec, from, field.name,
                      "field '" + std::string(field.name) + "' of " + spec.name + " " + problem);
    }
  }
}

}  // namespace

void adopt_loaded_fields(TensorDict& td, Json meta_fields, const ClassSpec& spec,
                         const LoadOrigin& from, std::vector<ClassLoadProblem>* collected) {
  const Problems problems(collected);
  rename_old_keys(td, meta_fields, spec);
  std::vector<std::string> names;
  for (const auto& [name, value] : meta_fields.items()) names.push_back(name);
  check_known(names, spec, from, problems);
  names.clear();
  for (const auto& key : td.keys()) names.push_back(key.front());
  check_known(names, spec, from, problems);
  apply_meta_fields(td, spec, meta_fields, from, problems);
  add_missing_fields(td, meta_fields, spec, from, problems);
  LoadOrigin tensors = from;
  tensors.in_lazy_stack = from.in_lazy_stack || td.is_lazy_stack();
  check_tensors(td, spec, tensors, problems);
  if (td.is_lazy_stack()) return;
  // Nested tensorclass directories, each from its own schema (and version).
  for (const FieldSpec& field : spec.fields) {
    if (field.kind != FieldKind::Class || !td.contains(field.name)) continue;
    const Value value = td.get_value(field.name);
    if (!value.is_tensordict()) continue;
    const auto& info = impl_of(value.tensordict()).class_info;
    if (!info) continue;
    TensorDict child = value.tensordict();
    adopt_loaded_fields(child, info->fields, field.nested(),
                        {from.dir + "/_tensordict/" + field.name, info->schema_version}, collected);
  }
}

}  // namespace tensordict::detail::tc
