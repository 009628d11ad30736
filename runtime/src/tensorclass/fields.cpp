// Casting, construction and field access of generated tensorclasses (format spec §7).
#include <ATen/ATen.h>

#include <algorithm>
#include <sstream>

#include "core/tensordict_impl.h"
#include "lazy/internal.h"
#include "tensorclass/internal.h"
#include "tensordict/dtype.h"
#include "tensordict/json.h"
#include "tensordict/tensorclass.h"

namespace tensordict {

int64_t ClassSpec::field_index(std::string_view name) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (name == fields[i].name) return static_cast<int64_t>(i);
  }
  return -1;
}

const at::Tensor& StateDict::at(const std::string& key) const {
  for (const auto& [k, t] : tensors) {
    if (k == key) return t;
  }
  throw KeyError("state dict has no key '" + key + "'");
}

namespace detail::tc {

std::string where(const ClassSpec& spec, const FieldSpec& field) {
  return std::string(spec.name) + "." + field.name;
}

std::string json_kind(const Json& json) {
  if (json.is_string()) return "str";
  if (json.is_boolean()) return "bool";
  if (json.is_number_integer()) return "int";
  if (json.is_number()) return "float";
  if (json.is_array()) return "list";
  if (json.is_object()) return "dict";
  return "None";
}

std::string kind_name(FieldKind kind) { return std::string(spelling(kind).schema); }

namespace {

// Keys are short: an inline loop beats a call to strcmp on the accessor's hot path.
bool same_key(const std::string& key, const char* name) {
  const size_t n = key.size();
  for (size_t k = 0; k < n; ++k) {
    if (key[k] != name[k]) return false;
  }
  return name[n] == '\0';
}

// ---- the casting table (spec §7.1)
// ---------------------------------------------------------------

// Autocast casts by annotation; only plain types count (optional and list act as `any`).
FieldKind hint_of(const FieldSpec& field) {
  return field.optional || field.kind == FieldKind::List ? FieldKind::Any : field.kind;
}

// Whether autocast converts a value given for a field of kind `hint` (`str(x)`, `int(t)`) rather
// than storing it as given.
bool converts(FieldKind hint) {
  switch (hint) {
    case FieldKind::Str:
    case FieldKind::Int:
    case FieldKind::Float:
    case FieldKind::Bool:
      return true;
    case FieldKind::Tensor:
    case FieldKind::Any:
    case FieldKind::List:
    case FieldKind::Class:
    case FieldKind::TensorDict:
      return false;
  }
  return false;
}

// Python's str(v), int(v), float(v), bool(v) of JSON-like values.
std::string py_str(const Json& v) { return v.is_string() ? v.get<std::string>() : python_repr(v); }
bool py_truth(const Json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0.0;
  if (v.is_string() || v.is_array() || v.is_object()) return !v.empty();
  return false;
}
// Python's conversion of `v` for a field of kind `hint` (the kinds `converts`; others keep `v`).
Json convert(const Json& v, FieldKind hint, const std::string& where) {
  try {
    switch (hint) {
      case FieldKind::Str:
        return py_str(v);
      case FieldKind::Bool:
        return py_truth(v);
      case FieldKind::Int:
        if (v.is_string()) return static_cast<int64_t>(std::stoll(v.get<std::string>()));
        if (v.is_boolean()) return static_cast<int64_t>(v.get<bool>());
        return static_cast<int64_t>(v.get<double>());
      case FieldKind::Float:
        if (v.is_string()) return std::stod(v.get<std::string>());
        if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
        return v.get<double>();
      case FieldKind::Tensor:
      case FieldKind::Any:
      case FieldKind::List:
      case FieldKind::Class:
      case FieldKind::TensorDict:
        break;
    }
  } catch (const std::exception&) {
    throw TypeError("Failed to cast " + v.dump() + " for field " + where);
  }
  return v;
}

std::optional<Value> autocast_json(const ClassSpec& spec, const FieldSpec& field, const Json& v,
                                   const BatchSize& batch, std::optional<at::Device> device) {
  const FieldKind hint = hint_of(field);
  switch (hint) {
    case FieldKind::Tensor:
      if (!is_numeric_tree(v)) {
        throw TypeError("Failed to cast " + v.dump() + " to a tensor for field " +
                        where(spec, field));
      }
      return Value(numbers_to_tensor(v));
    case FieldKind::Class: {
      if (!v.is_object()) break;
      const ClassSpec& nested = field.nested();
      std::vector<FieldValue> values(nested.fields.size());
      for (const auto& [key, item] : v.items()) values.at(index_of(nested, key)) = FieldValue(item);
      return Value(build(nested, values, batch, device));
    }
    case FieldKind::TensorDict:  // Python: TensorDict(mapping, batch_size=<the class's>)
      if (!v.is_object()) break;
      return Value(mapping_to_tensordict(v, batch, device));
    case FieldKind::Any:
    case FieldKind::List:  // hint_of gives Any instead
      if (v.is_number() || v.is_boolean()) return Value(numbers_to_tensor(v));
      return Value(NonTensorData{v});
    case FieldKind::Str:
    case FieldKind::Int:
    case FieldKind::Float:
    case FieldKind::Bool:
      return Value(NonTensorData{convert(v, hint, where(spec, field))});
  }
  return Value(NonTensorData{v});
}

std::optional<Value> default_json(const Json& v, const BatchSize& batch, bool numbers_as_data) {
  if (v.is_array()) return list_value(v, batch);
  if ((v.is_number() || v.is_boolean()) && !numbers_as_data) return Value(numbers_to_tensor(v));
  return Value(NonTensorData{v});
}

std::string shape_problem(const FieldSpec& field, at::IntArrayRef sizes) {
  if (!field.shape) return "";
  const auto& shape = *field.shape;
  bool ok = shape.size() == sizes.size();
  for (size_t d = 0; ok && d < shape.size(); ++d) ok = shape[d] < 0 || shape[d] == sizes[d];
  if (ok) return "";
  std::string expected = "[";
  for (size_t d = 0; d < shape.size(); ++d) {
    expected += (d ? ", " : "") + (shape[d] < 0 ? std::string("*") : std::to_string(shape[d]));
  }
  return "expects shape " + expected + "], got " + shape_str(sizes);
}

void check_dtype(const ClassSpec& spec, const FieldSpec& field, const at::Tensor& t) {
  if (std::string problem = dtype_problem(field, t); !problem.empty()) {
    throw TypeError("field " + where(spec, field) + " " + problem);
  }
}

void check_shape(const ClassSpec& spec, const FieldSpec& field, at::IntArrayRef sizes) {
  if (std::string problem = shape_problem(field, sizes); !problem.empty()) {
    throw ShapeError("field " + where(spec, field) + " " + problem);
  }
}

void check_tensor(const ClassSpec& spec, const FieldSpec& field, const at::Tensor& t) {
  check_dtype(spec, field, t);
  check_shape(spec, field, t.sizes());
}

// A `TensorDict[str, tensor[dtype]]` field's value: every entry a tensor of the dtype (the
// entries of a lazy stack's TensorDicts too).
void check_entries(const ClassSpec& spec, const FieldSpec& field, const TensorDict& td) {
  if (!field.tensor_values) return;
  if (td.is_lazy_stack()) {
    for (const auto& element : td.tensordicts()) check_entries(spec, field, element);
    return;
  }
  for (const auto& key : td.keys()) {
    const Value value = td.get_value(key);
    const at::Tensor* t = value.tensor_if();
    if (!t) {
      throw TypeError("field " + where(spec, field) + " holds tensors, but its entry '" +
                      key.front() + "' is a " + value.kind_name());
    }
    if (std::string problem = dtype_problem(field, *t); !problem.empty()) {
      throw TypeError("field " + where(spec, field) + ": entry '" + key.front() + "' " + problem);
    }
  }
}

}  // namespace

std::string dtype_problem(const FieldSpec& field, const at::Tensor& t) {
  if (!field.dtype || t.scalar_type() == *field.dtype) return "";
  return "expects dtype " + dtype_name(*field.dtype) + ", got " + dtype_name(t.scalar_type());
}

std::string shape_problem(const FieldSpec& field, const at::Tensor& t) {
  return shape_problem(field, t.sizes());
}

size_t index_of(const ClassSpec& spec, std::string_view name) {
  int64_t i = spec.field_index(name);
  if (i >= 0) return static_cast<size_t>(i);
  std::string names;
  for (const auto& f : spec.fields) names += (names.empty() ? "" : ", ") + std::string(f.name);
  throw KeyError(std::string(spec.name) + " has no field '" + std::string(name) +
                 "' (fields: " + names + ")");
}

std::optional<Value> cast(const ClassSpec& spec, size_t i, const FieldValue& value,
                          const BatchSize& batch, std::optional<at::Device> device) {
  const FieldSpec& field = spec.fields.at(i);
  const ClassOptions& o = spec.options;
  if (value.is_none()) return std::nullopt;
  if (field.non_tensor_data) {  // NonTensorData[T], MetaData[T]: the value as given, never a tensor
    const Json* json = value.json();
    if (!json) {
      throw TypeError("field " + where(spec, field) + " holds " +
                      (field.metadata ? "MetaData" : "NonTensorData") + ", got a " +
                      (value.tensor() ? "Tensor" : "TensorDict"));
    }
    if (json->is_null()) return std::nullopt;
    return Value(NonTensorData{*json, field.metadata});
  }
  if (const at::Tensor* t = value.tensor()) {
    if (!t->defined()) throw TypeError("field " + where(spec, field) + " got an undefined tensor");
    const FieldKind hint = hint_of(field);
    if (o.autocast && converts(hint)) {
      return Value(NonTensorData{convert(tensor_to_json(*t), hint, where(spec, field))});
    }
    // Python stores it, but the typed accessor could never read it back: refuse it now.
    if (field.kind == FieldKind::Str) {
      throw TypeError("field " + where(spec, field) + " expects a str, got a Tensor of shape " +
                      shape_str(t->sizes()));
    }
    check_tensor(spec, field, *t);
    return Value(*t);
  }
  if (const TensorDict* td = value.tensordict()) {
    if (field.kind == FieldKind::Class) mark_class(*td, field.nested());
    check_entries(spec, field, *td);
    return Value(*td);
  }
  const Json& json = *value.json();
  if (json.is_null()) return std::nullopt;
  if (o.tensor_only && field.kind == FieldKind::Tensor && !is_numeric_tree(json)) {
    throw TypeError("field " + where(spec, field) + " of tensor_only class expects a tensor, got " +
                    json_kind(json) + " " + json.dump());
  }
  if (field.kind == FieldKind::TensorDict && json.is_object() && o.tensor_only) {
    // Python's tensor_only builds a TensorDict of a mapping, as autocast does.
    Value stored(mapping_to_tensordict(json, batch, device));
    check_entries(spec, field, stored.tensordict());
    return stored;
  }
  if (o.autocast) {
    std::optional<Value> stored = autocast_json(spec, field, json, batch, device);
    if (stored && stored->is_tensordict()) check_entries(spec, field, stored->tensordict());
    return stored;
  }
  std::optional<Value> stored = default_json(json, batch, o.nocast);
  if (stored->is_tensor()) check_tensor(spec, field, stored->tensor());
  return stored;
}

void check_settable(const TensorDict& td, const ClassSpec& spec, size_t i) {
  // As Python: setting a field of a locked instance (frozen, or memmapped) raises, even when the
  // field exists; in-place tensor updates remain possible.
  if (td.is_locked()) {
    throw LockedError("cannot set field '" + std::string(spec.fields.at(i).name) +
                      "' of a locked " + spec.name +
                      " (frozen or memory-mapped; update its tensors in place, or unlock_())");
  }
}

namespace {

bool extends(at::IntArrayRef shape, const BatchSize& batch) {
  if (shape.size() < batch.size()) return false;
  // A loop, not std::equal: that becomes a memcmp call, the largest cost of a short compare.
  for (size_t d = 0; d < batch.size(); ++d) {
    if (shape[d] != batch[d]) return false;
  }
  return true;
}

// The checks cast() and TensorDict::set make on a tensor, true when all pass and the tensor is
// stored as is: a tensor-holding field (no autocast to a non-tensor type, not a str), the
// declared dtype and shape, the instance's device and batch dims. Anything else (including
// every error) takes the general path, which reports it.
// Inlined into both setter fast paths: as a call it was a quarter of a setter's time.
[[gnu::always_inline]] inline bool stored_as_is(const TensorDictImpl& impl, const ClassSpec& spec,
                                                const FieldSpec& field, const at::Tensor& t) {
  if (spec.options.autocast && converts(hint_of(field))) return false;
  if (field.kind == FieldKind::Str) return false;
  if (field.dtype && t.scalar_type() != *field.dtype) return false;
  const at::IntArrayRef sizes = t.sizes();
  if (field.shape) {
    const auto& shape = *field.shape;
    if (shape.size() != sizes.size()) return false;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] >= 0 && shape[d] != sizes[d]) return false;
    }
  }
  if (impl.device && t.device() != *impl.device) return false;
  return extends(sizes, impl.batch_size);
}

