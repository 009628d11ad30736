// state_dict / load_state_dict of TensorDicts and tensorclasses (format spec §6), flat form: one
// walker and one loader for both (a TensorDict level is a level without a ClassSpec).
#include <ATen/ATen.h>

#include <set>

#include "core/tensordict_impl.h"
#include "lazy/internal.h"
#include "ops/util.h"
#include "tensordict/limits.h"
#include "tensordict/memmap.h"
#include "tensordict/tensorclass.h"

namespace tensordict::detail::tc {
namespace {

Json level_meta(const TensorDict& td) {
  Json meta = Json::object();
  meta["batch_size"] = td.batch_size();
  meta["device"] = td.device() ? Json(td.device()->str()) : Json(nullptr);
  return meta;
}

// Python's key naming: an entry is `prefix + key`, a nested level's prefix `prefix + key + "."`,
// and a level's metadata goes under its prefix without the trailing dot.
std::string meta_key(const std::string& prefix) {
  return !prefix.empty() && prefix.back() == '.' ? prefix.substr(0, prefix.size() - 1) : prefix;
}

// NonTensorData emits no tensor, only a metadata entry of its own (spec §6.1). A NonTensorStack is
// a lazy stack to Python, whose state_dict holds its batch size and device only: its strings are
// not part of a state_dict.
Json non_tensor_meta(const TensorDict& parent, const Value& value) {
  Json meta = level_meta(parent);
  if (!value.is_non_tensor_data()) return meta;
  meta["_type"] = "NonTensorData";
  meta["_non_tensor"] =
      Json{{"data", to_json(value)}, {"_is_non_tensor", true}, {"_metadata", nullptr}};
  return meta;
}

// Python's state_dict of a lazy stack needs every key in every element.
void check_shared_keys(const TensorDict& td, const std::string& prefix) {
  const size_t shared = td.keys().size();
  for (size_t k = 0; k < td.tensordicts().size(); ++k) {
    if (td.tensordicts()[k].size() != shared) {
      throw KeyError("state_dict: element " + std::to_string(k) + " of the lazy stack at '" +
                     meta_key(prefix) + "' has keys the other elements lack");
    }
  }
}

class Collector {
 public:
  Collector(const StateDictOptions& options, StateDict& out) : options_(options), out_(out) {}

  void collect(const TensorDict& td, const ClassSpec* spec, const std::string& prefix) {
    if (spec) {
      collect_class(td, *spec, prefix);
    } else {
      collect_td(td, prefix);
    }
  }

  // A plain nested TensorDict: its metadata entry comes before its children. A TensorDict loaded
  // from a tensorclass directory is a tensorclass level (metadata after its children, with
  // _type).
  void collect_td(const TensorDict& td, const std::string& prefix) {
    if (td.is_lazy_stack()) check_shared_keys(td, prefix);
    const auto& info = detail::impl_of(td).class_info;
    if (!info) out_.metadata[meta_key(prefix)] = level_meta(td);
    Json data_fields = Json::object();
    for (const auto& [key, value] : td.items()) {
      const std::string path = prefix + key.front();
      if (value.is_tensor()) add_tensor(path, value.tensor());
      if (value.is_tensordict()) add_level(value.tensordict(), nullptr, path);
      if (value.is_non_tensor() && info) data_fields[key.front()] = to_json(value);
      if (value.is_non_tensor() && !info) out_.metadata[path] = non_tensor_meta(td, value);
    }
    if (info) {
      Json meta = level_meta(td);
      meta["_type"] = memmap::class_short_name(info->type);
      meta["_non_tensor"] = info->fields;
      meta["_non_tensor"].update(data_fields);
      out_.metadata[meta_key(prefix)] = meta;
    }
  }

