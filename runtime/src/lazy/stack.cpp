// LazyStackedTensorDict: construction and entries (get / set / keys across the elements).
#include <ATen/ATen.h>

#include <algorithm>

#include "core/shape.h"
#include "lazy/internal.h"

namespace tensordict {
namespace detail::lazy {
namespace {

// The lazy stack behind core's entry points (core/lazy_state.h): this file's entry functions.
struct Stack final : LazyState {
  bool contains(const TensorDict& td, const NestedKey& key) const override {
    return lazy::contains(td, key);
  }
  Value get_value(const TensorDict& td, const NestedKey& key) const override {
    return lazy::get_value(td, key);
  }
  Json get_non_tensor(const TensorDict& td, const NestedKey& key) const override {
    return lazy::get_non_tensor(td, key);
  }
  void set(const TensorDict& td, const NestedKey& key, const Value& value) const override {
    lazy::set(td, key, value);
  }
  void set_(const TensorDict& td, const NestedKey& key, const at::Tensor& value) const override {
    lazy::set_(td, key, value);
  }
  Value pop(const TensorDict& td, const NestedKey& key) const override {
    return lazy::pop(td, key);
  }
  TensorDict restack(const TensorDict& td, const std::vector<TensorDict>& tds,
                     int64_t stack_dim) const override {
    return lazy::restack(td, tds, stack_dim);
  }
};

}  // namespace
}  // namespace detail::lazy

TensorDict lazy_stack(const std::vector<TensorDict>& tds, int64_t dim) {
  if (tds.empty()) throw ShapeError("lazy_stack: expected at least one TensorDict");
  const BatchSize& first = tds[0].batch_size();
  BatchSize batch = first;
  std::optional<at::Device> device = tds[0].device();
  for (size_t k = 1; k < tds.size(); ++k) {
    const BatchSize& b = tds[k].batch_size();
    if (b.size() != first.size()) {
      throw ShapeError("lazy_stack: TensorDict " + std::to_string(k) + " has batch_size " +
                       shape_str(b) + " but TensorDict 0 has " + shape_str(first) +
                       " (the number of batch dims must match)");
    }
    for (size_t d = 0; d < b.size(); ++d)
      if (b[d] != batch[d]) batch[d] = -1;  // ragged dim, as Python
    if (tds[k].device() != device) device.reset();
  }
  const auto ndim = static_cast<int64_t>(first.size()) + 1;
  const int64_t d = detail::wrap_dim(dim, ndim, "lazy_stack", first);
  batch.insert(batch.begin() + d, static_cast<int64_t>(tds.size()));
  TensorDict out = detail::make_tensordict(std::move(batch), device);
  detail::impl_of(out).class_info = detail::common_class(tds);
  auto state = std::make_shared<detail::lazy::Stack>();
  state->tds = tds;
  state->stack_dim = d;
  detail::impl_of(out).lazy = std::move(state);
  return out;
}

namespace detail::lazy {
namespace {

std::string elements_str(size_t k) { return "element " + std::to_string(k) + " of the lazy stack"; }

// Wraps one entry in a TensorDict of its element's batch size, so that the dense stack() rule
// (non-tensor entries become one NonTensorStack, as tensordict 0.14) applies to it.
TensorDict wrap_entry(const TensorDict& element, const Value& value) {
  TensorDict w = make_tensordict(element.batch_size(), element.device());
  detail::impl_of(w).append("v", value);
  return w;
}

// An element's non-tensor entry as the nested lists of its batch (a NonTensorData covers the
// whole batch of the TensorDict holding it), as Python's NonTensorStack.tolist() reads it.
Json element_list(const TensorDict& element, const NestedKey& key) {
  if (element.is_lazy_stack()) return get_non_tensor(element, key);
  if (key.size() > 1) {
    const Value parent = element.get_value(key.parent());
    if (parent.is_tensordict()) return element_list(parent.tensordict(), NestedKey(key.back()));
  }
  const Value v = element.get_value(key);
  if (v.is_non_tensor_data())
    return NonTensorStack::filled(element.batch_size(), v.non_tensor_data().data).tolist();
  return element.get_non_tensor(key);
}

}  // namespace

TensorDict restack(const TensorDict& like, const std::vector<TensorDict>& tds, int64_t stack_dim) {
  TensorDict out = lazy_stack(tds, stack_dim);
  detail::impl_of(out).lazy->dim_name = state(like).dim_name;
  return out;
}

void set_(const TensorDict& td, const NestedKey& key, const at::Tensor& value) {
  const LazyState& st = state(td);
  const auto parts = value.unbind(st.stack_dim);
  if (parts.size() != st.tds.size()) {
    throw ShapeError("set_ on key " + key.repr() + ": expected " + std::to_string(st.tds.size()) +
                     " rows along the stack dim, got shape " + shape_str(value.sizes()));
  }
  for (size_t k = 0; k < parts.size(); ++k) TensorDict(st.tds[k]).set_(key, parts[k]);
}

bool contains(const TensorDict& td, const NestedKey& key) {
  const auto& tds = state(td).tds;
  return std::all_of(tds.begin(), tds.end(), [&](const TensorDict& e) { return e.contains(key); });
}

Value get_value(const TensorDict& td, const NestedKey& key) {
  const LazyState& st = state(td);
  std::vector<Value> vs;
  vs.reserve(st.tds.size());
  for (size_t k = 0; k < st.tds.size(); ++k) {
    if (!st.tds[k].contains(key))
      throw KeyError("key " + key.repr() + " not found in " + elements_str(k));
    vs.push_back(st.tds[k].get_value(key));
  }
  for (size_t k = 1; k < vs.size(); ++k) {
    const bool same =
        vs[k].kind() == vs[0].kind() || (vs[k].is_non_tensor() && vs[0].is_non_tensor());
    if (!same) {
      throw TypeError("key " + key.repr() + " is a " + vs[0].kind_name() + " in " +
                      elements_str(0) + " but a " + vs[k].kind_name() + " in " + elements_str(k));
    }
  }
  if (vs[0].is_tensor()) {
    std::vector<at::Tensor> ts;
    for (size_t k = 0; k < vs.size(); ++k) {
      ts.push_back(vs[k].tensor());
      if (!ts[k].sizes().equals(ts[0].sizes())) {
        throw ShapeError("key " + key.repr() + " has shape " + shape_str(ts[0].sizes()) + " in " +
                         elements_str(0) + " but " + shape_str(ts[k].sizes()) + " in " +
                         elements_str(k) + ": it cannot be stacked (use get_padded)");
      }
    }
    return at::stack(ts, st.stack_dim);
  }
  if (vs[0].is_tensordict()) {
    std::vector<TensorDict> children;
    for (const auto& v : vs) children.push_back(v.tensordict());
    TensorDict nested = lazy_stack(children, st.stack_dim);
    // Part of a locked stack, it is locked too (its elements are already).
    detail::impl_of(nested).locked = detail::impl_of(td).locked;
    return nested;
  }
  std::vector<TensorDict> wrapped;
  for (size_t k = 0; k < vs.size(); ++k) wrapped.push_back(wrap_entry(st.tds[k], vs[k]));
  try {
    return stack(wrapped, st.stack_dim).get_value("v");
  } catch (const ShapeError& e) {
    throw ShapeError("key " + key.repr() + ": the non-tensor data of the lazy stack is ragged (" +
                     e.what() + ")");
  }
}

Json get_non_tensor(const TensorDict& td, const NestedKey& key) {
  const LazyState& st = state(td);
  try {
    const Value v = get_value(td, key);
    if (v.is_non_tensor_data()) return v.non_tensor_data().data;
    if (v.is_non_tensor_stack()) return v.non_tensor_stack().tolist();
    throw TypeError("key " + key.repr() + " holds a " + v.kind_name() + ", not non-tensor data");
  } catch (const ShapeError&) {
    if (st.stack_dim != 0) throw;  // nested lists are dim-0 major
    Json out = Json::array();
    for (const auto& e : st.tds) out.push_back(element_list(e, key));
    return out;
  }
}

void set(const TensorDict& td, const NestedKey& key, const Value& value) {
  const LazyState& st = state(td);
  if (value.is_non_tensor_data()) {
    for_each(td, [&](TensorDict& e) { e.set(key, value); });
    return;
  }
  if (value.is_tensordict() && value.tensordict().is_lazy_stack()) {
    const LazyState& vst = state(value.tensordict());
    if (vst.stack_dim == st.stack_dim && vst.tds.size() == st.tds.size()) {
      for (size_t k = 0; k < st.tds.size(); ++k) TensorDict(st.tds[k]).set(key, vst.tds[k]);
      return;
    }
  }
  const BatchSize& batch = td.batch_size();
  if (std::find(batch.begin(), batch.end(), -1) != batch.end()) {
    throw ShapeError("set: cannot split key " + key.repr() + " over the elements of a ragged " +
                     "lazy stack of batch_size " + shape_str(batch) +
                     " (set it in each of tensordicts())");
  }
  TensorDict whole = make_tensordict(batch, td.device());
  whole.set(key.back(), value);  // checks the batch dims, naming the key
  const auto parts = whole.unbind(st.stack_dim);
  for (size_t k = 0; k < st.tds.size(); ++k)
    TensorDict(st.tds[k]).set(key, parts[k].get_value(key.back()));
}

Value pop(const TensorDict& td, const NestedKey& key) {
  Value out = get_value(td, key);
  for_each(td, [&](TensorDict& e) { e.del_(key); });
  return out;
}

const Value& handed_out(const TensorDict& td, const std::string& key) {
  Value v = NonTensorData{};
  try {
    v = get_value(td, key);
  } catch (const ShapeError&) {
    // Ragged non-tensor data reads as its nested lists (Python's tolist()); tensors throw.
    if (state(td).tds[0].get_value(key).is_tensor()) throw;
    v = NonTensorData{get_non_tensor(td, key)};
  }
  LazyState& lazy = *detail::impl_of(td).lazy;
  std::lock_guard<std::mutex> lock(lazy.handed_out_mutex);
  auto& slot = lazy.handed_out[key];
  if (slot) {
    *slot = std::move(v);
  } else {
    slot = std::make_unique<Value>(std::move(v));
  }
  return *slot;
}

}  // namespace detail::lazy
}  // namespace tensordict

