// Port of Python tensordict v0.14.0 test/tensordict/test_generic.py, class TestGeneric, part six:
// the tests of the API added for them in the second round: bytes, param_count,
// cat/stack_from_tensordict, merge_tensordicts, pad_sequence, separates, update_ with
// keys_to_update, and repeat, repeat_interleave and roll in place.
#include <ATen/ATen.h>

#include <set>
#include <string>
#include <vector>

#include "parity_fixtures.h"

using namespace tensordict;
using parity::build_nested_td;

namespace {

std::set<NestedKey> leaf_keys(const TensorDict& td) {
  const auto keys = td.keys(/*include_nested=*/true, /*leaves_only=*/true);
  return {keys.begin(), keys.end()};
}

}  // namespace

TEST_CASE("test_generic: test_bytes", "[parity][generic]") {
  // Python's nested-tensor entries (njt, tricky) have no C++ form: 12 + 24 for both settings.
  const bool count_duplicates = GENERATE(false, true);
  INFO("count_duplicates " << count_duplicates);
  const at::Tensor tensor = at::zeros({3});
  const at::Tensor tensor_with_grad = at::ones({3}).requires_grad_(true);
  (tensor_with_grad + 1).sum().backward();
  const TensorDict td({{"tensor", tensor}, {"tensor_with_grad", tensor_with_grad}}, {});
  CHECK(td.bytes(count_duplicates) == 12 + 24);
}

TEST_CASE("test_generic: test_param_count", "[parity][generic]") {
  const bool count_duplicates = GENERATE(false, true);
  INFO("count_duplicates " << count_duplicates);
  TensorDict td({{"a", at::randn({3})}, {"b", at::randn({6})}}, {});
  td.set("c", td["a"]);
  CHECK(td.values(true, true).size() == 3);
  CHECK(td.param_count(count_duplicates) == (count_duplicates ? 12 : 9));
}

TEST_CASE("test_generic: test_cat_from_tensordict", "[parity][generic]") {
  const TensorDict td(
      {{"a", at::zeros({3, 4})}, {"b", TensorDict({{"c", at::ones({3, 4})}}, {3, 4})}}, {3, 4});
  const at::Tensor tensor = td.cat_from_tensordict(1);
  CHECK(tensor.sizes() == at::IntArrayRef({3, 8}));
  CHECK((tensor.slice(1, 0, 4) == 0).all().item<bool>());
  CHECK((tensor.slice(1, 4) == 1).all().item<bool>());
  // Python's sorted=[keys]: the leaves in that order; other keys than the leaves' are refused.
  const at::Tensor reordered = td.cat_from_tensordict(1, {NestedKey{"b", "c"}, "a"});
  CHECK((reordered.slice(1, 0, 4) == 1).all().item<bool>());
  CHECK_THROWS_AS(td.cat_from_tensordict(1, std::vector<NestedKey>{"a"}), KeyError);
}

TEST_CASE("test_generic: test_stack_from_tensordict", "[parity][generic]") {
  const TensorDict td(
      {{"a", at::zeros({3, 4})}, {"b", TensorDict({{"c", at::ones({3, 4})}}, {3, 4})}}, {3, 4});
  const at::Tensor tensor = td.stack_from_tensordict(1);
  CHECK(tensor.sizes() == at::IntArrayRef({3, 2, 4}));
  CHECK((tensor.select(1, 0) == 0).all().item<bool>());
  CHECK((tensor.select(1, 1) == 1).all().item<bool>());
}

TEST_CASE("test_generic: test_merge_tensordicts", "[parity][generic]") {
  const bool dist_of_callables = GENERATE(false, true);
  INFO("dist_of_callables " << dist_of_callables);
  const TensorDict td0({{NestedKey{"a", "b0"}, 0}, {NestedKey{"c", "d", "e"}, 0}, {"common", 0}});
  const TensorDict td1({{NestedKey{"a", "b1"}, 1}, {NestedKey{"f", "g", "h"}, 1}, {"common", 1}});
  const TensorDict td2({{NestedKey{"a", "b2"}, 2}, {NestedKey{"f", "g", "h"}, 2}, {"common", 2}});
  const MergeFn caller = [](const std::vector<at::Tensor>& v) { return at::stack(v); };
  const TensorDict td = dist_of_callables ? merge_tensordicts({td0, td1, td2}, {{"common", caller}})
                                          : merge_tensordicts({td0, td1, td2}, caller);
  CHECK(td.get({"a", "b0"}).item<int64_t>() == 0);
  CHECK(td.get({"a", "b1"}).item<int64_t>() == 1);
  CHECK(td.get({"a", "b2"}).item<int64_t>() == 2);
  CHECK(at::equal(td["common"], at::arange(3)));
  CHECK(td.get({"c", "d", "e"}).item<int64_t>() == 0);
  CHECK(td.get({"f", "g", "h"}).item<int64_t>() == 1);
  CHECK_THROWS_AS(merge_tensordicts({td0}), ValueError);
}