// The setter's fast path: a tensor that passes every check, stored into the field's slot (the
// keys are the fields in schema order, as in every instance whose fields are all set) or
// appended when the field is absent and next in schema order (construction). Same result as
// the general path below; false when that path must run.
template <class Tensor>  // const at::Tensor (copied in by std::move) or at::Tensor (moved in)
bool set_tensor_fast(TensorDict& td, const ClassSpec& spec, size_t i, Tensor& t) {
  auto& impl = detail::impl_of(td);
  if (impl.locked || impl.lazy || !t.defined() || i >= spec.fields.size()) return false;
  const FieldSpec& field = spec.fields[i];
  if (i < impl.keys.size()) {
    if (!same_key(impl.keys[i], field.name) || !stored_as_is(impl, spec, field, t)) return false;
    impl.values[i] = std::move(t);
    return true;
  }
  if (i != impl.keys.size() || !stored_as_is(impl, spec, field, t) || impl.find(field.name) >= 0)
    return false;
  impl.append(field.name, std::move(t));
  return true;
}

}  // namespace

void set(TensorDict& td, const ClassSpec& spec, size_t i, FieldValue&& value) {
  // `value` is ours: its tensor (held, not const) may be moved into the slot.
  if (const at::Tensor* t = value.tensor();
      t && set_tensor_fast(td, spec, i, const_cast<at::Tensor&>(*t))) {  // NOLINT
    return;
  }
  set(td, spec, i, static_cast<const FieldValue&>(value));
}

