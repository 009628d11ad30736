// Helpers over the batch dims and the key sets: gather, split_keys, separates,
// cat/stack_from_tensordict, auto_batch_size_, pin_memory.
#include <ATen/ATen.h>

#include <algorithm>

#include "core/lazy_state.h"
#include "ops/util.h"

namespace tensordict {

TensorDict TensorDict::gather(int64_t dim, const at::Tensor& index) const {
  const int64_t d = detail::wrap_dim(dim, ndim(), "gather", batch_size());
  if (index.dim() != ndim()) {
    throw ShapeError("gather: the index has " + std::to_string(index.dim()) +
                     " dims, expected one per batch dim (batch_size " + shape_str(batch_size()) +
                     ")");
  }
  // Each leaf: the index extended over its feature dims, so that every feature follows its row.
  return detail::map_batch(
      *this, batch_size().size(), index.sizes().vec(),
      [&](const at::Tensor& t) {
        std::vector<int64_t> view = index.sizes().vec(), full = view;
        for (int64_t k = index.dim(); k < t.dim(); ++k) {
          view.push_back(1);
          full.push_back(t.size(k));
        }
        return t.gather(d, index.view(view).expand(full));
      },
      "gather", {}, detail::same_names());
}

namespace {

// Python's filter_empty_: nested TensorDicts left without any leaf are removed, deepest first.
void drop_empty_nested(TensorDict& td) {
  for (const auto& key : td.keys()) {
    const Value value = td.get_value(key);
    if (!value.is_tensordict()) continue;
    TensorDict child = value.tensordict();
    drop_empty_nested(child);
    if (child.size() == 0) td.del_(key);
  }
}

}  // namespace

std::vector<TensorDict> TensorDict::split_keys(const std::vector<std::vector<NestedKey>>& key_sets,
                                               bool inplace, bool strict) {
  TensorDict rest = clone(false);  // structure copy sharing the tensors
  std::vector<TensorDict> out;
  out.reserve(key_sets.size() + 1);
  std::vector<NestedKey> taken;
  for (const auto& keys : key_sets) {
    TensorDict part = empty();
    for (const auto& key : keys) {
      if (!rest.contains(key)) {
        if (strict) throw KeyError("split_keys: key " + key.repr() + " not found");
        continue;
      }
      part.set(key, rest.pop(key));
      taken.push_back(key);
    }
    out.push_back(std::move(part));
  }
  // As Python: `inplace` removes the keys once every key set is split (a KeyError leaves this
  // TensorDict as it was), and the rest is this TensorDict itself; either way the rest loses the
  // nested TensorDicts the split emptied.
  if (inplace) {
    for (const auto& key : taken) del_(key);
    rest = *this;
  }
  drop_empty_nested(rest);
  out.push_back(std::move(rest));
  return out;
}

TensorDict TensorDict::separates(const std::vector<NestedKey>& keys, bool strict,
                                 bool filter_empty) {
  for (const auto& key : keys) {  // checked first: a KeyError leaves this TensorDict as it was
    if (strict && !contains(key)) throw KeyError("separates: key " + key.repr() + " not found");
  }
  TensorDict out = empty(/*recurse=*/true);  // keeps the nested levels' batch sizes, as Python's
  for (const auto& key : keys) {
    out.set(key, contains(key) ? pop(key) : Value(NonTensorData{Json(nullptr)}));
  }
  drop_empty_nested(out);
  if (filter_empty) drop_empty_nested(*this);
  return out;
}

namespace {

// The tensor leaves in Python's order: keys(true, true), sorted by key, or `keys` (which must be
// the leaf keys, in any order).
std::vector<at::Tensor> ordered_leaves(const TensorDict& td, const char* op, bool sorted,
                                       const std::vector<NestedKey>* keys) {
  std::vector<NestedKey> leaf_keys;
  for (const auto& key : td.keys(/*include_nested=*/true, /*leaves_only=*/true, sorted))
    if (td.get_value(key).is_tensor()) leaf_keys.push_back(key);
  if (keys) {
    std::vector<NestedKey> mine = leaf_keys, theirs = *keys;
    std::sort(mine.begin(), mine.end());
    std::sort(theirs.begin(), theirs.end());
    if (mine != theirs) {
      throw KeyError(std::string(op) + ": the keys given differ from the tensor leaves' keys");
    }
    leaf_keys = *keys;
  }
  std::vector<at::Tensor> out;
  out.reserve(leaf_keys.size());
  for (const auto& key : leaf_keys) out.push_back(td.get(key));
  return out;
}

}  // namespace

at::Tensor TensorDict::cat_from_tensordict(int64_t dim, bool sorted) const {
  return at::cat(ordered_leaves(*this, "cat_from_tensordict", sorted, nullptr), dim);
}
at::Tensor TensorDict::cat_from_tensordict(int64_t dim, const std::vector<NestedKey>& keys) const {
  return at::cat(ordered_leaves(*this, "cat_from_tensordict", false, &keys), dim);
}
at::Tensor TensorDict::stack_from_tensordict(int64_t dim, bool sorted) const {
  return at::stack(ordered_leaves(*this, "stack_from_tensordict", sorted, nullptr), dim);
}
at::Tensor TensorDict::stack_from_tensordict(int64_t dim,
                                             const std::vector<NestedKey>& keys) const {
  return at::stack(ordered_leaves(*this, "stack_from_tensordict", false, &keys), dim);
}

namespace {

// Leading dims every entry shares (at most `limit` when set); nested levels adjust first.
BatchSize common_leading(TensorDict& td, std::optional<int64_t> limit) {
  std::optional<std::vector<int64_t>> common;
  for (size_t i = 0; i < td.size(); ++i) {
    const Value& value = td.value_at(i);
    if (value.is_non_tensor_data()) continue;  // takes any batch size
    if (value.is_tensordict()) TensorDict(value.tensordict()).auto_batch_size_(limit);
    const std::vector<int64_t> shape = value.shape().value_or(std::vector<int64_t>{});
    if (!common) {
      common = shape;
      continue;
    }
    const auto mismatch = std::mismatch(common->begin(), common->end(), shape.begin(), shape.end());
    common->erase(mismatch.first, common->end());
  }
  BatchSize out = common.value_or(td.batch_size());
  if (limit && static_cast<int64_t>(out.size()) > *limit) out.resize(static_cast<size_t>(*limit));
  return out;
}

}  // namespace

TensorDict& TensorDict::auto_batch_size_(std::optional<int64_t> batch_dims) {
  detail::dense_only(*this, "auto_batch_size_");
  set_batch_size(common_leading(*this, batch_dims));
  return *this;
}

TensorDict TensorDict::pin_memory() const {
  return detail::map_leaves(
      *this, [](const at::Tensor& t) { return t.pin_memory(); }, "pin_memory");
}

}  // namespace tensordict
