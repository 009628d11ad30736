// Port of Python tensordict v0.14.0 test/tensordict/test_generic.py, class TestGeneric, part
// two: shape ops with their torch reference, keys, flattening, names, indexing, padding.
#include <ATen/ATen.h>

#include <set>

#include "parity_fixtures.h"

using namespace tensordict;
using parity::has_key;
using parity::key_set;

namespace {

using Shape = std::vector<int64_t>;

// Python's d = {"a": arange(24).view(2, 3, 4), "b": arange(6).view(2, 3)}, batch [2, 3].
struct Arange23 {
  at::Tensor a = at::arange(24).view({2, 3, 4});
  at::Tensor b = at::arange(6).view({2, 3});
  TensorDict td{{{"a", a}, {"b", b}}, {2, 3}};
};

}  // namespace

TEST_CASE("test_generic: test_exclude_nested", "[parity][generic]") {
  const bool inplace = GENERATE(true, false);
  INFO("inplace " << inplace);
  const TensorDict sub_sub({{"t1", at::rand({4, 5, 6, 7})}, {"t2", at::rand({4, 5, 6, 7})}},
                           {4, 5, 6});
  const TensorDict sub({{"double_nested", sub_sub}}, {4, 5});
  TensorDict tensordict(
      {{"a", at::rand({4, 3})}, {"b", at::rand({4, 2})}, {"c", at::rand({4, 1})}, {"nested", sub}},
      {4});
  TensorDict tensordict2 = tensordict.clone();
  const std::vector<NestedKey> keys{"b", NestedKey{"nested", "double_nested", "t2"}};
  const TensorDict excluded = inplace ? tensordict.exclude_(keys) : tensordict.exclude(keys);
  const std::set<NestedKey> kept{"a", "c", "nested", NestedKey{"nested", "double_nested"},
                                 NestedKey{"nested", "double_nested", "t1"}};
  CHECK(key_set(excluded.keys(true)) == kept);
  if (inplace) {
    CHECK(excluded.is_same(tensordict));
    CHECK(key_set(tensordict.keys(true)) == kept);
  } else {
    CHECK_FALSE(excluded.is_same(tensordict));
    CHECK(key_set(tensordict.keys(true)) ==
          std::set<NestedKey>{"a", "b", "c", "nested", NestedKey{"nested", "double_nested"},
                              NestedKey{"nested", "double_nested", "t1"},
                              NestedKey{"nested", "double_nested", "t2"}});
  }
  const TensorDict excluded2 =
      inplace ? tensordict2.exclude_({"nested"}) : tensordict2.exclude({"nested"});
  CHECK(key_set(excluded2.keys(true)) == std::set<NestedKey>{"a", "b", "c"});
}

