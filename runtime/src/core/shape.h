#pragma once
// Dims and shapes of batch ops (core/shape.cpp): shared by the ops and lazy stacks. Private to the
// runtime.

#include <ATen/core/Tensor.h>
#include <c10/util/SmallVector.h>

#include <cstdint>

#include "tensordict/tensordict.h"

namespace tensordict::detail {

using Shape = c10::SmallVector<int64_t, 8>;

/// `dim` wrapped into [0, ndim); ShapeError naming the op and the batch size otherwise.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op, const BatchSize& batch);
/// `head` followed by `full[from:]` (a new batch shape followed by a leaf's feature dims).
Shape join_shape(at::IntArrayRef head, at::IntArrayRef full, size_t from);
/// Resolves one -1 in `shape` so that it holds `numel` elements; ShapeError otherwise.
BatchSize infer_shape(at::IntArrayRef shape, int64_t numel, const char* op, const BatchSize& batch);
int64_t product(at::IntArrayRef shape);

/// Positions 0..numel-1 viewed as `shape`: applying a batch op to it tells where every item of a
/// NonTensorStack goes, so stacks follow every op through one code path.
at::Tensor positions(at::IntArrayRef shape, int64_t offset = 0);

}  // namespace tensordict::detail
