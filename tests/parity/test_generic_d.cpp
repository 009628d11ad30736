// Port of Python tensordict v0.14.0 test/tensordict/test_generic.py, class TestGeneric, part
// four: consolidation (in memory and to a file, non-contiguous leaves), construction (from_dict,
// fromkeys), the batch size of indexing, filling empty TensorDicts, shape ops on views and lazy
// stacks, and pad: in place, with non-tensor data, on lazy stacks, and its pre-flight check.
// docs/parity.md lists which tests are ported and why the others are not.
#include <ATen/ATen.h>
#include <ATen/TensorIndexing.h>
#include <c10/util/intrusive_ptr.h>

#include <algorithm>
#include <string>
#include <vector>

#include "io_test_util.h"
#include "parity_fixtures.h"

using namespace tensordict;
using parity::has_key;

namespace {

using Shape = std::vector<int64_t>;

at::Tensor longs(std::vector<int64_t> v) { return at::tensor(v); }

// Python's `storage *= 0` on td_c._consolidated["storage"]: every byte of the one buffer the
// consolidated leaves view.
void zero_storage(const at::Tensor& leaf) {
  at::Tensor bytes = at::empty({0}, leaf.options().dtype(at::kByte));
  bytes.set_(leaf.storage(), 0, {static_cast<int64_t>(leaf.storage().nbytes())}, {1});
  bytes.zero_();
}

}  // namespace

TEST_CASE("test_generic: test_consolidate", "[parity][generic]") {
  // nested="NJT" (torch's jagged nested tensors, Python-only), num_threads (no C++ argument) and
  // the torch.save / torch.load round trips (pickle) are not applicable.
  const bool use_file = GENERATE(false, true);
  const bool hetdtype = GENERATE(false, true);
  const bool with_device = GENERATE(false, true);  // Python's device=None or "cpu"
  INFO("use_file " << use_file << " hetdtype " << hetdtype << " device "
                   << (with_device ? "cpu" : "None"));
  const std::optional<at::Device> device =
      with_device ? std::optional<at::Device>(at::kCPU) : std::nullopt;
  const at::Tensor a = at::zeros({2});
  const at::Tensor c = at::ones({2}, hetdtype ? at::kHalf : at::kFloat);
  const at::Tensor g = at::full({2, 3}, 2, hetdtype ? at::kDouble : at::kFloat);
  const TensorDict td(
      {{"a", a}, {NestedKey{"b", "c"}, c}, {"d", "a string!"}, {NestedKey{"e", "f", "g"}, g}}, {2},
      device);
  tc_test::TempDir dir;
  const std::string filename = dir / "file.mmap";
  TensorDict td_c;
  if (!use_file) {
    td_c = td.consolidate();
    CHECK(td_c.device() == device);
  } else {
    td_c = td.consolidate(filename);
    CHECK(td_c.device() == at::Device(at::kCPU));
    CHECK((TensorDict::from_consolidated(filename) == td_c).all());
  }
  CHECK(td_c.is_consolidated());  // Python's hasattr(td_c, "_consolidated")
  CHECK((td.to(at::Device(at::kCPU)) == td_c).all());
  CHECK(td_c.get<std::string>("d") == "a string!");
  zero_storage(td_c["a"]);
  CHECK((td.to(at::Device(at::kCPU)) != td_c).any());
}

TEST_CASE("test_generic: test_consolidate_non_contiguous", "[parity][generic]") {
  // Python's num_threads (0, 2) has no C++ counterpart; get_available_devices() is ["cpu"].
  const at::Tensor transposed = at::arange(24, at::kFloat).reshape({2, 3, 4}).transpose(0, 1);
  const at::Tensor strided =
      at::arange(48, at::kLong)
          .reshape({3, 4, 4})
          .index({"...", at::indexing::Slice(c10::nullopt, c10::nullopt, 2)});
  CHECK_THROWS(transposed.view({-1}));
  CHECK(strided.stride(-1) == 2);
  const TensorDict td({{"transposed", transposed}, {"strided", strided}}, {}, at::Device(at::kCPU));
  const TensorDict td_c = td.consolidate();
  for (const auto& [key, value] : td.items()) {
    INFO(key);
    const at::Tensor actual = td_c[key];
    const at::Tensor& expected = value.tensor();
    CHECK(at::equal(actual, expected));
    CHECK(actual.sizes() == expected.sizes());
    CHECK(actual.scalar_type() == expected.scalar_type());
  }
}

