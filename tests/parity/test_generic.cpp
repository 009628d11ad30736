// Port of a selection of Python tensordict v0.14.0 test/tensordict/test_generic.py, class
// TestGeneric: standalone tests with their own inputs (no fixture). docs/parity.md lists which
// tests are ported and why the others are not.
#include <ATen/ATen.h>

#include <set>
#include <sstream>

#include "parity_fixtures.h"

using namespace tensordict;
using parity::has_key;
using parity::key_set;

namespace {

using Shape = std::vector<int64_t>;

}  // namespace

TEST_CASE("test_generic: test_batchsize_reset", "[parity][generic]") {
  // Python's _get_sub_tensordict and lazy_legacy views are not applicable.
  TensorDict td({{"a", at::randn({3, 4, 5, 6})}, {"b", at::randn({3, 4, 5})}}, {3, 4});
  td.set_batch_size({3});
  CHECK_THROWS_AS((td.set_batch_size({3, 5})), ShapeError);
  td.set("c", at::randn({3}));
  CHECK_NOTHROW(td.index({at::tensor(std::vector<int64_t>{1, 2})}));
  CHECK_NOTHROW(td.index({Slice()}));
  CHECK_THROWS(td.index({Slice(), 0}));
  td = TensorDict({{"a", at::randn({3, 4, 5, 6})}, {"b", at::randn({3, 4, 5})}}, {3, 4});
  td.set_batch_size({3, 4, 5});
  td.set("c", at::randn({3, 4, 5, 6}));
  CHECK_THROWS_AS((td.set("d", at::randn({3, 4, 2}))), ShapeError);
  TensorDict td_stack = lazy_stack(
      {TensorDict({{"a", at::randn({3})}}, {3}), TensorDict({{"a", at::randn({3})}}, {3})});
  CHECK_THROWS_AS((td_stack.set_batch_size({2})), Error);
  TensorDict dense = td_stack.densify().clone();
  CHECK_NOTHROW(dense.set_batch_size({2}));
}

TEST_CASE("test_generic: test_depth", "[parity][generic]") {
  TensorDict td({{NestedKey{"a", "b", "c", "d"}, 0},
                 {NestedKey{"a", "b", "e"}, 0},
                 {NestedKey{"a", "f"}, 0},
                 {"g", 0}},
                {});
  td.lock_();
  CHECK(td.depth() == 3);
  td.unlock_();
  td.del_({"a", "b", "c", "d"});
  td.lock_();
  CHECK(td.depth() == 2);
  td.unlock_();
  td.del_({"a", "b", "c"});
  td.del_({"a", "b", "e"});
  td.lock_();
  CHECK(td.depth() == 1);
  td.unlock_();
  td.del_({"a", "b"});
  td.del_({"a", "f"});
  td.lock_();
  CHECK(td.depth() == 0);
}

TEST_CASE("test_generic: test_cat_td", "[parity][generic]") {
  const TensorDict td1({{"key1", at::randn({4, 5, 6})},
                        {"key2", at::randn({4, 5, 10})},
                        {"key3", TensorDict({{"key4", at::randn({4, 5, 10})}}, {4, 5})}},
                       {4, 5});
  const TensorDict td2({{"key1", at::randn({4, 10, 6})},
                        {"key2", at::randn({4, 10, 10})},
                        {"key3", TensorDict({{"key4", at::randn({4, 10, 10})}}, {4, 10})}},
                       {4, 10});
  const TensorDict td_cat = cat({td1, td2}, 1);
  CHECK(td_cat.batch_size() == BatchSize{4, 15});
  TensorDict td_out({{"key1", at::zeros({4, 15, 6})},
                     {"key2", at::zeros({4, 15, 10})},
                     {"key3", TensorDict({{"key4", at::zeros({4, 15, 10})}}, {4, 15})}},
                    {4, 15});
  auto data_ptrs = [&td_out] {
    std::set<const void*> out;
    for (const auto& v : td_out.values(true, true)) out.insert(v.tensor().data_ptr());
    return out;
  };
  const auto before = data_ptrs();
  cat_out(td_out, {td1, td2}, 1);
  CHECK(before == data_ptrs());
  CHECK(td_out.batch_size() == BatchSize{4, 15});
  CHECK((td_out["key1"] != 0).all().item<bool>());
  CHECK((td_out["key2"] != 0).all().item<bool>());
  CHECK((td_out[{"key3", "key4"}] != 0).all().item<bool>());
}

