// update / update_ (merging another TensorDict's entries) and flatten_keys / unflatten_keys.
#include <ATen/ATen.h>

#include "lazy/internal.h"
#include "ops/util.h"

namespace tensordict {
namespace {

// Slot of `src`'s key i in `dst`: TensorDicts built alike keep the same order, so try the same
// slot (one string compare) before hashing.
int64_t matching_slot(const detail::TensorDictImpl& dst, const detail::TensorDictImpl& src,
                      size_t i) {
  if (i < dst.keys.size() && dst.keys[i] == src.keys[i]) return static_cast<int64_t>(i);
  return dst.find(src.keys[i]);
}

bool fits(const at::Tensor& t, const detail::TensorDictImpl& dst) {
  const auto& batch = dst.batch_size;
  const auto sizes = t.sizes();
  return (!dst.device || t.device() == *dst.device) && sizes.size() >= batch.size() &&
         std::equal(batch.begin(), batch.end(), sizes.begin());
}

void update_level(TensorDict& dst, const TensorDict& src) {
  auto& d = detail::impl_of(dst);
  const auto& s = detail::impl_of(src);
  for (size_t i = 0; i < s.keys.size(); ++i) {
    const Value& value = s.values[i];
    const int64_t slot = matching_slot(d, s, i);
    Value* existing = slot >= 0 ? &d.values[static_cast<size_t>(slot)] : nullptr;
    if (existing && existing->is_tensordict() && value.is_tensordict()) {
      TensorDict child = existing->tensordict();  // merge nested keys
      update_level(child, value.tensordict());
    } else if (existing && !d.locked && value.is_tensor() && fits(value.tensor(), d)) {
      *existing = value;  // fast path: replacing a key with a conforming tensor
    } else {
      dst.set(s.keys[i], value);  // new keys, device moves, locks and errors
    }
  }
}

// In-place copy of `src` into `dst`; with copy_tensors=false only non-tensor entries are written
// (the tensors were copied as one consolidated buffer).
void update_level_(TensorDict& dst, const TensorDict& src, const std::string& prefix,
                   bool copy_tensors) {
  auto& d = detail::impl_of(dst);
  const auto& s = detail::impl_of(src);
  for (size_t i = 0; i < s.keys.size(); ++i) {
    // The full key is only spelled out for messages and nested levels (hot loop otherwise).
    auto full_key = [&] { return prefix.empty() ? s.keys[i] : prefix + "." + s.keys[i]; };
    const int64_t slot = matching_slot(d, s, i);
    if (slot < 0) {
      const std::string key = full_key();
      throw KeyError("update_: key '" + key +
                     "' is not in the destination TensorDict (update_ "
                     "writes in place; use update to add keys)");
    }
    Value& mine = d.values[static_cast<size_t>(slot)];
    const Value& theirs = s.values[i];
    if (mine.is_tensor() && theirs.is_tensor()) {
      if (!copy_tensors) continue;
      if (mine.tensor().sizes() != theirs.tensor().sizes()) {
        const std::string key = full_key();
        throw ShapeError("update_: key '" + key + "' has shape " +
                         shape_str(mine.tensor().sizes()) + " but the source has " +
                         shape_str(theirs.tensor().sizes()));
      }
      mine.tensor().copy_(theirs.tensor());
    } else if (mine.is_tensordict() && theirs.is_tensordict()) {
      TensorDict child = mine.tensordict();
      update_level_(child, theirs.tensordict(), full_key(), copy_tensors);
    } else if (mine.is_non_tensor() && theirs.is_non_tensor()) {
      mine = theirs;
    } else {
      throw TypeError("update_: key '" + full_key() + "' holds a " + mine.kind_name() +
                      ", cannot copy a " + theirs.kind_name() + " into it");
    }
  }
}

}  // namespace

TensorDict& TensorDict::update(const TensorDict& other) {
  if (impl_->lazy) return detail::lazy::update(*this, other, false), *this;
  detail::dense_only(other, "update");
  update_level(*this, other);
  return *this;
}

TensorDict& TensorDict::update_(const TensorDict& other) {
  if (impl_->lazy) return detail::lazy::update(*this, other, true), *this;
  detail::dense_only(other, "update_");
  const at::Tensor dst = detail::consolidated_buffer(*this);
  const at::Tensor src = dst.defined() ? detail::consolidated_buffer(other) : at::Tensor();
  const bool one_copy =
      src.defined() && src.numel() == dst.numel() && detail::same_layout(*this, other);
  if (one_copy) detail::copy_flat(dst, src);
  update_level_(*this, other, "", !one_copy);
  return *this;
}

namespace {

void flatten_into(const TensorDict& td, const std::string& prefix, const std::string& sep,
                  detail::TensorDictImpl& out) {
  const auto& impl = detail::impl_of(td);
  for (size_t i = 0; i < impl.keys.size(); ++i) {
    const std::string key = prefix.empty() ? impl.keys[i] : prefix + sep + impl.keys[i];
    const Value& value = impl.values[i];
    if (value.is_tensordict() && !value.tensordict().is_empty()) {
      flatten_into(value.tensordict(), key, sep, out);
      continue;
    }
    if (out.find(key) >= 0) {
      throw KeyError("flatten_keys: flattened key '" + key + "' collides with an existing key");
    }
    out.append(key, value);
  }
}

std::vector<std::string> split_key(const std::string& key, const std::string& sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at = key.find(sep); at != std::string::npos; at = key.find(sep, start)) {
    parts.push_back(key.substr(start, at - start));
    start = at + sep.size();
  }
  parts.push_back(key.substr(start));
  return parts;
}

}  // namespace

TensorDict TensorDict::flatten_keys(const std::string& separator) const {
  if (impl_->lazy) {  // each element's keys (Python refuses elements with keys of their own)
    return detail::lazy::per_element(
        *this, [&](const TensorDict& element) { return element.flatten_keys(separator); });
  }
  TensorDict out = detail::empty_like_meta(*this);
  flatten_into(*this, "", separator, detail::impl_of(out));
  return out;
}

TensorDict TensorDict::unflatten_keys(const std::string& separator) const {
  if (separator.empty()) throw KeyError("unflatten_keys: the separator must not be empty");
  if (impl_->lazy) {
    return detail::lazy::per_element(
        *this, [&](const TensorDict& element) { return element.unflatten_keys(separator); });
  }
  // As Python: names without the separator keep their places, the others move to their nested
  // keys after them, in order; nested TensorDicts' own names are left as they are. The structure
  // is copied first so that filling an existing nested TensorDict never writes into *this.
  const TensorDict source = clone(false);
  TensorDict out = detail::empty_like_meta(*this);
  std::vector<size_t> moved;
  for (size_t i = 0; i < impl_->keys.size(); ++i) {
    if (impl_->keys[i].find(separator) == std::string::npos)
      out.set(impl_->keys[i], source.impl_->values[i]);
    else
      moved.push_back(i);
  }
  for (size_t i : moved) {
    const NestedKey key(split_key(impl_->keys[i], separator));
    if (out.contains(key))
      throw KeyError("unflatten_keys: '" + impl_->keys[i] + "' would overwrite the existing key " +
                     key.repr());
    try {
      out.set(key, source.impl_->values[i]);
    } catch (const TypeError&) {  // a prefix of the key holds a leaf: Python's KeyError
      throw KeyError("unflatten_keys: '" + impl_->keys[i] +
                     "' would overwrite an entry on the path " + key.repr());
    }
  }
  return out;
}

}  // namespace tensordict