TEST_CASE("test_generic: test_consolidate_non_contiguous_requires_grad", "[parity][generic]") {
  const at::Tensor base = at::arange(24, at::kFloat).requires_grad_(true);
  const at::Tensor transposed = base.reshape({2, 3, 4}).transpose(0, 1);
  const TensorDict td({{"value", transposed}}, {}, at::Device(at::kCPU));
  const at::Tensor actual = td.consolidate()["value"];
  CHECK(at::equal(actual, transposed));
  CHECK_FALSE(actual.requires_grad());
  transposed.sum().backward();
  CHECK(at::equal(base.grad(), at::ones_like(base)));
}

TEST_CASE("test_generic: test_consolidated_locking_behavior", "[parity][generic]") {
  const TensorDict td(
      {{"a", at::zeros({1, 1})}, {NestedKey{"b", "c"}, at::zeros({1, 1})}, {"d", "a string!"}}, {1},
      at::Device(at::kCPU));
  TensorDict td_consolidated = td.consolidate();
  CHECK(td_consolidated.is_consolidated());
  CHECK(td_consolidated.is_locked());
  // Python's td["new_key"] = ... and set("new_key", ...) are both set here.
  CHECK_THROWS_AS(td_consolidated.set("new_key", at::ones({1, 1})), LockedError);
  CHECK_THROWS_AS(td_consolidated.update(TensorDict({{"new_key", at::ones({1, 1})}}, {})),
                  LockedError);
  td_consolidated.set_("a", at::ones({1, 1}));  // Python's set(..., inplace=True)
  CHECK((td_consolidated["a"] == 1).all().item<bool>());
  td_consolidated.unlock_();
  CHECK_FALSE(td_consolidated.is_locked());
  CHECK_FALSE(td_consolidated.is_consolidated());
  td_consolidated.set("new_key", at::ones({1, 1}));
  CHECK(td_consolidated.contains("new_key"));
  td_consolidated = td.consolidate();
  TensorDict td_consolidated_device = td_consolidated.to(at::Device(at::kCPU));
  CHECK(td_consolidated_device.is_consolidated());
  CHECK(td_consolidated_device.is_locked());
  td_consolidated_device.unlock_();
  CHECK_FALSE(td_consolidated_device.is_consolidated());
  CHECK_FALSE(td_consolidated_device.is_locked());
}

TEST_CASE("test_generic: test_consolidated_locking_nested", "[parity][generic]") {
  const TensorDict td(
      {{"a", at::zeros({1, 1})}, {"b", TensorDict({{"c", at::zeros({1, 1})}}, {1})}}, {1},
      at::Device(at::kCPU));
  TensorDict td_consolidated = td.consolidate();
  CHECK(td_consolidated.is_consolidated());
  CHECK(td_consolidated.is_locked());
  CHECK(td_consolidated.get_tensordict("b").is_locked());
  CHECK_THROWS_AS(td_consolidated.get_tensordict("b").set("new_key", at::ones({1, 1})),
                  LockedError);
  td_consolidated.unlock_();
  CHECK_FALSE(td_consolidated.is_consolidated());
  CHECK_FALSE(td_consolidated.is_locked());
  CHECK_FALSE(td_consolidated.get_tensordict("b").is_locked());
  td_consolidated.get_tensordict("b").set("new_key", at::ones({1, 1}));
  CHECK(td_consolidated.get_tensordict("b").contains("new_key"));
}

