// The dict-like members Python's TensorDict has and a port of its tests asks for: pop with a
// default, popitem, setdefault, sorted keys, depth, named_apply, expand_as, nansum / nanmean,
// and nested keys spelled with nested braces (Python's nested tuples). Expected values follow
// Python tensordict 0.14's documented behaviour.
#include <ATen/ATen.h>

#include <cmath>

#include "catch2_compat.h"

#include "tensordict/tensordict.h"

using namespace tensordict;

namespace {

TensorDict sample() {
  return TensorDict({{"b", at::ones({3, 2})},
                     {"a", TensorDict({{"d", at::zeros({3})}, {"c", at::full({3}, 2.0)}}, {3})},
                     {"s", "text"}},
                    {3});
}

}  // namespace

TEST_CASE("pop with a default, popitem and setdefault", "[ops][dict]") {
  TensorDict td = sample();
  CHECK(td.pop("missing", at::full({3}, 9.0)).tensor().equal(at::full({3}, 9.0)));
  CHECK(td.pop(NestedKey{"a", "d"}, at::Tensor()).tensor().equal(at::zeros({3})));
  CHECK_FALSE(td.contains(NestedKey{"a", "d"}));
  // popitem: the last top-level entry set, as dict.popitem.
  const auto [key, value] = td.popitem();
  CHECK(key == NestedKey("s"));
  CHECK(value.non_tensor_data().data == "text");
  CHECK(td.keys() == std::vector<NestedKey>{"b", "a"});
  td.popitem();
  td.popitem();
  CHECK_THROWS_AS(td.popitem(), KeyError);
  // setdefault sets only a missing key, and returns what the TensorDict holds.
  TensorDict empty({}, {3, 4});
  CHECK(empty.setdefault("a", at::zeros({3, 4})).tensor().equal(at::zeros({3, 4})));
  CHECK(empty.setdefault("a", at::ones({3, 4})).tensor().equal(at::zeros({3, 4})));
  CHECK(empty.setdefault(NestedKey{"n", "x"}, at::ones({3, 4})).tensor().equal(at::ones({3, 4})));
  CHECK_THROWS_AS(empty.setdefault("bad", at::ones({2})), ShapeError);
}

TEST_CASE("keys, values and items sorted by their dotted names", "[ops][dict]") {
  const TensorDict td = sample();
  CHECK(td.keys(false, false, /*sort=*/true) == std::vector<NestedKey>{"a", "b", "s"});
  CHECK(td.keys(true, true, /*sort=*/true) ==
        std::vector<NestedKey>{NestedKey{"a", "c"}, NestedKey{"a", "d"}, "b", "s"});
  const auto values = td.values(true, true, true);
  CHECK(values[0].tensor().equal(at::full({3}, 2.0)));
  const auto items = td.items(true, false, true);
  CHECK(items.front().first == NestedKey("a"));
  CHECK(items[1].first == NestedKey{"a", "c"});
}

TEST_CASE("depth counts the levels above the deepest leaf", "[ops][dict]") {
  CHECK(TensorDict({{"x", at::zeros({2})}}, {2}).depth() == 0);
  CHECK(sample().depth() == 1);
  TensorDict deep({}, {});
  deep.set(NestedKey{"a", "b", "c", "d"}, at::zeros({1}));
  CHECK(deep.depth() == 3);
  // An empty nested TensorDict holds no leaf: it adds no depth.
  deep.set(NestedKey{"e", "f", "g", "h", "i"}, TensorDict({}, {}));
  CHECK(deep.depth() == 3);
}

TEST_CASE("named_apply passes each leaf's key", "[ops][dict]") {
  const TensorDict td = sample();
  std::vector<std::string> seen;
  const TensorDict out = td.named_apply([&](const NestedKey& key, const at::Tensor& t) {
    seen.push_back(key.join("."));
    return key.back() == "c" ? t * 10 : t;
  });
  CHECK(seen == std::vector<std::string>{"b", "d", "c"});  // names within their TensorDict
  CHECK(out.get(NestedKey{"a", "c"}).equal(at::full({3}, 20.0)));
  CHECK(out.get_non_tensor("s") == "text");
  seen.clear();
  const TensorDict dropped = td.named_apply(
      [&](const NestedKey& key, const at::Tensor& t) {
        seen.push_back(key.join("."));
        return key == NestedKey{"a", "d"} ? at::Tensor() : t;  // undefined: dropped, as apply
      },
      /*nested_keys=*/true);
  CHECK(seen == std::vector<std::string>{"b", "a.d", "a.c"});
  CHECK_FALSE(dropped.contains(NestedKey{"a", "d"}));
}

TEST_CASE("expand_as expands to another TensorDict's leaves, or a tensor's shape", "[ops][dict]") {
  // Python's docstring example: a [3, 1, 4] and b.c [3, 2, 1, 4] against [2, 3] leaves.
  const TensorDict small(
      {{"a", at::ones({3, 1, 4})}, {"b", TensorDict({{"c", at::ones({3, 2, 1, 4})}}, {3})}}, {3});
  const TensorDict big({{"a", at::zeros({2, 3, 5, 4})},
                        {"b", TensorDict({{"c", at::zeros({2, 3, 2, 6, 4})}}, {2, 3})}},
                       {2, 3});
  const TensorDict out = small.expand_as(big);
  CHECK(out.batch_size() == BatchSize{2, 3});
  CHECK(out.get("a").sizes() == at::IntArrayRef{2, 3, 5, 4});
  CHECK(out.get(NestedKey{"b", "c"}).sizes() == at::IntArrayRef{2, 3, 2, 6, 4});
  CHECK((out.get("a") == 1).all().item<bool>());
  CHECK(small.expand_as(at::zeros({5, 3})).batch_size() == BatchSize{5, 3});
}

