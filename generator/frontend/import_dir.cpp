#include "frontend/import_dir.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <unordered_map>

#include "frontend/import_files.h"
#include "frontend/import_types.h"
#include "frontend/input_checks.h"
#include "frontend/type_parser.h"
#include "model/name_rules.h"
#include "tensordict/format_version.h"

namespace tcgen {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// `_type` strings of the collections that are not tensorclasses (format spec §1.4, §2, §4).
const char* const kTensorDict = "tensordict._td.TensorDict";
const char* const kSubTensorDict = "tensordict._td._SubTensorDict";
const char* const kNonTensorData = "tensordict.tensorclass.NonTensorData";
const char* const kMetaData = "tensordict.tensorclass.MetaData";
const char* const kNonTensorStack = "tensordict.tensorclass.NonTensorStack";
const char* const kLazyStack = "tensordict._lazy.LazyStackedTensorDict";

bool is_plain_collection(const std::string& type) {
  return type == kTensorDict || type == kSubTensorDict || type == kLazyStack;
}
bool is_non_tensor(const std::string& type) {
  return type == kNonTensorData || type == kMetaData || type == kNonTensorStack;
}

// The names of `rank` batch dims when a meta.json names some (format version 1's `_names`): each
// dim its own name where that is an identifier, the others as above (with `_` added until no name
// is taken twice).
std::vector<std::string> batch_dim_names(size_t rank,
                                         const std::optional<tensordict::format::Names>& own) {
  std::vector<std::string> names = tcgen::batch_dim_names(rank);
  if (!own) return names;
  std::set<std::string> taken;
  for (size_t i = 0; i < rank; ++i) {
    const auto& name = (*own)[i];
    if (name && is_identifier(*name) && taken.insert(*name).second) names[i] = *name;
  }
  for (size_t i = 0; i < rank; ++i) {
    if ((*own)[i] && names[i] == *(*own)[i]) continue;
    while (taken.count(names[i])) names[i] += "_";
    taken.insert(names[i]);
  }
  return names;
}

// A field as the directories show it: a type when some entry holds a value, and whether some
// directory stores it as None.
struct FieldInfo {
  std::string name;
  std::optional<Type> type;
  bool none = false;
};

struct ClassInfo {
  Class cls;
  std::vector<FieldInfo> fields;
  std::unordered_map<std::string, size_t> index;  // field name -> its place in `fields`

  FieldInfo& field(const std::string& name) {
    const auto [it, fresh] = index.emplace(name, fields.size());
    if (fresh) fields.push_back(FieldInfo{name, std::nullopt, false});
    return fields[it->second];
  }
  void add(const std::string& name, const Type& type) {
    FieldInfo& f = field(name);
    f.type = f.type ? merge_types(*f.type, type) : type;
  }
};

class Importer {
 public:
  Importer(const ImportOptions& options, Diagnostics& diagnostics)
      : options_(options), diagnostics_(diagnostics) {}

  Schema run(const std::string& dir, const std::string& display) {
    Schema schema;
    schema.path = dir;
    schema.display_path = display;
    std::optional<Json> meta = read_meta(dir, display, 1, diagnostics_);
    if (!meta) return schema;
    const std::string type = class_path(*meta, display);
    if (type.empty()) return schema;
    namespace_ = options_.cpp_namespace.empty() ? module_namespace(type) : options_.cpp_namespace;
    schema.cpp_namespace = namespace_;
    if (is_plain_collection(type) || is_non_tensor(type)) {
      error(display, "holds a " + short_name(type) + " (_type " + type_string(type) +
                         "), not a tensorclass: tcgen import reads tensorclass directories");
      return schema;
    }
    import_class(dir, display, *meta, type, 1);
    schema.version = read_version(dir, display, diagnostics_);
    for (auto& info : classes_) schema.classes.push_back(finish(info));
    for (auto& cls : schema.classes) cls.version = schema.version;
    check_sizes(schema);
    return schema;
  }