TEST_CASE("test_generic: test_clone_empty", "[parity][generic]") {
  const bool recurse = GENERATE(true, false);
  CHECK(TensorDict().clone(recurse).is_empty());
  CHECK(TensorDict({}, {}, at::Device(at::kCPU)).clone(recurse).device() == at::Device(at::kCPU));
  CHECK(TensorDict({}, {2}).clone(recurse).batch_size() == BatchSize{2});
  CHECK(TensorDict({}, {2}, at::Device(at::kCPU)).clone(recurse).batch_size() == BatchSize{2});
}

TEST_CASE("test_generic: test_empty", "[parity][generic]") {
  const TensorDict td({{"a", at::zeros({})},
                       {NestedKey{"b", "c"}, at::zeros({})},
                       {NestedKey{"b", "d", "e"}, at::zeros({})}},
                      {});
  CHECK(td.empty(false).keys().empty());
  const TensorDict td_empty = td.empty(true);
  CHECK(td_empty.keys().size() == 1);
  CHECK(td_empty.get_tensordict("b").keys().size() == 1);
}

TEST_CASE("test_generic: test_expand", "[parity][generic]") {
  const TensorDict td1({{"key1", at::randn({4, 5, 6})}, {"key2", at::randn({4, 5, 10})}}, {4, 5});
  const TensorDict td2 = td1.expand({3, 7, 4, 5});
  CHECK(td2.batch_size() == BatchSize{3, 7, 4, 5});
  CHECK(td2.get("key1").sizes().vec() == Shape{3, 7, 4, 5, 6});
  CHECK(td2.get("key2").sizes().vec() == Shape{3, 7, 4, 5, 10});
}

TEST_CASE("test_generic: test_expand_as", "[parity][generic]") {
  const TensorDict td0(
      {{"a", at::ones({3, 1, 4})}, {"b", TensorDict({{"c", at::ones({3, 2, 1, 4})}}, {3})}}, {3});
  const TensorDict td1({{"a", at::zeros({2, 3, 5, 4})},
                        {"b", TensorDict({{"c", at::zeros({2, 3, 2, 6, 4})}}, {2, 3})}},
                       {2, 3});
  const TensorDict expanded = td0.expand_as(td1);
  CHECK((expanded == 1).all());
  CHECK(expanded[{"b", "c"}].sizes().vec() == Shape{2, 3, 2, 6, 4});
}

TEST_CASE("test_generic: test_expand_with_singleton", "[parity][generic]") {
  const TensorDict td1({{"key1", at::randn({1, 5, 6})}, {"key2", at::randn({1, 5, 10})}}, {1, 5});
  const TensorDict td2 = td1.expand({3, 7, 4, 5});
  CHECK(td2.batch_size() == BatchSize{3, 7, 4, 5});
  CHECK(td2.get("key1").sizes().vec() == Shape{3, 7, 4, 5, 6});
  CHECK(td2.get("key2").sizes().vec() == Shape{3, 7, 4, 5, 10});
}

TEST_CASE("test_generic: test_flatten_00", "[parity][generic]") {
  const TensorDict td({{"a", at::zeros({2})}}, {2});
  const TensorDict td_flat = td.flatten(0, 0);
  CHECK(td_flat.batch_size() == BatchSize{2});
  CHECK(td_flat["a"].sizes().vec() == Shape{2});
}

TEST_CASE("test_generic: test_fromkeys", "[parity][generic]") {
  TensorDict td = TensorDict::fromkeys({"a", "b", "c"}, 0);
  CHECK((td["a"] == 0).item<bool>());
  td = TensorDict::fromkeys({"a", "b", "c"}, 1);
  CHECK((td["a"] == 1).item<bool>());
}

