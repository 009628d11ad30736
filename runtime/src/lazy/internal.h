#pragma once
// The lazy versions of TensorDict's members (lazy/stack.cpp, lazy/ops.cpp). TensorDict's members
// dispatch here when impl().lazy is set; core's own entry points reach the entry functions
// through LazyState's virtual members (core/lazy_state.h), which lazy/stack.cpp implements.
// Private to the runtime.

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

}  // namespace tensordict::detail::lazy
