// The everyday tensorclass API by key, as Python tensordict 0.14: get / set with nested keys,
// defaults and in-place writes, from_tensordict with non-tensor fields, the background memmap and
// memmap_refresh_.
#include <ATen/ATen.h>

#include <set>

#include "core/tensordict_impl.h"
#include "memmap/internal.h"
#include "tensordict/tensorclass.h"

namespace tensordict::detail::tc {
namespace {

NestedKey rest_of(const NestedKey& key) {
  return NestedKey(std::vector<std::string>(key.begin() + 1, key.end()));
}

std::string call(const ClassSpec& spec, const char* method, const NestedKey& key) {
  return std::string(spec.name) + "." + method + "(" + key.repr() + ")";
}

// The nested collection at the head of `key`, or the reason there is none.
const Value* collection_at(const TensorDict& td, const ClassSpec& spec, size_t i,
                           std::string& why) {
  const Value* v = find(td, spec, i);
  const std::string field = std::string("field '") + spec.fields[i].name + "'";
  if (!v) {
    why = field + " is None";
  } else if (!v->is_tensordict()) {
    why = field + " holds a " + v->kind_name() + ", which has no entries";
  }
  return why.empty() ? v : nullptr;
}

// A value for a plain TensorDict entry (no class casting), as TensorDict::set takes C++ values.
Value plain_value(const FieldValue& value, const std::string& where) {
  if (const at::Tensor* t = value.tensor()) return *t;
  if (const TensorDict* td = value.tensordict()) return *td;
  if (value.is_none()) throw TypeError(where + ": a TensorDict entry cannot be None");
  const Json& json = *value.json();
  if (json.is_boolean()) return Value(json.get<bool>());
  if (json.is_number_integer()) return Value(json.get<int64_t>());
  if (json.is_number_float()) return Value(json.get<double>());
  return Value(NonTensorData{json});
}

// Python's set(..., inplace=True) of an existing entry: tensors are copied into, collections
// updated in place; any other value would replace the entry, which inplace refuses.
void write_in_place(const Value& current, const std::optional<Value>& value,
                    const std::string& where) {
  if (value && current.is_tensor() && value->is_tensor()) {
    try {
      current.tensor().copy_(value->tensor());
    } catch (const c10::Error& e) {
      throw ShapeError(where + ": cannot copy a tensor of shape " +
                       shape_str(value->tensor().sizes()) + " into the stored one of shape " +
                       shape_str(current.tensor().sizes()));
    }
  } else if (value && current.is_tensordict() && value->is_tensordict()) {
    TensorDict(current.tensordict()).update_(value->tensordict());
  } else {
    throw TypeError(where + ": cannot update the stored " + std::string(current.kind_name()) +
                    " in place with " +
                    (value ? "a " + std::string(value->kind_name()) : std::string("None")) +
                    " (tensors are copied into, nested collections updated)");
  }
}

}  // namespace

std::optional<Value> get_path(const TensorDict& td, const ClassSpec& spec, const NestedKey& key,
                              const std::optional<Value>* default_value) {
  const int64_t i = spec.field_index(key.front());
  if (i < 0) {
    if (default_value) return *default_value;
    index_of(spec, key.front());  // the KeyError listing the fields
  }
  const auto field = static_cast<size_t>(i);
  if (key.size() == 1) {
    const Value* v = find(td, spec, field);
    return v ? std::optional<Value>(*v) : std::nullopt;
  }
  std::string why;
  const Value* v = collection_at(td, spec, field, why);
  const NestedKey rest = rest_of(key);
  if (v && spec.fields[field].kind == FieldKind::Class) {
    return get_path(v->tensordict(), spec.fields[field].nested(), rest, default_value);
  }
  if (v && v->tensordict().contains(rest)) return v->tensordict().get_value(rest);
  if (default_value) return *default_value;
  throw KeyError(call(spec, "get", key) + ": " +
                 (v ? "no key " + rest.repr() + " in field '" + key.front() + "'" : why));
}

void set_path(TensorDict& td, const ClassSpec& spec, const NestedKey& key, const FieldValue& value,
              bool inplace) {
  const size_t i = index_of(spec, key.front());
  check_settable(td, spec, i);
  if (key.size() > 1) {
    std::string why;
    const Value* v = collection_at(td, spec, i, why);
    if (!v) throw KeyError(call(spec, "set", key) + ": " + why);
    TensorDict child = v->tensordict();
    const NestedKey rest = rest_of(key);
    if (spec.fields[i].kind == FieldKind::Class) {
      set_path(child, spec.fields[i].nested(), rest, value, inplace);
    } else if (inplace && child.contains(rest)) {
      write_in_place(child.get_value(rest), plain_value(value, call(spec, "set", key)),
                     call(spec, "set", key));
    } else {
      child.set(rest, plain_value(value, call(spec, "set", key)));
    }
    return;
  }
  const Value* current = find(td, spec, i);
  if (!inplace || !current) {
    set(td, spec, i, value);
    return;
  }
  write_in_place(*current, cast(spec, i, value, td.batch_size(), td.device()),
                 call(spec, "set", key) + " with inplace");
}

TensorDict from_tensordict(const TensorDict& td, const ClassSpec& spec,
                           const FieldValues& non_tensordict, bool safe) {
  if (safe) check_fields(td, spec);
  TensorDict out = td.clone(false);
  const bool locked = out.is_locked();
  if (locked) out.unlock_();
  for (const auto& [name, value] : non_tensordict) {
    const size_t i = index_of(spec, name);
    if (td.contains(name)) {
      if (value.is_none()) continue;  // as Python: a None there defers to the tensordict
      throw KeyError(std::string(spec.name) + ".from_tensordict: field '" + name +
                     "' is both in the tensordict and in non_tensordict");
    }
    set(out, spec, i, value);
  }
  if (locked) out.lock_();
  mark_class(out, spec);
  return out;
}

namespace {

// `dict` without the null values of `spec`'s fields, recursively into nested class fields.
Json without_none_fields(const Json& dict, const ClassSpec& spec) {
  Json out = Json::object();
  for (const auto& [key, value] : dict.items()) {
    const int64_t i = spec.field_index(key);
    if (i < 0) {
      out[key] = value;  // from_tensordict names it
    } else if (!value.is_null()) {
      const FieldSpec& field = spec.fields[static_cast<size_t>(i)];
      out[key] = field.kind == FieldKind::Class && value.is_object()
                     ? without_none_fields(value, field.nested())
                     : value;
    }
  }
  return out;
}

}  // namespace

TensorDict from_dict(const ClassSpec& spec, const Json& dict, std::optional<BatchSize> batch_size,
                     std::optional<at::Device> device, std::optional<int64_t> batch_dims,
                     std::optional<bool> auto_batch_size) {
  if (!dict.is_object()) {
    throw TypeError(std::string(spec.name) + ".from_dict: expects a JSON object, got " +
                    dict.type_name());
  }
  return TensorDict::from_dict(without_none_fields(dict, spec), std::move(batch_size), device,
                               batch_dims, auto_batch_size);
}

TensorDict from_list(const ClassSpec& spec, const Json& items, std::optional<BatchSize> batch_size,
                     std::optional<at::Device> device, std::optional<int64_t> batch_dims,
                     std::optional<bool> auto_batch_size, std::optional<bool> lazy) {
  Json rows = items;
  if (rows.is_array()) {
    for (Json& row : rows) {
      if (row.is_object()) row = without_none_fields(row, spec);
    }
  }
  return TensorDict::from_list(rows, std::move(batch_size), device, batch_dims, auto_batch_size,
                               lazy);
}

void check_assignable(const ClassSpec& spec, const TensorDict& value) {
  const auto& cls = detail::impl_of(value).class_info;
  if (!cls || cls->type == spec.python_type) return;
  // As Python: another class is taken when its members (entries and None fields) are the fields.
  std::set<std::string> members;
  for (const auto& key : value.keys()) members.insert(key.front());
  for (const auto& [name, remembered] : cls->fields.items()) {
    if (remembered.is_null()) members.insert(name);
  }
  std::set<std::string> fields;
  for (const FieldSpec& field : spec.fields) fields.insert(field.name);
  if (members != fields) {
    throw ValueError(std::string(spec.name) + ".index_put_: an instance of " + cls->type +
                     " has other fields than " + spec.name +
                     "; only an instance of the same class, or of one with the same fields, "
                     "is written at an index");
  }
}

TensorDictFuture memmap_async(const TensorDict& td, const ClassSpec& spec,
                              const std::string& prefix, const MemmapOptions& options) {
  const ClassSpec* cls = &spec;  // specs are static
  return memmap::detail::in_background(
      [td, cls, prefix, options] { return memmap(td, *cls, prefix, options, false); });
}

void memmap_refresh(TensorDict& td, const ClassSpec& spec) {
  const auto path = td.saved_path();
  if (!td.is_memmap() || !path) {
    throw Error(std::string(spec.name) +
                ".memmap_refresh_: the instance is not memory-mapped (call memmap_ first)");
  }
  // The inner TensorDict maps `<prefix>/_tensordict`; the class directory is its parent.
  const std::string inner = "/_tensordict";
  std::string prefix = *path;
  if (prefix.size() > inner.size() &&
      prefix.compare(prefix.size() - inner.size(), inner.size(), inner) == 0) {
    prefix.resize(prefix.size() - inner.size());
  }
  // As Python (TensorDict.load_memmap_): reload, then map the instance at its directory again
  // (hard links to the files just read), so it stays memory-mapped and locked.
  load_memmap_in_place(td, spec, prefix);
  if (td.is_locked()) td.unlock_();
  MemmapOptions options;
  options.copy_existing = true;
  memmap_in_place(td, spec, prefix, options);
}

}  // namespace tensordict::detail::tc