TEST_CASE("test_generic: test_flatten_unflatten_key_collision", "[parity][generic]") {
  const bool inplace = GENERATE(true, false);
  const std::string s = GENERATE(as<std::string>{}, ",", "-");
  INFO("inplace " << inplace << " separator " << s);
  // Python's flatten_keys(separator, inplace) and unflatten_keys(separator, inplace).
  auto flatten = [&](const TensorDict& t) {
    TensorDict copy = t;
    return inplace ? copy.flatten_keys_(s) : t.flatten_keys(s);
  };
  auto unflatten = [&](const TensorDict& t) {
    TensorDict copy = t;
    return inplace ? copy.unflatten_keys_(s) : t.unflatten_keys(s);
  };
  auto nested_c = [] { return TensorDict({{NestedKey{"b", "c"}, at::zeros({3})}}, {}); };
  const TensorDict td1({{"a" + s + "b" + s + "c", at::zeros({3})}, {"a", nested_c()}}, {});
  const TensorDict td2({{"a" + s + "b", at::zeros({3})},
                        {"a", TensorDict({{"b", at::zeros({3})}}, {})},
                        {"g", TensorDict({{"d", at::zeros({3})}}, {})}},
                       {});
  const TensorDict td3({{"a" + s + "b" + s + "c", at::zeros({3})},
                        {"a", TensorDict({{NestedKey{"b", "c"}, at::zeros({3})},
                                          {NestedKey{"b", "d"}, at::zeros({3})}},
                                         {})}},
                       {});
  const TensorDict td4({{"a" + s + "b" + s + "c" + s + "d", at::zeros({3})}, {"a", nested_c()}},
                       {});
  const TensorDict td5({{"a" + s + "b", at::zeros({3})}, {"a", nested_c()}}, {});
  CHECK_THROWS_AS(flatten(td1), KeyError);
  CHECK_THROWS_AS(flatten(td2), KeyError);
  CHECK_THROWS_AS(flatten(td3), KeyError);
  CHECK_THROWS_AS(unflatten(td1), KeyError);
  CHECK_THROWS_AS(unflatten(td2), KeyError);
  CHECK_THROWS_AS(unflatten(td3), KeyError);
  CHECK_THROWS_AS(unflatten(td4), KeyError);
  CHECK_THROWS_AS(unflatten(td5), KeyError);
  const TensorDict td4_flat = flatten(td4);
  CHECK(has_key(td4_flat.keys(), "a" + s + "b" + s + "c" + s + "d"));
  CHECK(has_key(td4_flat.keys(), "a" + s + "b" + s + "c"));
  const TensorDict td5_flat = flatten(td5);
  CHECK(has_key(td5_flat.keys(), "a" + s + "b"));
  CHECK(has_key(td5_flat.keys(), "a" + s + "b" + s + "c"));
}

TEST_CASE("test_generic: test_keys_view", "[parity][generic]") {
  // Python's TypeErrors for `("a", "b", "c") in td.keys()` and `42 in td.keys()` have no C++
  // form (keys() is a vector of NestedKey).
  const TensorDict sub_sub({{"c", at::randn({4, 5, 6, 7})}}, {4, 5, 6});
  TensorDict sub({}, {4, 5});
  TensorDict tensordict({}, {4});
  sub.set("b", sub_sub);
  tensordict.set("a", sub);
  CHECK(has_key(tensordict.keys(), "a"));
  CHECK_FALSE(has_key(tensordict.keys(), "random_string"));
  CHECK(has_key(tensordict.keys(true), NestedKey{{"a"}}));
  CHECK(has_key(tensordict.keys(true), NestedKey{"a", "b", "c"}));
  CHECK_FALSE(has_key(tensordict.keys(true), NestedKey{"a", "c", "b"}));
  CHECK(key_set(tensordict.keys()) == std::set<NestedKey>{"a"});
  CHECK(key_set(tensordict.keys(true)) ==
        std::set<NestedKey>{"a", NestedKey{"a", "b"}, NestedKey{"a", "b", "c"}});
  CHECK(tensordict.keys(false, true).empty());
  CHECK(key_set(tensordict.keys(true, true)) == std::set<NestedKey>{NestedKey{"a", "b", "c"}});
}

TEST_CASE("test_generic: test_movedim", "[parity][generic]") {
  const at::Tensor a = at::randn({4, 5, 6, 9}), b = at::randn({4, 5, 6, 7}),
                   c = at::randn({4, 5, 6});
  const TensorDict td1({{"a", a}, {"b", b}, {"c", c}}, {4, 5, 6});
  const TensorDict td2 = td1.movedim({0}, {2});
  CHECK(td2.batch_size() == BatchSize{5, 6, 4});
  CHECK(td2["a"].sizes().vec() == Shape{5, 6, 4, 9});
  CHECK(td2["a"].sizes() == at::movedim(a, 0, 2).sizes());
  const TensorDict td3 = td1.movedim({-1}, {0});
  CHECK(td3.batch_size() == BatchSize{6, 4, 5});
  CHECK(td3["c"].sizes().vec() == Shape{6, 4, 5});
  const TensorDict td5 = td1.movedim({0, 1}, {2, 0});
  CHECK(td5.batch_size() == BatchSize{5, 6, 4});
  CHECK(td5["a"].sizes() == at::movedim(a, {0, 1}, {2, 0}).sizes());
  CHECK(td1.movedim({1}, {1}).batch_size() == td1.batch_size());
}