TEST_CASE("test_generic: test_filling_empty_tensordict", "[parity][generic]") {
  // update=True goes through the private _get_sub_tensordict, and the `_source` checks read the
  // source of Python's legacy lazy views (set_lazy_legacy(True)): not applicable. update=False
  // (`td[i] = other_td`) is index_put_.
  const std::string td_type =
      GENERATE(as<std::string>{}, "tensordict", "view", "unsqueeze", "squeeze", "stack");
  INFO("td_type " << td_type);
  const at::Device device(at::kCPU);
  TensorDict td;
  if (td_type == "tensordict") {
    td = TensorDict({}, {16}, device);
  } else if (td_type == "view") {
    td = TensorDict({}, {4, 4}, device).view({-1});
  } else if (td_type == "unsqueeze") {
    td = TensorDict({}, {16}, device).unsqueeze(-1);
  } else if (td_type == "squeeze") {
    td = TensorDict({}, {16, 1}, device).squeeze(-1);
  } else {
    std::vector<TensorDict> tds;
    for (int i = 0; i < 16; ++i) tds.push_back(TensorDict({}, {}, device));
    td = lazy_stack(tds, 0);
  }
  TensorDict other_td;
  for (int64_t i = 0; i < 16; ++i) {
    other_td = TensorDict({{"a", at::randn({10})}, {"b", at::ones({1})}}, {});
    if (td_type == "unsqueeze") other_td = parity::to_tensordict(other_td.unsqueeze(-1));
    td.index_put_({i}, other_td);
  }
  CHECK(td.device() == device);
  CHECK(td.get("a").device() == device);
  CHECK((td.get("b") == 1).all().item<bool>());
  if (td_type == "stack") CHECK((td[-1] == other_td.to(device)).all());
}

TEST_CASE("test_generic: test_flatten_empty", "[parity][generic]") {
  // Python's None start / end dims are flatten's defaults: in_out (None, None), (0, -1) and
  // (0, None) are flatten(0, -1); (None, 0) and (0, 0) are flatten(0, 0).
  const auto [start, end] =
      GENERATE(std::pair<int64_t, int64_t>{0, -1}, std::pair<int64_t, int64_t>{0, 0});
  INFO("in_out " << start << ", " << end);
  const TensorDict td({{"a", at::zeros({2})}});
  const TensorDict td_flat = td.flatten(start, end);
  CHECK(td_flat.shape() == BatchSize{1});
  CHECK(td_flat["a"].sizes().vec() == Shape{1, 2});
}

TEST_CASE("test_generic: test_from_dict", "[parity][generic]") {
  // Python's from_dict(dict, batch_size=, batch_dims=, auto_batch_size=True) is the constructor
  // from key/value pairs: with a batch size, or without one and then auto_batch_size_(batch_dims).
  // Passing both (ValueError "both") cannot be spelled in C++.
  const bool with_batch_size = GENERATE(false, true);
  const std::optional<int64_t> batch_dims =
      GENERATE(std::optional<int64_t>{}, std::optional<int64_t>{1}, std::optional<int64_t>{2});
  if (with_batch_size && batch_dims) return;
  INFO("batch_size " << (with_batch_size ? "[3, 4]" : "None") << " batch_dims "
                     << (batch_dims ? std::to_string(*batch_dims) : "None"));
  const at::Device device(at::kCPU);
  const std::vector<std::pair<NestedKey, Value>> items{
      {"a", at::zeros({3, 4, 5})},
      {NestedKey{"b", "c"}, at::zeros({3, 4, 5, 6})},
      {NestedKey{"d", "e"}, at::ones({3, 4, 5})},
      {NestedKey{"b", "f"}, at::zeros({3, 4, 5, 5})},
      {NestedKey{"d", "g", "h"}, at::ones({3, 4, 5})}};
  TensorDict data;
  if (with_batch_size) {
    data = TensorDict(items, {3, 4}, device);
  } else {
    data = TensorDict(items, {}, device);
    data.auto_batch_size_(batch_dims);
  }
  CHECK(data.device() == device);
  CHECK(has_key(data.keys(), "a"));
  const auto nested_keys = data.keys(true);
  CHECK(has_key(nested_keys, NestedKey{"b", "c"}));
  CHECK(has_key(nested_keys, NestedKey{"b", "f"}));
  CHECK(has_key(nested_keys, NestedKey{"d", "e"}));
  if (batch_dims) {
    CHECK(data.ndim() == *batch_dims);
    CHECK(data.get_tensordict("b").ndim() == *batch_dims);
    CHECK(data.get_tensordict("d").ndim() == *batch_dims);
    CHECK(data.get_tensordict({"d", "g"}).ndim() == *batch_dims);
  } else if (with_batch_size) {
    CHECK(data.batch_size() == BatchSize{3, 4});
    CHECK(data.get_tensordict("b").batch_size() == BatchSize{3, 4});
    CHECK(data.get_tensordict("d").batch_size() == BatchSize{3, 4});
    CHECK(data.get_tensordict({"d", "g"}).batch_size() == BatchSize{3, 4});
  }
}