TEST_CASE("test_generic: test_getitem_nested", "[parity][generic]") {
  const at::Tensor tensor = at::randn({4, 5, 6, 7});
  const TensorDict sub_sub({{"c", tensor}}, {4, 5, 6});
  TensorDict sub({}, {4, 5});
  TensorDict tensordict({}, {4});
  sub.set("b", sub_sub);
  tensordict.set("a", sub);
  CHECK((tensordict.get_tensordict("a") == sub).all());
  CHECK((tensordict.get_tensordict({"a", "b"}) == sub_sub).all());
  CHECK((tensordict[{"a", "b", "c"}] == tensor).all().item<bool>());
  CHECK((tensordict.get<TensorDict>("a") == sub).all());
  CHECK((tensordict.get<TensorDict>({"a", "b"}) == sub_sub).all());
  CHECK((tensordict.get({"a", "b", "c"}) == tensor).all().item<bool>());
  CHECK(tensordict.batch_size() == BatchSize{4});
  CHECK(sub.batch_size() == BatchSize{4, 5});
  CHECK(sub_sub.batch_size() == BatchSize{4, 5, 6});
}

TEST_CASE("test_generic: test_is_empty", "[parity][generic]") {
  CHECK(TensorDict({{"a", TensorDict({{"b", TensorDict()}}, {})}}, {}).is_empty());
  CHECK_FALSE(TensorDict({{"a", TensorDict({{"b", TensorDict()}, {"c", "a string!"}}, {})}}, {})
                  .is_empty());
  CHECK_FALSE(TensorDict({{"a", TensorDict({{"b", TensorDict()}, {"c", 1}}, {})}}, {}).is_empty());
}

TEST_CASE("test_generic: test_mask_td", "[parity][generic]") {
  // torch.masked_select(td, mask) is td[mask] here.
  const TensorDict td({{"key1", at::randn({4, 5, 6})}, {"key2", at::randn({4, 5, 10})}}, {4, 5});
  const at::Tensor mask = at::zeros({4, 5}, at::kBool).bernoulli_();
  const TensorDict td_masked = td.index({mask});
  CHECK(td_masked.get("key1").size(0) == td_masked.batch_size()[0]);
}

TEST_CASE("test_generic: test_permute", "[parity][generic]") {
  const TensorDict td1(
      {{"a", at::randn({4, 5, 6, 9})}, {"b", at::randn({4, 5, 6, 7})}, {"c", at::randn({4, 5, 6})}},
      {4, 5, 6});
  TensorDict td2 = td1.permute({2, 1, 0});
  CHECK(td2.batch_size() == BatchSize{6, 5, 4});
  CHECK(td2["a"].sizes().vec() == Shape{6, 5, 4, 9});
  td2 = td1.permute({-1, -3, -2});
  CHECK(td2.batch_size() == BatchSize{6, 4, 5});
  CHECK(td2["c"].sizes().vec() == Shape{6, 4, 5});
  td2 = td1.permute({0, 1, 2});
  CHECK(td2["a"].sizes().vec() == Shape{4, 5, 6, 9});
}

TEST_CASE("test_generic: test_permute_exceptions", "[parity][generic]") {
  // Python raises ValueError; here an Error.
  const TensorDict td1({{"a", at::randn({4, 5, 6, 7})}, {"b", at::randn({4, 5, 6, 8, 9})}},
                       {4, 5, 6});
  CHECK_THROWS_AS((td1.permute({1, 1, 0})), Error);
  CHECK_THROWS_AS((td1.permute({3, 2, 1, 0})), Error);
  CHECK_THROWS_AS((td1.permute({2, -1, 0})), Error);
  CHECK_THROWS_AS((td1.permute({2, 3, 0})), Error);
  CHECK_THROWS_AS((td1.permute({2, -4, 0})), Error);
  CHECK_THROWS_AS((td1.permute({2, 1})), Error);
}

TEST_CASE("test_generic: test_rename_key_nested", "[parity][generic]") {
  TensorDict td({{NestedKey{"a", "b", "c"}, 0}}, {});
  td.rename_key_({"a", "b", "c"}, {"a", "b"});
  CHECK((td[{"a", "b"}] == 0).item<bool>());
}