TEST_CASE("test_generic: test_movedim_exceptions", "[parity][generic]") {
  // Python: IndexError, RuntimeError ("repeated dim"), ValueError ("same number"); here Errors.
  const TensorDict td1({{"a", at::randn({4, 5, 6, 7})}, {"b", at::randn({4, 5, 6, 8, 9})}},
                       {4, 5, 6});
  CHECK_THROWS_AS(td1.movedim({0}, {5}), Error);
  CHECK_THROWS_AS(td1.movedim({5}, {0}), Error);
  CHECK_THROWS_AS((td1.movedim({0, 0}, {1, 2})), Error);
  CHECK_THROWS_AS((td1.movedim({0, 1}, {2, 2})), Error);
  CHECK_THROWS_AS((td1.movedim({0}, {1, 2})), Error);
}

TEST_CASE("test_generic: test_swapaxes", "[parity][generic]") {
  const at::Tensor a = at::randn({4, 5, 6, 9});
  const TensorDict td1({{"a", a}, {"b", at::randn({4, 5, 6, 7})}, {"c", at::randn({4, 5, 6})}},
                       {4, 5, 6});
  const TensorDict td2 = td1.swapaxes(0, 2);
  CHECK(td2.batch_size() == BatchSize{6, 5, 4});
  CHECK(td2["a"].sizes().vec() == Shape{6, 5, 4, 9});
  CHECK(td2["a"].sizes() == at::swapaxes(a, 0, 2).sizes());
  CHECK(td1.swapdims(0, 2).batch_size() == BatchSize{6, 5, 4});
  CHECK(td1.swapaxes(-1, -3).batch_size() == BatchSize{6, 5, 4});
}

TEST_CASE("test_generic: test_flip", "[parity][generic]") {
  const Arange23 d;
  TensorDict td2 = d.td.flip({0});
  CHECK(td2.batch_size() == BatchSize{2, 3});
  CHECK(td2["b"].equal(at::flip(d.b, {0})));
  td2 = d.td.flip({0, 1});
  CHECK(td2["b"].equal(at::flip(d.b, {0, 1})));
  td2 = d.td.flip({-1});
  CHECK(td2["b"].equal(at::flip(d.b, {-1})));
}

TEST_CASE("test_generic: test_fliplr_flipud", "[parity][generic]") {
  const Arange23 d;
  CHECK(d.td.fliplr().batch_size() == BatchSize{2, 3});
  CHECK(d.td.fliplr()["b"].equal(at::fliplr(d.b)));
  CHECK(d.td.flipud()["b"].equal(at::flipud(d.b)));
  const TensorDict td_1d({{"a", at::randn({3})}}, {3});
  CHECK_THROWS(td_1d.fliplr());
}

TEST_CASE("test_generic: test_roll", "[parity][generic]") {
  const Arange23 d;
  CHECK(d.td.roll({1}, {0}).batch_size() == BatchSize{2, 3});
  CHECK(d.td.roll({1}, {0})["b"].equal(at::roll(d.b, {1}, {0})));
  CHECK(d.td.roll({1, 2}, {0, 1})["b"].equal(at::roll(d.b, {1, 2}, {0, 1})));
  CHECK(d.td.roll({-1}, {0})["b"].equal(at::roll(d.b, {-1}, {0})));
}