TEST_CASE("test_generic: test_getitem_batch_size", "[parity][generic]") {
  // Python checks its private _getitem_batch_size(shape, idx) against torch's indexing; here the
  // batch size of an (empty) TensorDict of that batch size indexed with idx. Python's
  // `(slice(None),)` and `slice(None)` are one C++ index, as are `(torch.tensor([1, 2, 3]),)` and
  // the list `[1, 2, 3]`.
  using at::indexing::Slice;
  using at::indexing::TensorIndex;
  const Shape shape{10, 7, 11, 5};
  const at::Tensor mask4 = at::zeros({10, 7, 11, 5}, at::kBool).bernoulli_();
  const at::Tensor mask3 = at::zeros({10, 7, 11}, at::kBool).bernoulli_();
  const at::Tensor mask1 = at::zeros({7}, at::kBool).bernoulli_();
  const std::vector<std::pair<Index, std::vector<TensorIndex>>> cases{
      {{tensordict::Slice()}, {Slice()}},
      {{3, 4}, {3, 4}},
      {{3, tensordict::Slice(), tensordict::Slice(2, 2, 2)}, {3, Slice(), Slice(2, 2, 2)}},
      {{longs({1, 2, 3})}, {longs({1, 2, 3})}},
      {{longs({1, 2, 3}), longs({2, 3, 4}), longs({0, 10, 2}), longs({2, 4, 1})},
       {longs({1, 2, 3}), longs({2, 3, 4}), longs({0, 10, 2}), longs({2, 4, 1})}},
      {{mask4}, {mask4}},
      {{mask3}, {mask3}},
      {{0, mask1}, {0, mask1}}};
  const at::Tensor mocking_tensor = at::zeros(shape);
  const TensorDict td({}, shape);
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    const auto expected_shape = mocking_tensor.index(cases[i].second).sizes().vec();
    CHECK(td.index(cases[i].first).batch_size() == expected_shape);
  }
}

TEST_CASE("test_generic: test_is_in", "[parity][generic]") {
  // `0 in td` (a RuntimeError naming NestedKey) does not compile in C++.
  const TensorDict td = TensorDict::fromkeys({"a", "b", "c", NestedKey{"d", "e"}}, 0);
  CHECK(td.contains("a"));
  CHECK(td.contains("d"));
  CHECK(td.contains({"d", "e"}));
  CHECK_FALSE(td.contains("f"));
}

TEST_CASE("test_generic: test_movedim_with_tensordict_operations", "[parity][generic]") {
  at::manual_seed(1);
  const TensorDict td1 =
      TensorDict(
          {{"a", at::randn({20, 6, 9})}, {"b", at::randn({20, 6, 7})}, {"c", at::randn({20, 6})}},
          {20, 6})
          .view({4, 5, 6})
          .movedim({0}, {2});
  CHECK(td1.shape() == BatchSize{5, 6, 4});
  const TensorDict source(
      {{"a", at::randn({4, 5, 9})}, {"b", at::randn({4, 5, 7})}, {"c", at::randn({4, 5})}}, {4, 5});
  std::vector<TensorDict> tds;
  for (int i = 0; i < 6; ++i) tds.push_back(source.clone());
  const TensorDict td2 = lazy_stack(tds, 2).movedim({0}, {2});  // stack_td(..., contiguous=False)
  CHECK(td2.shape() == BatchSize{5, 6, 4});
}

