// TensorDict core: construction, entries, nested keys, batch size, device (views, lock and copies:
// ops/views.cpp).
#include <ATen/ATen.h>

#include <numeric>

#include "core/dim_names.h"
#include "core/lazy_state.h"
#include "core/tensordict_impl.h"

namespace tensordict {

using detail::TensorDictImpl;

namespace detail {

void TensorDictImpl::erase(size_t slot) {
  keys.erase(keys.begin() + static_cast<std::ptrdiff_t>(slot));
  values.erase(values.begin() + static_cast<std::ptrdiff_t>(slot));
  reindex();
}

void TensorDictImpl::reindex() {
  index_ = std::make_shared<KeyIndex>();  // never mutate an index other TensorDicts share
  for (size_t i = 0; i < keys.size(); ++i) index_->insert(keys[i], i);
  forget_layout();
}

TensorDict make_tensordict(BatchSize batch_size, std::optional<at::Device> device,
                           std::optional<DimNames> names) {
  auto impl = std::make_shared<TensorDictImpl>();
  impl->batch_size = std::move(batch_size);
  impl->device = device;
  impl->names = std::move(names);
  return Access::wrap(std::move(impl));
}

TensorDict empty_like_meta(const TensorDict& like) {
  const auto& impl = detail::impl_of(like);
  return make_tensordict(impl.batch_size, impl.device, impl.names);
}

std::shared_ptr<const memmap::ClassInfo> common_class(const std::vector<TensorDict>& tds) {
  if (tds.empty()) return nullptr;
  const auto& first = impl_of(tds.front()).class_info;
  for (const TensorDict& td : tds) {
    const auto& info = impl_of(td).class_info;
    if (!first || !info || info->type != first->type) return nullptr;
  }
  return first;
}

TensorDict empty_result_of(const TensorDict& like) {
  TensorDict out = empty_like_meta(like);
  impl_of(out).class_info = impl_of(like).class_info;
  return out;
}

void check_leading_dims(const std::string& key, const std::vector<int64_t>& shape,
                        const BatchSize& batch) {
  const bool ok =
      shape.size() >= batch.size() && std::equal(batch.begin(), batch.end(), shape.begin());
  if (!ok) {
    throw ShapeError("batch dimension mismatch for key '" + key + "': expected leading dims " +
                     shape_str(batch) + " (the batch_size), got shape " + shape_str(shape));
  }
}

namespace {
bool dropped(const Value& v) { return v.is_tensor() && !v.tensor().defined(); }
}  // namespace

void set_values(TensorDictImpl& dst, const TensorDictImpl& src, std::vector<Value>&& values) {
  if (std::none_of(values.begin(), values.end(), dropped)) {
    dst.share_keys(src);
    dst.values = std::move(values);
    return;
  }
  for (size_t i = 0; i < values.size(); ++i)
    if (!dropped(values[i])) dst.append(src.keys[i], std::move(values[i]));
}

TensorDict map_entries(const TensorDict& td,
                       const std::function<BatchSize(const BatchSize&)>& batch_fn,
                       const std::function<at::Tensor(const at::Tensor&)>& tensor_fn,
                       const std::function<NonTensorStack(const NonTensorStack&)>& stack_fn) {
  if (td.is_lazy_stack()) {
    return lazy::per_element(
        td, [&](const TensorDict& e) { return map_entries(e, batch_fn, tensor_fn, stack_fn); });
  }
  const auto& src = detail::impl_of(td);
  TensorDict out = make_tensordict(batch_fn(src.batch_size), src.device);
  detail::impl_of(out).class_info = src.class_info;
  if (src.names && detail::impl_of(out).batch_size.size() == src.batch_size.size())
    detail::impl_of(out).names = src.names;
  std::vector<Value> values;  // undefined tensors are dropped by set_values
  values.reserve(src.keys.size());
  for (size_t i = 0; i < src.keys.size(); ++i) {
    const Value& value = src.values[i];
    switch (value.kind()) {
      case Value::Kind::Tensor:
        values.emplace_back(tensor_fn(value.tensor()));
        break;
      case Value::Kind::TensorDict:
        values.emplace_back(map_entries(value.tensordict(), batch_fn, tensor_fn, stack_fn));
        break;
      case Value::Kind::NonTensorData:
        values.push_back(value);
        break;
      case Value::Kind::NonTensorStack:
        values.push_back(stack_fn ? Value(stack_fn(value.non_tensor_stack())) : value);
        break;
    }
  }
  set_values(detail::impl_of(out), src,
             std::move(values));  // shares the key index when nothing dropped
  return out;
}

TensorDict copy_structure(const TensorDict& td) {
  return map_entries(
      td, [](const BatchSize& b) { return b; }, [](const at::Tensor& t) { return t; }, {});
}

}  // namespace detail

namespace {

// The TensorDict holding the last component of `key`; intermediate TensorDicts are created when
// `create` is set (refused by locked parents), otherwise a missing one throws KeyError.
TensorDict parent_of(const TensorDict& root, const NestedKey& key, bool create) {
  TensorDict node = root;
  for (size_t i = 0; i + 1 < key.size(); ++i) {
    auto& impl = detail::impl_of(node);
    const int64_t slot = impl.find(key, i);
    if (slot < 0) {
      if (!create) throw KeyError("key " + key.repr() + " not found: no entry '" + key[i] + "'");
      if (impl.locked) {
        throw LockedError("cannot create '" + key[i] + "' for key " + key.repr() +
                          ": the TensorDict is locked");
      }
      TensorDict child = detail::make_tensordict(impl.batch_size, impl.device);
      impl.append(key[i], child);
      node = child;
      continue;
    }
    const Value& value = impl.values[static_cast<size_t>(slot)];
    if (!value.is_tensordict()) {
      throw TypeError("key " + key.repr() + ": entry '" + key[i] + "' is a " + value.kind_name() +
                      ", not a TensorDict");
    }
    node = value.tensordict();
  }
  return node;
}

bool extends_dims(at::IntArrayRef shape, const BatchSize& batch) {
  return shape.size() >= batch.size() && std::equal(batch.begin(), batch.end(), shape.begin());
}

// Brings a value to the TensorDict's conventions (device) and checks its batch dims.
Value conform(const TensorDictImpl& impl, const NestedKey& key, Value value) {
  const std::string name = value.is_tensor() ? std::string() : key.join(".");
  switch (value.kind()) {
    case Value::Kind::Tensor: {  // hot path of set(): no allocation unless the check fails
      at::Tensor& t = value.tensor();
      if (impl.device && t.device() != *impl.device) t = t.to(*impl.device);
      if (!extends_dims(t.sizes(), impl.batch_size))
        detail::check_leading_dims(key.join("."), t.sizes().vec(), impl.batch_size);
      break;
    }
    case Value::Kind::TensorDict: {
      const BatchSize& given = value.tensordict().batch_size();
      if (given.size() < impl.batch_size.size() &&
          std::equal(given.begin(), given.end(), impl.batch_size.begin())) {
        // As Python: a TensorDict with fewer batch dims (the leading ones) takes this one's batch
        // size, on a structure copy (the caller's keeps its own); ShapeError when its entries do
        // not have those dims. Other batch sizes are refused below.
        TensorDict mapped = detail::copy_structure(value.tensordict());
        try {
          mapped.set_batch_size(impl.batch_size);
        } catch (const Error&) {
          detail::check_leading_dims(name, value.tensordict().batch_size(), impl.batch_size);
          throw;
        }
        value = std::move(mapped);
      }
      const TensorDict& child = value.tensordict();
      detail::check_leading_dims(name, child.batch_size(), impl.batch_size);
      if (impl.device && child.device() != impl.device) {
        TensorDict moved =
            detail::copy_structure(child);  // new structure; the caller's child is untouched
        return moved.set_device(impl.device);
      }
      break;
    }
    case Value::Kind::NonTensorStack:
      detail::check_leading_dims(name, value.non_tensor_stack().shape(), impl.batch_size);
      break;
    case Value::Kind::NonTensorData:
      break;
  }
  return value;
}

}  // namespace

TensorDict::TensorDict() : TensorDict(std::make_shared<TensorDictImpl>()) {}

TensorDict::TensorDict(std::shared_ptr<detail::TensorDictImpl> impl)
    : impl_(std::move(impl)), slots_(impl_.get()) {}

TensorDict::TensorDict(std::initializer_list<std::pair<NestedKey, Value>> items,
                       BatchSize batch_size, std::optional<at::Device> device,
                       std::optional<DimNames> names)
    : TensorDict(std::vector<std::pair<NestedKey, Value>>(items), std::move(batch_size), device,
                 std::move(names)) {}

TensorDict::TensorDict(const std::vector<std::pair<NestedKey, Value>>& items, BatchSize batch_size,
                       std::optional<at::Device> device, std::optional<DimNames> names)
    : TensorDict(std::make_shared<TensorDictImpl>()) {
  for (int64_t dim : batch_size) {
    if (dim < 0) throw ShapeError("batch_size " + shape_str(batch_size) + " has a negative dim");
  }
  impl_->batch_size = std::move(batch_size);
  impl_->device = device;
  for (const auto& [key, value] : items) set(key, value);
  set_names(std::move(names));  // after the entries: nested TensorDicts take the names too
}

namespace detail {
void throw_get_conversion(const NestedKey& key, const Value& value, const char* wanted) {
  std::string held = value.kind_name();
  if (value.is_non_tensor())
    held += " " + (value.is_non_tensor_data() ? value.non_tensor_data().data.dump()
                                              : value.non_tensor_stack().tolist().dump());
  if (const at::Tensor* t = value.tensor_if()) held += " of shape " + shape_str(t->sizes());
  throw TypeError("get<T>: key " + key.repr() + " holds " + held + ", not " + wanted);
}

void check_stored_class(const TensorDict& td, const NestedKey& key, const char* python_type) {
  const auto& stored = impl_of(td).class_info;
  if (stored && stored->type != python_type) {
    throw TypeError("get<T>: key " + key.repr() + " holds an instance of " + stored->type +
                    ", not of " + python_type);
  }
}
}  // namespace detail

// ---- shape and device ------------------------------------------------------------------------

const BatchSize& TensorDict::batch_size() const { return impl_->batch_size; }

namespace {

bool extends(const BatchSize& shape, const BatchSize& batch) {
  return shape.size() >= batch.size() && std::equal(batch.begin(), batch.end(), shape.begin());
}

// Validates a batch-size change before anything is modified: every entry must have the new leading
// dims; a nested TensorDict whose batch no longer extends the new one must be able to take it.
void check_batch_size(const TensorDictImpl& impl, const BatchSize& batch) {
  for (size_t i = 0; i < impl.keys.size(); ++i) {
    const Value& value = impl.values[i];
    if (value.is_tensordict()) {
      const auto& child = value.tensordict();
      if (!extends(child.batch_size(), batch)) check_batch_size(detail::impl_of(child), batch);
    } else if (auto shape = value.shape()) {
      detail::check_leading_dims(impl.keys[i], *shape, batch);
    }
  }
}

void apply_batch_size(TensorDictImpl& impl, const BatchSize& batch) {
  for (auto& value : impl.values) {
    if (value.is_tensordict() && !extends(value.tensordict().batch_size(), batch)) {
      apply_batch_size(detail::impl_of(value.tensordict()), batch);
    }
  }
  if (impl.names && impl.names->size() != batch.size()) impl.names.reset();
  impl.batch_size = batch;
}

}  // namespace

void TensorDict::set_batch_size(BatchSize batch_size) {
  detail::dense_only(*this, "set_batch_size");
  check_batch_size(*impl_, batch_size);
  apply_batch_size(*impl_, batch_size);
}

int64_t TensorDict::ndim() const { return static_cast<int64_t>(impl_->batch_size.size()); }

int64_t TensorDict::numel() const {
  const auto& b = impl_->batch_size;
  return std::accumulate(b.begin(), b.end(), int64_t{1}, std::multiplies<>());
}

bool TensorDict::is_empty() const {
  // As Python's: no leaf at any depth (nested TensorDicts that are empty themselves count not).
  // A lazy stack's entries live in its elements.
  if (impl_->lazy) return keys(/*include_nested=*/true, /*leaves_only=*/true).empty();
  for (const Value& value : impl_->values) {
    if (!value.is_tensordict() || !value.tensordict().is_empty()) return false;
  }
  return true;
}

std::optional<at::Device> TensorDict::device() const { return impl_->device; }

TensorDict& TensorDict::set_device(std::optional<at::Device> device) {
  impl_->device = device;
  if (impl_->lazy) detail::lazy::for_each(*this, [&](TensorDict& e) { e.set_device(device); });
  if (!device) return *this;
  for (auto& value : impl_->values) {
    if (value.is_tensor()) {
      value.tensor() = value.tensor().to(*device);
    } else if (value.is_tensordict()) {
      TensorDict child = value.tensordict();
      child.set_device(device);
    }
  }
  return *this;
}

// ---- entries ---------------------------------------------------------------------------------

bool TensorDict::contains(const NestedKey& key) const {
  if (auto lazy = detail::lazy::on_path(*this, key))
    return detail::lazy::state(lazy->first).contains(lazy->first, lazy->second);
  TensorDict node = *this;
  for (size_t i = 0; i < key.size(); ++i) {
    const int64_t slot = node.impl_->find(key, i);
    if (slot < 0) return false;
    if (i + 1 == key.size()) return true;
    const Value& value = node.impl_->values[static_cast<size_t>(slot)];
    if (!value.is_tensordict()) return false;
    node = value.tensordict();
  }
  return false;
}

Value TensorDict::get_value(const NestedKey& key) const {
  if (auto lazy = detail::lazy::on_path(*this, key))
    return detail::lazy::state(lazy->first).get_value(lazy->first, lazy->second);
  const TensorDict parent = key.is_nested() ? parent_of(*this, key, false) : *this;
  const int64_t slot = parent.impl_->find(key, key.size() - 1);
  if (slot < 0) throw KeyError("key " + key.repr() + " not found in TensorDict");
  return parent.impl_->values[static_cast<size_t>(slot)];
}

namespace {

// get's checked path, out of line so that the fast path keeps a small frame: the lazy form, and
// the error of a key that is missing or holds no tensor.
[[gnu::noinline]] at::Tensor get_checked(const TensorDict& td, const NestedKey& key) {
  Value value = td.get_value(key);
  if (!value.is_tensor()) {
    throw TypeError("key " + key.repr() + " holds a " + value.kind_name() + ", not a Tensor");
  }
  return value.tensor();
}

}  // namespace

at::Tensor TensorDict::get(const NestedKey& key) const {
  // Fast path: walk the levels by pointer (no handle or Value copies); any miss falls through to
  // the checked path, which throws the right error.
  const TensorDictImpl* node = impl_.get();
  for (size_t i = 0;; ++i) {
    const int64_t slot = node->find(key, i);
    if (slot < 0) break;
    const Value& value = node->values[static_cast<size_t>(slot)];
    if (i + 1 == key.size()) {
      if (const at::Tensor* t = value.tensor_if()) return *t;
      break;
    }
    const TensorDict* child = value.tensordict_if();
    if (!child) break;
    node = &detail::impl_of(*child);
  }
  return get_checked(*this, key);
}

at::Tensor TensorDict::get(const NestedKey& key, const at::Tensor& default_value) const {
  return contains(key) ? get(key) : default_value;
}

TensorDict TensorDict::get_tensordict(const NestedKey& key) const {
  Value value = get_value(key);
  if (!value.is_tensordict()) {
    throw TypeError("key " + key.repr() + " holds a " + value.kind_name() + ", not a TensorDict");
  }
  return value.tensordict();
}

Json TensorDict::get_non_tensor(const NestedKey& key) const {
  if (auto lazy = detail::lazy::on_path(*this, key))
    return detail::lazy::state(lazy->first).get_non_tensor(lazy->first, lazy->second);
  Value value = get_value(key);
  if (value.is_non_tensor_data()) return value.non_tensor_data().data;
  if (value.is_non_tensor_stack()) return value.non_tensor_stack().tolist();
  throw TypeError("key " + key.repr() + " holds a " + value.kind_name() + ", not non-tensor data");
}

bool TensorDict::is_non_tensor(const NestedKey& key) const {
  const Value value = get_value(key);
  return value.is_non_tensor_data() || value.is_non_tensor_stack();
}

const Value& TensorDict::value_at(size_t slot) const {
  if (impl_->lazy) detail::dense_only(*this, "value_at");
  return impl_->values.at(slot);
}
const std::string& TensorDict::key_at(size_t slot) const {
  if (impl_->lazy) detail::dense_only(*this, "key_at");
  return impl_->keys.at(slot);
}
int64_t TensorDict::slot_of(const std::string& key) const { return impl_->find(key); }  // -1: lazy

TensorDict& TensorDict::set(const NestedKey& key, Value value) {
  const at::Tensor* t = value.tensor_if();
  if (t && !key.is_nested() && !impl_->locked) {  // hot path: replace a tensor
    const int64_t slot = impl_->find(key, 0);
    if (slot >= 0 && (!impl_->device || t->device() == *impl_->device) &&
        extends_dims(t->sizes(), impl_->batch_size)) {
      Value& existing = impl_->values[static_cast<size_t>(slot)];
      if (const at::Tensor* old = existing.tensor_if()) {
        // Tensor over tensor: a plain move, no variant dispatch. Both Values are ours (`value`
        // by value, `existing` in our entries), hence not const.
        *const_cast<at::Tensor*>(old) = std::move(*const_cast<at::Tensor*>(t));  // NOLINT
      } else {
        existing = std::move(value);
      }
      return *this;
    }
  }
  if (auto lazy = detail::lazy::on_path(*this, key)) {
    detail::lazy::state(lazy->first).set(lazy->first, lazy->second, value);
    return *this;
  }
  std::optional<TensorDict> parent;  // only nested keys pay for a handle copy
  if (key.is_nested()) parent = parent_of(*this, key, true);
  auto& impl = parent ? detail::impl_of(*parent) : *impl_;
  // A locked TensorDict refuses set, of a new key or an existing one, as Python's
  // set(inplace=False): set_ writes into an existing tensor.
  if (impl.locked) {
    throw LockedError("cannot set key " + key.repr() +
                      ": the TensorDict is locked (set_() writes into an existing tensor; "
                      "unlock_() it to replace or add entries)");
  }
  value = conform(impl, key, std::move(value));
  if (value.is_tensordict()) detail::exchange_names(impl, value);
  const int64_t slot = impl.find(key, key.size() - 1);
  if (slot >= 0) {
    impl.values[static_cast<size_t>(slot)] = std::move(value);
    return *this;
  }
  if (value.is_tensordict() && value.tensordict().is_locked() != impl.locked) {
    // A nested TensorDict shares its parent's lock state.
    TensorDict child = value.tensordict();
    detail::set_locked_recursive(detail::impl_of(child), impl.locked);
  }
  impl.append(key.back(), std::move(value));
  return *this;
}

TensorDict& TensorDict::set_non_tensor(const NestedKey& key, Json value) {
  return set(key, NonTensorData{std::move(value)});
}

TensorDict& TensorDict::set_(const NestedKey& key, const at::Tensor& value) {
  if (auto lazy = detail::lazy::on_path(*this, key)) {  // element-wise: the elements are written
    detail::lazy::state(lazy->first).set_(lazy->first, lazy->second, value);
    return *this;
  }
  at::Tensor dst = get(key);
  if (dst.sizes() != value.sizes()) {
    throw ShapeError("set_ on key " + key.repr() + ": expected shape " + shape_str(dst.sizes()) +
                     ", got " + shape_str(value.sizes()));
  }
  dst.copy_(value);
  return *this;
}

TensorDict& TensorDict::del_(const NestedKey& key) {
  pop(key);
  return *this;
}

Value TensorDict::pop(const NestedKey& key) {
  if (auto lazy = detail::lazy::on_path(*this, key))
    return detail::lazy::state(lazy->first).pop(lazy->first, lazy->second);
  TensorDict parent = key.is_nested() ? parent_of(*this, key, false) : *this;
  auto& impl = detail::impl_of(parent);
  const int64_t slot = impl.find(key.back());
  if (slot < 0) throw KeyError("cannot delete key " + key.repr() + ": not found in TensorDict");
  if (impl.locked)
    throw LockedError("cannot delete key " + key.repr() + ": the TensorDict is locked");
  Value value = impl.values[static_cast<size_t>(slot)];
  impl.erase(static_cast<size_t>(slot));
  return value;
}

Value TensorDict::pop(const NestedKey& key, const Value& default_value) {
  return contains(key) ? pop(key) : default_value;
}

std::pair<NestedKey, Value> TensorDict::popitem() {
  const std::vector<NestedKey> top = keys();
  if (top.empty()) throw KeyError("popitem(): the TensorDict is empty");
  Value value = pop(top.back());
  return {top.back(), std::move(value)};
}

Value TensorDict::setdefault(const NestedKey& key, const Value& default_value) {
  if (!contains(key)) set(key, default_value);
  return get_value(key);
}

TensorDict& TensorDict::rename_key_(const NestedKey& old_key, const NestedKey& new_key, bool safe) {
  if (old_key == new_key) return *this;
  if (impl_->lazy) {
    detail::lazy::for_each(*this, [&](TensorDict& e) { e.rename_key_(old_key, new_key, safe); });
    return *this;
  }
  if (safe && contains(new_key)) {
    throw KeyError("cannot rename " + old_key.repr() + " to " + new_key.repr() +
                   ": the new key already exists");
  }
  TensorDict parent = old_key.is_nested() ? parent_of(*this, old_key, false) : *this;
  auto& impl = detail::impl_of(parent);
  const int64_t slot = impl.find(old_key.back());
  if (slot < 0) throw KeyError("cannot rename key " + old_key.repr() + ": not found in TensorDict");
  if (impl.locked) {
    throw LockedError("cannot rename key " + old_key.repr() + ": the TensorDict is locked");
  }
  const bool same_parent = old_key.size() == new_key.size() &&
                           (!old_key.is_nested() || old_key.parent() == new_key.parent());
  if (same_parent) {  // keep the entry's position
    const int64_t taken = impl.find(new_key.back());
    impl.keys[static_cast<size_t>(slot)] = new_key.back();
    if (taken >= 0) {
      impl.keys.erase(impl.keys.begin() + taken);
      impl.values.erase(impl.values.begin() + taken);
    }
    impl.reindex();
    return *this;
  }
  Value value = pop(old_key);
  return set(new_key, std::move(value));
}

}  // namespace tensordict
