// Helpers shared by the tests of TensorClass::nn and of the runtime's module bridge.
#pragma once

#include <ATen/ATen.h>

namespace nn_test {

/// Same sizes and values.
inline bool same(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && a.equal(b);
}

}  // namespace nn_test