TEST_CASE("test_generic: test_permute_with_tensordict_operations", "[parity][generic]") {
  at::manual_seed(1);
  TensorDict td1 =
      TensorDict(
          {{"a", at::randn({20, 6, 9})}, {"b", at::randn({20, 6, 7})}, {"c", at::randn({20, 6})}},
          {20, 6})
          .view({4, 5, 6})
          .permute({2, 1, 0});
  CHECK(td1.shape() == BatchSize{6, 5, 4});
  td1 = TensorDict({{"a", at::randn({4, 5, 6, 7, 9})},
                    {"b", at::randn({4, 5, 6, 7, 7})},
                    {"c", at::randn({4, 5, 6, 7})}},
                   {4, 5, 6, 7})
            .index({tensordict::Slice(), tensordict::Slice(), tensordict::Slice(), longs({1, 2})})
            .permute({3, 2, 1, 0});
  CHECK(td1.shape() == BatchSize{2, 6, 5, 4});
  const TensorDict source(
      {{"a", at::randn({4, 5, 9})}, {"b", at::randn({4, 5, 7})}, {"c", at::randn({4, 5})}}, {4, 5});
  std::vector<TensorDict> tds;
  for (int i = 0; i < 6; ++i) tds.push_back(source.clone());
  td1 = lazy_stack(tds, 2).permute({2, 1, 0});
  CHECK(td1.shape() == BatchSize{6, 5, 4});
}

TEST_CASE("test_generic: test_pad_inplace_lazy_stack_both_dims", "[parity][generic]") {
  const TensorDict td_a({{"x", at::ones({4})}}, {4});
  const TensorDict td_b({{"x", at::ones({4}) * 2}}, {4});
  TensorDict lst_inplace = lazy_stack({td_a.clone(), td_b.clone()}, 0);
  const TensorDict lst_ref = lazy_stack({td_a.clone(), td_b.clone()}, 0);
  const TensorDict ref = lst_ref.pad({1, 0, 0, 2}, 3.0);
  TensorDict& out = lst_inplace.pad_({1, 0, 0, 2}, 3.0);
  CHECK(out.is_same(lst_inplace));
  CHECK(out.batch_size() == ref.batch_size());
  for (const auto& key : ref.keys(true, true)) {
    INFO(key);
    CHECK(at::equal(out[key], ref[key]));
  }
}

TEST_CASE("test_generic: test_pad_inplace_releases_old_storage", "[parity][generic]") {
  TensorDict td({{"a", at::zeros({8, 16, 32})}, {"b", at::ones({8, 16})}}, {8, 16});
  const auto ref_a = parity::weak_storage(td["a"]);
  const auto ref_b = parity::weak_storage(td["b"]);
  td.pad_({0, 0, 0, 1});
  CHECK(ref_a.expired());
  CHECK(ref_b.expired());
}

TEST_CASE("test_generic: test_pad_safe_catches_bad_pad_before_mutation", "[parity][generic]") {
  // safe=True is Python's default and C++'s only behaviour. Python's RuntimeError "... would
  // produce a negative output size" is an Error here ("pad: ... crops batch dim 0 ... below 0"),
  // as in test_pad_safe_default_is_true, test_pad_safe_lazy_stack and test_pad_nontensor_safe.
  TensorDict td({{"a", at::ones({3, 4})}, {"b", at::zeros({3, 4, 2})}}, {3, 4});
  const at::Tensor old_a = td["a"];
  const at::Tensor old_b = td["b"];
  CHECK_THROWS_AS(td.pad_({-10, 0, 0, 0}), Error);
  CHECK(td["a"].is_same(old_a));
  CHECK(td["b"].is_same(old_b));
  CHECK(td.batch_size() == BatchSize{3, 4});
}

