#include "check/compat.h"

#include <algorithm>
#include <map>

#include "frontend/type_parser.h"
#include "model/kinds.h"
#include "model/output_names.h"

namespace tcgen {
namespace {

constexpr std::array<bool, 3> kSafe{false, false, false};
constexpr std::array<bool, 3> kBreaksAll{true, true, true};
constexpr std::array<bool, 3> kBreaksData{true, false, false};
constexpr std::array<bool, 3> kBreaksApis{false, true, true};
constexpr std::array<bool, 3> kBreaksCpp{false, true, false};

// What a class option's change breaks, by its row (class_contract.h).
std::array<bool, 3> breaks(tensordict::OptionChange change, bool added) {
  switch (change) {
    case tensordict::OptionChange::Safe:
      return kSafe;
    case tensordict::OptionChange::ApiAdded:
      return added ? kBreaksApis : kSafe;
    case tensordict::OptionChange::BreaksAll:
      break;
  }
  return kBreaksAll;
}

bool may_be_absent(const Field& field) {
  return field.default_value || is_optional(field.type) || traits(field.type.kind).is_json;
}

std::string shape_text(const std::vector<Dim>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    text +=
        (i ? ", " : "") + (shape[i].name.empty() ? std::to_string(shape[i].size) : shape[i].name);
  }
  return text + ")";
}

// Whether every tensor the old shape allows fits the new one: same rank, and each new fixed
// size was the same fixed size before (a named dim accepts any size).
bool shape_loosens(const std::vector<Dim>& from, const std::vector<Dim>& to) {
  if (from.size() != to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    if (to[i].name.empty() && (!from[i].name.empty() || from[i].size != to[i].size)) return false;
  }
  return true;
}

class Comparer {
 public:
  std::vector<SchemaChange> run(const std::vector<Schema>& old_schemas,
                                const std::vector<Schema>& new_schemas) {
    const auto old_classes = classes_of(old_schemas), new_classes = classes_of(new_schemas);
    for (const auto& [name, cls] : old_classes) {
      auto it = new_classes.find(name);
      if (it == new_classes.end()) {
        add(cls->loc, "class '" + name + "' removed", kBreaksAll);
      } else {
        compare_class(*cls, *it->second);
      }
    }
    for (const auto& [name, cls] : new_classes) {
      if (!old_classes.count(name)) add(cls->loc, "class '" + name + "' added", kSafe);
    }
    std::stable_sort(changes_.begin(), changes_.end(), [](const auto& a, const auto& b) {
      return std::tie(a.loc.file, a.loc.line, a.loc.column) <
             std::tie(b.loc.file, b.loc.line, b.loc.column);
    });
    return std::move(changes_);
  }

 private:
  static std::map<std::string, const Class*> classes_of(const std::vector<Schema>& schemas) {
    std::map<std::string, const Class*> out;
    for (const auto& schema : schemas) {
      for (const auto& cls : schema.classes) out.emplace(cls.name, &cls);
    }
    return out;
  }

  void add(const SourceLoc& loc, std::string message, std::array<bool, 3> breaks,
           std::string hint = "") {
    changes_.push_back(SchemaChange{loc, std::move(message), breaks, std::move(hint)});
  }

  void compare_class(const Class& from, const Class& to) {
    const std::string what = "class '" + to.name + "': ";
    if (python_type_string(from) != python_type_string(to)) {
      add(to.loc,
          what + "Python type " + python_type_string(from) + " became " + python_type_string(to) +
              " (the `_type` its directories hold)",
          {true, false, true});
    }
    compare_options(from, to, what);
    if (from.batch_dims.size() != to.batch_dims.size()) {
      add(to.loc,
          what + "batch dims [" + comma_separated(from.batch_dims) + "] became [" +
              comma_separated(to.batch_dims) + "]",
          kBreaksAll);
    }
    compare_fields(from, to, what);
  }