void set(TensorDict& td, const ClassSpec& spec, size_t i, const FieldValue& value) {
  if (const at::Tensor* t = value.tensor(); t && set_tensor_fast(td, spec, i, *t)) return;
  const char* key = spec.fields.at(i).name;
  check_settable(td, spec, i);
  std::optional<Value> stored = cast(spec, i, value, td.batch_size(), td.device());
  if (stored) {
    td.set(key, std::move(*stored));
  } else if (td.contains(key)) {
    td.del_(key);
  }
}

TensorDict build(const ClassSpec& spec, const std::vector<FieldValue>& values, BatchSize batch_size,
                 std::optional<at::Device> device, std::optional<DimNames> names) {
  TensorDict td = detail::make_tensordict(std::move(batch_size), device);
  detail::impl_of(td).reserve(spec.fields.size());
  detail::impl_of(td).class_info = spec.identity;
  // Named before the fields are set, so that nested values take the names, as in Python.
  if (names) td.set_names(std::move(names));
  for (size_t i = 0; i < spec.fields.size(); ++i) {
    const FieldSpec& field = spec.fields[i];
    // A deprecated field has no constructor argument: new instances take its default.
    const FieldValue fallback = field.deprecated ? default_of(field) : FieldValue();
    const FieldValue& given = field.deprecated || i >= values.size() ? fallback : values[i];
    // A tensor default is made here, a tensor per instance: the generated Args leave it undefined.
    const bool made_here = given.is_none() && field.kind == FieldKind::Tensor && !field.optional &&
                           field.default_json && !field.deprecated;
    const FieldValue made = made_here ? default_of(field) : FieldValue();
    const FieldValue& value = made_here ? made : given;
    // `any` includes None; every other non-optional field needs a value (defaults were applied
    // by the generated Args).
    if (value.is_none() && !field.optional && field.kind != FieldKind::Any) {
      throw KeyError(std::string(spec.name) + ": missing required field '" + field.name + "'");
    }
    set(td, spec, i, value);
  }
  if (spec.options.frozen) td.lock_();
  return td;
}