TEST_CASE("test_generic: test_rot90", "[parity][generic]") {
  const Arange23 d;
  CHECK(d.td.rot90().batch_size() == BatchSize{3, 2});
  CHECK(d.td.rot90()["b"].equal(at::rot90(d.b)));
  CHECK(d.td.rot90(2).batch_size() == BatchSize{2, 3});
  CHECK(d.td.rot90(2)["b"].equal(at::rot90(d.b, 2)));
  CHECK(d.td.rot90(3)["b"].equal(at::rot90(d.b, 3)));
  CHECK(d.td.rot90(1, {0, 1})["b"].equal(at::rot90(d.b, 1, {0, 1})));
  const TensorDict td_1d({{"a", at::randn({3})}}, {3});
  CHECK_THROWS(td_1d.rot90());
}

TEST_CASE("test_generic: test_narrow", "[parity][generic]") {
  const Arange23 d;
  CHECK(d.td.narrow(0, 0, 1).batch_size() == BatchSize{1, 3});
  CHECK(d.td.narrow(0, 0, 1)["b"].equal(at::narrow(d.b, 0, 0, 1)));
  CHECK(d.td.narrow(1, 1, 2).batch_size() == BatchSize{2, 2});
  CHECK(d.td.narrow(1, 1, 2)["b"].equal(at::narrow(d.b, 1, 1, 2)));
  CHECK(d.td.narrow(-1, 0, 2).batch_size() == BatchSize{2, 2});
}

TEST_CASE("test_generic: test_tile", "[parity][generic]") {
  const Arange23 d;
  CHECK(d.td.tile({2, 1}).batch_size() == BatchSize{4, 3});
  CHECK(d.td.tile({2, 1})["b"].equal(at::tile(d.b, {2, 1})));
  CHECK(d.td.tile({2, 2}).batch_size() == BatchSize{4, 6});
  CHECK(d.td.tile({2, 2})["b"].equal(at::tile(d.b, {2, 2})));
}

TEST_CASE("test_generic: test_broadcast_to", "[parity][generic]") {
  const at::Tensor a = at::arange(6).view({2, 3});
  const TensorDict td1({{"a", a}, {"b", at::arange(6).view({2, 3})}}, {2, 3});
  CHECK(td1.broadcast_to({2, 3}).batch_size() == BatchSize{2, 3});
  const TensorDict td3 = td1.broadcast_to({4, 2, 3});
  CHECK(td3.batch_size() == BatchSize{4, 2, 3});
  CHECK(td3["a"].equal(at::broadcast_to(a, {4, 2, 3})));
}

TEST_CASE("test_generic: test_atleast_nd", "[parity][generic]") {
  const TensorDict td0({{"a", at::randn({3})}}, {});
  CHECK(td0.atleast_1d().ndim() == 1);
  CHECK(td0.atleast_1d().batch_size() == BatchSize{1});
  const TensorDict td_1d({{"a", at::randn({3})}}, {3});
  CHECK(td_1d.atleast_1d().is_same(td_1d));
  CHECK(td_1d.atleast_2d().batch_size() == BatchSize{1, 3});
  const TensorDict td_2d({{"a", at::randn({2, 3})}}, {2, 3});
  CHECK(td_2d.atleast_2d().is_same(td_2d));
  CHECK(td_1d.atleast_3d().batch_size() == BatchSize{1, 1, 3});
  CHECK(td_2d.atleast_3d().batch_size() == BatchSize{1, 2, 3});
  const TensorDict td_3d({{"a", at::randn({2, 3, 4})}}, {2, 3, 4});
  CHECK(td_3d.atleast_3d().is_same(td_3d));
}

TEST_CASE("test_generic: test_stack_names", "[parity][generic]") {
  const TensorDict td({{"a", at::zeros({3, 4})}}, {3, 4}, std::nullopt,
                      DimNames{"first", "second"});
  CHECK((stack({td, td}, 0).names() == DimNames{std::nullopt, "first", "second"}));
  CHECK((stack({td, td}, 1).names() == DimNames{"first", std::nullopt, "second"}));
  CHECK((stack({td, td}, -1).names() == DimNames{"first", "second", std::nullopt}));
  TensorDict td_copy = td.clone();
  td_copy.set_names(DimNames{"first", "third"});
  CHECK((stack({td, td_copy}, 0).names() == DimNames{std::nullopt, std::nullopt, std::nullopt}));
}