  // A tensorclass level: children first, then its metadata with `_type` and `_non_tensor`.
  void collect_class(const TensorDict& td, const ClassSpec& spec, const std::string& prefix) {
    Json none_fields = Json::object(), data_fields = Json::object();
    for (size_t i = 0; i < spec.fields.size(); ++i) {
      const FieldSpec& field = spec.fields[i];
      const std::string path = prefix + field.name;
      const Value* v = find(td, spec, i);
      if (!v) {
        none_fields[field.name] = nullptr;
      } else if (v->is_tensor()) {
        add_tensor(path, v->tensor());
      } else if (v->is_tensordict()) {
        add_level(v->tensordict(), field.kind == FieldKind::Class ? &field.nested() : nullptr,
                  path);
      } else {
        data_fields[field.name] = to_json(*v);
      }
    }
    Json meta = level_meta(td);
    meta["_type"] = spec.name;
    meta["_non_tensor"] = none_fields;
    meta["_non_tensor"].update(data_fields);
    out_.metadata[meta_key(prefix)] = meta;
  }

 private:
  void add_tensor(const std::string& path, const at::Tensor& t) {
    out_.tensors.emplace_back(path, options_.keep_vars ? t : t.detach());
  }
  // flatten: the level's entries join this state dict; else it is a StateDict of its own.
  void add_level(const TensorDict& td, const ClassSpec* spec, const std::string& path) {
    if (options_.flatten) {
      collect(td, spec, path + ".");
      return;
    }
    StateDict nested;
    StateDictOptions own = options_;
    own.prefix.clear();
    Collector(own, nested).collect(td, spec, "");
    out_.nested.emplace_back(path, std::move(nested));
  }

  const StateDictOptions& options_;
  StateDict& out_;
};

// Loads in two passes (load_state): a dry run into a copy of the structure that shares the
// leaves (clone(false)) finds every error of the state dict before anything changes; then the
// real load, which can no longer fail, writes into the TensorDict.
class Loader {
 public:
  Loader(const StateDict& state, bool strict, bool assign, bool flat, bool dry_run)
      : state_(state), strict_(strict), assign_(assign), flat_(flat), dry_run_(dry_run) {}

  void load(TensorDict& td, const ClassSpec* spec, const std::string& prefix) {
    const Json* meta = meta_of(prefix);
    if (const auto batch = batch_of(meta, prefix); batch && !td.is_lazy_stack()) {
      detail::impl_of(td).batch_size = *batch;
    }
    std::set<std::string> children;
    for (const auto& [key, tensor] : state_.tensors) {
      std::string rest;
      if (!under(key, prefix, rest)) continue;
      size_t dot = flat_ ? rest.find('.') : std::string::npos;
      std::string head = rest.substr(0, dot);
      // An empty part ("", ".x", "a..b") names no entry; followed, it would name this level again.
      if (head.empty()) throw KeyError("load_state_dict: key '" + key + "' has an empty part");
      check_field(spec, head);
      if (dot == std::string::npos) {
        set_leaf(td, spec, head, tensor);
      } else if (children.insert(head).second) {
        load_child(td, spec, prefix, head);
      }
    }
    if (prefix.empty()) {  // levels of a state_dict(flatten = false)
      for (const auto& [head, sub] : state_.nested) {
        check_field(spec, head);
        load_child(td, spec, prefix, head, &sub);
      }
    }
    if (meta && meta->contains("_non_tensor")) load_non_tensor(td, spec, (*meta)["_non_tensor"]);
    if (!spec) load_non_tensor_entries(td, prefix);
    check_entries_fit(td, prefix);
  }

  /// strict: the state's keys must be the tensor leaves of `td` (spec §6.3).
  void check_keys(const TensorDict& td) const {
    std::set<std::string> mine, theirs;
    for (const auto& key : td.keys(true, true))
      if (td.get_value(key).is_tensor()) mine.insert(key.join("."));
    tensor_keys(state_, "", theirs);
    std::string missing, unexpected;
    for (const auto& k : mine)
      if (!theirs.count(k)) missing += (missing.empty() ? "'" : ", '") + k + "'";
    for (const auto& k : theirs)
      if (!mine.count(k)) unexpected += (unexpected.empty() ? "'" : ", '") + k + "'";
    if (!missing.empty() || !unexpected.empty()) {
      throw KeyError("load_state_dict (strict): missing keys [" + missing + "], unexpected keys [" +
                     unexpected + "]");
    }
  }