 private:
  static std::string short_name(const std::string& type) {
    return type.substr(type.rfind('.') == std::string::npos ? 0 : type.rfind('.') + 1);
  }
  static std::string type_string(const std::string& type) { return "<class '" + type + "'>"; }

  // The namespace of a class's module, as a schema's default `python:` name is its namespace and
  // name (`example::MyData` <-> `example.MyData`): `pkg.mod.Name` -> `pkg::mod`. None for a
  // script's class (`__main__.Name`) or a module no namespace can spell (`at.x`, `m.<locals>`).
  static std::string module_namespace(const std::string& type) {
    const size_t dot = type.rfind('.');
    if (dot == std::string::npos || type.compare(0, dot, "__main__") == 0) return "";
    std::string cpp;
    for (char c : type.substr(0, dot)) cpp += c == '.' ? std::string("::") : std::string(1, c);
    return namespace_problem(cpp).empty() ? cpp : "";
  }

  void error(const std::string& where, const std::string& message) {
    diagnostics_.error(SourceLoc{where, 0, 0}, message);
  }

  // tcgen's bounds on a schema's size (input_checks.h), before a YAML schema of that size is
  // written and read back only to be refused.
  void check_sizes(const Schema& schema) {
    if (schema.classes.size() > kMaxClassesPerSchema) {
      error(schema.display_path,
            "holds " + std::to_string(schema.classes.size()) + " tensorclasses, more than the " +
                std::to_string(kMaxClassesPerSchema) + " a schema file may have");
    }
    size_t fields = 0;
    bool reported = false;
    for (const auto& cls : schema.classes) {
      fields += cls.fields.size();
      if (cls.fields.size() > kMaxFieldsPerClass) {
        error(cls.loc.file, "class '" + cls.name + "' has " + std::to_string(cls.fields.size()) +
                                " fields, more than the " + std::to_string(kMaxFieldsPerClass) +
                                " a class may have");
        reported = true;
      }
    }
    if (!reported && fields > kMaxFieldsPerSchema) {
      error(schema.display_path,
            "its classes have " + std::to_string(fields) + " fields in all, more than the " +
                std::to_string(kMaxFieldsPerSchema) + " a schema file may have");
    }
  }

  // "pkg.mod.Name" of a meta.json's `_type` "<class 'pkg.mod.Name'>"; "" (reported) otherwise.
  std::string class_path(const Json& meta, const std::string& display) {
    const auto it = meta.find("_type");
    const std::string prefix = "<class '", suffix = "'>";
    if (it == meta.end() || !it->is_string()) {
      error(display + "/meta.json", "has no \"_type\" string");
      return "";
    }
    const std::string text = it->get<std::string>();
    if (text.size() <= prefix.size() + suffix.size() || text.rfind(prefix, 0) != 0 ||
        text.compare(text.size() - suffix.size(), suffix.size(), suffix) != 0) {
      error(display + "/meta.json", "\"_type\" " + Json(text).dump() +
                                        " is not a class (expected \"<class 'module.Name'>\")");
      return "";
    }
    return text.substr(prefix.size(), text.size() - prefix.size() - suffix.size());
  }

  // The format version of a meta.json that is not a tensorclass's (tensordict/format_version.h):
  // nullopt (reported) when it is malformed or newer than this tcgen reads, or when its `_class`
  // contradicts `type`.
  std::optional<int64_t> format_version(const Json& meta, const std::string& type,
                                        const std::string& where) {
    const tensordict::format::Version v = tensordict::format::version_of(meta);
    std::string problem = v.problem;
    if (problem.empty()) problem = tensordict::format::class_problem(meta, v.version, type);
    if (problem.empty()) return v.version;
    error(where, problem);
    return std::nullopt;
  }

  // The dim names a meta.json of version 1 records for `rank` batch dims; nullopt (reported when
  // malformed) when there are none.
  std::optional<tensordict::format::Names> dim_names(const Json& meta, int64_t version, size_t rank,
                                                     const std::string& where) {
    tensordict::format::NamesEntry entry = tensordict::format::names_of(meta, version, rank);
    if (!entry.problem.empty()) error(where, entry.problem);
    return std::move(entry.names);
  }

