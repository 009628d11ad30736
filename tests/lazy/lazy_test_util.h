#pragma once
// Elements for lazy-stack tests.
#include <ATen/ATen.h>

#include "tensordict/tensordict.h"

namespace lazy_test {

/// A conversation-like TensorDict of `n` rows: "x" = base, base + 1, ...; "s" a string.
inline tensordict::TensorDict conv(int64_t n, float base) {
  return tensordict::TensorDict({{"x", at::arange(n, at::kFloat) + base}, {"s", "text"}}, {n});
}

}  // namespace lazy_test