 private:
  // The dotted keys of `state`'s tensors, those of its nested StateDicts included.
  static void tensor_keys(const StateDict& state, const std::string& prefix,
                          std::set<std::string>& out) {
    for (const auto& [key, tensor] : state.tensors) out.insert(prefix + key);
    for (const auto& [key, sub] : state.nested) tensor_keys(sub, prefix + key + ".", out);
  }
  const Json* meta_of(const std::string& prefix) const {
    return state_.metadata.contains(prefix) ? &state_.metadata[prefix] : nullptr;
  }
  // The batch size a level's metadata records, if it records one: a list of sizes.
  static std::optional<BatchSize> batch_of(const Json* meta, const std::string& path) {
    if (meta == nullptr || !meta->is_object() || !meta->contains("batch_size")) return std::nullopt;
    const Json& sizes = meta->at("batch_size");
    BatchSize batch;
    for (const Json& size : sizes.is_array() ? sizes : Json::array({nullptr})) {
      if (!size.is_number_integer() || size.get<int64_t>() < 0) {
        throw ValueError("load_state_dict: the metadata of level '" + path + "' has batch_size " +
                         sizes.dump() + ", not a list of sizes");
      }
      batch.push_back(size.get<int64_t>());
    }
    return batch;
  }
  bool under(const std::string& key, const std::string& prefix, std::string& rest) const {
    if (prefix.empty()) return rest = key, true;
    if (key.size() <= prefix.size() + 1 || key.compare(0, prefix.size(), prefix) != 0 ||
        key[prefix.size()] != '.') {
      return false;
    }
    rest = key.substr(prefix.size() + 1);
    return true;
  }
  void check_field(const ClassSpec* spec, const std::string& name) const {
    if (strict_ && spec) index_of(*spec, name);
  }
  // A leaf of a lazy stack is copied into its elements (set_); the dry run checks what set_ would,
  // on the stacked leaf.
  void set_elements(TensorDict& td, const std::string& key, const at::Tensor& value) const {
    if (!dry_run_) {
      td.set_(key, value);
    } else if (const at::Tensor current = td.get(key); !current.sizes().equals(value.sizes())) {
      throw ShapeError("load_state_dict: key '" + key + "' of a lazy stack has shape " +
                       shape_str(current.sizes()) + ", the state dict's " +
                       shape_str(value.sizes()));
    }
  }
  // The dry run writes no shared data: an in-place copy, or an update of a lazy stack's
  // elements, is only checked.
  void set_leaf(TensorDict& td, const ClassSpec* spec, const std::string& key,
                const at::Tensor& value) {
    if (!assign_ && td.is_lazy_stack() && td.contains(key)) return set_elements(td, key, value);
    if (!assign_ && td.contains(key) && td.get_value(key).is_tensor()) {
      at::Tensor current = td.get(key);
      if (current.sizes().equals(value.sizes())) {
        if (!dry_run_) current.copy_(value);
        return;
      }
    }
    // A field takes what its typed setter takes (dtype, shape, kind), assign or not.
    if (spec) cast(*spec, index_of(*spec, key), FieldValue(value), td.batch_size(), td.device());
    td.set(key, value);
  }
  // A batch size read from the metadata must fit the entries the state dict left in place.
  static void check_entries_fit(const TensorDict& td, const std::string& prefix) {
    if (td.is_lazy_stack()) return;
    const BatchSize& batch = td.batch_size();
    for (const auto& [key, value] : td.items()) {
      const std::string path = join_key(prefix, key.front());
      if (value.is_tensordict()) {
        const BatchSize& inner = value.tensordict().batch_size();
        if (inner.size() < batch.size() || !std::equal(batch.begin(), batch.end(), inner.begin())) {
          throw ShapeError("load_state_dict: '" + path + "' has batch size " + shape_str(inner) +
                           ", which does not begin with its parent's " + shape_str(batch));
        }
      } else if (auto shape = value.shape()) {
        detail::check_leading_dims(path, *shape, batch);
      }
    }
  }
  // `sub`: the child's own StateDict (flatten = false), else its entries are in this one.
  void load_child(TensorDict& td, const ClassSpec* spec, const std::string& prefix,
                  const std::string& head, const StateDict* sub = nullptr) {
    const std::string path = join_key(prefix, head);
    const ClassSpec* nested = nullptr;
    if (spec) {
      const FieldSpec& field = spec->fields[index_of(*spec, head)];
      if (field.kind == FieldKind::Class) nested = &field.nested();
    }
    // One level of recursion per key part: as deep as a memmap tree may be, no deeper.
    if (++depth_ > limits::kMaxTreeDepth) {
      throw ValueError("load_state_dict: keys nested deeper than " +
                       std::to_string(limits::kMaxTreeDepth) + " levels ('" + path + "')");
    }
    TensorDict child;
    if (td.contains(head) && td.get_value(head).is_tensordict()) {
      child = td.get_tensordict(head);
    } else {
      const Json* meta =
          sub ? (sub->metadata.contains("") ? &sub->metadata[""] : nullptr) : meta_of(path);
      child = detail::make_tensordict(batch_of(meta, path).value_or(td.batch_size()), td.device());
    }
    if (sub) {
      Loader nested_loader(*sub, strict_, assign_, flat_, dry_run_);
      nested_loader.depth_ = depth_;
      nested_loader.load(child, nested, "");
    } else {
      load(child, nested, path);
    }
    --depth_;
    td.set(head, child);
  }
  // NonTensorData children of a TensorDict level live in the metadata only (spec §6.1).
  void load_non_tensor_entries(TensorDict& td, const std::string& prefix) {
    for (const auto& [path, meta] : state_.metadata.items()) {
      std::string rest;
      if (!under(path, prefix, rest) || rest.find('.') != std::string::npos) continue;
      if (!meta.is_object() || meta.value("_type", Json()) != "NonTensorData") continue;
      const auto fields = meta.find("_non_tensor");
      if (fields == meta.end() || !fields->is_object()) {
        throw ValueError("load_state_dict: the NonTensorData '" + path +
                         "' has no _non_tensor object in its metadata");
      }
      td.set(rest, NonTensorData{fields->value("data", Json())});
    }
  }

