#pragma once
// The state behind a TensorDict handle, shared by the runtime's translation units (not installed).

#include <unordered_map>

#include "tensordict/tensordict.h"

namespace tensordict::detail {

struct TensorDictImpl {
  BatchSize batch_size;
  std::optional<at::Device> device;
  std::optional<DimNames> names;
  bool locked = false;
  bool is_memmap = false;
  std::optional<std::string> saved_path;
  /// Flat byte buffer that every tensor leaf views after consolidate() (ops_consolidate.cpp);
  /// undefined otherwise. Checked for staleness on use: a replaced leaf no longer views it.
  at::Tensor consolidated;

  // Entries in insertion order; `index` maps a key to its slot. Ops that build a TensorDict with
  // the same keys share the index (copy-on-write) instead of rebuilding it, one allocation per key.
  using KeyIndex = std::unordered_map<std::string, size_t>;
  std::vector<std::string> keys;
  std::vector<Value> values;
  std::shared_ptr<KeyIndex> index;  // null until the first key (saves an allocation per op)

  /// Slot of `key` or -1.
  int64_t find(const std::string& key) const {
    if (!index) return -1;
    auto it = index->find(key);
    return it == index->end() ? -1 : static_cast<int64_t>(it->second);
  }
  /// Appends an entry without any check (callers validated it).
  void append(std::string key, Value value) {
    if (!index) {
      index = std::make_shared<KeyIndex>();
    } else if (index.use_count() > 1) {
      index = std::make_shared<KeyIndex>(*index);  // copy on write
    }
    index->emplace(key, keys.size());
    keys.push_back(std::move(key));
    values.push_back(std::move(value));
  }
  /// Takes `other`'s keys and (shared) index; the caller then pushes one value per key, in order.
  void share_keys(const TensorDictImpl& other) {
    keys = other.keys;
    index = other.index;
    values.reserve(keys.size());
  }
  void erase(size_t slot);
  void reindex();
};

/// A new, empty TensorDict with the given batch size / device / names (no checks).
TensorDict make_tensordict(BatchSize batch_size, std::optional<at::Device> device = std::nullopt,
                           std::optional<DimNames> names = std::nullopt);
/// A new TensorDict with the same metadata as `like` (batch size, device, names) and no entries.
TensorDict empty_like_meta(const TensorDict& like);

/// Throws ShapeError unless `shape` starts with `batch` (the message names `key`).
void check_leading_dims(const std::string& key, const std::vector<int64_t>& shape,
                        const BatchSize& batch);

/// Applies a function to every entry recursively, building a new TensorDict with the same
/// structure. `tensor_fn` maps tensors (undefined result: drop the leaf); `stack_fn` maps
/// NonTensorStacks; NonTensorData is kept as is. `batch_fn` gives the new batch size of each level
/// from the old one.
TensorDict map_entries(const TensorDict& td,
                       const std::function<BatchSize(const BatchSize&)>& batch_fn,
                       const std::function<at::Tensor(const at::Tensor&)>& tensor_fn,
                       const std::function<NonTensorStack(const NonTensorStack&)>& stack_fn);

}  // namespace tensordict::detail
