// stack and cat over any dim, with nested and non-tensor entries.
#include "catch2_compat.h"

#include "ops_test_util.h"

using namespace ops_test;
using Catch::Matchers::Message;

namespace {

TensorDict shifted(int64_t k) {
  TensorDict td = sample().apply([k](const at::Tensor& t) { return t + k * 100; });
  return td;
}

}  // namespace

TEST_CASE("stack along any dim matches at::stack on every leaf", "[stack]") {
  const std::vector<TensorDict> tds = {shifted(0), shifted(1), shifted(2)};
  for (int64_t dim : {0, 1, 2, -1}) {
    TensorDict out = stack(tds, dim);
    for (const NestedKey& key : {NestedKey("a"), NestedKey("b"), NestedKey({"n", "c"})}) {
      CHECK(same(out.get(key), at::stack({tds[0].get(key), tds[1].get(key), tds[2].get(key)},
                                         dim < 0 ? dim + 3 : dim)));
    }
    CHECK(out.batch_size() == at::stack({grid(), grid(), grid()}, dim < 0 ? 2 : dim).sizes().vec());
    // Equal values stack into a NonTensorStack too (tensordict 0.14); cat keeps them one.
    REQUIRE(out.get_value("txt").is_non_tensor_stack());
    CHECK(out.get_value("txt").non_tensor_stack().shape() == out.batch_size());
    CHECK(out.get_value("txt").non_tensor_stack().all_equal());
  }
  TensorDict out = stack(tds, 1);
  CHECK(out.get_tensordict("n").batch_size() == BatchSize{4, 3, 3, 5});
  const auto pos = at::stack({grid(), grid(), grid()}, 1);
  CHECK(items_of(out, "s") == expected_items(pos));
}

TEST_CASE("differing NonTensorData become a NonTensorStack", "[stack]") {
  TensorDict x({{"t", at::zeros({2})}, {"txt", "x"}}, {2});
  TensorDict y({{"t", at::ones({2})}, {"txt", "y"}}, {2});
  TensorDict out = stack({x, y}, 1);
  CHECK(out.get_non_tensor("txt") == Json::parse(R"([["x","y"],["x","y"]])"));
  TensorDict joined = cat({x, y}, 0);
  CHECK(joined.get_non_tensor("txt") == Json::array({"x", "x", "y", "y"}));
  CHECK(same(joined.get("t"), at::cat({x.get("t"), y.get("t")})));
}

TEST_CASE("cat along an existing dim matches at::cat on every leaf", "[stack]") {
  TensorDict a = sample();
  TensorDict b = shifted(1).index({tensordict::Slice(0, 2)});
  TensorDict out = cat({a, b}, 0);
  CHECK(out.batch_size() == BatchSize{6, 3});
  CHECK(same(out.get({"n", "c"}), at::cat({a.get({"n", "c"}), b.get({"n", "c"})})));
  auto items = items_of(out, "s");
  CHECK(items[12] == "0,0");
  CHECK(items.size() == 18);
  TensorDict cols = cat({a, a}, 1);
  CHECK(same(cols.get("a"), at::cat({a.get("a"), a.get("a")}, 1)));
  REQUIRE(cols.get_value("txt").is_non_tensor_data());  // equal values stay one, as Python's cat
  CHECK(cols.get_non_tensor("txt") == a.get_non_tensor("txt"));
}

TEST_CASE("stack and cat errors name the key and the shapes", "[stack][errors]") {
  TensorDict x({{"t", at::zeros({2, 3})}}, {2});
  TensorDict y({{"t", at::zeros({2, 4})}}, {2});
  CHECK_THROWS_MATCHES(stack({x, y}), ShapeError,
                       Message("stack: key 't' has shape [2, 3] in TensorDict 0 but [2, 4] in "
                               "TensorDict 1"));
  TensorDict z({{"u", at::zeros({2, 3})}}, {2});
  CHECK_THROWS_MATCHES(cat({x, z}), KeyError,
                       Message("cat: key 't' is in TensorDict 0 but not in TensorDict 1"));
  TensorDict w({{"t", at::zeros({3, 3})}}, {3});
  CHECK_THROWS_MATCHES(stack({x, w}), ShapeError,
                       Message("stack: batch_size [2] of TensorDict 0 does not match batch_size "
                               "[3] of TensorDict 1"));
  CHECK(cat({x, w}).batch_size() == BatchSize{5});
  CHECK_THROWS_AS(stack({}), ShapeError);
  CHECK_THROWS_AS(stack({x, x}, 3), ShapeError);
}

TEST_CASE("stack pairs entries by key, whatever their order", "[stack]") {
  TensorDict x({{"a", at::zeros({2})}, {"b", at::ones({2})}}, {2});
  TensorDict y({{"b", at::full({2}, 3.0)}, {"a", at::full({2}, 2.0)}}, {2});
  TensorDict out = stack({x, y});
  CHECK(same(out.get("a"), at::stack({x.get("a"), y.get("a")})));
  CHECK(same(out.get("b"), at::stack({x.get("b"), y.get("b")})));
  CHECK(out.keys() == std::vector<NestedKey>{"a", "b"});
}

TEST_CASE("pad_sequence refuses what ATen would stop on with a typed error", "[ops][stack]") {
  const TensorDict a({{"x", at::zeros({2, 3}, at::kLong)}}, {});
  // Leaves of different ranks.
  const TensorDict b({{"x", at::zeros({2, 3, 1}, at::kLong)}}, {});
  CHECK_THROWS_MATCHES(
      pad_sequence({a, b}, 0), ShapeError,
      Catch::Matchers::Message("pad_sequence: key 'x' has shape [2, 3, 1] in one TensorDict and "
                               "[2, 3] in the first"));
  // A padding value an int64 leaf cannot hold.
  const TensorDict c({{"x", at::zeros({1, 3}, at::kLong)}}, {});
  CHECK_THROWS_WITH(pad_sequence({a, c}, 0, std::nan("")),
                    Catch::Matchers::StartsWith("pad_sequence: padding value nan does not fit key "
                                                "'x' of dtype int64"));
  CHECK_THROWS_AS(pad_sequence({a, c}, 0, 1e300), ValueError);
  // A padded result of 2^40 rows (from an expanded leaf that holds one value).
  const TensorDict huge({{"x", at::zeros({1, 3}, at::kLong).expand({int64_t{1} << 40, 3})}}, {});
  CHECK_THROWS_AS(pad_sequence({a, huge}, 0), ShapeError);
}