TEST_CASE("test_generic: test_select_nested", "[parity][generic]") {
  const bool inplace = GENERATE(true, false);
  INFO("inplace " << inplace);
  const TensorDict sub_sub({{"t1", at::rand({4, 5, 6, 7})}, {"t2", at::rand({4, 5, 6, 7})}},
                           {4, 5, 6});
  const TensorDict sub({{"double_nested", sub_sub}}, {4, 5});
  TensorDict tensordict(
      {{"a", at::rand({4, 3})}, {"b", at::rand({4, 2})}, {"c", at::rand({4, 1})}, {"nested", sub}},
      {4});
  const std::vector<NestedKey> keys{"b", NestedKey{"nested", "double_nested", "t2"}};
  const TensorDict selected = inplace ? tensordict.select_(keys) : tensordict.select(keys);
  const std::set<NestedKey> kept{"b", "nested", NestedKey{"nested", "double_nested"},
                                 NestedKey{"nested", "double_nested", "t2"}};
  CHECK(key_set(selected.keys(true)) == kept);
  if (inplace) {
    CHECK(selected.is_same(tensordict));
    CHECK(key_set(tensordict.keys(true)) == kept);
  } else {
    CHECK_FALSE(selected.is_same(tensordict));
    CHECK(key_set(tensordict.keys(true)) ==
          std::set<NestedKey>{"a", "b", "c", "nested", NestedKey{"nested", "double_nested"},
                              NestedKey{"nested", "double_nested", "t1"},
                              NestedKey{"nested", "double_nested", "t2"}});
  }
}

TEST_CASE("test_generic: test_select_nested_missing", "[parity][generic]") {
  const TensorDict td({{"a", TensorDict({{"b", at::tensor(std::vector<int64_t>{1})},
                                         {"c", at::tensor(std::vector<int64_t>{2})}},
                                        {})}},
                      {});
  const TensorDict td_select = td.select({NestedKey{"a", "b"}, "r", NestedKey{"a", "z"}}, false);
  CHECK(has_key(td_select.keys(true, true), NestedKey{"a", "b"}));
}

TEST_CASE("test_generic: test_set_nested_keys", "[parity][generic]") {
  const at::Tensor tensor = at::randn({4, 5, 6, 7});
  const at::Tensor tensor2 = at::ones({4, 5, 6, 7});
  TensorDict tensordict({}, {4});
  TensorDict sub({}, {4, 5});
  const TensorDict sub_sub({{"c", tensor}}, {4, 5, 6});
  const TensorDict sub_sub2({{"c", tensor2}}, {4, 5, 6});
  sub.set("b", sub_sub);
  tensordict.set("a", sub);
  CHECK(tensordict.get_tensordict({"a", "b"}).is_same(sub_sub));
  tensordict.set({"a", "b"}, sub_sub2);
  CHECK(tensordict.get_tensordict({"a", "b"}).is_same(sub_sub2));
  CHECK((tensordict.get({"a", "b", "c"}) == 1).all().item<bool>());
}

TEST_CASE("test_generic: test_setdefault_nested", "[parity][generic]") {
  const at::Tensor tensor = at::randn({4, 5, 6, 7});
  const at::Tensor tensor2 = at::ones({4, 5, 6, 7});
  const TensorDict sub_sub({{"c", tensor}}, {4, 5, 6});
  const TensorDict sub({{"b", sub_sub}}, {4, 5});
  TensorDict tensordict({{"a", sub}}, {4});
  CHECK(tensordict.setdefault({"a", "b", "c"}, tensor2).tensor().is_same(tensor));
  CHECK(tensordict.setdefault({"a", "b", "d"}, tensor2).tensor().is_same(tensor2));
  CHECK((tensordict[{"a", "b", "d"}] == 1).all().item<bool>());
  CHECK(tensordict.get({"a", "b", "d"}).is_same(tensor2));
}

TEST_CASE("test_generic: test_setitem_nested", "[parity][generic]") {
  const at::Tensor tensor = at::randn({4, 5, 6, 7});
  const at::Tensor tensor2 = at::ones({4, 5, 6, 7});
  TensorDict tensordict({}, {4});
  TensorDict sub({}, {4, 5});
  const TensorDict sub_sub({{"c", tensor}}, {4, 5, 6});
  const TensorDict sub_sub2({{"c", tensor2}}, {4, 5, 6});
  sub.set("b", sub_sub);
  tensordict.set("a", sub);
  CHECK(tensordict.get_tensordict({"a", "b"}).is_same(sub_sub));
  tensordict.set({"a", "b"}, sub_sub2);
  CHECK(tensordict.get_tensordict({"a", "b"}).is_same(sub_sub2));
  CHECK((tensordict[{"a", "b", "c"}] == 1).all().item<bool>());
  sub.set("b", sub_sub);
  tensordict.set("a", sub);
  CHECK(tensordict.get_tensordict({"a", "b"}).is_same(sub_sub));
  tensordict.set({"a", "b"}, sub_sub2);
  CHECK(tensordict.get_tensordict({"a", "b"}).is_same(sub_sub2));
  CHECK((tensordict[{"a", "b", "c"}] == 1).all().item<bool>());
}