  void load_non_tensor(TensorDict& td, const ClassSpec* spec, const Json& fields) {
    if (!fields.is_object()) {
      throw ValueError("load_state_dict: a level's _non_tensor metadata is " + fields.dump() +
                       ", not an object of fields");
    }
    for (const auto& [name, value] : fields.items()) {
      if (name.empty()) throw KeyError("load_state_dict: a _non_tensor entry has an empty name");
      if (spec) index_of(*spec, name);  // KeyError for non-fields, strict or not (spec §6.3)
      if (value.is_null()) {
        if (td.contains(name)) td.del_(name);
      } else {
        td.set(name, NonTensorData{value});
      }
    }
  }

  const StateDict& state_;
  bool strict_, assign_, flat_, dry_run_;
  int depth_ = 0;  // levels of load_child under way
};

// Both passes of a load; a malformed metadata entry the checks above do not name is a ValueError,
// never an exception of the JSON library.
void load_state(TensorDict& td, const ClassSpec* spec, const StateDict& state, bool strict,
                bool assign, bool flat) {
  try {
    TensorDict staged = td.clone(false);
    if (td.is_locked()) staged.lock_();  // what the real load would refuse, the dry run refuses
    Loader dry(state, strict, assign, flat, true);
    if (strict) dry.check_keys(staged);
    dry.load(staged, spec, "");
  } catch (const Json::exception& e) {
    throw ValueError(std::string("load_state_dict: malformed metadata: ") + e.what());
  }
  Loader(state, strict, assign, flat, false).load(td, spec, "");
}

}  // namespace

StateDict state_dict(const TensorDict& td, const ClassSpec& spec, const StateDictOptions& options) {
  StateDict out;
  Collector(options, out).collect_class(td, spec, options.prefix);
  return out;
}

void load_state_dict(TensorDict& td, const ClassSpec& spec, const StateDict& state, bool strict,
                     bool assign, std::optional<bool> from_flatten) {
  load_state(td, &spec, state, strict, assign, from_flatten.value_or(true));
}

}  // namespace tensordict::detail::tc

namespace tensordict {

StateDict TensorDict::state_dict(const StateDictOptions& options) const {
  StateDict out;
  detail::tc::Collector(options, out).collect_td(*this, options.prefix);
  return out;
}

TensorDict& TensorDict::load_state_dict(const StateDict& state, bool strict, bool assign,
                                        std::optional<bool> from_flatten) {
  detail::tc::load_state(*this, nullptr, state, strict, assign, from_flatten.value_or(true));
  return *this;
}

}  // namespace tensordict