TEST_CASE("test_generic: test_tensordict_indexing", "[parity][generic]") {
  TensorDict td({}, {4, 5});
  td.set("key1", at::randn({4, 5, 1}));
  td.set("key2", at::randn({4, 5, 6}, at::kDouble));
  CHECK(td.index({2, 2}).batch_size().empty());
  CHECK(td.index({2, Slice(std::nullopt, 2)}).batch_size() == BatchSize{2});
  CHECK(td.index({None, Slice(std::nullopt, 2)}).batch_size() == BatchSize{1, 2, 5});
  std::vector<TensorDict> rows(td.begin(), td.end());
  CHECK((stack(rows, 0) == td).all());
  std::vector<TensorDict> superlist;
  for (TensorDict row : td)
    superlist.push_back(stack(std::vector<TensorDict>(row.begin(), row.end()), 0));
  CHECK((stack(superlist, 0) == td).all());
  const at::Tensor x = at::randn({4, 5});
  td = TensorDict({{"key1", at::zeros({3, 4, 5})}}, {3, 4});
  td[0].set_("key1", x);
  CHECK(at::allclose(td.get("key1")[0], x));
  CHECK(at::allclose(td.get("key1")[0], td[0].get("key1")));
  const at::Tensor y = at::randn({3, 5});
  td.index({Slice(), 0}).set_("key1", y);
  CHECK(at::allclose(td.get("key1").select(1, 0), y));
  CHECK(at::allclose(td.get("key1").select(1, 0), td.index({Slice(), 0}).get("key1")));
}

TEST_CASE("test_generic: test_tensordict_set", "[parity][generic]") {
  // Python's set(..., inplace=True / False) keyword has no C++ form.
  TensorDict td({}, {4, 5}, at::Device(at::kCPU));
  td.set("key1", at::randn({4, 5}));
  CHECK(td.device() == at::Device(at::kCPU));
  CHECK_THROWS(td.set("key1", at::randn({5, 5})));
  td.set_("key1", at::ones({4, 5}, at::kDouble));
  CHECK((td.get("key1") == 1).all().item<bool>());
  td.set("key_device", at::ones({4, 5}, at::kDouble));
  CHECK(td.get("key_device").device() == at::Device(at::kCPU));
  CHECK_THROWS_AS(td.set_("smartypants", at::ones({4, 5}, at::kDouble)), KeyError);
  td.set("key2", at::randn({4, 5, 6}));
  at::Tensor x = at::randn({6});
  td.set_at_("key2", x, {2, 2});
  CHECK((td.get("key2").index({2, 2}) == x).all().item<bool>());
  x = at::randn({6}, at::kDouble);
  td.set_at_("key2", x, {2, 2});
  CHECK(at::allclose(td.get("key2").index({2, 2}), x.to(at::kFloat)));
}

