// gather, split_keys, auto_batch_size_, pin_memory, to(device, non_blocking).
#include "catch2_compat.h"

#include "ops_test_util.h"
#include "skip.h"

using namespace ops_test;

TEST_CASE("gather picks rows of every leaf along a batch dim", "[batch]") {
  TensorDict td = sample();
  const at::Tensor index = at::tensor({2, 0, 1, 1, 0, 2}, at::kLong).view({2, 3});
  TensorDict out = td.gather(0, index);
  CHECK(out.batch_size() == BatchSize{2, 3});
  CHECK(same(out.get("b"), td.get("b").gather(0, index)));
  CHECK(same(out.get("a"), td.get("a").gather(0, index.unsqueeze(-1).expand({2, 3, 2}))));
  CHECK(same(out.get({"n", "c"}),
             td.get({"n", "c"}).gather(0, index.unsqueeze(-1).expand({2, 3, 5}))));
  CHECK(out.get_non_tensor("txt") == "hello");
  CHECK_THROWS_WITH(td.gather(0, at::zeros({4}, at::kLong)),
                    "gather: the index has 1 dims, expected one per batch dim (batch_size [4, 3])");
}

TEST_CASE("split_keys gives one TensorDict per key set and one with the rest", "[batch]") {
  TensorDict td = sample();
  auto parts = td.split_keys({{NestedKey("a")}, {NestedKey("b"), NestedKey({"n", "c"})}});
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].keys() == std::vector<NestedKey>{NestedKey("a")});
  CHECK(parts[1].keys(true, true) == std::vector<NestedKey>{NestedKey("b"), NestedKey({"n", "c"})});
  CHECK(parts[2].contains("txt"));
  CHECK_FALSE(parts[2].contains("a"));
  CHECK(td.contains("a"));  // not in place
  CHECK(parts[0].get("a").is_same(td.get("a")));
  CHECK_THROWS_WITH(td.split_keys({{NestedKey("nope")}}), "split_keys: key 'nope' not found");
  CHECK(td.split_keys({{NestedKey("nope"), NestedKey("a")}}, false, false)[0].size() == 1);
  td.split_keys({{NestedKey("a")}}, true);
  CHECK_FALSE(td.contains("a"));
}

TEST_CASE("auto_batch_size_ finds the dims every leaf shares", "[batch]") {
  TensorDict td({{"a", at::zeros({3, 4, 5})},
                 {"b", TensorDict({{"c", at::zeros({3, 4, 6})}}, {})},
                 {"note", "x"}},
                {});
  td.auto_batch_size_();
  CHECK(td.batch_size() == BatchSize{3, 4});
  CHECK(td.get_tensordict("b").batch_size() == BatchSize{3, 4, 6});
  td.set_batch_size({});
  TensorDict(td.get_tensordict("b")).set_batch_size({});
  td.auto_batch_size_(1);
  CHECK(td.batch_size() == BatchSize{3});
  CHECK(td.get_tensordict("b").batch_size() == BatchSize{3});
}

TEST_CASE("to(device, non_blocking)", "[batch]") {
  TensorDict td = sample();
  TensorDict moved = td.to(at::Device(at::kCPU), true);
  CHECK(same(moved.get("a"), td.get("a")));
}

TEST_CASE("pin_memory pins every leaf", "[batch][cuda][needs-cuda]") {
  if (!at::hasCUDA()) TC_SKIP("pin_memory needs CUDA");
  TensorDict td = sample();
  TensorDict pinned = td.pin_memory();
  CHECK(pinned.get("a").is_pinned());
  CHECK(pinned.get({"n", "c"}).is_pinned());
}
