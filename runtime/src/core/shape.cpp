// Dims and shapes of batch ops.
#include "core/shape.h"

#include <ATen/ATen.h>

#include <numeric>
#include <string>

namespace tensordict::detail {

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op, const BatchSize& batch) {
  const int64_t wrapped = dim < 0 ? dim + ndim : dim;
  if (wrapped < 0 || wrapped >= ndim) {
    throw ShapeError(std::string(op) + ": dim " + std::to_string(dim) +
                     " is out of range for batch_size " + shape_str(batch) + " (expected in [" +
                     std::to_string(-ndim) + ", " + std::to_string(ndim - 1) + "])");
  }
  return wrapped;
}

Shape join_shape(at::IntArrayRef head, at::IntArrayRef full, size_t from) {
  Shape out(head.begin(), head.end());
  out.append(full.begin() + static_cast<std::ptrdiff_t>(from), full.end());
  return out;
}

int64_t product(at::IntArrayRef shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

BatchSize infer_shape(at::IntArrayRef shape, int64_t numel, const char* op,
                      const BatchSize& batch) {
  BatchSize out(shape.begin(), shape.end());
  int64_t known = 1;
  int64_t infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1 && infer_at < 0) {
      infer_at = static_cast<int64_t>(i);
    } else if (out[i] < 0) {
      throw ShapeError(std::string(op) + ": invalid shape " + shape_str(shape) +
                       " for batch_size " + shape_str(batch));
    } else {
      known *= out[i];
    }
  }
  if (infer_at >= 0 && known != 0 && numel % known == 0) out[infer_at] = numel / known;
  if (product(out) != numel || (infer_at >= 0 && known == 0)) {
    throw ShapeError(std::string(op) + ": shape " + shape_str(shape) +
                     " is invalid for batch_size " + shape_str(batch) + " (" +
                     std::to_string(numel) + " elements)");
  }
  return out;
}

at::Tensor positions(at::IntArrayRef shape, int64_t offset) {
  return at::arange(offset, offset + product(shape), at::kLong).view(shape);
}

}  // namespace tensordict::detail
