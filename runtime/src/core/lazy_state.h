#pragma once
// A lazy stack as core sees it (core/lazy_state.cpp): its state, the walks over its elements that
// need no stacking, and the interface through which core's entry points hand a lazy stack to
// lazy/. TensorDictImpl::lazy points at a LazyState; lazy/ implements its virtual members and is
// the only maker of one (lazy_stack(), lazy/stack.cpp). Private to the runtime.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tensordict_impl.h"

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

  LazyState() = default;
  LazyState(const LazyState&) = delete;
  LazyState& operator=(const LazyState&) = delete;
  virtual ~LazyState();

  // ---- what core's entry points hand a lazy stack (lazy/stack.cpp) ----------------------------
  // Each takes `td`, the lazy stack whose state this is, and a key relative to it.
  virtual bool contains(const TensorDict& td, const NestedKey& key) const = 0;
  virtual Value get_value(const TensorDict& td, const NestedKey& key) const = 0;
  /// Python's tolist() of a non-tensor entry: ragged elements give ragged nested lists.
  virtual Json get_non_tensor(const TensorDict& td, const NestedKey& key) const = 0;
  virtual void set(const TensorDict& td, const NestedKey& key, const Value& value) const = 0;
  /// set_: `value` split along the stack dim, copied into each element's tensor at `key`.
  virtual void set_(const TensorDict& td, const NestedKey& key, const at::Tensor& value) const = 0;
  virtual Value pop(const TensorDict& td, const NestedKey& key) const = 0;
  /// A lazy stack of `tds` along `stack_dim` that keeps the stack dim's name of `td`.
  virtual TensorDict restack(const TensorDict& td, const std::vector<TensorDict>& tds,
                             int64_t stack_dim) const = 0;
};

/// Throws TypeError "<op>: not supported on a LazyStackedTensorDict ..." when `td` is lazy.
void dense_only(const TensorDictImpl& impl, const char* op);
inline void dense_only(const TensorDict& td, const char* op) {
  dense_only(detail::impl_of(td), op);
}
/// The same refusal when `td` holds a lazy stack at any level.
void dense_only_deep(const TensorDict& td, const char* op);

namespace lazy {

/// The state of a lazy stack; TypeError on a dense TensorDict.
const LazyState& state(const TensorDict& td);
/// The lazy stack of the results of `fn` on every element, along the same stack dim.
TensorDict per_element(const TensorDict& td,
                       const std::function<TensorDict(const TensorDict&)>& fn);
/// The lazy stack of `fn(element k, parts[k])` along the same stack dim: `parts` are an operand
/// unbound along the stack dim (a mask, another TensorDict). ShapeError naming `op` when their
/// count is not the number of elements.
template <class Part, class Fn>
TensorDict zip_elements(const TensorDict& td, const std::vector<Part>& parts, Fn&& fn,
                        const char* op) {
  const LazyState& st = state(td);
  if (parts.size() != st.tds.size()) {
    throw ShapeError(std::string(op) + ": the operand has " + std::to_string(parts.size()) +
                     " rows along the stack dim of the lazy stack, which has " +
                     std::to_string(st.tds.size()) + " elements");
  }
  std::vector<TensorDict> out;
  out.reserve(parts.size());
  for (size_t k = 0; k < parts.size(); ++k) out.push_back(fn(st.tds[k], parts[k]));
  return st.restack(td, out, st.stack_dim);
}
/// The rows of `operand` along the stack dim of `td` (a mask, a batch-shaped tensor), or
/// `operand` itself for every element when it stops before the stack dim.
inline std::vector<at::Tensor> rows_along_stack(const TensorDict& td, const at::Tensor& operand) {
  if (operand.dim() > td.stack_dim()) return operand.unbind(td.stack_dim());
  return std::vector<at::Tensor>(td.tensordicts().size(), operand);
}
/// Calls `fn` on every element (in-place ops).
void for_each(const TensorDict& td, const std::function<void(TensorDict&)>& fn);
/// The first lazy stack on the path of `key` (`root` itself, or a level before the key's last
/// part) and the rest of the key, which that stack answers for; nullopt when there is none.
std::optional<std::pair<TensorDict, NestedKey>> on_path(const TensorDict& root,
                                                        const NestedKey& key);
/// Keys every element has (in element 0's order), as Python's LazyStackedTensorDict.keys().
std::vector<NestedKey> keys(const TensorDict& td, bool include_nested, bool leaves_only);
/// Top-level entries (shared keys, each stacked), keys prefixed with `prefix`.
std::vector<std::pair<NestedKey, Value>> items(const TensorDict& td,
                                               const std::optional<NestedKey>& prefix);
/// set_names of a lazy stack: the stack dim's name is the stack's, the others go to every element.
void set_names(const TensorDict& td, std::optional<DimNames> names);
/// Shape of the entry at `key` across the elements (-1 where they differ), stack dim included.
std::vector<int64_t> item_shape(const TensorDict& td, const NestedKey& key);

}  // namespace lazy
}  // namespace tensordict::detail
