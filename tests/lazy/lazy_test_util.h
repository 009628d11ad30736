#pragma once
// Elements for lazy-stack tests.
#include <ATen/ATen.h>

#include "tensordict/tensordict.h"

namespace lazy_test {

/// A conversation-like TensorDict of `n` rows: "x" = base, base + 1, ...; "s" a string.
inline tensordict::TensorDict conv(int64_t n, float base) {
  return tensordict::TensorDict({{"x", at::arange(n, at::kFloat) + base}, {"s", "text"}}, {n});
}

/// Element k of a stack whose elements have batch [3, 4]: x [3, 4, 2], nested n.y [3, 4].
inline tensordict::TensorDict grid_element(int64_t k) {
  tensordict::TensorDict nested({{"y", at::arange(12).reshape({3, 4}) * (k + 1)}}, {3, 4});
  return tensordict::TensorDict(
      {{"x", at::arange(24, at::kFloat).reshape({3, 4, 2}) + 100 * k}, {"n", nested}}, {3, 4});
}

}  // namespace lazy_test