  // Batch size of a TensorDict meta.json: its "shape".
  std::optional<std::vector<int64_t>> batch_of(const Json& meta, const std::string& where) {
    const auto it = meta.find("shape");
    std::vector<int64_t> shape;
    if (it != meta.end() && it->is_array()) {
      for (const auto& d : *it) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0) break;
        shape.push_back(d.get<int64_t>());
      }
      if (shape.size() == it->size()) return shape;
    }
    error(where, "has no \"shape\" list of sizes (the batch size)");
    return std::nullopt;
  }

  // Imports the tensorclass directory `dir` at `level` of the tree (its meta.json read already as
  // `meta`, of class `type`); returns the class's name, "" on error.
  std::string import_class(const fs::path& dir, const std::string& display, const Json& meta,
                           const std::string& type, int level) {
    const std::string name = short_name(type);
    const auto known = index_.find(type);
    size_t index = 0;
    if (known != index_.end()) {
      index = known->second;
    } else {
      const auto taken = by_name_.find(name);
      if (taken != by_name_.end()) {
        error(display, "class " + type_string(type) + " and class " +
                           type_string(classes_[taken->second].cls.python_name) +
                           " would both be named '" + name + "'");
        return "";
      }
      index = classes_.size();
      index_.emplace(type, index);
      by_name_.emplace(name, index);
      ClassInfo info;
      info.cls.name = name;
      info.cls.python_name = type;
      info.cls.cpp_namespace = namespace_;
      info.cls.loc = SourceLoc{display, 0, 0};
      classes_.push_back(std::move(info));
    }
    const fs::path inner = dir / "_tensordict";
    const std::string inner_display = display + "/_tensordict";
    std::optional<Json> inner_meta = read_meta(inner, inner_display, level + 1, diagnostics_);
    if (!inner_meta) return "";
    const std::string inner_type = class_path(*inner_meta, inner_display);
    const std::string inner_where = inner_display + "/meta.json";
    std::optional<int64_t> version;
    if (!inner_type.empty()) version = format_version(*inner_meta, inner_type, inner_where);
    if (!version) {
      // reported: no `_type`, or a format version this tcgen does not read
    } else if (inner_type == kTensorDict || inner_type == kSubTensorDict) {
      const auto batch = batch_of(*inner_meta, inner_where);
      if (!batch) return "";
      set_batch_dims(index,
                     batch_dim_names(batch->size(),
                                     dim_names(*inner_meta, *version, batch->size(), inner_where)),
                     display);
      import_entries(index, inner, inner_display, *inner_meta, *batch,
                     classes_[index].cls.batch_dims, {}, level + 1);
    } else if (inner_type == kLazyStack) {
      import_lazy_stack(index, inner, inner_display, *inner_meta, display, level + 1);
    } else {
      error(inner_where,
            "holds a " + type_string(inner_type) + ", not a TensorDict or a lazy stack");
    }
    // The fields whose value is None (spec §3); other entries are a non-tensor class's own.
    for (const auto& [key, value] : meta.items()) {
      if (key == "_type") continue;
      if (!check_key(key, display + "/meta.json")) continue;
      FieldInfo& field = classes_[index].field(key);
      if (value.is_null()) {
        field.none = true;
      } else {
        classes_[index].add(key, make_type(TypeKind::Any));
      }
    }
    if (entry_exists(dir / "other.pickle")) {
      diagnostics_.warning(SourceLoc{display + "/other.pickle", 0, 0},
                           "not read: the fields pickled there are left out of the schema");
    }
    return name;
  }

  void set_batch_dims(size_t index, const std::vector<std::string>& names,
                      const std::string& display) {
    Class& cls = classes_[index].cls;
    const size_t rank = names.size();
    if (cls.batch_dims.empty() && !batch_set_[index]) {
      cls.batch_dims = names;
    } else if (cls.batch_dims.size() != rank) {
      diagnostics_.warning(SourceLoc{display, 0, 0},
                           "class '" + cls.name + "' has " + std::to_string(rank) +
                               " batch dims here and " + std::to_string(cls.batch_dims.size()) +
                               " elsewhere; the schema keeps the first");
    }
    batch_set_[index] = true;
  }

  bool check_key(const std::string& key, const std::string& where) {
    if (is_identifier(key)) return true;
    error(where, "key " + Json(key).dump() + " is not a field name a schema can declare");
    return false;
  }

  // The entries of a TensorDict directory `inner` as fields of class `index`. `names` name the
  // class's batch dims; `stacked` (ascending) are those of them that lazy stacking removed, when
  // `inner` is an element of a (possibly nested) lazy stack: its batch `batch` is the other dims,
  // and tensor shapes get the stacked dims back, by name. `inner` is at `level` of the tree.
  void import_entries(size_t index, const fs::path& inner, const std::string& display,
                      const Json& meta, const std::vector<int64_t>& batch,
                      const std::vector<std::string>& names, const std::vector<size_t>& stacked,
                      int level) {
    std::vector<std::string> own;
    for (size_t i = 0; i < names.size(); ++i) {
      if (std::find(stacked.begin(), stacked.end(), i) == stacked.end()) own.push_back(names[i]);
    }
    const int64_t version = tensordict::format::version_of(meta).version;  // checked by the caller
    for (const auto& [key, entry] : meta.items()) {
      if (tensordict::format::is_format_entry(key, version)) continue;
      if (!check_key(key, display + "/meta.json")) continue;
      std::optional<Type> type = entry_type(inner, display, key, entry, batch, own, level);
      if (!type) continue;
      if (!stacked.empty() && (type->kind == TypeKind::Str || type->kind == TypeKind::List)) {
        // One value per element: read through the stack, the class's field holds them as nested
        // lists, one level per stacked dim (as TorchRL's History declares its strings `any`).
        type = make_type(TypeKind::Any);
      }
      if (type->kind == TypeKind::Tensor && type->shape) {
        for (const size_t dim : stacked) {
          type->shape->insert(type->shape->begin() + static_cast<std::ptrdiff_t>(dim),
                              Dim{names.at(dim), -1});
        }
      }
      classes_[index].add(key, *type);
    }
  }

  std::optional<Type> entry_type(const fs::path& inner, const std::string& display,
                                 const std::string& key, const Json& entry,
                                 const std::vector<int64_t>& batch,
                                 const std::vector<std::string>& names, int level) {
    const std::string where = display + "/meta.json";
    if (entry.is_object() && entry.contains("dtype")) return tensor_type(entry, batch, names);
    if (!entry.is_object() || !entry.contains("type")) {
      error(where, "entry '" + key + "' is neither a tensor nor a collection");
      return std::nullopt;
    }
    const fs::path child = inner / key;
    const std::string child_display = display + "/" + key;
    std::optional<Json> meta = read_meta(child, child_display, level + 1, diagnostics_);
    if (!meta) return std::nullopt;
    const std::string type = class_path(*meta, child_display);
    if (type.empty()) return std::nullopt;
    const bool tensorclass = !is_plain_collection(type) && !is_non_tensor(type);
    if (!tensorclass && !format_version(*meta, type, child_display + "/meta.json")) {
      return std::nullopt;
    }
    if (type == kNonTensorData || type == kMetaData) {
      const auto data = meta->find("data");
      return make_type(data != meta->end() && data->is_string() ? TypeKind::Str : TypeKind::Any);
    }
    if (type == kNonTensorStack) {
      const auto data = meta->find("data");
      bool strings = data != meta->end() && data->is_array() && !data->empty();
      for (size_t i = 0; strings && i < data->size(); ++i) strings = (*data)[i].is_string();
      return strings ? wrap(TypeKind::List, make_type(TypeKind::Str)) : make_type(TypeKind::Any);
    }
    // A nested plain collection (a TensorDict, a view of one, a lazy stack) is a TensorDict field.
    if (is_plain_collection(type)) return make_type(TypeKind::TensorDict);
    const std::string name = import_class(child, child_display, *meta, type, level + 1);
    if (name.empty()) return std::nullopt;
    Type cls = make_type(TypeKind::Class);
    cls.class_name = name;
    return cls;
  }

  // `tensor[dtype, (batch dims named, the other sizes fixed)]`, less what the entry does not say.
  Type tensor_type(const Json& entry, const std::vector<int64_t>& batch,
                   const std::vector<std::string>& names) {
    Type type = make_type(TypeKind::Tensor);
    const auto dtype = entry.find("dtype");
    if (dtype->is_string()) {
      std::string name = dtype->get<std::string>();
      if (name.rfind("torch.", 0) == 0) name = name.substr(6);
      if (is_dtype(name)) type.dtype = name;
    }
    const auto nested = entry.find("is_nested");
    if (nested != entry.end() && nested->is_boolean() && nested->get<bool>()) return type;
    const auto shape = entry.find("shape");
    if (shape == entry.end() || !shape->is_array() || shape->size() < batch.size()) return type;
    std::vector<Dim> dims;
    for (size_t i = 0; i < shape->size(); ++i) {
      const Json& d = (*shape)[i];
      if (!d.is_number_integer() || d.get<int64_t>() < 0) return type;
      if (i < batch.size()) {
        if (d.get<int64_t>() != batch[i]) return type;
        dims.push_back(Dim{names.at(i), -1});
      } else {
        dims.push_back(Dim{"", d.get<int64_t>()});
      }
    }
    type.shape = std::move(dims);
    return type;
  }

  // A TensorDict directory at the bottom of a (possibly nested) lazy stack: its meta.json, its
  // batch size, and the dims of the stack that stacking removed to reach it (ascending).
  struct StackLeaf {
    fs::path dir;
    std::string display;
    Json meta;
    std::vector<int64_t> batch;
    std::vector<size_t> stacked;
  };

  // Reads the lazy stack `dir` (meta.json `meta`, at `level` of the tree): its elements 0/, 1/,
  // ... up to the first gap, as the runtime reads them, each a TensorDict or itself a lazy stack
  // (TorchRL's History.from_chats: a stack of conversations, each a stack of messages). Appends
  // the TensorDicts at the bottom to `leaves`; returns the stack's rank, nullopt (reported) on
  // error.
  std::optional<size_t> read_lazy_stack(const fs::path& dir, const std::string& display,
                                        const Json& meta, int level,
                                        std::vector<StackLeaf>& leaves) {
    const auto dim = meta.find("stack_dim");
    if (dim == meta.end() || !dim->is_number_integer() || dim->get<int64_t>() < 0) {
      error(display + "/meta.json", "has no \"stack_dim\" (a lazy stack's dim)");
      return std::nullopt;
    }
    const auto stack_dim = static_cast<size_t>(dim->get<int64_t>());
    const size_t first = leaves.size();
    std::optional<size_t> element_rank;
    size_t count = 0;
    for (; entry_exists(dir / std::to_string(count)); ++count) {
      const fs::path element_dir = dir / std::to_string(count);
      const std::string element_display = display + "/" + std::to_string(count);
      const std::string where = element_display + "/meta.json";
      std::optional<Json> element =
          read_meta(element_dir, element_display, level + 1, diagnostics_);
      if (!element) return std::nullopt;
      const std::string type = class_path(*element, element_display);
      if (type.empty() || !format_version(*element, type, where)) return std::nullopt;
      std::optional<size_t> rank;
      if (type == kLazyStack) {
        rank = read_lazy_stack(element_dir, element_display, *element, level + 1, leaves);
      } else if (type == kTensorDict || type == kSubTensorDict) {
        auto batch = batch_of(*element, where);
        if (batch) {
          rank = batch->size();
          leaves.push_back(
              {element_dir, element_display, std::move(*element), std::move(*batch), {}});
        }
      } else {
        error(where, "holds a " + type_string(type) + ", not a TensorDict or a lazy stack");
      }
      if (!rank) return std::nullopt;
      if (element_rank && *rank != *element_rank) {
        error(where, "batch size has " + std::to_string(*rank) + " dims, element 0's " +
                         std::to_string(*element_rank));
        return std::nullopt;
      }
      element_rank = rank;
    }
    if (!element_rank) {
      error(display, "lazy stack without elements (no 0/meta.json)");
      return std::nullopt;
    }
    const size_t rank = *element_rank + 1;
    if (stack_dim >= rank) {
      error(display + "/meta.json", "stack_dim " + std::to_string(stack_dim) +
                                        " is past the stack's " + std::to_string(rank) + " dims");
      return std::nullopt;
    }
    // The dims the elements' own stacking removed, as dims of this stack; then its own.
    for (size_t i = first; i < leaves.size(); ++i) {
      std::vector<size_t>& stacked = leaves[i].stacked;
      for (size_t& d : stacked) d += d >= stack_dim ? 1 : 0;
      stacked.insert(std::upper_bound(stacked.begin(), stacked.end(), stack_dim), stack_dim);
    }
    return rank;
  }

  // A lazily stacked tensorclass (spec §4): `_tensordict/` (`inner`, at `level` of the tree) a
  // lazy stack whose elements are TensorDict directories of one dim less, or lazy stacks
  // themselves; each stack dim is a batch dim of its own.
  void import_lazy_stack(size_t index, const fs::path& inner, const std::string& display,
                         const Json& meta, const std::string& class_display, int level) {
    const int64_t version = tensordict::format::version_of(meta).version;  // checked by the caller
    std::vector<StackLeaf> leaves;
    const std::optional<size_t> rank = read_lazy_stack(inner, display, meta, level, leaves);
    if (!rank) return;
    const std::vector<std::string> names =
        batch_dim_names(*rank, dim_names(meta, version, *rank, display + "/meta.json"));
    set_batch_dims(index, names, class_display);
    for (const StackLeaf& leaf : leaves) {
      import_entries(index, leaf.dir, leaf.display, leaf.meta, leaf.batch, names, leaf.stacked,
                     level + static_cast<int>(leaf.stacked.size()));
    }
    // A field an element lacks is None there (counted: finding a key in a meta.json is a search).
    std::unordered_map<std::string, size_t> holders;
    for (const auto& leaf : leaves) {
      for (const auto& item : leaf.meta.items()) ++holders[item.key()];
    }
    for (auto& field : classes_[index].fields) {
      const auto it = holders.find(field.name);
      if (it == holders.end() || it->second < leaves.size()) field.none = true;
    }
  }

  Class finish(ClassInfo& info) {
    Class cls = info.cls;
    for (const auto& f : info.fields) {
      Field field;
      field.name = f.name;
      field.loc = cls.loc;
      if (!f.type) {
        field.type = wrap(TypeKind::Optional, make_type(TypeKind::Any));
      } else if (f.none) {
        field.type = wrap(TypeKind::Optional, *f.type);
      } else {
        field.type = *f.type;
      }
      if (f.none) field.default_value = nullptr;
      // Fields named like TensorDict's attributes need `shadow`, as in Python.
      if (is_reserved_name(field.name)) cls.options.shadow = true;
      cls.fields.push_back(std::move(field));
    }
    return cls;
  }

  const ImportOptions& options_;
  Diagnostics& diagnostics_;
  std::string namespace_;  // of every class: --namespace, else the top class's module's
  std::vector<ClassInfo> classes_;
  std::map<std::string, size_t> index_;    // Python path -> classes_ index
  std::map<std::string, size_t> by_name_;  // class name -> classes_ index
  std::map<size_t, bool> batch_set_;
};

}  // namespace

Schema import_directory(const std::string& dir, const std::string& display,
                        const ImportOptions& options, Diagnostics& diagnostics) {
  return Importer(options, diagnostics).run(dir, display);
}

}  // namespace tcgen