const Value* find(const TensorDict& td, const ClassSpec& spec, size_t i) {
  const auto& impl = detail::impl_of(td);
  const char* name = spec.fields[i].name;
  if (impl.lazy) {  // the elements' entries stacked (tensors: ShapeError naming a ragged field)
    return detail::lazy::contains(td, name) ? &detail::lazy::handed_out(td, name) : nullptr;
  }
  if (i < impl.keys.size() && same_key(impl.keys[i], name)) {
    return &impl.values[i];
  }
  int64_t slot = impl.find(name);
  return slot < 0 ? nullptr : &impl.values[static_cast<size_t>(slot)];
}

const Value& require(const TensorDict& td, const ClassSpec& spec, size_t i) {
  const Value* v = find(td, spec, i);
  if (!v) {
    throw KeyError(std::string(spec.name) + "." + spec.fields[i].name +
                   " is None (the field holds no value)");
  }
  return *v;
}

namespace {

const at::Tensor* tensor_of(const Value& value) {
  return value.visit([](const auto& entry) -> const at::Tensor* {
    if constexpr (std::is_same_v<std::decay_t<decltype(entry)>, at::Tensor>) {
      return &entry;
    } else {
      return nullptr;
    }
  });
}

// Lookup and error reporting, kept out of the accessor's fast path.
[[gnu::noinline]] const at::Tensor& tensor_slow(const TensorDict& td, const ClassSpec& spec,
                                                size_t i) {
  const Value& value = require(td, spec, i);
  if (const at::Tensor* t = tensor_of(value)) return *t;
  throw TypeError(std::string(spec.name) + "." + spec.fields[i].name + " holds a " +
                  value.kind_name() + ", not a tensor");
}

// Records, when td's keys are exactly the fields of `cls` in schema order, that its slots can be
// read by field index (TensorDict::class_slot) until its keys change. A relaxed atomic store:
// concurrent readers of one instance may both record it.
void note_layout(const TensorDict& td, detail::ClassToken cls) {
  detail::TensorDictImpl& impl = detail::impl_of(td);
  const ClassSpec& spec = cls();
  if (impl.lazy || impl.keys.size() != spec.fields.size()) return;
  for (size_t i = 0; i < impl.keys.size(); ++i) {
    if (!same_key(impl.keys[i], spec.fields[i].name)) return;
  }
  impl.layout_spec.store(&spec, std::memory_order_relaxed);
  impl.layout.store(cls, std::memory_order_relaxed);
}

}  // namespace

