// A TensorDict's keys, values and items (Python's order, nested and sorted forms), its size and
// depth. A lazy stack answers with its elements' shared keys (core/lazy_state.cpp).
#include <algorithm>

#include "core/lazy_state.h"

namespace tensordict {

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

}  // namespace tensordict
