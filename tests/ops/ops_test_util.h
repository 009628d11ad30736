#pragma once
// A TensorDict with every kind of entry, and helpers to check an op against the raw tensor op.
#include <ATen/ATen.h>

#include <string>

#include "tensordict/tensordict.h"

namespace ops_test {

using namespace tensordict;

/// batch [4, 3]: "a" float [4,3,2], "b" long [4,3], nested "n" (batch [4,3,5]) with "c" [4,3,5],
/// "txt" NonTensorData, "s" NonTensorStack whose item at (i, j) is "i,j".
inline TensorDict sample() {
  std::vector<Json> items;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) items.emplace_back(std::to_string(i) + "," + std::to_string(j));
  TensorDict nested({{"c", at::arange(60, at::kFloat).view({4, 3, 5})}}, {4, 3, 5});
  return TensorDict({{"a", at::arange(24, at::kFloat).view({4, 3, 2})},
                     {"b", at::arange(12, at::kLong).view({4, 3})},
                     {"n", nested},
                     {"txt", "hello"},
                     {"s", NonTensorStack({4, 3}, items)}},
                    {4, 3});
}

/// The NonTensorStack "s" of sample() after `op` on an int64 grid of positions i * 3 + j.
inline std::vector<std::string> expected_items(const at::Tensor& grid_after_op) {
  std::vector<std::string> out;
  auto flat = grid_after_op.contiguous().view(-1);
  for (int64_t k = 0; k < flat.numel(); ++k) {
    const int64_t p = flat[k].item<int64_t>();
    out.push_back(std::to_string(p / 3) + "," + std::to_string(p % 3));
  }
  return out;
}

inline std::vector<std::string> items_of(const TensorDict& td, const NestedKey& key) {
  std::vector<std::string> out;
  const Value value = td.get_value(key);  // keep the Value alive while iterating its items
  for (const auto& item : value.non_tensor_stack().items())
    out.push_back(item.get<std::string>());
  return out;
}

inline at::Tensor grid() { return at::arange(12, at::kLong).view({4, 3}); }

inline bool same(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() && at::equal(a, b);
}

}  // namespace ops_test