const Value* entry(const TensorDict& td, detail::ClassToken cls, size_t i) {
  note_layout(td, cls);
  return find(td, cls(), i);
}

const at::Tensor& tensor(const TensorDict& td, detail::ClassToken cls, size_t i) {
  note_layout(td, cls);
  const auto& impl = detail::impl_of(td);
  const ClassSpec& spec = cls();
  if (i < impl.keys.size() && same_key(impl.keys[i], spec.fields[i].name)) {
    if (const at::Tensor* t = tensor_of(impl.values[i])) return *t;
  }
  return tensor_slow(td, spec, i);
}

void set_tensor(TensorDict& td, detail::ClassToken cls, size_t i, at::Tensor&& t) {
  auto& impl = detail::impl_of(td);
  // A recorded layout means the keys are the fields in order and the instance is not lazy.
  if (impl.layout.load(std::memory_order_relaxed) == cls && !impl.locked && t.defined()) {
    const ClassSpec& spec = *impl.layout_spec.load(std::memory_order_relaxed);
    if (stored_as_is(impl, spec, spec.fields[i], t)) {
      Value& slot = impl.values[i];
      if (at::Tensor* held = slot.tensor_if()) {
        *held = std::move(t);  // no Value temporary, no variant reassignment
      } else {
        slot = Value(std::move(t));
      }
      return;
    }
  }
  set(td, cls(), i, FieldValue(std::move(t)));
  note_layout(td, cls);  // the next sets (and reads) take the paths above
}