TEST_CASE("test_generic: test_sorted_keys", "[parity][generic]") {
  const TensorDict td({{NestedKey{"a", "b"}, 0},
                       {NestedKey{"a", "c"}, 1},
                       {"d", 2},
                       {NestedKey{"e", "f"}, 3},
                       {NestedKey{"e", "g", "h"}, 4},
                       {NestedKey{"e", "g", "i"}, 5},
                       {NestedKey{"e", "j"}, 6}},
                      {});
  TensorDict tdflat = td.flatten_keys();
  tdflat.set("d", tdflat.pop("d"));
  tdflat.set("a.b", tdflat.pop("a.b"));
  const auto keys1 = td.keys(true, true, true), keys2 = tdflat.keys(true, true, true);
  REQUIRE(keys1.size() == keys2.size());
  for (size_t i = 0; i < keys1.size(); ++i) CHECK(keys1[i].join(".") == keys2[i].front());
  const auto values1 = td.values(true, true, true), values2 = tdflat.values(true, true, true);
  REQUIRE(values1.size() == values2.size());
  for (size_t i = 0; i < values1.size(); ++i) CHECK(values1[i].tensor().equal(values2[i].tensor()));
  const auto items1 = td.items(true, true, true), items2 = tdflat.items(true, true, true);
  REQUIRE(items1.size() == items2.size());
  for (size_t i = 0; i < items1.size(); ++i) {
    CHECK(items1[i].first.join(".") == items2[i].first.front());
    CHECK(items1[i].second.tensor().equal(items2[i].second.tensor()));
  }
}

TEST_CASE("test_generic: test_split_keys", "[parity][generic]") {
  TensorDict td({{"a", 0},
                 {"b", TensorDict({{"c", 1}}, {})},
                 {"d", TensorDict({{"e", "a string!"}, {"f", 2}}, {})},
                 {"g", 3}},
                {});
  auto out = td.split_keys({{"b"}, {"d"}});
  REQUIRE(out.size() == 3);
  CHECK(key_set(out[0].keys()) == std::set<NestedKey>{"b"});
  CHECK(key_set(out[1].keys()) == std::set<NestedKey>{"d"});
  CHECK_FALSE(out[2].contains("b"));
  CHECK_FALSE(out[2].contains("d"));
  CHECK(out[2].contains("a"));
  CHECK(out[2].contains("g"));
  CHECK_FALSE(out[2].is_same(td));
  out = td.split_keys({{NestedKey{"b", "c"}}, {NestedKey{"d", "e"}, NestedKey{"d", "f"}}}, true);
  REQUIRE(out.size() == 3);
  CHECK(out[0].contains({"b", "c"}));
  CHECK(out[1].contains({"d", "e"}));
  CHECK(out[1].contains({"d", "f"}));
  CHECK(td.is_same(out[2]));
  CHECK_FALSE(td.contains("d"));
}