TEST_CASE("test_generic: test_pad_sequence_pad_dim0", "[parity][generic]") {
  // Python's return_mask True, False or a key ("bibbidi", "bobbidi", "boo").
  const int make_mask = GENERATE(0, 1, 2);
  const double pad_val = GENERATE(0.0, -1.0);
  INFO("make_mask " << make_mask << " pad_val " << pad_val);
  const std::vector<TensorDict> list_td = {
      TensorDict({{"a", at::ones({2, 8, 8})}, {NestedKey{"b", "c"}, at::ones({2, 3})}}, {2}),
      TensorDict({{"a", at::full({4, 8, 8}, 2)}, {NestedKey{"b", "c"}, at::full({4, 3}, 2)}}, {4})};
  std::optional<NestedKey> masks_key;
  if (make_mask == 1) masks_key = "masks";
  if (make_mask == 2) masks_key = NestedKey{"bibbidi", "bobbidi", "boo"};
  const TensorDict padded_td = pad_sequence(list_td, 0, pad_val, masks_key);
  CHECK(padded_td.batch_size() == BatchSize{2, 4});
  const at::Tensor a = padded_td["a"];
  CHECK((a.select(0, 0).slice(0, 0, 2) == 1).all().item<bool>());
  CHECK((a.select(0, 1) == 2).all().item<bool>());
  CHECK(a.sizes() == at::IntArrayRef({2, 4, 8, 8}));
  CHECK((a.select(0, 0).slice(0, 2) == pad_val).all().item<bool>());
  const at::Tensor bc = padded_td.get({"b", "c"});
  CHECK(bc.sizes() == at::IntArrayRef({2, 4, 3}));
  CHECK((bc.select(0, 0).slice(0, 2) == pad_val).all().item<bool>());
  if (!masks_key) {
    CHECK_FALSE(padded_td.contains("masks"));
    return;
  }
  const TensorDict without_masks = pad_sequence(list_td, 0, pad_val);
  REQUIRE(padded_td.contains(*masks_key));
  CHECK(leaf_keys(without_masks) == leaf_keys(padded_td.get_tensordict(*masks_key)));
  for (const NestedKey& key : {NestedKey("a"), NestedKey{"b", "c"}}) {
    INFO(key);
    const at::Tensor mask = padded_td.get_tensordict(*masks_key).get(key);
    CHECK_FALSE(mask.all().item<bool>());
    CHECK(mask.dim() == 0 + 2);
    CHECK((padded_td.get(key).index({mask}) != pad_val).all().item<bool>());
    CHECK((padded_td.get(key).index({mask.logical_not()}) == pad_val).all().item<bool>());
  }
}

TEST_CASE("test_generic: test_pad_sequence_pad_dim1", "[parity][generic]") {
  const bool make_mask = GENERATE(true, false);
  INFO("make_mask " << make_mask);
  const std::vector<TensorDict> list_td = {
      TensorDict({{"a", at::ones({6, 3, 8})}, {NestedKey{"b", "c"}, at::ones({6, 3})}}, {6}),
      TensorDict({{"a", at::full({6, 5, 8}, 2)}, {NestedKey{"b", "c"}, at::full({6, 7}, 2)}}, {6})};
  const std::optional<NestedKey> masks_key =
      make_mask ? std::optional<NestedKey>("masks") : std::nullopt;
  const TensorDict padded_td = pad_sequence(list_td, 1, 0, masks_key);
  CHECK(padded_td.batch_size() == BatchSize{2, 6});
  const at::Tensor a = padded_td["a"];
  CHECK(a.sizes() == at::IntArrayRef({2, 6, 5, 8}));
  CHECK((a.select(0, 0).slice(1, 0, 3) == 1).all().item<bool>());
  CHECK((a.select(0, 0).slice(1, 3) == 0).all().item<bool>());
  CHECK((a.select(0, 1) == 2).all().item<bool>());
  const at::Tensor bc = padded_td.get({"b", "c"});
  CHECK(bc.sizes() == at::IntArrayRef({2, 6, 7}));
  CHECK((bc.select(0, 0).slice(1, 3) == 0).all().item<bool>());
  if (!make_mask) {
    CHECK_FALSE(padded_td.contains("masks"));
    return;
  }
  CHECK(leaf_keys(pad_sequence(list_td, 1)) == leaf_keys(padded_td.get_tensordict("masks")));
  for (const NestedKey& key : {NestedKey("a"), NestedKey{"b", "c"}}) {
    INFO(key);
    const at::Tensor mask = padded_td.get_tensordict("masks").get(key);
    CHECK_FALSE(mask.all().item<bool>());
    CHECK(mask.dim() == 1 + 2);
    CHECK((padded_td.get(key).index({mask}) != 0).all().item<bool>());
    CHECK((padded_td.get(key).index({mask.logical_not()}) == 0).all().item<bool>());
  }
}