TEST_CASE("nansum and nanmean leave NaNs out", "[ops][dict]") {
  const double nan = std::nan("");
  const TensorDict td({{"x", at::tensor({1.0, nan, 3.0, nan}).reshape({2, 2})}}, {2});
  CHECK(td.nansum().get("x").item<double>() == 4.0);
  CHECK(td.nanmean().get("x").item<double>() == 2.0);
  CHECK(td.nansum(0).get("x").equal(at::tensor({4.0, 0.0})));
  CHECK(td.nanmean(ReduceDims::feature()).get("x").equal(at::tensor({1.0, 3.0})));
  CHECK(td.nanmean(reduce_all).item<double>() == 2.0);
}

TEST_CASE("nested braces in a key flatten as Python's nested tuples", "[ops][dict]") {
  // Python: td["nested", ("supernested", ("key",))] is td["nested", "supernested", "key"].
  const NestedKey key{"nested", {"supernested", {"key"}}};
  CHECK(key.size() == 3);
  CHECK(key == NestedKey{"nested", "supernested", "key"});
  CHECK(NestedKey{{"a"}} == NestedKey("a"));
  CHECK_FALSE(NestedKey{{"a"}}.is_nested());
  TensorDict td({}, {});
  td.set({"nested", {"supernested", {"key"}}}, at::ones({2}));
  CHECK(td.get(NestedKey{"nested", "supernested", "key"}).equal(at::ones({2})));
}

// Expected values as Python tensordict 0.14 gives them (checked in the sid chroot).
TEST_CASE("from_dict makes tensors, nested TensorDicts and non-tensor data", "[ops][dict]") {
  const Json dict = Json::parse(
      R"({"a": [[1, 2], [3, 4]], "b": {"c": [[1.5], [2.5]]}, "s": "hi", "l": ["x", "y"],
          "n": 3, "e": []})");
  const TensorDict td = TensorDict::from_dict(dict);
  CHECK(td.batch_size().empty());  // 0.14: no automatic batch size unless asked
  CHECK(td.get("a").equal(at::tensor({1, 2, 3, 4}, at::kLong).view({2, 2})));
  CHECK(td.get({"b", "c"}).scalar_type() == at::kFloat);
  CHECK(td.get_value("l").is_non_tensor_stack());
  CHECK(td.get_value("l").non_tensor_stack().shape() == std::vector<int64_t>{2});
  CHECK(td.get_non_tensor("s") == "hi");
  CHECK(td.get("n").equal(at::scalar_tensor(3, at::kLong)));
  CHECK(td.get("e").sizes() == at::IntArrayRef({0}));

  const Json numbers = Json::parse(R"({"a": [[1, 2], [3, 4]], "b": {"c": [[1.5], [2.5]]}})");
  const TensorDict automatic = TensorDict::from_dict(numbers, std::nullopt, std::nullopt,
                                                     std::nullopt, /*auto_batch_size=*/true);
  CHECK(automatic.batch_size() == BatchSize{2});
  CHECK(automatic.get_tensordict("b").batch_size() == BatchSize{2, 1});
  const TensorDict capped = TensorDict::from_dict(numbers, std::nullopt, std::nullopt, 1);
  CHECK(capped.batch_size() == BatchSize{2});
  CHECK(capped.get_tensordict("b").batch_size() == BatchSize{2});
  CHECK(TensorDict::from_dict(numbers, BatchSize{2}).get_tensordict("b").batch_size() ==
        BatchSize{2});

  CHECK_THROWS_AS(TensorDict::from_dict(Json::array()), TypeError);
  CHECK_THROWS_AS(TensorDict::from_dict(numbers, BatchSize{2}, std::nullopt, 1), ValueError);
  CHECK_THROWS_AS(TensorDict::from_dict(numbers, BatchSize{3}), ShapeError);
}

TEST_CASE("to_dict gives the entries as JSON, and from_dict takes it back", "[ops][dict]") {
  const Json dict = sample().to_dict();
  CHECK(dict.dump() ==
        R"({"b":[[1.0,1.0],[1.0,1.0],[1.0,1.0]],"a":{"d":[0.0,0.0,0.0],"c":[2.0,2.0,2.0]},)"
        R"("s":"text"})");
  const TensorDict back = TensorDict::from_dict(dict, BatchSize{3});
  CHECK(back.get("b").equal(sample().get("b")));
  CHECK(back.get({"a", "c"}).equal(sample().get({"a", "c"})));
  CHECK(back.get_non_tensor("s") == "text");
  TensorDict with_none = sample();
  with_none.set_non_tensor("none", nullptr);
  CHECK(with_none.to_dict().contains("none"));
  CHECK_FALSE(with_none.to_dict(/*retain_none=*/false).contains("none"));
  CHECK(TensorDict({{"m", at::tensor({1, 0}).to(at::kBool)}, {"i", at::scalar_tensor(7, at::kInt)}},
                   {})
            .to_dict()
            .dump() == R"({"m":[true,false],"i":7})");
}