namespace tensordict {

TensorDict TensorDict::to_lazystack(int64_t dim) const {
  const int64_t d = detail::wrap_dim(dim, ndim(), "to_lazystack", batch_size());
  TensorDict out = lazy_stack(unbind(d), d);
  detail::impl_of(out).lazy->dim_name = names()[static_cast<size_t>(d)];
  return out;
}

TensorDict& TensorDict::insert(int64_t index, const TensorDict& td) {
  if (!impl_->lazy) {
    throw TypeError(
        "insert: a dense TensorDict has no elements to insert into (only a lazy "
        "stack does)");
  }
  if (impl_->locked) throw LockedError("insert: the lazy stack is locked");
  auto& st = *impl_->lazy;
  if (td.batch_size() != st.tds[0].batch_size()) {
    throw ShapeError("insert: the TensorDict has batch_size " + shape_str(td.batch_size()) +
                     ", the elements of the lazy stack have " + shape_str(st.tds[0].batch_size()));
  }
  // Python's list.insert: a position past either end clamps to it.
  const auto n = static_cast<int64_t>(st.tds.size());
  const int64_t at = std::clamp(index < 0 ? index + n : index, int64_t{0}, n);
  st.tds.insert(st.tds.begin() + at, td);
  impl_->batch_size[static_cast<size_t>(st.stack_dim)] = n + 1;
  return *this;
}

TensorDict& TensorDict::append(const TensorDict& td) {
  if (!impl_->lazy) {
    throw TypeError(
        "append: a dense TensorDict has no elements to append to (only a lazy stack "
        "does)");
  }
  return insert(static_cast<int64_t>(impl_->lazy->tds.size()), td);
}

}  // namespace tensordict