TEST_CASE("test_generic: test_pad_sequence_nontensor", "[parity][generic]") {
  const TensorDict d1({{"a", at::tensor(std::vector<int64_t>{1, 1})}, {"b", "asd"}}, {});
  const TensorDict d2({{"a", at::tensor(std::vector<int64_t>{2})}, {"b", "efg"}}, {});
  const TensorDict d = pad_sequence({d1, d2});
  CHECK(at::equal(d["a"], at::tensor(std::vector<int64_t>{1, 1, 2, 0}).view({2, 2})));
  CHECK(d.get_non_tensor("b") == Json::array({"asd", "efg"}));
}

TEST_CASE("test_generic: test_pad_sequence_single_nontensor", "[parity][generic]") {
  const TensorDict d1({{"a", at::tensor(std::vector<int64_t>{1, 1})}, {"b", "asd"}}, {});
  const TensorDict d = pad_sequence({d1});
  CHECK(at::equal(d["a"], at::tensor(std::vector<int64_t>{1, 1}).view({1, 2})));
  CHECK(d.get_non_tensor("b") == Json::array({"asd"}));
  CHECK(d.get_value("b").is_non_tensor_stack());
}

TEST_CASE("test_generic: test_separates", "[parity][generic]") {
  auto make = [] {
    return TensorDict({{"a", 0}, {"b", TensorDict({{"c", 0}, {"d", 0}}, {})}}, {});
  };
  TensorDict td = make();
  TensorDict td_sep = td.separates({"a", NestedKey{"b", "d"}});
  CHECK(td_sep.contains("a"));
  CHECK_FALSE(td.contains("a"));
  CHECK(td_sep.contains(NestedKey{"b", "d"}));
  CHECK_FALSE(td.contains(NestedKey{"b", "d"}));
  td = make();
  CHECK_THROWS_AS(td.separates({"a", NestedKey{"b", "d"}, "e"}), KeyError);
  CHECK(td.contains("a"));  // a KeyError moves nothing
  td = make();
  td_sep = td.separates({"a", NestedKey{"b", "d"}, "e"}, /*strict=*/false);
  CHECK(td_sep.get_non_tensor("e").is_null());  // Python's default=None
  for (const bool filter_empty : {true, false}) {
    INFO("filter_empty " << filter_empty);
    td = make();
    td.set("unique", TensorDict({{"val", 0}}, {}));
    td_sep = td.separates({"a", NestedKey{"b", "d"}, "e", NestedKey{"unique", "val"}},
                          /*strict=*/false, filter_empty);
    CHECK(td.contains("unique") == !filter_empty);
    CHECK(td_sep.contains("unique"));
  }
}

TEST_CASE("test_generic: test_update_", "[parity][generic]") {
  // todict=True (Python dicts) has no C++ form.
  const bool stack = GENERATE(false, true);
  INFO("stack " << stack);
  auto make = [stack](int val) {
    auto one = [val] {
      return TensorDict({{"a", TensorDict({{"b", val}, {"c", TensorDict()}}, {})},
                         {"d", TensorDict({{"e", val}, {"f", val}}, {})}},
                        {});
    };
    return stack ? lazy_stack({one(), one()}) : one();
  };
  TensorDict td1 = make(1);
  const TensorDict td2 = make(2);
  td1.update_(td2);
  CHECK((td1 == 2).all());

  td1 = make(1);
  for (const NestedKey& key : {NestedKey{"a"}, NestedKey("a")}) {
    td1.update_(td2, {key});
    CHECK((td1.select({"a"}) == 2).all());
    CHECK((td1.exclude({"a"}) == 1).all());
  }
  td1 = make(1);
  for (const NestedKey& key : {NestedKey{"a", "b"}, NestedKey{{"a"}, {{{"b"}}}}}) {
    td1.update_(td2, {key});
    CHECK((td1.select({NestedKey{"a", "b"}}) == 2).all());
    CHECK((td1.exclude({NestedKey{"a", "b"}}) == 1).all());
  }
  // A key the destination lacks is refused.
  CHECK_THROWS_AS(TensorDict({{"a", 0}}, {}).update_(TensorDict({{"b", 1}}, {})), KeyError);
  CHECK_THROWS_AS(TensorDict({{"a", 0}}, {}).update_(TensorDict({{"b", 1}}, {}), {"b"}), KeyError);
  TensorDict td_dest({{"a", 0}, {"b", 1}}, {});
  td_dest.update_(TensorDict({{"a", 0}}, {}));
}

