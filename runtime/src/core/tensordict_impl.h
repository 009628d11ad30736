#pragma once
// The state behind a TensorDict handle, shared by the runtime's translation units (not installed).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>

#include "tensordict/class_info.h"
#include "tensordict/tensordict.h"

namespace tensordict::detail {

/// Key equality in at most two overlapping word loads per side, without a call into libc's
/// memcmp: keys are short, and a nested get compares one name per level.
inline bool same_key(const std::string& a, const std::string& b) noexcept {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  const auto differ = [&](auto word) {
    decltype(word) x0, y0, x1, y1;
    std::memcpy(&x0, p, sizeof word);
    std::memcpy(&y0, q, sizeof word);
    std::memcpy(&x1, p + n - sizeof word, sizeof word);
    std::memcpy(&y1, q + n - sizeof word, sizeof word);
    return ((x0 ^ y0) | (x1 ^ y1)) != 0;
  };
  if (n > 16) return std::memcmp(p, q, n) == 0;
  if (n >= 8) return !differ(uint64_t{});
  if (n >= 4) return !differ(uint32_t{});
  for (size_t i = 0; i < n; ++i)
    if (p[i] != q[i]) return false;
  return true;
}

/// Key -> slot index of a TensorDict: open addressing over one contiguous table of (hash, slot),
/// power-of-two sized. Lookups touch one cache line in the common case and never divide, which
/// keeps get/set in the tens of nanoseconds. Keys themselves live in TensorDictImpl::keys.
class KeyIndex {
 public:
  /// Slot of `key`, whose detail::key_hash is `h`, or -1.
  int64_t find(const std::string& key, size_t h, const std::vector<std::string>& keys) const {
    if (table_.empty()) return -1;
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Entry& e = table_[i];
      if (e.slot == 0) return -1;
      if (e.hash == h && same_key(keys[e.slot - 1], key)) return static_cast<int64_t>(e.slot - 1);
    }
  }
  /// Room for `n` keys without growing.
  void reserve(size_t n) {
    size_t size = 8;
    while (size < n * 2) size *= 2;
    if (size > table_.size()) rehash(size);
  }
  void insert(const std::string& key, size_t slot) {
    if ((count_ + 1) * 2 > table_.size()) grow();
    place({key_hash(key), slot + 1});
    ++count_;
  }

 private:
  struct Entry {
    size_t hash = 0;
    size_t slot = 0;  // slot + 1; 0 marks a free entry
  };
  void place(const Entry& e) {
    size_t i = e.hash & mask_;
    while (table_[i].slot != 0) i = (i + 1) & mask_;
    table_[i] = e;
  }
  void grow() { rehash(std::max<size_t>(8, table_.size() * 2)); }
  void rehash(size_t size) {
    std::vector<Entry> old = std::move(table_);
    table_.assign(size, Entry{});
    mask_ = table_.size() - 1;
    for (const Entry& e : old)
      if (e.slot != 0) place(e);
  }
  std::vector<Entry> table_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

struct LazyState;

struct TensorDictImpl : Slots {
  BatchSize batch_size;
  std::optional<at::Device> device;
  std::optional<DimNames> names;
  bool locked = false;
  bool is_memmap = false;
  std::optional<std::string> saved_path;
  /// Flat byte buffer that every tensor leaf views after consolidate() (ops/consolidate.cpp);
  /// undefined otherwise. Checked for staleness on use: a replaced leaf no longer views it.
  at::Tensor consolidated;
  /// The TensorDicts whose lock_() locked this one, as it sits below them (Python's
  /// _lock_parents_weakrefs): unlock_() is refused while one of them is alive and locked.
  std::vector<std::weak_ptr<TensorDictImpl>> lock_parents;
  /// Set on a lazy stack (core/lazy_state.h): its elements; `keys`/`values` then stay empty.
  std::shared_ptr<LazyState> lazy;
  /// The tensorclass a loaded directory held (its `_type` and meta.json fields), so that a save
  /// through the plain TensorDict API writes that class back.
  std::shared_ptr<const memmap::ClassInfo> class_info;  // null: a plain TensorDict
  /// The spec of the class `layout` names, recorded with it (read only while `layout` is set):
  /// setters check values against it without calling the class's guarded static accessor.
  std::atomic<const ClassSpec*> layout_spec{nullptr};

  // Entries in insertion order: `keys` here, `values` in Slots. The key index is private so that
  // every change of the keys goes through the methods below, which keep it consistent and forget
  // the class layout the accessors rely on. Ops that build a TensorDict with the same keys share
  // the index (copy-on-write) instead of rebuilding it.
  std::vector<std::string> keys;

