// Index assignment: in-place writes and lazy preallocation of missing keys.
#include "catch2_compat.h"

#include "ops_test_util.h"

using namespace ops_test;
using Catch::Matchers::ContainsSubstring;
using tensordict::Slice;

namespace {

// What the README's `foo()` returns: one sample with nested and non-tensor entries.
TensorDict make_sample(int64_t i) {
  TensorDict nested({{"y", at::full({2}, static_cast<double>(i), at::kDouble)}}, {});
  return TensorDict({{"x", at::full({3}, static_cast<float>(i))},
                     {"n", nested},
                     {"name", "sample" + std::to_string(i)},
                     {"kind", "same"}},
                    {});
}

}  // namespace

TEST_CASE("td[i] = sample preallocates missing keys (lazy preallocation)", "[index_put]") {
  TensorDict data({}, {5});
  for (int64_t i : {3, 0, 4, 1, 2}) data.index_put_({i}, make_sample(i));  // any order
  const at::Tensor rows = at::arange(5, at::kFloat).unsqueeze(1);
  CHECK(same(data.get("x"), rows.expand({5, 3})));
  CHECK(same(data.get({"n", "y"}), rows.to(at::kDouble).expand({5, 2})));
  CHECK(data.get_tensordict("n").batch_size() == BatchSize{5});
  CHECK(data.get_non_tensor("name") ==
        Json::array({"sample0", "sample1", "sample2", "sample3", "sample4"}));
  CHECK(data.get_value("kind").is_non_tensor_data());
  CHECK(data.get_non_tensor("kind") == "same");
}

TEST_CASE("index assignment writes in place through slices, masks and index tensors",
          "[index_put]") {
  TensorDict td = sample();
  const at::Tensor a_before = td.get("a");
  TensorDict rows =
      td.index({Slice(0, 2)}).clone().apply([](const at::Tensor& t) { return t * 0 - 1; });
  td.index_put_({Slice(2, 4)}, rows);
  CHECK(td.get("a").is_same(a_before));  // same tensor, written in place
  at::Tensor expect = at::arange(24, at::kFloat).view({4, 3, 2});
  expect.index_put_({at::indexing::Slice(2, 4)}, -1);
  CHECK(same(td.get("a"), expect));
  CHECK(items_of(td, "s")[6] == "0,0");  // stack items follow the written rows

  const at::Tensor mask = at::tensor({1, 0, 0, 1}, at::kLong).to(at::kBool);
  TensorDict two = td.index({mask}).apply([](const at::Tensor& t) { return t * 0 + 7; });
  td.index_put_({mask}, two);
  CHECK(td.get("b").index({mask}).eq(7).all().item<bool>());
  CHECK(td.get({"n", "c"}).index({mask}).eq(7).all().item<bool>());
}

TEST_CASE("index assignment errors name the key and the shapes", "[index_put][errors]") {
  TensorDict td = sample();
  TensorDict bad({{"a", at::zeros({5, 2})}}, {5});
  CHECK_THROWS_WITH(
      td.index_put_({Slice(0, 2)}, bad),
      ContainsSubstring("index_put_: key 'a': cannot write a value of shape [5, 2] into an "
                        "entry of shape [4, 3, 2]"));
  TensorDict wrong_kind({{"txt", at::zeros({3})}}, {3});
  CHECK_THROWS_MATCHES(td.index_put_({0}, wrong_kind), TypeError,
                       Catch::Matchers::Message("index_put_: key 'txt' holds a NonTensorData, "
                                                "cannot write a Tensor into it"));
  TensorDict locked({}, {4});
  locked.lock_();
  CHECK_THROWS_AS(locked.index_put_({0}, make_sample(0)), LockedError);
  CHECK_THROWS_AS(td.index_put_({0, 0, 0}, make_sample(0)), ShapeError);
}

TEST_CASE("td[idx] = number or tensor writes every tensor leaf, broadcast and cast",
          "[index_put]") {
  // As Python 0.14: td[1] = 5, then td[0] = torch.tensor(1.5) (a long leaf takes 1).
  TensorDict td({{"a", at::zeros({3, 2})},
                 {"b", at::zeros({3}, at::kLong)},
                 {"n", TensorDict({{"c", at::zeros({3, 4})}}, {3, 4})},
                 {"s", "kept"}},
                {3});
  td.index_put_({1}, 5);
  td.index_put_({0}, at::scalar_tensor(1.5));
  CHECK(td.get("a").equal(at::tensor({1.5f, 1.5f, 5.0f, 5.0f, 0.0f, 0.0f}).view({3, 2})));
  CHECK(td.get("b").equal(at::tensor({1L, 5L, 0L})));
  CHECK(td.get({"n", "c"})[1].equal(at::full({4}, 5.0f)));
  CHECK(td.get_non_tensor("s") == "kept");
  // A value that fits one leaf but not another writes none (Python writes the leaves before).
  const TensorDict before = td.clone();
  CHECK_THROWS_AS(td.index_put_({2}, at::tensor({7.0, 8.0})), tensordict::ShapeError);
  CHECK((td == before).all());
}