TEST_CASE("test_generic: test_repeat_inplace", "[parity][generic]") {
  const bool inplace = GENERATE(true, false);
  INFO("inplace " << inplace);
  TensorDict td = build_nested_td();
  const TensorDict nested_before = td.get_tensordict("nested");
  const TensorDict ref = build_nested_td().repeat({2, 3});
  const TensorDict out = inplace ? td.repeat_({2, 3}) : td.repeat({2, 3});
  CHECK(out.is_same(td) == inplace);
  if (inplace) CHECK(out.get_tensordict("nested").is_same(nested_before));
  CHECK(out.batch_size() == BatchSize{6, 12});
  for (const auto& key : ref.keys(true, true)) {
    INFO(key);
    CHECK(at::equal(out[key], ref[key]));
  }
}

TEST_CASE("test_generic: test_repeat_inplace_releases_storage", "[parity][generic]") {
  TensorDict td({{"a", at::zeros({4, 5, 8})}}, {4, 5});
  const auto ref = parity::weak_storage(td["a"]);
  td.repeat_({2, 1});
  CHECK(ref.expired());
}

TEST_CASE("test_generic: test_repeat_inplace_lazy_stack_raises", "[parity][generic]") {
  // Python: NotImplementedError naming repeat; here a TypeError naming repeat_.
  TensorDict lst = lazy_stack(
      {TensorDict({{"x", at::zeros({4})}}, {4}), TensorDict({{"x", at::zeros({4})}}, {4})}, 0);
  CHECK_THROWS_AS(lst.repeat_({2, 1}), TypeError);
}

TEST_CASE("test_generic: test_repeat_interleave_inplace", "[parity][generic]") {
  const bool inplace = GENERATE(true, false);
  INFO("inplace " << inplace);
  TensorDict td = build_nested_td();
  const TensorDict ref = build_nested_td().repeat_interleave(2, 0);
  const TensorDict out = inplace ? td.repeat_interleave_(2, 0) : td.repeat_interleave(2, 0);
  if (inplace) CHECK(out.is_same(td));
  CHECK(out.batch_size() == BatchSize{6, 4});
  for (const auto& key : ref.keys(true, true)) {
    INFO(key);
    CHECK(at::equal(out[key], ref[key]));
  }
}

TEST_CASE("test_generic: test_repeat_interleave_inplace_lazy_stack_raises", "[parity][generic]") {
  TensorDict lst = lazy_stack(
      {TensorDict({{"x", at::zeros({4})}}, {4}), TensorDict({{"x", at::zeros({4})}}, {4})}, 0);
  CHECK_THROWS_AS(lst.repeat_interleave_(2, 1), TypeError);
}

TEST_CASE("test_generic: test_roll_inplace", "[parity][generic]") {
  const bool inplace = GENERATE(true, false);
  INFO("inplace " << inplace);
  TensorDict td = build_nested_td();
  const TensorDict nested_before = td.get_tensordict("nested");
  const TensorDict ref = build_nested_td().roll({1}, {0});
  const TensorDict out = inplace ? td.roll_({1}, {0}) : td.roll({1}, {0});
  if (inplace) {
    CHECK(out.is_same(td));
    CHECK(out.get_tensordict("nested").is_same(nested_before));
  }
  CHECK(out.batch_size() == BatchSize{3, 4});
  for (const auto& key : ref.keys(true, true)) {
    INFO(key);
    CHECK(at::equal(out[key], ref[key]));
  }
}

TEST_CASE("test_generic: test_roll_inplace_releases_storage", "[parity][generic]") {
  TensorDict td({{"a", at::zeros({4, 5})}}, {4, 5});
  const auto ref = parity::weak_storage(td["a"]);
  td.roll_({1}, {0});
  CHECK(ref.expired());
}