TEST_CASE("test_generic: test_split_uneven", "[parity][generic]") {
  const bool plus = GENERATE(true, false);
  INFO((plus ? "plus" : "minus"));
  const TensorDict td({{"a", at::arange(6).unsqueeze(-1).expand({6, 3})},
                       {"b", at::arange(18).view({6, 3})},
                       {"c", at::arange(36).view({6, 3, 2})}},
                      {6, 3});
  auto tds = plus ? td.split(5, 0) : td.split(5, -2);
  CHECK(tds[0].batch_size() == BatchSize{5, 3});
  CHECK(tds[1].batch_size() == BatchSize{1, 3});
  CHECK(tds[0]["a"].sizes().vec() == Shape{5, 3});
  CHECK(tds[1]["a"].sizes().vec() == Shape{1, 3});
  CHECK(tds[0]["b"].sizes().vec() == Shape{5, 3});
  CHECK(tds[1]["b"].sizes().vec() == Shape{1, 3});
  CHECK(tds[0]["c"].sizes().vec() == Shape{5, 3, 2});
  CHECK(tds[1]["c"].sizes().vec() == Shape{1, 3, 2});
  tds = plus ? td.split(2, 1) : td.split(2, -1);
  CHECK(tds[0].batch_size() == BatchSize{6, 2});
  CHECK(tds[1].batch_size() == BatchSize{6, 1});
  CHECK(tds[0]["a"].sizes().vec() == Shape{6, 2});
  CHECK(tds[1]["a"].sizes().vec() == Shape{6, 1});
  CHECK(tds[0]["b"].sizes().vec() == Shape{6, 2});
  CHECK(tds[1]["b"].sizes().vec() == Shape{6, 1});
  CHECK(tds[0]["c"].sizes().vec() == Shape{6, 2, 2});
  CHECK(tds[1]["c"].sizes().vec() == Shape{6, 1, 2});
}

TEST_CASE("test_generic: test_split_with_empty_tensordict", "[parity][generic]") {
  TensorDict td({}, {10});
  auto tds = td.split(4, 0);
  REQUIRE(tds.size() == 3);
  CHECK(tds[0].batch_size() == BatchSize{4});
  CHECK(tds[1].batch_size() == BatchSize{4});
  CHECK(tds[2].batch_size() == BatchSize{2});
  tds = td.split(at::IntArrayRef{1, 9}, 0);
  REQUIRE(tds.size() == 2);
  CHECK(tds[0].batch_size() == BatchSize{1});
  CHECK(tds[1].batch_size() == BatchSize{9});
  td = TensorDict({}, {10, 10, 3});
  tds = td.split(4, 1);
  REQUIRE(tds.size() == 3);
  CHECK(tds[0].batch_size() == BatchSize{10, 4, 3});
  CHECK(tds[1].batch_size() == BatchSize{10, 4, 3});
  CHECK(tds[2].batch_size() == BatchSize{10, 2, 3});
  tds = td.split(at::IntArrayRef{1, 9}, 1);
  REQUIRE(tds.size() == 2);
  CHECK(tds[0].batch_size() == BatchSize{10, 1, 3});
  CHECK(tds[1].batch_size() == BatchSize{10, 9, 3});
}

TEST_CASE("test_generic: test_split_with_invalid_arguments", "[parity][generic]") {
  // Python's split("1") / split(["1", 2]) (TypeError) do not compile in C++.
  TensorDict td({{"a", at::zeros({2, 1})}}, {});
  CHECK_THROWS(td.split(1, 0));
  td = TensorDict({}, {3, 2});
  CHECK_THROWS(td.split(at::IntArrayRef{}, 0));
  CHECK_THROWS(td.split(at::IntArrayRef{1, 1}, 0));
  CHECK_THROWS(td.split(1, 2));
  CHECK_THROWS(td.split(1, -3));
  CHECK_THROWS(td.split(0, -1));
  CHECK_THROWS(td.split(-1, -1));
}

TEST_CASE("test_generic: test_split_with_negative_dim", "[parity][generic]") {
  const TensorDict td({{"a", at::zeros({5, 4, 2, 1})}, {"b", at::zeros({5, 4, 1})}}, {5, 4});
  const auto tds = td.split(at::IntArrayRef{1, 3}, -1);
  REQUIRE(tds.size() == 2);
  CHECK(tds[0].batch_size() == BatchSize{5, 1});
  CHECK(tds[0]["a"].sizes().vec() == Shape{5, 1, 2, 1});
  CHECK(tds[0]["b"].sizes().vec() == Shape{5, 1, 1});
  CHECK(tds[1].batch_size() == BatchSize{5, 3});
  CHECK(tds[1]["a"].sizes().vec() == Shape{5, 3, 2, 1});
  CHECK(tds[1]["b"].sizes().vec() == Shape{5, 3, 1});
}

