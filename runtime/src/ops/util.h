#pragma once
// Helpers shared by the ops/ files and the layers above them (private to the runtime).

#include <ATen/TensorIndexing.h>

#include <functional>
#include <string>
#include <unordered_map>

#include "core/dim_names.h"
#include "core/shape.h"
#include "core/tensordict_impl.h"

namespace tensordict::detail {

/// A batch-dim op: maps a tensor whose first `nb` dims are the batch dims of the TensorDict the
/// op was called on; trailing (feature) dims must pass through untouched.
using TensorOp = std::function<at::Tensor(const at::Tensor&)>;

/// libtorch 1.x returns int64_t from TensorIndex accessors, 2.x returns c10::SymInt.
inline int64_t to_int(int64_t v) { return v; }
template <class T>
int64_t to_int(const T& v) {
  return v.expect_int();
}

/// The dotted path of `key` below `prefix`, as messages name keys ("nest.b").
std::string join_key(const std::string& prefix, const std::string& key);
/// First line of a torch message (the rest is a C++ backtrace).
std::string first_line(const char* what);
/// Bytes of memory this process may use: physical memory, or its cgroup's limit when lower. A
/// result larger than this is refused before it is allocated (an allocation that large fails
/// anyway, and under AddressSanitizer aborts).
int64_t machine_memory();

// Dims, shapes and positions (wrap_dim, join_shape, infer_shape, product, positions):
// core/shape.h.

/// A stack of `pos`'s shape whose items are `items[pos[i]]`.
NonTensorStack gather_items(const NonTensorStack::Items& items, const at::Tensor& pos);
inline NonTensorStack gather_items(const std::vector<Json>& items, const at::Tensor& pos) {
  return gather_items(NonTensorStack::Items(items.data(), items.size()), pos);
}
NonTensorStack apply_to_stack(const NonTensorStack& stack, const TensorOp& op);
/// The same op on a stack's items directly, for ops whose cost must follow the items they touch
/// (a row of a stack of N rows: O(row), not the O(N) position grid of apply_to_stack).
using StackOp = std::function<NonTensorStack(const NonTensorStack&)>;
/// select(dim, i) of a stack: the items of row `i` along `dim` (dim 0: shared, O(1); other dims:
/// copied, O(row)).
NonTensorStack select_items(const NonTensorStack& stack, int64_t dim, int64_t i);

/// Applies a batch op to every entry (tensors, stacks through positions; NonTensorData kept). Each
/// level's new batch size is `new_batch` followed by its own dims past the first `nb`. Torch errors
/// become ShapeErrors naming `op_name`, the key and its shape.
/// `stack_op`, when given, replaces the positions trick for NonTensorStacks; `names` moves the dim
/// names of every level (without it the result has none). A nested lazy stack becomes
/// `nested_lazy` of it when given (an op lazy stacks do themselves, as index), and is densified
/// otherwise (Python's _apply_nest).
using LazyOp = std::function<TensorDict(const TensorDict&)>;
TensorDict map_batch(const TensorDict& td, size_t nb, const BatchSize& new_batch,
                     const TensorOp& op, const char* op_name, const StackOp& stack_op = {},
                     const NamesOp& names = {}, const LazyOp& nested_lazy = {});
/// Same, when the new batch size is only known from a result: it is read from the first
/// top-level tensor's result (or from a stand-in tensor of the batch shape when there is none).
TensorDict map_batch_infer(const TensorDict& td, const TensorOp& op, const char* op_name,
                           const NamesOp& names = {}, const LazyOp& nested_lazy = {});

/// `out`, locked when `src` is: Python's views, detach and grad keep the lock of their source
/// (its propagate_lock).
TensorDict locked_as(const TensorDict& src, TensorDict out);

/// Python's best-attempt in-place write of an `out=` result: each leaf of `result` copied into
/// `out`'s tensor at its key where that has the same shape and dtype, set otherwise. Returns
/// `out`.
TensorDict& write_into(TensorDict& out, const TensorDict& result);

/// `fn` over the matching leaves of `a` and `b` (dense TensorDicts): apply(fn, other) and the
/// binary math ops. KeyError / TypeError naming `op` and the key when `b` lacks a key of `a` or
/// holds another kind there; with `missing_ok`, a key `b` lacks reaches `fn` as an undefined
/// tensor.
TensorDict zip_leaves(const TensorDict& a, const TensorDict& b, const LeafFn2& fn, const char* op,
                      bool missing_ok = false);

/// Applies `fn` to every tensor leaf keeping the batch size (an undefined result drops the leaf).
/// A result that lost the batch dims is a ShapeError naming the key. `device` replaces the
/// device of every level when set.
TensorDict map_leaves(const TensorDict& td, const std::function<at::Tensor(const at::Tensor&)>& fn,
                      const char* op_name, std::optional<at::Device> device = std::nullopt);
/// The in-place form of an op (Python's inplace=True): `td` and its nested TensorDicts keep their
/// identity and keys and take `result`'s batch sizes, names and entries. `result` has `td`'s keys
/// in `td`'s order (the ops that change batch dims keep them). Throws LockedError when locked.
TensorDict& adopt(TensorDict& td, const TensorDict& result, const char* op_name);
/// Calls `fn(key, tensor)` on every tensor leaf, depth first.
void for_each_leaf(const TensorDict& td,
                   const std::function<void(const NestedKey&, at::Tensor&)>& fn);

/// Rethrows a torch error as ShapeError naming the op, the key and the shape involved.
[[noreturn]] void rethrow_torch(const char* op, const std::string& key, at::IntArrayRef shape,
                                const std::exception& e);

// ---- consolidation (ops/consolidate.cpp) ---------------------------------------------------
/// A tensor of `dtype`, `sizes`, `strides` and `storage_offset` (in elements) over `flat`'s
/// storage.
at::Tensor make_view(const at::Tensor& flat, at::ScalarType dtype, at::IntArrayRef sizes,
                     at::IntArrayRef strides, int64_t storage_offset);
/// A tensor of `like`'s dtype, sizes, strides and storage offset over `flat`'s storage.
at::Tensor view_in(const at::Tensor& flat, const at::Tensor& like);
/// Rebuilds `td`'s structure over `flat` (a copy of its consolidated buffer, maybe elsewhere).
TensorDict rebuild_over(const TensorDict& td, const at::Tensor& flat,
                        std::optional<at::Device> device);
/// Byte copy between consolidated buffers (memcpy on the host), and a copy of one.
void copy_flat(const at::Tensor& dst, const at::Tensor& src);
at::Tensor clone_flat(const at::Tensor& flat);
/// Marks `out` consolidated when every leaf of it still views `src`'s buffer.
void inherit_consolidated(const TensorDict& src, TensorDict& out);
/// True when `a` and `b` have the same keys, kinds and tensor layouts (dtype, sizes, strides,
/// storage offsets): a copy between their consolidated buffers is then a copy of every leaf.
bool same_layout(const TensorDict& a, const TensorDict& b);
/// The flat buffer of a consolidated TensorDict, or an undefined tensor when any leaf left it.
at::Tensor consolidated_buffer(const TensorDict& td);
/// Python's layout of a consolidated buffer: the tensor leaves in insertion order (depth first),
/// each at a byte offset padded to a multiple of 8 bytes.
struct ConsolidatedLayout {
  struct Leaf {
    std::string key;  ///< dotted
    at::Tensor tensor;
    int64_t offset = 0;  ///< bytes
  };
  std::vector<Leaf> leaves;
  int64_t bytes = 0;  ///< the buffer's size
};
ConsolidatedLayout consolidated_layout(const TensorDict& td);
/// `td`'s structure over `flat` (at least layout.bytes bytes), every leaf copied to its offset in
/// `layout` (consolidated_layout(td)), on `device` when set; marked consolidated over `flat`.
TensorDict pack_consolidated(const TensorDict& td, const ConsolidatedLayout& layout,
                             const at::Tensor& flat, std::optional<at::Device> device);

// ---- indexing (ops/index.cpp) ----------------------------------------------------------------
/// An index checked against a batch size, with its ellipsis spelled out as full slices so that it
/// applies unchanged to leaves that have feature dims after the batch dims.
struct IndexPlan {
  std::vector<at::indexing::TensorIndex> expanded;
  bool basic = true;         ///< ints, slices and None only: every result is a view
  bool single_long = false;  ///< one 1-D long tensor on dim 0: index_select
};
IndexPlan plan_index(const Index& index, const BatchSize& batch);
at::Tensor apply_index(const at::Tensor& t, const IndexPlan& plan);
/// index_select(0, index) of every plain leaf (CPU, contiguous, no autograd) of `td`, copied by
/// hand on at::get_num_threads() threads into views of one buffer when the rows gathered hold at
/// least 1 MiB; by leaf. Empty when not worth it or when an index is out of range (the general
/// path then reports it).
std::unordered_map<const c10::TensorImpl*, at::Tensor> gather_rows_in_parallel(
    const TensorDict& td, const at::Tensor& index);

}  // namespace tensordict::detail
