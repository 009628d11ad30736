#include "check/inherit.h"

#include <algorithm>
#include <map>

namespace tcgen {
namespace {

class Resolver {
 public:
  Resolver(std::vector<Schema>& schemas, Diagnostics& diagnostics) : diagnostics_(diagnostics) {
    // By name and by qualified name, as fields name classes (duplicates: reported by the checks).
    for (auto& schema : schemas) {
      for (auto& cls : schema.classes) {
        by_name_.emplace(cls.name, &cls);
        if (!cls.cpp_namespace.empty()) by_name_.emplace(cls.cpp_namespace + "::" + cls.name, &cls);
      }
    }
    for (auto& schema : schemas) {
      for (auto& cls : schema.classes) resolve(cls);
    }
  }

 private:
  // Resolves `cls`'s base first; false when it has one that cannot be resolved.
  bool resolve(Class& cls) {
    if (cls.base.empty()) return true;
    if (const auto known = resolved_.find(&cls); known != resolved_.end()) return known->second;
    const auto found = by_name_.find(cls.base);
    if (found == by_name_.end()) {
      std::vector<std::string> names;
      for (const auto& [name, known] : by_name_) names.push_back(name);
      const std::string hint = closest_name(cls.base, names);
      diagnostics_.error(cls.base_loc, "class '" + cls.name + "' extends unknown class '" +
                                           cls.base + "'" +
                                           (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
      return fail(cls);
    }
    Class& base = *found->second;
    const auto on_path = std::find(path_.begin(), path_.end(), &base);
    if (&base == &cls || on_path != path_.end()) {
      std::string chain;
      for (auto it = on_path; it != path_.end(); ++it) chain += (*it)->name + " -> ";
      diagnostics_.error(cls.base_loc, "inheritance cycle: " + chain + cls.name + " -> " +
                                           base.name + " (a class cannot extend itself)");
      return fail(cls);
    }
    path_.push_back(&cls);
    const bool base_ok = resolve(base);
    path_.pop_back();
    if (!base_ok) return fail(cls);
    inherit(cls, base);
    return resolved_[&cls] = true;
  }

  bool fail(const Class& cls) { return resolved_[&cls] = false; }

  void inherit(Class& cls, const Class& base) {
    std::vector<Field> fields = base.fields;
    for (auto& field : cls.fields) {
      const auto same = std::find_if(base.fields.begin(), base.fields.end(),
                                     [&](const Field& f) { return f.name == field.name; });
      if (same == base.fields.end() || field.name.empty()) {
        fields.push_back(std::move(field));
        continue;
      }
      diagnostics_.error(field.loc, "field '" + field.name + "' of class '" + cls.name +
                                        "' is already a field of its base class '" + base.name +
                                        "' (a derived class adds fields; it does not redeclare "
                                        "them)");
      diagnostics_.note(same->loc, "declared here");
    }
    if (cls.options.frozen && !base.options.frozen) {
      diagnostics_.error(cls.options.loc, "class '" + cls.name + "' is 'frozen', but its base '" +
                                              base.name +
                                              "' is not (Python's dataclasses refuse a frozen "
                                              "class over a mutable one)");
    }
    // Inside the generated class a member of a base's name would hide the base it converts to.
    for (const Class* ancestor = &base; ancestor;) {
      for (size_t i = base.fields.size(); i < fields.size(); ++i) {  // its own (bases: checked)
        const Field& field = fields[i];
        if (field.name != ancestor->name) continue;
        diagnostics_.error(field.loc, "field name '" + field.name + "' of class '" + cls.name +
                                          "' is also the name of its base class (the generated "
                                          "class could no longer name it)");
      }
      const auto next = by_name_.find(ancestor->base);
      ancestor = ancestor->base.empty() || next == by_name_.end() ? nullptr : next->second;
    }
    cls.inherited_fields = base.fields.size();
    cls.fields = std::move(fields);
    for (const auto& row : tensordict::kClassOptions) {
      if (base.options.has(row.option)) cls.options.*row.flag = true;
    }
    std::vector<std::string> dims = base.batch_dims;
    for (const auto& dim : cls.batch_dims) {
      if (std::find(dims.begin(), dims.end(), dim) == dims.end()) dims.push_back(dim);
    }
    cls.batch_dims = std::move(dims);
  }

  Diagnostics& diagnostics_;
  std::map<std::string, Class*> by_name_;
  std::map<const Class*, bool> resolved_;  // whether each class with a base could be resolved
  std::vector<const Class*> path_;  // classes whose bases are being resolved, outermost first
};

}  // namespace

void resolve_bases(std::vector<Schema>& schemas, Diagnostics& diagnostics) {
  Resolver(schemas, diagnostics);
}

}  // namespace tcgen