TEST_CASE("test_generic: test_contiguous_canonical", "[parity][generic]") {
  at::Tensor non_canonical = at::empty_strided({1, 4, 5}, {5, 5, 1});
  non_canonical.copy_(at::arange(20).view({1, 4, 5}));
  CHECK(non_canonical.is_contiguous());
  CHECK(non_canonical.strides() != at::IntArrayRef({20, 5, 1}));
  const at::Tensor canonical = at::randn({2, 3, 4});
  CHECK(canonical.strides() == at::IntArrayRef({12, 4, 1}));
  at::Tensor nested_leaf = at::empty_strided({1, 4, 5}, {5, 5, 1});
  nested_leaf.copy_(at::arange(20).view({1, 4, 5}));
  const TensorDict td({{"non_canonical", non_canonical},
                       {"canonical", canonical},
                       {"nested", TensorDict({{"leaf", nested_leaf}}, {})}},
                      {});
  const TensorDict td_default = td.contiguous();
  CHECK(td_default["non_canonical"].data_ptr() == non_canonical.data_ptr());
  CHECK(td_default["non_canonical"].strides() == at::IntArrayRef({5, 5, 1}));
  CHECK(td_default["canonical"].data_ptr() == canonical.data_ptr());
  CHECK(td_default[{"nested", "leaf"}].data_ptr() == nested_leaf.data_ptr());
  const TensorDict td_canon = td.contiguous(true);
  CHECK(td_canon["non_canonical"].strides() == at::IntArrayRef({20, 5, 1}));
  CHECK(td_canon["non_canonical"].data_ptr() != non_canonical.data_ptr());
  CHECK(at::allclose(td_canon["non_canonical"], non_canonical));
  CHECK(td_canon["canonical"].data_ptr() == canonical.data_ptr());
  CHECK(td_canon[{"nested", "leaf"}].strides() == at::IntArrayRef({20, 5, 1}));
  CHECK(td_canon[{"nested", "leaf"}].data_ptr() != nested_leaf.data_ptr());
  CHECK(at::allclose(td_canon[{"nested", "leaf"}], nested_leaf));
  CHECK(td_canon.batch_size() == td.batch_size());
  CHECK(td_canon.device() == td.device());
  CHECK(key_set(td_canon.keys()) == key_set(td.keys()));
}

TEST_CASE("test_generic: test_pad", "[parity][generic]") {
  const TensorDict td({{"a", at::ones({3, 4, 1})}, {"b", at::zeros({3, 4, 1, 1})}}, {3, 4});
  const TensorDict padded_td = td.pad({0, 1, 0, 2}, 0.0);
  at::Tensor expected_a = at::cat({at::ones({3, 4, 1}), at::zeros({1, 4, 1})}, 0);
  expected_a = at::cat({expected_a, at::zeros({4, 2, 1})}, 1);
  CHECK(padded_td["a"].sizes().vec() == Shape{4, 6, 1});
  CHECK(padded_td["b"].sizes().vec() == Shape{4, 6, 1, 1});
  CHECK(at::equal(padded_td["a"], expected_a));
}

TEST_CASE("test_generic: test_pad_nontensor", "[parity][generic]") {
  const TensorDict td({{"x", at::arange(3).unsqueeze(-1)},
                       {"instr", NonTensorStack({3}, {Json("a"), Json("b"), Json("c")})}},
                      {3});
  const TensorDict padded = td.pad({0, 2});
  CHECK(padded.get_value("instr").is_non_tensor_stack());
  CHECK(padded.get_value("instr").non_tensor_stack().shape() == Shape{5});
  CHECK(padded.get_non_tensor("instr") == Json({"a", "b", "c", nullptr, nullptr}));
  CHECK(padded["x"].squeeze(-1).equal(at::tensor(std::vector<int64_t>{0, 1, 2, 0, 0})));
  CHECK(td.pad({1, 1}).get_non_tensor("instr") == Json({nullptr, "a", "b", "c", nullptr}));
  CHECK(td.pad({-1, 1}).get_non_tensor("instr") == Json({"b", "c", nullptr}));
}

TEST_CASE("test_generic: test_pad_nontensor_2dim", "[parity][generic]") {
  std::vector<Json> items;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) items.emplace_back(std::to_string(i) + std::to_string(j));
  const TensorDict td({{"instr", NonTensorStack({3, 2}, items)}, {"x", at::ones({3, 2})}}, {3, 2});
  const TensorDict padded = td.pad({0, 1, 1, 0});
  CHECK(padded.batch_size() == BatchSize{4, 3});
  CHECK(padded.get_non_tensor("instr") == Json({{nullptr, "00", "01"},
                                                {nullptr, "10", "11"},
                                                {nullptr, "20", "21"},
                                                {nullptr, nullptr, nullptr}}));
}