  void compare_options(const Class& from, const Class& to, const std::string& what) {
    for (const auto& row : tensordict::kClassOptions) {
      const bool before = from.options.has(row.option), after = to.options.has(row.option);
      if (before == after) continue;
      const std::string message =
          what + "option '" + std::string(row.name) + "' " + (after ? "added" : "removed");
      add(to.options.loc, message, breaks(row.change, after));
    }
  }

  // The new field that holds the old one's data: same name, or renamed from it.
  static const Field* successor(const Field& old, const Class& to) {
    for (const auto& field : to.fields) {
      if (field.name == old.name) return &field;
    }
    for (const auto& field : to.fields) {
      if (std::count(field.renamed_from.begin(), field.renamed_from.end(), old.name)) return &field;
    }
    return nullptr;
  }

  void compare_fields(const Class& from, const Class& to, const std::string& what) {
    std::vector<const Field*> kept;  // new fields that existed before, in new order
    std::vector<const Field*> removed, added;
    std::map<const Field*, size_t> old_position;
    for (size_t i = 0; i < from.fields.size(); ++i) {
      const Field& old = from.fields[i];
      const Field* now = successor(old, to);
      if (!now) {
        removed.push_back(&old);
        continue;
      }
      old_position[now] = i;
      if (now->name != old.name) {
        add(now->loc, what + "field '" + old.name + "' renamed to '" + now->name + "'",
            kBreaksApis);
      }
      compare_field(old, *now, what + "field '" + now->name + "': ");
    }
    for (size_t i = 0; i < to.fields.size(); ++i) {
      const Field& field = to.fields[i];
      if (old_position.count(&field)) {
        kept.push_back(&field);
        continue;
      }
      added.push_back(&field);
      if (!may_be_absent(field)) {
        add(field.loc,
            what + "field '" + field.name +
                "' added without a default (older directories cannot load; give it a default "
                "or an optional[...] type)",
            kBreaksAll);
      } else if (!field.deprecated &&
                 std::any_of(to.fields.begin() + i + 1, to.fields.end(),
                             [&](const Field& later) { return old_position.count(&later) > 0; })) {
        // Before an old field: positional construction (C++ Args, Python) shifts.
        add(field.loc, what + "field '" + field.name + "' added before an existing field",
            kBreaksApis);
      } else {
        add(field.loc, what + "field '" + field.name + "' added", kSafe);
      }
    }
    for (const Field* old : removed) {
      // A field of the same type (optional or not) added in its place may be the old one
      // renamed, without the `renamed_from` that keeps its data readable. Each added field is
      // offered once.
      const std::string type = type_to_string(element_type(old->type));
      auto same = std::find_if(added.begin(), added.end(), [&](const Field* field) {
        return field && type_to_string(element_type(field->type)) == type;
      });
      std::string hint;
      if (same != added.end()) {
        hint = "if '" + (*same)->name + "' is '" + old->name +
               "' renamed, declare it with renamed_from: " + old->name;
        *same = nullptr;
      }
      add(old->loc,
          what + "field '" + old->name +
              "' removed (directories holding it no longer load; deprecate it instead)",
          kBreaksAll, hint);
    }
    for (size_t i = 1; i < kept.size(); ++i) {
      if (old_position[kept[i]] > old_position[kept[i - 1]]) continue;
      add(kept[i]->loc,
          what + "field '" + kept[i]->name + "' moved before '" + kept[i - 1]->name + "'",
          kBreaksApis);
    }
  }

  void compare_field(const Field& from, const Field& to, const std::string& what) {
    if (!from.deprecated && to.deprecated) {
      add(to.loc, what + "deprecated (its accessor and constructor argument are gone)", kBreaksCpp);
    } else if (from.deprecated && !to.deprecated) {
      add(to.loc, what + "no longer deprecated", kSafe);
    }
    compare_type(from, to, what);
    if (from.default_value && !to.default_value && !may_be_absent(to)) {
      add(to.loc, what + "default " + from.default_value->dump() + " removed", kBreaksApis);
    } else if (!from.default_value && to.default_value) {
      add(to.default_loc, what + "default " + to.default_value->dump() + " added", kSafe);
    } else if (from.default_value != to.default_value && to.default_value) {
      add(to.default_loc,
          what + "default " + from.default_value->dump() + " became " + to.default_value->dump(),
          kSafe);
    }
  }