TEST_CASE("test_generic: test_pad_safe_default_is_true", "[parity][generic]") {
  TensorDict td({{"a", at::ones({3, 4})}}, {3, 4});
  const at::Tensor old_a = td["a"];
  CHECK_THROWS_AS(td.pad_({-10, 0, 0, 0}), Error);
  CHECK(td["a"].is_same(old_a));
}

TEST_CASE("test_generic: test_pad_safe_lazy_stack", "[parity][generic]") {
  const TensorDict td_a({{"x", at::ones({4})}}, {4});
  const TensorDict td_b({{"x", at::ones({4}) * 2}}, {4});
  TensorDict lst = lazy_stack({td_a, td_b}, 0);
  std::vector<at::Tensor> snapshots;
  for (const TensorDict& t : lst.tensordicts()) snapshots.push_back(t["x"]);
  CHECK_THROWS_AS(lst.pad_({0, 0, -10, 0}), Error);
  for (size_t i = 0; i < snapshots.size(); ++i)
    CHECK(lst.tensordicts()[i]["x"].is_same(snapshots[i]));
  CHECK(lst.batch_size() == BatchSize{2, 4});
}

TEST_CASE("test_generic: test_pad_nontensor_broadcast_data", "[parity][generic]") {
  // Python's NonTensorData("m", batch_size=[3]): a C++ NonTensorData takes its parent's batch size.
  const TensorDict td({{"meta", NonTensorData{Json("m")}}, {"x", at::ones({3})}}, {3});
  const TensorDict padded = td.pad({0, 2});
  CHECK(padded.get_non_tensor("meta") == Json({"m", "m", "m", nullptr, nullptr}));
}

TEST_CASE("test_generic: test_pad_nontensor_inplace", "[parity][generic]") {
  // `out.get("instr") is instr`: a NonTensorStack is a value here (no identity to keep).
  TensorDict td({{"x", at::arange(3).to(at::kFloat)},
                 {"instr", NonTensorStack({3}, {Json("a"), Json("b"), Json("c")})}},
                {3});
  TensorDict& out = td.pad_({0, 2});
  CHECK(out.is_same(td));
  CHECK(out.get_non_tensor("instr") == Json({"a", "b", "c", nullptr, nullptr}));
  CHECK(at::equal(out["x"], at::tensor(std::vector<float>{0, 1, 2, 0, 0})));
}

TEST_CASE("test_generic: test_pad_nontensor_safe", "[parity][generic]") {
  const TensorDict td({{"instr", NonTensorStack({3}, {Json("a"), Json("b"), Json("c")})}}, {3});
  CHECK_THROWS_AS(td.pad({-4, 0}), Error);
}

TEST_CASE("test_generic: test_pad_nontensor_lazy_stack", "[parity][generic]") {
  auto make = [] {
    std::vector<TensorDict> tds;
    for (int i = 0; i < 2; ++i) {
      std::vector<Json> items;
      for (int j = 0; j < 4; ++j) items.emplace_back(std::to_string(i) + std::to_string(j));
      tds.push_back(
          TensorDict({{"x", at::ones({4}) * i}, {"instr", NonTensorStack({4}, items)}}, {4}));
    }
    return lazy_stack(tds, 0);
  };
  const Json expected{{"00", "01", "02", "03", nullptr, nullptr},
                      {"10", "11", "12", "13", nullptr, nullptr},
                      {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr}};
  const TensorDict padded = make().pad({0, 1, 0, 2}, 9.0);
  CHECK(padded.get_non_tensor("instr") == expected);
  TensorDict lst = make();
  TensorDict& out = lst.pad_({0, 1, 0, 2}, 9.0);
  CHECK(out.is_same(lst));
  CHECK(out.get_non_tensor("instr") == expected);
}