  /// Slot of `key` or -1. Up to kScannedKeys keys are compared in turn, which costs less than
  /// hashing and probing (libstdc++'s small unordered_maps do the same): nested TensorDicts often
  /// hold a handful of keys.
  int64_t find(const std::string& key) const {
    if (keys.size() <= kScannedKeys) return scan(key);
    return index_ ? index_->find(key, key_hash(key), keys) : -1;
  }
  /// Slot of component `i` of `key` or -1 (the key's remembered hash: no hashing when reused).
  int64_t find(const NestedKey& key, size_t i) const {
    if (keys.size() <= kScannedKeys) return scan(key[i]);
    return index_ ? index_->find(key[i], key.hash(i), keys) : -1;
  }
  /// Appends an entry without any check (callers validated it).
  void append(std::string key, Value value) {
    if (!index_) {
      index_ = std::make_shared<KeyIndex>();
    } else if (index_.use_count() > 1) {
      index_ = std::make_shared<KeyIndex>(*index_);  // copy on write
    }
    index_->insert(key, keys.size());
    keys.push_back(std::move(key));
    values.push_back(std::move(value));
    forget_layout();
  }
  /// Room for `n` entries (keys, values and index), before appending them.
  void reserve(size_t n) {
    keys.reserve(n);
    values.reserve(n);
    if (!index_) index_ = std::make_shared<KeyIndex>();
    if (index_.use_count() == 1) index_->reserve(n);
  }
  /// Takes `other`'s keys and (shared) index; the caller then sets one value per key, in order.
  void share_keys(const TensorDictImpl& other) {
    keys = other.keys;
    index_ = other.index_;
    forget_layout();
  }
  void erase(size_t slot);
  /// Removes every entry.
  void clear() {
    keys.clear();
    values.clear();
    index_.reset();
    forget_layout();
  }
  /// Rebuilds the index after `keys` were edited in place (a rename).
  void reindex();

 private:
  static constexpr size_t kScannedKeys = 8;
  int64_t scan(const std::string& key) const {
    for (size_t slot = 0; slot < keys.size(); ++slot) {
      if (same_key(keys[slot], key)) return static_cast<int64_t>(slot);
    }
    return -1;
  }
  void forget_layout() { layout.store(nullptr, std::memory_order_relaxed); }

  std::shared_ptr<KeyIndex> index_;  // null until the first key (saves an allocation per op)
};

/// The runtime's door to a TensorDict's private state (TensorDict befriends it; the public
/// headers only declare it).
struct Access {
  static TensorDictImpl& impl(const TensorDict& td) { return td.impl(); }
  static const std::shared_ptr<TensorDictImpl>& shared_impl(const TensorDict& td) {
    return td.impl_;
  }
  static TensorDict wrap(std::shared_ptr<TensorDictImpl> impl) {
    return TensorDict(std::move(impl));
  }
};
inline TensorDictImpl& impl_of(const TensorDict& td) { return Access::impl(td); }

/// Fills `dst` with `values`, one per key of `src` in order; an undefined tensor drops its key.
/// When nothing is dropped the key index is shared with `src` instead of rebuilt.
void set_values(TensorDictImpl& dst, const TensorDictImpl& src, std::vector<Value>&& values);

/// Locks or unlocks `impl` and every TensorDict nested in it (lazy-stack elements included);
/// unlocking also ends the memory-mapped state. No parent bookkeeping: for a nested TensorDict
/// taking its new parent's state.
void set_locked_recursive(TensorDictImpl& impl, bool locked);
/// Python's lock_(): `root` and everything nested in it locked, each nested TensorDict recording
/// its ancestors up to `root` (TensorDictImpl::lock_parents), already locked parts included.
void lock_tree(const TensorDict& root);
/// Python's unlock_(): `root` and everything nested in it unlocked, then LockedError (with the
/// tree locked again) when `root` or a part of it still sits below a locked TensorDict.
void unlock_tree(const TensorDict& root);

/// A new, empty TensorDict with the given batch size / device / names (no checks).
TensorDict make_tensordict(BatchSize batch_size, std::optional<at::Device> device = std::nullopt,
                           std::optional<DimNames> names = std::nullopt);
/// A new TensorDict with the same metadata as `like` (batch size, device, names) and no entries.
TensorDict empty_like_meta(const TensorDict& like);
/// empty_like_meta for the result of an op on `like` that keeps its structure: also the tensorclass
/// `like` is an instance of (Python's tensorclass wraps such results in the class).
TensorDict empty_result_of(const TensorDict& like);
/// The class every one of `tds` is an instance of, or null (instances of one class stack into
/// that class, as Python's torch.stack of tensorclasses).
std::shared_ptr<const memmap::ClassInfo> common_class(const std::vector<TensorDict>& tds);

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
/// A new structure over the same entries: clone(false), for core's own use.
TensorDict copy_structure(const TensorDict& td);

}  // namespace tensordict::detail
