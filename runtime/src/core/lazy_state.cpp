// A lazy stack as core sees it: its state and the walks over its elements (the stacking itself is
// lazy/'s, behind LazyState's virtual members).
#include <algorithm>

#include "core/lazy_state.h"

namespace tensordict {

bool TensorDict::is_lazy_stack() const { return impl_->lazy != nullptr; }

const std::vector<TensorDict>& TensorDict::tensordicts() const {
  return detail::lazy::state(*this).tds;
}

int64_t TensorDict::stack_dim() const { return detail::lazy::state(*this).stack_dim; }

namespace detail {

LazyState::~LazyState() = default;

void dense_only(const TensorDictImpl& impl, const char* op) {
  if (impl.lazy) {
    throw TypeError(std::string(op) +
                    ": not supported on a LazyStackedTensorDict (call densify() first, or apply "
                    "it to each of tensordicts())");
  }
}

void dense_only_deep(const TensorDict& td, const char* op) {
  const TensorDictImpl& impl = impl_of(td);
  dense_only(impl, op);
  for (const Value& value : impl.values)
    if (value.is_tensordict()) dense_only_deep(value.tensordict(), op);
}

namespace lazy {

const LazyState& state(const TensorDict& td) {
  if (!detail::impl_of(td).lazy)
    throw TypeError("this TensorDict is not a lazy stack (see is_lazy_stack())");
  return *detail::impl_of(td).lazy;
}

TensorDict per_element(const TensorDict& td,
                       const std::function<TensorDict(const TensorDict&)>& fn) {
  const LazyState& st = state(td);
  std::vector<TensorDict> out;
  out.reserve(st.tds.size());
  for (const auto& element : st.tds) out.push_back(fn(element));
  return st.restack(td, out, st.stack_dim);
}

void for_each(const TensorDict& td, const std::function<void(TensorDict&)>& fn) {
  for (TensorDict element : state(td).tds) fn(element);
}

std::optional<std::pair<TensorDict, NestedKey>> on_path(const TensorDict& root,
                                                        const NestedKey& key) {
  if (root.is_lazy_stack()) return std::make_pair(root, key);
  const TensorDictImpl* node = &detail::impl_of(root);
  for (size_t i = 0; i + 1 < key.size(); ++i) {
    const int64_t slot = node->find(key[i]);
    if (slot < 0) return std::nullopt;
    const Value& value = node->values[static_cast<size_t>(slot)];
    if (!value.is_tensordict()) return std::nullopt;
    if (value.tensordict().is_lazy_stack()) {
      return std::make_pair(value.tensordict(),
                            NestedKey(std::vector<std::string>(key.begin() + i + 1, key.end())));
    }
    node = &detail::impl_of(value.tensordict());
  }
  return std::nullopt;
}

std::vector<NestedKey> keys(const TensorDict& td, bool include_nested, bool leaves_only) {
  const auto& tds = state(td).tds;
  std::vector<NestedKey> out;
  for (auto& key : tds[0].keys(include_nested, leaves_only)) {
    if (std::all_of(tds.begin() + 1, tds.end(),
                    [&](const TensorDict& e) { return e.contains(key); }))
      out.push_back(std::move(key));
  }
  return out;
}

std::vector<std::pair<NestedKey, Value>> items(const TensorDict& td,
                                               const std::optional<NestedKey>& prefix) {
  const LazyState& st = state(td);
  std::vector<std::pair<NestedKey, Value>> out;
  for (const auto& key : keys(td, false, false))
    out.emplace_back(prefix ? prefix->child(key.front()) : key, st.get_value(td, key));
  return out;
}

void set_names(const TensorDict& td, std::optional<DimNames> names) {
  auto& st = *detail::impl_of(td).lazy;
  st.dim_name = names ? (*names)[static_cast<size_t>(st.stack_dim)] : std::nullopt;
  if (names) names->erase(names->begin() + st.stack_dim);
  for (TensorDict& element : st.tds) element.set_names(names);
}

std::vector<int64_t> item_shape(const TensorDict& td, const NestedKey& key) {
  const LazyState& st = state(td);
  std::optional<std::vector<int64_t>> shape;
  for (const auto& element : st.tds) {
    const Value v = element.get_value(key);
    std::vector<int64_t> s = v.is_tensordict() && v.tensordict().is_lazy_stack()
                                 ? v.tensordict().batch_size()
                                 : v.shape().value_or(element.batch_size());
    if (!shape) {
      shape = s;
    } else if (shape->size() != s.size()) {
      throw ShapeError("key " + key.repr() + " has " + std::to_string(shape->size()) +
                       " dims in element 0 of the lazy stack but " + std::to_string(s.size()));
    } else {
      for (size_t d = 0; d < s.size(); ++d)
        if ((*shape)[d] != s[d]) (*shape)[d] = -1;
    }
  }
  shape->insert(shape->begin() + st.stack_dim, static_cast<int64_t>(st.tds.size()));
  return *shape;
}

}  // namespace lazy
}  // namespace detail
}  // namespace tensordict
