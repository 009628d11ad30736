// TensorDict views of its keys (select, exclude) and copies of the structure (clone, empty,
// fromkeys).
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
  TensorDict out = detail::empty_result_of(*this);
  for (const auto& key : keys) {
    if (!contains(key)) {
      if (strict) throw KeyError("select: key " + key.repr() + " not found in TensorDict");
      continue;
    }
    // Intermediate levels keep their own batch size and device.
    for (size_t depth = 1; depth < key.size(); ++depth) {
      NestedKey prefix(
          std::vector<std::string>(key.begin(), key.begin() + static_cast<std::ptrdiff_t>(depth)));
      if (!out.contains(prefix)) out.set(prefix, detail::empty_result_of(get_tensordict(prefix)));
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

// ---- copies and structure --------------------------------------------------------------------

TensorDict TensorDict::clone(bool recurse) const {
  if (!recurse) return detail::copy_structure(*this);
  // Consolidated: one buffer copy, leaves rebuilt as views of it (ops/consolidate.cpp).
  const at::Tensor flat = impl_->lazy ? at::Tensor() : detail::consolidated_buffer(*this);
  if (flat.defined()) return detail::rebuild_over(*this, detail::clone_flat(flat), std::nullopt);
  return detail::map_entries(
      *this, [](const BatchSize& b) { return b; }, [](const at::Tensor& t) { return t.clone(); },
      {});
}

TensorDict TensorDict::empty(bool recurse) const {
  if (impl_->lazy) {
    return detail::lazy::per_element(*this, [&](const TensorDict& e) { return e.empty(recurse); });
  }
  TensorDict out = detail::empty_result_of(*this);
  if (!recurse) return out;
  for (size_t i = 0; i < impl_->keys.size(); ++i) {
    const Value& value = impl_->values[i];
    if (value.is_tensordict())
      detail::impl_of(out).append(impl_->keys[i], value.tensordict().empty(true));
  }
  return out;
}

TensorDict TensorDict::fromkeys(const std::vector<NestedKey>& keys, const Value& value,
                                BatchSize batch_size) {
  TensorDict td({}, std::move(batch_size));
  for (const auto& key : keys) {
    if (value.is_tensor()) {
      td.set(key, value.tensor().clone());
    } else if (value.is_tensordict()) {
      td.set(key, value.tensordict().clone());
    } else {
      td.set(key, value);
    }
  }
  return td;
}

}  // namespace tensordict
