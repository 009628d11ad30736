#pragma once
// The shared state of TensorDictStore handles (private to the store), on Python tensordict 0.14's
// layout (tensordict/store/_store.py), every key `{prefix}:{<td_id>}:<suffix>`:
//   d:<a.b.c>       string: a leaf's raw bytes (C-contiguous, little-endian), or its JSON text
//   m:<a.b.c>       hash: shape (JSON list) and dtype ("torch.float32"), or is_non_tensor "1"
//                   and encoding ("json", "json_array"; "pickle" is Python-only)
//   __keys__        set: the dotted path of every leaf
//   __batch_size__  string: JSON list; __device__: "" or "cpu", "cuda:0"; __tensorclass__
// Nested TensorDicts leave no key of their own: they are the paths' prefixes.

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "layout.h"
#include "tensordict/store.h"

namespace tensordict::store {

struct TensorDictStore::Impl {
  using Keys = layout::Keys;
  using Leaf = layout::Leaf;
  using Meta = layout::Meta;
  using LazyShape = layout::LazyShape;

  std::shared_ptr<Connection> conn;
  std::string prefix;
  std::string td_id;
  BatchSize batch;
  std::optional<at::Device> device;
  std::optional<std::string> tensorclass;
  /// Set for Python's LazyStackedTensorDictStore (lazy.cpp): read whole by to_local.
  std::optional<LazyShape> lazy;

  /// Python's cache_metadata: the registry and each tensor leaf's metadata as this handle (and
  /// its copies) last read or wrote them, so that a read of known leaves is one MGET and a call
  /// costs no SMEMBERS round trip. A leaf whose bytes no longer fit its cached shape is read again
  /// with its hash; another client's same-sized rewrite (a reshape, a dtype of the same width) and
  /// its new keys are seen after refresh() (docs/store.md, "Semantics").
  bool caching = true;
  mutable std::mutex cache_mutex;
  mutable std::shared_ptr<const Keys> cached_keys;  // null: read the registry on next use
  mutable std::unordered_map<std::string, std::shared_ptr<const Meta>> cached_meta;  // tensors

  void forget() const {
    std::lock_guard<std::mutex> lock(cache_mutex);
    cached_keys.reset();
    cached_meta.clear();
  }
  // Records what a write or a delete did to the registry and to the leaves' metadata.
  void remember(const std::vector<std::string>& added, const std::vector<std::string>& removed = {},
                const std::vector<std::shared_ptr<const Meta>>& metas = {}) const;
  // The cached metadata of each tensor leaf of `paths` (null: not cached).
  std::vector<std::shared_ptr<const Meta>> known_metas(const std::vector<std::string>& paths) const;

  std::string key(std::string_view suffix) const {
    return prefix + ":{" + td_id + "}:" + std::string(suffix);
  }
  std::string data_key(const std::string& path) const { return key("d:" + path); }
  // Operations on a lazy stack store other than to_local, keys and clear_redis.
  void refuse_lazy(const char* op) const {
    if (lazy)
      throw TypeError(std::string(op) + ": store " + key("") +
                      " holds a lazy stack, which C++ reads whole with to_local() (its other "
                      "operations are not implemented yet)");
  }
  std::string meta_key(const std::string& path) const { return key("m:" + path); }

  // The registry of leaf paths (`needed_for`: the entry or operation asking, for messages).
  std::shared_ptr<const Keys> all_keys(const std::string& needed_for) const;

  // A leaf's metadata and the length of its data, read together.
  std::pair<Meta, int64_t> meta_and_size(const std::string& path) const;

  // The metadata of the tensor leaf `path` whose rows are read or written, checked against its
  // length (the key `name` as messages give it).
  Meta tensor_meta(const std::string& path, const NestedKey& name) const;

  // Rows [start, stop) of a leaf, one GETRANGE of their bytes.
  at::Tensor read_rows(const std::string& path, const Meta& meta, int64_t start,
                       int64_t stop) const;

  // Rows from `start`, one SETRANGE of their bytes; cast as tensor assignment casts.
  void write_rows(const std::string& path, const Meta& meta, int64_t start,
                  const at::Tensor& value) const;

  // Refuses writes that would make a path both a leaf and a nested level.
  void check_structure(const std::vector<std::string>& paths, const Keys& keys) const;

  // Stores `leaves` in one round trip: transactions of small leaves together, large ones alone.
  void write(const std::vector<Leaf>& leaves) const;

  // A tensor leaf or a JSON one (Python's non-tensor data), checked.
  Leaf tensor_leaf(const std::string& path, const at::Tensor& value) const;
  Leaf json_leaf(const std::string& path, const Json& value, const char* encoding) const;

  // The leaves of `td` under `path` (empty: the root), in its key order.
  void collect(const TensorDict& td, const std::string& path, std::vector<Leaf>& out) const;

  // A leaf's value from its bytes (a tensor keeps them as its memory) and metadata.
  Value decode(const std::string& path, std::string&& bytes, const Meta& meta) const;

  // The leaves `paths`, read in one transaction (their bytes with their hashes).
  std::vector<std::pair<std::string, Value>> read(const std::vector<std::string>& paths) const;

  // The leaves under `level` (empty: all) as a TensorDict of the store's batch size.
  TensorDict subtree(const std::string& level, const Keys& keys) const;

  /// A leaf to allocate: its path, whole shape and dtype.
  struct Allocation {
    std::string path;
    std::vector<int64_t> shape;
    at::ScalarType dtype;
  };
  // Zero-filled leaves made on the server, each sized by one SETRANGE of its last byte (no bytes
  // cross the network), in one round trip: Python's from_schema and first indexed write. Every
  // leaf is checked before anything is sent.
  void allocate(const std::vector<Allocation>& leaves, const Keys& keys) const;

  /// A handle on `where` (a new UUID4 id unless it names one; `existing`: it must).
  static std::shared_ptr<Impl> connect(const StoreLocation& where, bool existing);
  /// A handle for a new store of `batch` and `device` (its metadata not written yet).
  static std::shared_ptr<Impl> fresh(const StoreLocation& where, BatchSize batch,
                                     std::optional<at::Device> device);

  // Writes __batch_size__, __device__ and (for a class) __tensorclass__.
  void persist_metadata() const;
};

}  // namespace tensordict::store
