// TensorDict views of its keys (select, exclude, keys/values/items), the lock, and copies of the
// structure (clone, empty).
#include <ATen/ATen.h>

#include <algorithm>

#include "core/tensordict_impl.h"
#include "lazy/internal.h"
#include "ops/util.h"

namespace tensordict {

using detail::TensorDictImpl;

TensorDict TensorDict::select(const std::vector<NestedKey>& keys, bool strict) const {
  if (impl_->lazy) {
    return detail::lazy::per_element(*this,
                                     [&](const TensorDict& e) { return e.select(keys, strict); });
  }
  TensorDict out = detail::empty_like_meta(*this);
  for (const auto& key : keys) {
    if (!contains(key)) {
      if (strict) throw KeyError("select: key " + key.repr() + " not found in TensorDict");
      continue;
    }
    // Intermediate levels keep their own batch size and device.
    for (size_t depth = 1; depth < key.size(); ++depth) {
      NestedKey prefix(
          std::vector<std::string>(key.begin(), key.begin() + static_cast<std::ptrdiff_t>(depth)));
      if (!out.contains(prefix)) out.set(prefix, detail::empty_like_meta(get_tensordict(prefix)));
    }
    out.set(key, get_value(key));
  }
  return out;
}

TensorDict TensorDict::exclude(const std::vector<NestedKey>& keys) const {
  TensorDict out = clone(false);
  for (const auto& key : keys) {
    if (out.contains(key)) out.del_(key);
  }
  return out;
}

namespace {

// Python's order: a nested TensorDict's own entries come before the TensorDict itself.
void collect(const TensorDict& td, const std::optional<NestedKey>& prefix, bool include_nested,
             bool leaves_only, std::vector<std::pair<NestedKey, Value>>& out) {
  auto visit = [&](NestedKey key, Value value) {
    const bool nested = value.is_tensordict();
    if (nested && include_nested)
      collect(value.tensordict(), key, include_nested, leaves_only, out);
    if (!(nested && leaves_only)) out.emplace_back(std::move(key), std::move(value));
  };
  if (td.is_lazy_stack()) {  // its shared keys, each entry stacked
    for (auto& [key, value] : detail::lazy::items(td, prefix)) visit(key, value);
    return;
  }
  const auto& impl = detail::impl_of(td);
  for (size_t i = 0; i < impl.keys.size(); ++i)
    visit(prefix ? prefix->child(impl.keys[i]) : NestedKey(impl.keys[i]), impl.values[i]);
}

// Python's sort=True: by the keys' dotted names.
template <class T, class KeyOf>
void sort_by_name(std::vector<T>& entries, KeyOf key_of) {
  std::stable_sort(entries.begin(), entries.end(), [&](const T& a, const T& b) {
    return key_of(a).join(".") < key_of(b).join(".");
  });
}

}  // namespace

std::vector<std::pair<NestedKey, Value>> TensorDict::items(bool include_nested, bool leaves_only,
                                                           bool sort) const {
  std::vector<std::pair<NestedKey, Value>> out;
  out.reserve(impl_->keys.size());
  collect(*this, std::nullopt, include_nested, leaves_only, out);
  if (sort) sort_by_name(out, [](const auto& item) -> const NestedKey& { return item.first; });
  return out;
}

std::vector<NestedKey> TensorDict::keys(bool include_nested, bool leaves_only, bool sort) const {
  std::vector<NestedKey> out;
  if (impl_->lazy) {
    out = detail::lazy::keys(*this, include_nested, leaves_only);
  } else if (!include_nested && !leaves_only) {
    out.assign(impl_->keys.begin(), impl_->keys.end());
  } else {
    for (auto& item : items(include_nested, leaves_only)) out.push_back(std::move(item.first));
  }
  if (sort) sort_by_name(out, [](const NestedKey& key) -> const NestedKey& { return key; });
  return out;
}

std::vector<Value> TensorDict::values(bool include_nested, bool leaves_only, bool sort) const {
  std::vector<Value> out;
  for (auto& item : items(include_nested, leaves_only, sort)) out.push_back(std::move(item.second));
  return out;
}

int64_t TensorDict::depth() const {
  size_t deepest = 1;
  for (const NestedKey& key : keys(/*include_nested=*/true, /*leaves_only=*/true))
    deepest = std::max(deepest, key.size());
  return static_cast<int64_t>(deepest) - 1;
}

size_t TensorDict::size() const {
  return impl_->lazy ? detail::lazy::keys(*this, false, false).size() : impl_->keys.size();
}

// ---- lock ------------------------------------------------------------------------------------

TensorDict& TensorDict::lock_() {
  if (!impl_->locked) detail::lock_tree(*this);
  return *this;
}

TensorDict& TensorDict::unlock_() {
  detail::unlock_tree(*this);
  return *this;
}

bool TensorDict::is_locked() const {
  if (impl_->locked) return true;
  // As Python: a lazy stack not locked itself is locked when every element is.
  if (!impl_->lazy || impl_->lazy->tds.empty()) return false;
  const auto& tds = impl_->lazy->tds;
  return std::all_of(tds.begin(), tds.end(), [](const TensorDict& td) { return td.is_locked(); });
}

// ---- copies and structure --------------------------------------------------------------------

TensorDict TensorDict::clone(bool recurse) const {
  auto identity = [](const BatchSize& b) { return b; };
  if (recurse) {
    // Consolidated: one buffer copy, leaves rebuilt as views of it (ops/consolidate.cpp).
    const at::Tensor flat = impl_->lazy ? at::Tensor() : detail::consolidated_buffer(*this);
    if (flat.defined()) return detail::rebuild_over(*this, detail::clone_flat(flat), std::nullopt);
    return detail::map_entries(*this, identity, [](const at::Tensor& t) { return t.clone(); }, {});
  }
  return detail::map_entries(*this, identity, [](const at::Tensor& t) { return t; }, {});
}

TensorDict TensorDict::empty(bool recurse) const {
  if (impl_->lazy) {
    return detail::lazy::per_element(*this, [&](const TensorDict& e) { return e.empty(recurse); });
  }
  TensorDict out = detail::empty_like_meta(*this);
  if (!recurse) return out;
  for (size_t i = 0; i < impl_->keys.size(); ++i) {
    const Value& value = impl_->values[i];
    if (value.is_tensordict())
      detail::impl_of(out).append(impl_->keys[i], value.tensordict().empty(true));
  }
  return out;
}

}  // namespace tensordict
