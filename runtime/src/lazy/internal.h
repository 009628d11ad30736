#pragma once
// The lazy versions of TensorDict's members (lazy/stack.cpp, lazy/ops.cpp). TensorDict's members
// dispatch here when impl().lazy is set; core's own entry points reach the entry functions
// through LazyState's virtual members (core/lazy_state.h), which lazy/stack.cpp implements.
// Private to the runtime.

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/lazy_state.h"
#include "tensordict/lazy_stack.h"

namespace tensordict::detail::lazy {

/// lazy_stack(tds, stack_dim) that keeps the stack dim's name of `like`, whose stack dim it is.
TensorDict restack(const TensorDict& like, const std::vector<TensorDict>& tds, int64_t stack_dim);

// ---- entries (lazy/stack.cpp) ----------------------------------------------------------------
/// set_: `value` split along the stack dim, copied into each element's tensor at `key`.
void set_(const TensorDict& td, const NestedKey& key, const at::Tensor& value);
bool contains(const TensorDict& td, const NestedKey& key);
Value get_value(const TensorDict& td, const NestedKey& key);
/// Python's tolist() of a non-tensor entry: ragged elements give ragged nested lists.
Json get_non_tensor(const TensorDict& td, const NestedKey& key);
void set(const TensorDict& td, const NestedKey& key, const Value& value);
Value pop(const TensorDict& td, const NestedKey& key);
/// The entry at `key`, kept alive in the stack's state (see LazyState::handed_out).
const Value& handed_out(const TensorDict& td, const std::string& key);

// ---- ops (lazy/ops.cpp) ----------------------------------------------------------------
TensorDict index(const TensorDict& td, const Index& index);
std::vector<TensorDict> unbind(const TensorDict& td, int64_t dim);
TensorDict stack_any(const std::vector<TensorDict>& tds, int64_t dim);
/// maybe_dense_stack of lazy stacks along one stack dim with as many elements: a lazy stack of
/// `stack_elements` of the elements at each position, the new dim `dim` placed inside them.
/// nullopt when `tds` are not all such lazy stacks.
std::optional<TensorDict> stack_elementwise(
    const std::vector<TensorDict>& tds, int64_t dim,
    const std::function<TensorDict(const std::vector<TensorDict>&, int64_t)>& stack_elements);
TensorDict cat_any(const std::vector<TensorDict>& tds, int64_t dim);
void update(const TensorDict& td, const TensorDict& other, bool in_place);
TensorDict densify(const TensorDict& td);
at::Tensor get_padded(const TensorDict& td, const NestedKey& key, double padding_value);

// ---- shape ops (lazy/shape.cpp) ------------------------------------------------------------
// Dims are wrapped and checked by the callers (ops/shape.cpp); each result is a lazy stack of
// the elements' results, except where noted.
/// Batch dim i of the result is dim `order[i]` (transpose is a permutation too).
TensorDict permute(const TensorDict& td, const std::vector<int64_t>& order);
TensorDict unsqueeze(const TensorDict& td, int64_t dim);
/// expand to `batch` (checked, `lead` new leading dims): each element expanded, a one-element
/// stack repeated along its stack dim, as Python's.
TensorDict expand(const TensorDict& td, const BatchSize& batch, size_t lead);
/// Drops `dims` (size 1, highest first); dropping the stack dim gives its one element.
TensorDict squeeze(const TensorDict& td, const std::vector<int64_t>& dims);
/// Pieces of `lengths` along `dim`: runs of elements along the stack dim.
std::vector<TensorDict> split(const TensorDict& td, int64_t dim,
                              const std::vector<int64_t>& lengths);
/// view / reshape to `batch` when it merges adjacent dims into one, or splits one into several
/// (Python's lazy view): nullopt for any other shape, which only a dense reshape gives.
std::optional<TensorDict> try_view(const TensorDict& td, const BatchSize& batch);
/// try_view, or ShapeError (view); or, as Python, the dense reshape (reshape).
///@{
TensorDict view(const TensorDict& td, const BatchSize& batch);
TensorDict reshape(const TensorDict& td, const BatchSize& batch);
///@}
/// masked_fill_ and where element by element, each with its rows of the mask or condition (and
/// of `other`) along the stack dim.
///@{
TensorDict& masked_fill_(TensorDict& td, const at::Tensor& mask, const at::Scalar& value);
TensorDict where(const TensorDict& td, const at::Tensor& condition, const TensorDict& other);
///@}
/// Dims `dim0` and `dim1` (wrapped) swapped: a permute.
TensorDict transpose(const TensorDict& td, int64_t dim0, int64_t dim1);
/// pad_ in place, as Python's: each element padded along its own dims; along the stack dim,
/// elements full of `value` added (or elements dropped, for a negative size). `pad_size` is
/// checked by the caller.
void pad_(TensorDict& td, at::IntArrayRef pad_size, double value);

}  // namespace tensordict::detail::lazy
