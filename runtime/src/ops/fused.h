#pragma once
// Element-wise math and whole-TensorDict reductions over a consolidated TensorDict's flat buffer
// (ops/fused.cpp). Private to the runtime.

#include <functional>
#include <optional>

#include "ops/util.h"

namespace tensordict::detail {

/// An element-wise op on one run of the flat buffer: writes `out` from `a` (and `b`, the other
/// TensorDict's run, or undefined). In place, `out` is `a`.
using RunKernel = std::function<void(at::Tensor& out, const at::Tensor& a, const at::Tensor& b)>;

/// `td`'s result of an element-wise op that keeps each leaf's dtype, computed run by run into a
/// new consolidated buffer (its leaves views of it); nullopt unless `td` is consolidated with
/// contiguous floating-point leaves.
std::optional<TensorDict> fused_map(const TensorDict& td, const RunKernel& kernel);
/// Same for a binary op with `other`, which must have `td`'s layout and be consolidated too.
std::optional<TensorDict> fused_map(const TensorDict& td, const TensorDict& other,
                                    const RunKernel& kernel);
/// The in-place form (with `other`, or a scalar the kernel holds): false, nothing written, unless
/// the layout allows it and nothing but padding lies between the leaves of each run.
bool fused_in_place(TensorDict& td, const TensorDict* other, const RunKernel& kernel);
/// Every leaf's elements as one 1-D tensor over the flat buffer, in leaf order (what concatenating
/// the flattened leaves gives), when `td` is consolidated with leaves of one dtype and no byte
/// between them; undefined otherwise.
at::Tensor fused_elements(const TensorDict& td);

}  // namespace tensordict::detail
