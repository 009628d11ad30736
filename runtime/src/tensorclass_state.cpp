// state_dict / load_state_dict of tensorclasses (format spec §6.2, §6.3), flat form.
#include <ATen/ATen.h>

#include <set>

#include "tensordict/tensorclass.h"
#include "tensordict_impl.h"

namespace tensordict::tc {
namespace {

std::string join_key(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

Json level_meta(const TensorDict& td) {
  Json meta = Json::object();
  meta["batch_size"] = td.batch_size();
  meta["device"] = td.device() ? Json(td.device()->str()) : Json(nullptr);
  return meta;
}

void collect(const TensorDict& td, const ClassSpec* spec, const std::string& prefix,
             StateDict& out);

// A plain nested TensorDict: its metadata entry comes before its children.
void collect_td(const TensorDict& td, const std::string& prefix, StateDict& out) {
  out.metadata[prefix] = level_meta(td);
  for (const auto& [key, value] : td.items()) {
    const std::string path = join_key(prefix, key.front());
    if (value.is_tensor()) out.tensors.emplace_back(path, value.tensor().detach());
    if (value.is_tensordict()) collect(value.tensordict(), nullptr, path, out);
  }
}

// A tensorclass level: children first, then its metadata with `_type` and `_non_tensor`.
void collect_class(const TensorDict& td, const ClassSpec& spec, const std::string& prefix,
                   StateDict& out) {
  Json none_fields = Json::object(), data_fields = Json::object();
  for (size_t i = 0; i < spec.fields.size(); ++i) {
    const FieldSpec& field = spec.fields[i];
    const std::string path = join_key(prefix, field.name);
    const Value* v = find(td, spec, i);
    if (!v) {
      none_fields[field.name] = nullptr;
    } else if (v->is_tensor()) {
      out.tensors.emplace_back(path, v->tensor().detach());
    } else if (v->is_tensordict()) {
      collect(v->tensordict(), field.kind == FieldKind::Class ? &field.nested() : nullptr, path,
              out);
    } else {
      data_fields[field.name] = to_json(*v);
    }
  }
  Json meta = level_meta(td);
  meta["_type"] = spec.name;
  meta["_non_tensor"] = none_fields;
  meta["_non_tensor"].update(data_fields);
  out.metadata[prefix] = meta;
}

void collect(const TensorDict& td, const ClassSpec* spec, const std::string& prefix,
             StateDict& out) {
  if (spec) {
    collect_class(td, *spec, prefix, out);
  } else {
    collect_td(td, prefix, out);
  }
}

class Loader {
 public:
  Loader(const StateDict& state, bool strict, bool assign, bool flat)
      : state_(state), strict_(strict), assign_(assign), flat_(flat) {}

  void load(TensorDict& td, const ClassSpec* spec, const std::string& prefix) {
    const Json* meta = meta_of(prefix);
    if (meta && meta->contains("batch_size")) {
      td.impl().batch_size = (*meta)["batch_size"].get<BatchSize>();
    }
    std::set<std::string> children;
    for (const auto& [key, tensor] : state_.tensors) {
      std::string rest;
      if (!under(key, prefix, rest)) continue;
      size_t dot = flat_ ? rest.find('.') : std::string::npos;
      std::string head = rest.substr(0, dot);
      check_field(spec, head);
      if (dot == std::string::npos) {
        set_leaf(td, head, tensor);
      } else if (children.insert(head).second) {
        load_child(td, spec, prefix, head);
      }
    }
    if (meta && meta->contains("_non_tensor")) load_non_tensor(td, spec, (*meta)["_non_tensor"]);
  }

 private:
  const Json* meta_of(const std::string& prefix) const {
    return state_.metadata.contains(prefix) ? &state_.metadata[prefix] : nullptr;
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
  void set_leaf(TensorDict& td, const std::string& key, const at::Tensor& value) {
    if (!assign_ && td.contains(key) && td.get_value(key).is_tensor()) {
      at::Tensor current = td.get(key);
      if (current.sizes().equals(value.sizes())) {
        current.copy_(value);
        return;
      }
    }
    td.set(key, value);
  }
  void load_child(TensorDict& td, const ClassSpec* spec, const std::string& prefix,
                  const std::string& head) {
    const std::string path = join_key(prefix, head);
    const ClassSpec* nested = nullptr;
    if (spec) {
      const FieldSpec& field = spec->fields[index_of(*spec, head)];
      if (field.kind == FieldKind::Class) nested = &field.nested();
    }
    TensorDict child;
    if (td.contains(head) && td.get_value(head).is_tensordict()) {
      child = td.get_tensordict(head);
    } else {
      const Json* meta = meta_of(path);
      BatchSize batch = meta ? (*meta)["batch_size"].get<BatchSize>() : td.batch_size();
      child = detail::make_tensordict(batch, td.device());
    }
    load(child, nested, path);
    td.set(head, child);
  }
  void load_non_tensor(TensorDict& td, const ClassSpec* spec, const Json& fields) {
    for (const auto& [name, value] : fields.items()) {
      if (spec) index_of(*spec, name);  // KeyError for non-fields, strict or not (spec §6.3)
      if (value.is_null()) {
        if (td.contains(name)) td.del_(name);
      } else {
        td.set(name, NonTensorData{value});
      }
    }
  }

  const StateDict& state_;
  bool strict_, assign_, flat_;
};

}  // namespace

StateDict state_dict(const TensorDict& td, const ClassSpec& spec) {
  StateDict out;
  collect_class(td, spec, "", out);
  return out;
}

void load_state_dict(TensorDict& td, const ClassSpec& spec, const StateDict& state, bool strict,
                     bool assign, std::optional<bool> from_flatten) {
  Loader(state, strict, assign, from_flatten.value_or(true)).load(td, &spec, "");
}

}  // namespace tensordict::tc