  void compare_type(const Field& from, const Field& to, const std::string& what) {
    const Type& a = element_type(from.type);
    const Type& b = element_type(to.type);
    const SourceLoc& at = to.type.loc;
    // Tensors differ in their constraints (below); other types by their whole spelling.
    const bool same =
        a.kind == b.kind && (a.kind == TypeKind::Tensor || type_to_string(a) == type_to_string(b));
    if (!same) {
      add(at,
          what + "type '" + type_to_string(from.type) + "' became '" + type_to_string(to.type) +
              "'",
          kBreaksAll);
      return;
    }
    if (is_optional(from.type) && !is_optional(to.type)) {
      add(at, what + "no longer optional (directories may hold None)", kBreaksAll);
    } else if (!is_optional(from.type) && is_optional(to.type)) {
      add(at, what + "now optional (its accessor returns std::optional)", kBreaksCpp);
    }
    if (a.kind != TypeKind::Tensor) return;
    if (a.dtype != b.dtype) {
      const std::string before = a.dtype.value_or("any dtype"),
                        after = b.dtype.value_or("any dtype");
      add(at, what + "dtype " + before + " became " + after, b.dtype ? kBreaksData : kSafe);
    }
    if (a.shape != b.shape) {
      const std::string before = a.shape ? shape_text(*a.shape) : "any shape";
      const std::string after = b.shape ? shape_text(*b.shape) : "any shape";
      const bool loosens = !b.shape || (a.shape && shape_loosens(*a.shape, *b.shape));
      add(at, what + "shape " + before + " became " + after, loosens ? kSafe : kBreaksData);
    }
  }

  std::vector<SchemaChange> changes_;
};

int64_t version_of(const std::vector<Schema>& schemas) {
  return schemas.empty() ? 0 : schemas.front().version;
}

}  // namespace

std::vector<SchemaChange> compare_schemas(const std::vector<Schema>& old_schemas,
                                          const std::vector<Schema>& new_schemas) {
  return Comparer().run(old_schemas, new_schemas);
}

std::vector<Diagnostic> compat_report(const std::vector<SchemaChange>& changes,
                                      const std::vector<Audience>& audiences,
                                      const std::vector<Schema>& old_schemas,
                                      const std::vector<Schema>& new_schemas) {
  std::vector<Diagnostic> out;
  for (const auto& change : changes) {
    std::vector<std::string> broken;
    bool counts = false;
    for (size_t i = 0; i < change.breaks.size(); ++i) {
      if (!change.breaks[i]) continue;
      broken.emplace_back(kAudienceNames[i]);
      counts = counts || std::count(audiences.begin(), audiences.end(), static_cast<Audience>(i));
    }
    const std::string verdict = broken.empty() ? "safe" : "breaks " + comma_separated(broken);
    out.push_back(Diagnostic{counts ? Diagnostic::Severity::Error : Diagnostic::Severity::Note,
                             change.loc,
                             change.message + " [" + verdict + "]" +
                                 (change.hint.empty() ? "" : "; hint: " + change.hint)});
  }
  const int64_t before = version_of(old_schemas), after = version_of(new_schemas);
  if (!new_schemas.empty() && !changes.empty() && after <= before) {
    out.push_back(Diagnostic{
        Diagnostic::Severity::Warning,
        new_schemas.front().version ? new_schemas.front().version_loc : new_schemas.front().loc,
        "the schema changed but its version did not grow (" + std::to_string(before) + " -> " +
            std::to_string(after) + ")"});
  }
  return out;
}

}  // namespace tcgen