TEST_CASE("test_generic: test_squeeze", "[parity][generic]") {
  const TensorDict td1({{"key1", at::randn({4, 5, 6})}, {"key2", at::randn({4, 5, 10})}}, {4, 5});
  const TensorDict td2 = td1.unsqueeze(1);
  CHECK(td2.batch_size() == BatchSize{4, 1, 5});
  CHECK(td2.squeeze(1).batch_size() == td1.batch_size());
}

TEST_CASE("test_generic: test_quantile", "[parity][generic]") {
  // Not the tensor of quantiles (docs/parity.md: its leaves would not start with the batch dims).
  const TensorDict td(
      {{"a", at::randn({3, 4, 5})},
       {"b", TensorDict({{"c", at::randn({3, 4, 5, 6})}, {"d", at::randn({3, 4, 5})}}, {3, 4, 5})}},
      {3, 4});
  const TensorDict median_td = td.quantile(0.5);
  CHECK(median_td.batch_size().empty());
  CHECK(median_td["a"].dim() == 0);
  CHECK(td.quantile(reduce_all, 0.5).dim() == 0);
  const TensorDict quantile_dim = td.quantile(0.5, 0);
  CHECK(quantile_dim.batch_size() == BatchSize{4});
  CHECK(quantile_dim["a"].sizes().vec() == Shape{4, 5});
  const TensorDict quantile_feature = td.quantile(0.5, ReduceDims::feature());
  CHECK(quantile_feature.batch_size() == BatchSize{3, 4});
  CHECK(quantile_feature["a"].sizes().vec() == Shape{3, 4});
  const TensorDict quantile_keepdim = td.quantile(0.5, 0, true);
  CHECK(quantile_keepdim.batch_size() == BatchSize{1, 4});
  CHECK(quantile_keepdim["a"].sizes().vec() == Shape{1, 4, 5});
}

TEST_CASE("test_generic: test_unbind_batchsize", "[parity][generic]") {
  const TensorDict td({{"a", TensorDict({{"b", at::zeros({2, 3})}}, {2, 3})}}, {2});
  const auto tds = td.unbind(0);
  CHECK(tds[0].batch_size().empty());
  CHECK(tds[0].get_tensordict("a").batch_size() == BatchSize{3});
}

TEST_CASE("test_generic: test_unbind_td", "[parity][generic]") {
  const TensorDict td({{"key1", at::randn({4, 5, 6})}, {"key2", at::randn({4, 5, 10})}}, {4, 5});
  const auto td_unbind = td.unbind(1);
  CHECK(td_unbind[0].batch_size() == td.index({Slice(), 0}).batch_size());
}

TEST_CASE("test_generic: test_tensordict_prealloc_nested", "[parity][generic]") {
  const int64_t N = 3, B = 5, T = 4;
  TensorDict buffer({}, {B, N});
  const TensorDict td_0({{"env.time", at::rand({N, 1})},
                         {"agent.obs", TensorDict({{"image", at::rand({N, T, 64})},
                                                   {"state", at::rand({N, T, 3, 32, 32})}},
                                                  {N, T})}},
                        {N});
  const TensorDict td_1 = td_0.clone();
  buffer.index_put_({0}, td_0);
  buffer.index_put_({1}, td_1);
  std::ostringstream repr;
  repr << buffer;
  CHECK(repr.str() ==
        "TensorDict(\n"
        "    fields={\n"
        "        agent.obs: TensorDict(\n"
        "            fields={\n"
        "                image: Tensor(shape=torch.Size([5, 3, 4, 64]), device=cpu, "
        "dtype=torch.float32, is_shared=False),\n"
        "                state: Tensor(shape=torch.Size([5, 3, 4, 3, 32, 32]), device=cpu, "
        "dtype=torch.float32, is_shared=False)},\n"
        "            batch_size=torch.Size([5, 3, 4]),\n"
        "            device=None,\n"
        "            is_shared=False),\n"
        "        env.time: Tensor(shape=torch.Size([5, 3, 1]), device=cpu, dtype=torch.float32, "
        "is_shared=False)},\n"
        "    batch_size=torch.Size([5, 3]),\n"
        "    device=None,\n"
        "    is_shared=False)");
  CHECK(buffer.batch_size() == BatchSize{B, N});
  CHECK(buffer.get_tensordict("agent.obs").batch_size() == BatchSize{B, N, T});
}
