#pragma once
// The state of a lazy stack and the lazy versions of TensorDict's members (lazy_stack*.cpp).
// TensorDict's members dispatch here when impl().lazy is set (private to the runtime).

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tensordict_impl.h"
#include "tensordict/lazy_stack.h"

namespace tensordict::detail {

struct LazyState {
  std::vector<TensorDict> tds;
  int64_t stack_dim = 0;
  /// The stack dim's name (Python's `_td_dim_name`); the other dims' names are the elements'.
  std::optional<std::string> dim_name;
  /// Entries handed out by reference (tensorclass field accessors): recomputed from the elements
  /// on every access, kept here so the reference outlives the call (until the next read of the
  /// same key). Guarded by `handed_out_mutex`: concurrent reads of one instance must not race on
  /// the map.
  std::map<std::string, std::unique_ptr<Value>> handed_out;
  std::mutex handed_out_mutex;
};

/// Throws TypeError "<op>: not supported on a LazyStackedTensorDict ..." when `td` is lazy.
void dense_only(const TensorDictImpl& impl, const char* op);
inline void dense_only(const TensorDict& td, const char* op) {
  dense_only(detail::impl_of(td), op);
}
/// The same refusal when `td` holds a lazy stack at any level.
void dense_only_deep(const TensorDict& td, const char* op);

namespace lazy {

const LazyState& state(const TensorDict& td);
/// The lazy stack of the results of `fn` on every element, along the same stack dim.
TensorDict per_element(const TensorDict& td,
                       const std::function<TensorDict(const TensorDict&)>& fn);
/// lazy_stack(tds, stack_dim) that keeps the stack dim's name of `like`, whose stack dim it is.
TensorDict restack(const TensorDict& like, const std::vector<TensorDict>& tds, int64_t stack_dim);
/// Calls `fn` on every element (in-place ops).
void for_each(const TensorDict& td, const std::function<void(TensorDict&)>& fn);

// ---- entries (lazy/stack.cpp) ----------------------------------------------------------------
/// The first lazy stack on the path of `key` (`root` itself, or a level before the key's last
/// part) and the rest of the key, which that stack answers for; nullopt when there is none.
std::optional<std::pair<TensorDict, NestedKey>> on_path(const TensorDict& root,
                                                        const NestedKey& key);
/// Top-level entries (shared keys, each stacked), keys prefixed with `prefix`.
std::vector<std::pair<NestedKey, Value>> items(const TensorDict& td,
                                               const std::optional<NestedKey>& prefix);
/// set_: `value` split along the stack dim, copied into each element's tensor at `key`.
void set_(const TensorDict& td, const NestedKey& key, const at::Tensor& value);
bool contains(const TensorDict& td, const NestedKey& key);
Value get_value(const TensorDict& td, const NestedKey& key);
/// Python's tolist() of a non-tensor entry: ragged elements give ragged nested lists.
Json get_non_tensor(const TensorDict& td, const NestedKey& key);
void set(const TensorDict& td, const NestedKey& key, const Value& value);
Value pop(const TensorDict& td, const NestedKey& key);
/// Keys every element has (in element 0's order), as Python's LazyStackedTensorDict.keys().
std::vector<NestedKey> keys(const TensorDict& td, bool include_nested, bool leaves_only);
/// Shape of the entry at `key` across the elements (-1 where they differ), stack dim included.
std::vector<int64_t> item_shape(const TensorDict& td, const NestedKey& key);
/// The entry at `key`, kept alive in the stack's state (see LazyState::handed_out).
const Value& handed_out(const TensorDict& td, const std::string& key);

// ---- ops (lazy/ops.cpp) ----------------------------------------------------------------
TensorDict index(const TensorDict& td, const Index& index);
std::vector<TensorDict> unbind(const TensorDict& td, int64_t dim);
TensorDict stack_any(const std::vector<TensorDict>& tds, int64_t dim);
TensorDict cat_any(const std::vector<TensorDict>& tds, int64_t dim);
void update(const TensorDict& td, const TensorDict& other, bool in_place);
TensorDict densify(const TensorDict& td);
at::Tensor get_padded(const TensorDict& td, const NestedKey& key, double padding_value);

}  // namespace lazy
}  // namespace tensordict::detail
