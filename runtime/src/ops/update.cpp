// update / update_ (merging another TensorDict's entries), merge_tensordicts and flatten_keys /
// unflatten_keys.
#include <ATen/ATen.h>

#include <algorithm>

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

// ---- in-place forms of the key restructurings ---------------------------------------------------

namespace tensordict {
namespace {

// Makes `td`'s entries those of `result` (the out-of-place op's result, whose entries share
// `td`'s tensors), in place: Python's inplace=True. A lazy stack's elements each take theirs.
void take_entries(const TensorDict& td, const TensorDict& result, const char* op) {
  if (td.is_locked()) {
    throw LockedError(std::string(op) + ": cannot restructure a locked TensorDict in place");
  }
  if (td.is_lazy_stack()) {
    for (size_t k = 0; k < td.tensordicts().size(); ++k)
      take_entries(td.tensordicts()[k], result.tensordicts()[k], op);
    return;
  }
  auto& impl = detail::impl_of(td);
  const auto& from = detail::impl_of(result);
  impl.clear();
  for (size_t i = 0; i < from.keys.size(); ++i) impl.append(from.keys[i], from.values[i]);
}

}  // namespace

TensorDict& TensorDict::flatten_keys_(const std::string& separator) {
  take_entries(*this, flatten_keys(separator), "flatten_keys_");
  return *this;
}
TensorDict& TensorDict::unflatten_keys_(const std::string& separator) {
  take_entries(*this, unflatten_keys(separator), "unflatten_keys_");
  return *this;
}
TensorDict& TensorDict::select_(const std::vector<NestedKey>& keys, bool strict) {
  take_entries(*this, select(keys, strict), "select_");
  return *this;
}
TensorDict& TensorDict::exclude_(const std::vector<NestedKey>& keys) {
  take_entries(*this, exclude(keys), "exclude_");
  return *this;
}
TensorDict& TensorDict::clear() {
  take_entries(*this, empty(false), "clear");
  return *this;
}

TensorDict& TensorDict::create_nested(const NestedKey& key) {
  return set(key, detail::empty_like_meta(*this));
}

namespace {

// cat_tensors / stack_tensors: `join` of the tensors at `keys` into `out_key`.
TensorDict& join_tensors(TensorDict& td, const std::vector<NestedKey>& keys,
                         const NestedKey& out_key, bool keep_entries, const char* op,
                         const std::function<at::Tensor(const std::vector<at::Tensor>&)>& join) {
  std::vector<at::Tensor> parts;
  for (const auto& key : keys) parts.push_back(td.get(key));
  at::Tensor joined;
  try {
    joined = join(parts);
  } catch (const c10::Error& e) {
    throw ShapeError(std::string(op) +
                     ": the tensors at the keys do not join: " + detail::first_line(e.what()));
  }
  if (!keep_entries) {
    for (const auto& key : keys) td.del_(key);
  }
  return td.set(out_key, joined);
}

}  // namespace

TensorDict& TensorDict::cat_tensors(const std::vector<NestedKey>& keys, const NestedKey& out_key,
                                    int64_t dim, bool keep_entries) {
  return join_tensors(*this, keys, out_key, keep_entries, "cat_tensors",
                      [dim](const std::vector<at::Tensor>& ts) { return at::cat(ts, dim); });
}
TensorDict& TensorDict::stack_tensors(const std::vector<NestedKey>& keys, const NestedKey& out_key,
                                      int64_t dim, bool keep_entries) {
  return join_tensors(*this, keys, out_key, keep_entries, "stack_tensors",
                      [dim](const std::vector<at::Tensor>& ts) { return at::stack(ts, dim); });
}

TensorDict& TensorDict::update(const TensorDict& other,
                               const std::vector<NestedKey>& keys_to_update) {
  return update(other.select(keys_to_update, /*strict=*/false));
}

TensorDict& TensorDict::update_(const TensorDict& other,
                                const std::vector<NestedKey>& keys_to_update) {
  return update_(other.select(keys_to_update, /*strict=*/false));
}

namespace {

TensorDict merge(const std::vector<TensorDict>& tds,
                 const std::function<const MergeFn*(const NestedKey&)>& merge_of) {
  if (tds.size() < 2) {
    throw ValueError("merge_tensordicts: expected at least two TensorDicts, got " +
                     std::to_string(tds.size()));
  }
  TensorDict out = tds[0].empty(/*recurse=*/true);
  for (const auto& td : tds) {
    for (const auto& key : td.keys(/*include_nested=*/true, /*leaves_only=*/true)) {
      if (out.contains(key)) continue;  // the first TensorDict holding a key gives it
      const MergeFn* fn = merge_of(key);
      const bool everywhere = std::all_of(tds.begin(), tds.end(), [&](const TensorDict& other) {
        return other.contains(key) && other.get_value(key).is_tensor();
      });
      if (fn != nullptr && *fn && everywhere) {
        std::vector<at::Tensor> values;
        for (const auto& other : tds) values.push_back(other.get(key));
        out.set(key, (*fn)(values));
      } else {
        out.set(key, td.get_value(key));
      }
    }
  }
  return out;
}

}  // namespace

TensorDict merge_tensordicts(const std::vector<TensorDict>& tds, const MergeFn& merge_fn) {
  return merge(tds, [&merge_fn](const NestedKey&) { return &merge_fn; });
}

TensorDict merge_tensordicts(const std::vector<TensorDict>& tds,
                             const std::vector<std::pair<NestedKey, MergeFn>>& merge_by_key) {
  return merge(tds, [&merge_by_key](const NestedKey& key) -> const MergeFn* {
    for (const auto& [k, fn] : merge_by_key)
      if (k == key) return &fn;
    return nullptr;
  });
}

TensorDict& detail::write_into(TensorDict& out, const TensorDict& result) {
  for (const auto& key : result.keys(/*include_nested=*/true, /*leaves_only=*/true)) {
    const Value value = result.get_value(key);
    const at::Tensor* t = value.tensor_if();
    if (t != nullptr && out.contains(key)) {
      const Value mine = out.get_value(key);
      const at::Tensor* dst = mine.tensor_if();
      if (dst != nullptr && dst->sizes().equals(t->sizes()) &&
          dst->scalar_type() == t->scalar_type()) {
        out.set_(key, *t);
        continue;
      }
    }
    out.set(key, value);
  }
  return out;
}

}  // namespace tensordict
