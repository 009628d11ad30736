#pragma once
// The ragged lazy stack the store's lazy-stack cases share, the same as ragged() in
// store_peer.py: two elements of batch [3]; "x" of one shape (a homogeneous leaf), "n.r" of two
// (a heterogeneous one).

#include <ATen/ATen.h>

#include "tensordict/lazy_stack.h"
#include "tensordict/tensordict.h"

namespace tc_test {

inline tensordict::TensorDict ragged_stack() {
  using tensordict::TensorDict;
  return tensordict::lazy_stack(
      {TensorDict({{"x", at::arange(6, at::kFloat).reshape({3, 2})},
                   {"n", TensorDict({{"r", at::arange(6, at::kLong).reshape({3, 2})}}, {3})}},
                  {3}),
       TensorDict(
           {{"x", at::arange(6, 12, at::kFloat).reshape({3, 2})},
            {"n", TensorDict({{"r", at::arange(12, at::kLong).reshape({3, 4}) + 100}}, {3})}},
           {3})});
}

}  // namespace tc_test