namespace {

// `t`'s shape without the leading dims a stack added in front of the schema's (at most
// `batch_dims`): a stacked instance holds its fields with more batch dims.
at::IntArrayRef trailing(const FieldSpec& field, const at::Tensor& t, int64_t batch_dims) {
  const int64_t schema_dims = field.shape ? static_cast<int64_t>(field.shape->size()) : t.dim();
  const int64_t extra = std::min(batch_dims, std::max<int64_t>(0, t.dim() - schema_dims));
  return t.sizes().slice(static_cast<size_t>(extra));
}

// check_fields at one level; `with_shapes` is false for the elements of a lazy stack, whose
// tensors lack the stacked dim the field's shape counts.
void check_level(const TensorDict& td, const ClassSpec& spec, bool with_shapes) {
  if (td.is_lazy_stack()) {  // element by element: ragged entries cannot be stacked
    for (const auto& element : td.tensordicts()) check_level(element, spec, false);
    return;
  }
  for (const auto& key : td.keys()) {
    size_t i = index_of(spec, key.front());
    const FieldSpec& field = spec.fields[i];
    const Value value = td.get_value(key);
    if (field.kind == FieldKind::Class) {
      if (!value.is_tensordict()) {
        throw TypeError("field " + where(spec, field) + " expects a " + field.nested().name +
                        ", got " + value.kind_name());
      }
      check_level(value.tensordict(), field.nested(), with_shapes);
    } else if (const at::Tensor* t = value.tensor_if()) {
      check_dtype(spec, field, *t);
      if (with_shapes) check_shape(spec, field, trailing(field, *t, td.ndim()));
    } else if (field.kind == FieldKind::TensorDict && value.is_tensordict()) {
      check_entries(spec, field, value.tensordict());
    }
  }
}

}  // namespace

void check_fields(const TensorDict& td, const ClassSpec& spec) { check_level(td, spec, true); }

TensorDict to_tensordict(const TensorDict& td, const ClassSpec& spec, bool retain_none) {
  TensorDict out = detail::empty_like_meta(td);
  std::vector<const char*> none_fields;  // Python adds them after the stored entries
  for (size_t i = 0; i < spec.fields.size(); ++i) {
    const FieldSpec& field = spec.fields[i];
    const Value* v = find(td, spec, i);
    if (!v) {
      none_fields.push_back(field.name);
    } else if (v->is_tensor()) {
      out.set(field.name, v->tensor().clone());
    } else if (v->is_tensordict() && field.kind == FieldKind::Class) {
      out.set(field.name, to_tensordict(v->tensordict(), field.nested(), retain_none));
    } else if (v->is_tensordict()) {
      out.set(field.name, v->tensordict().clone());
    } else {
      out.set(field.name, *v);
    }
  }
  if (retain_none) {
    for (const char* name : none_fields) out.set(name, NonTensorData{nullptr});
  }
  return out;
}

bool equal(const TensorDict& a, const TensorDict& b) {
  if (a.batch_size() != b.batch_size() || a.size() != b.size()) return false;
  for (const auto& key : a.keys()) {
    if (!b.contains(key)) return false;
    const Value va = a.get_value(key), vb = b.get_value(key);
    if (va.kind() != vb.kind()) return false;
    switch (va.kind()) {
      case Value::Kind::Tensor:
        if (va.tensor().scalar_type() != vb.tensor().scalar_type() ||
            !va.tensor().sizes().equals(vb.tensor().sizes()) ||
            !at::equal(va.tensor(), vb.tensor().to(va.tensor().device()))) {
          return false;
        }
        break;
      case Value::Kind::TensorDict:
        if (!equal(va.tensordict(), vb.tensordict())) return false;
        break;
      case Value::Kind::NonTensorData:
        if (!(va.non_tensor_data() == vb.non_tensor_data())) return false;
        break;
      case Value::Kind::NonTensorStack:
        if (!(va.non_tensor_stack() == vb.non_tensor_stack())) return false;
        break;
    }
  }
  return true;
}

}  // namespace detail::tc
}  // namespace tensordict
