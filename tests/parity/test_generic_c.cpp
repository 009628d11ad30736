// Port of Python tensordict v0.14.0 test/tensordict/test_generic.py, class TestGeneric, part
// three: state dicts (flat and nested, keep_vars), dtype, locks from share_memory_, the in-place
// batch ops (Python's inplace=True: reshape_, flatten_, unflatten_, gather_, pad_, contiguous_)
// and names through repeat and cat.
#include <ATen/ATen.h>

#include <set>

#include "parity_fixtures.h"
#include "tensordict/state_dict.h"

using namespace tensordict;
using parity::build_nested_td;

namespace {

using Shape = std::vector<int64_t>;

std::set<std::string> state_keys(const StateDict& sd) {
  std::set<std::string> out;
  for (const auto& [key, tensor] : sd.tensors) out.insert(key);
  return out;
}

}  // namespace

TEST_CASE("test_generic: test_no_batch_size", "[parity][generic]") {
  const TensorDict td({{"a", at::zeros({3, 4})}});
  CHECK(td.batch_size().empty());
}

TEST_CASE("test_generic: test_load_state_dict_incomplete", "[parity][generic]") {
  auto with_empty_levels = [](int d) {
    return TensorDict(
        {{"a", TensorDict({{"b", TensorDict({{"c", TensorDict()}}, {})}}, {})}, {"d", d}}, {});
  };
  TensorDict data = with_empty_levels(1);
  StateDict sd = TensorDict({{"d", 0}}, {}).state_dict();
  data.load_state_dict(sd, true);
  CHECK((data["d"] == 0).item<bool>());
  sd = with_empty_levels(1).state_dict();
  data = TensorDict({{"d", 0}}, {});
  data.load_state_dict(sd, true);
  CHECK((data["d"] == 1).item<bool>());
}

TEST_CASE("test_generic: test_state_dict_flat_roundtrip", "[parity][generic]") {
  const TensorDict td(
      {{"a", 1}, {"b", TensorDict({{"c", 2}, {"d", TensorDict({{"e", 3}}, {})}}, {})}}, {});
  const StateDict sd = td.state_dict();
  CHECK(state_keys(sd) == std::set<std::string>{"a", "b.c", "b.d.e"});
  CHECK(sd.metadata.contains(""));
  CHECK(sd.metadata.contains("b"));
  CHECK(sd.metadata.contains("b.d"));
  TensorDict td_zero = td.clone().zero_();
  td_zero.load_state_dict(sd);
  CHECK((td_zero == td).all());
}

TEST_CASE("test_generic: test_state_dict_nested_roundtrip", "[parity][generic]") {
  const TensorDict td(
      {{"a", 1}, {"b", TensorDict({{"c", 2}, {"d", TensorDict({{"e", 3}}, {})}}, {})}}, {});
  StateDictOptions nested;
  nested.flatten = false;
  const StateDict sd = td.state_dict(nested);
  // Python's sd.keys() is {"a", "b"}, with sd["b"] a dict: here "b" is a nested StateDict.
  CHECK(state_keys(sd) == std::set<std::string>{"a"});
  REQUIRE(sd.nested.size() == 1);
  CHECK(sd.nested[0].first == "b");
  const StateDict& b = sd.nested[0].second;
  CHECK(state_keys(b) == std::set<std::string>{"c"});
  REQUIRE(b.nested.size() == 1);
  CHECK(b.nested[0].first == "d");
  TensorDict td_zero = td.clone().zero_();
  td_zero.load_state_dict(sd);
  CHECK((td_zero == td).all());
}

TEST_CASE("test_generic: test_state_dict_cross_format_loading", "[parity][generic]") {
  const TensorDict td({{"a", 1}, {"b", TensorDict({{"c", 2}}, {})}}, {});
  StateDictOptions nested;
  nested.flatten = false;
  const StateDict sd_flat = td.state_dict();
  const StateDict sd_nested = td.state_dict(nested);
  for (const auto& [sd, from_flatten] :
       std::vector<std::pair<StateDict, std::optional<bool>>>{{sd_flat, std::nullopt},
                                                              {sd_nested, std::nullopt},
                                                              {sd_flat, true},
                                                              {sd_nested, false}}) {
    INFO("nested " << !sd.nested.empty() << " from_flatten "
                   << (from_flatten ? std::to_string(*from_flatten) : "unset"));
    TensorDict td_zero = td.clone().zero_();
    td_zero.load_state_dict(sd, true, false, from_flatten);
    CHECK((td_zero == td).all());
  }
}

TEST_CASE("test_generic: test_state_dict_keep_vars", "[parity][generic]") {
  const at::Tensor t = at::randn({3}).requires_grad_(true);
  const TensorDict td({{"a", t}}, {});
  StateDictOptions keep;
  keep.keep_vars = true;
  const StateDict sd_detached = td.state_dict();
  CHECK_FALSE(sd_detached.at("a").requires_grad());
  const StateDict sd_kept = td.state_dict(keep);
  CHECK(sd_kept.at("a").requires_grad());
  CHECK(sd_kept.at("a").data_ptr() == t.data_ptr());
}

TEST_CASE("test_generic: test_dtype", "[parity][generic]") {
  TensorDict td({{NestedKey{"an", "integer"}, 1},
                 {NestedKey{"a", "string"}, NonTensorData{Json("a")}},
                 {NestedKey{"the", "float"}, 1.0}},
                {});
  CHECK_FALSE(td.dtype().has_value());
  td = td.to(at::kFloat);  // Python's float()
  CHECK(td.dtype() == at::kFloat);
  td = td.to(at::kInt);  // Python's int()
  CHECK(td.dtype() == at::kInt);
}

TEST_CASE("test_generic: test_state_dict_metadata_content", "[parity][generic]") {
  const TensorDict td({{"x", at::randn({3})}, {"sub", TensorDict({{"y", at::randn({3})}}, {3})}},
                      {3});
  const StateDict sd = td.state_dict();
  CHECK(sd.metadata[""]["batch_size"] == Json::array({3}));
  CHECK(sd.metadata["sub"]["batch_size"] == Json::array({3}));
}

TEST_CASE("test_generic: test_reshape_inplace", "[parity][generic]") {
  const bool inplace = GENERATE(true, false);
  INFO("inplace " << inplace);
  TensorDict td = build_nested_td();
  const TensorDict ref = build_nested_td().reshape({12});
  const TensorDict out = inplace ? td.reshape_({12}) : td.reshape({12});
  if (inplace) CHECK(out.is_same(td));
  CHECK(out.batch_size() == BatchSize{12});
  for (const auto& key : ref.keys(true, true)) {
    INFO(key);
    CHECK(at::equal(out[key], ref[key]));
  }
}

TEST_CASE("test_generic: test_flatten_inplace", "[parity][generic]") {
  const bool inplace = GENERATE(true, false);
  INFO("inplace " << inplace);
  TensorDict td = build_nested_td();
  const TensorDict ref = build_nested_td().flatten(0, 1);
  const TensorDict out = inplace ? td.flatten_(0, 1) : td.flatten(0, 1);
  if (inplace) CHECK(out.is_same(td));
  CHECK(out.batch_size() == BatchSize{12});
  for (const auto& key : ref.keys(true, true)) {
    INFO(key);
    CHECK(at::equal(out[key], ref[key]));
  }
}

TEST_CASE("test_generic: test_contiguous_inplace", "[parity][generic]") {
  const bool inplace = GENERATE(true, false);
  INFO("inplace " << inplace);
  const at::Tensor big = at::arange(20).view({4, 5}).to(at::kFloat);
  const at::Tensor strided = big.slice(1, 0, 5, 2);
  TensorDict td({{"a", strided}}, {4, 3});
  CHECK_FALSE(td["a"].is_contiguous());
  const void* old_ptr = td["a"].data_ptr();
  const TensorDict out = inplace ? td.contiguous_() : td.contiguous();
  if (inplace) CHECK(out.is_same(td));
  CHECK(out["a"].is_contiguous());
  CHECK(out["a"].data_ptr() != old_ptr);
  CHECK(at::equal(out["a"], strided.contiguous()));
}

TEST_CASE("test_generic: test_gather_inplace", "[parity][generic]") {
  const bool inplace = GENERATE(true, false);
  INFO("inplace " << inplace);
  TensorDict td = build_nested_td();
  const TensorDict nested_before = td.get_tensordict("nested");
  const at::Tensor index = at::tensor(std::vector<int64_t>{0, 2, 1, 3, 2, 0}).view({3, 2});
  const TensorDict ref = build_nested_td().gather(1, index);
  const TensorDict out = inplace ? td.gather_(1, index) : td.gather(1, index);
  if (inplace) {
    CHECK(out.is_same(td));
    CHECK(out.get_tensordict("nested").is_same(nested_before));
  }
  CHECK(out.batch_size() == BatchSize{3, 2});
  for (const auto& key : ref.keys(true, true)) {
    INFO(key);
    CHECK(at::equal(out[key], ref[key]));
  }
}

TEST_CASE("test_generic: test_gather_inplace_ndim_mismatch_raises", "[parity][generic]") {
  // Python: NotImplementedError naming index.ndim; here an Error.
  TensorDict td({{"a", at::zeros({3, 4})}}, {3, 4});
  CHECK_THROWS_AS(td.gather_(0, at::tensor(std::vector<int64_t>{0, 1})), Error);
}

TEST_CASE("test_generic: test_unflatten_inplace", "[parity][generic]") {
  const bool inplace = GENERATE(true, false);
  INFO("inplace " << inplace);
  TensorDict td({{"a", at::arange(12).to(at::kFloat)}}, {12});
  const TensorDict out = inplace ? td.unflatten_(0, {3, 4}) : td.unflatten(0, {3, 4});
  if (inplace) CHECK(out.is_same(td));
  CHECK(out.batch_size() == BatchSize{3, 4});
  CHECK(at::equal(out["a"], at::arange(12).view({3, 4}).to(at::kFloat)));
}

TEST_CASE("test_generic: test_unflatten_inplace_lazy_stack_raises", "[parity][generic]") {
  // Python: NotImplementedError naming unflatten; here an Error.
  std::vector<TensorDict> tds;
  for (int i = 0; i < 3; ++i) tds.push_back(TensorDict({{"x", at::zeros({4})}}, {4}));
  TensorDict lst = lazy_stack(tds, 0);
  CHECK_THROWS_AS(lst.unflatten_(0, {3, 1}), Error);
}

TEST_CASE("test_generic: test_pad_inplace_identity_and_shapes", "[parity][generic]") {
  TensorDict td({{"a", at::ones({3, 4, 1})},
                 {"b", at::zeros({3, 4, 1, 1})},
                 {"nested", TensorDict({{"c", at::ones({3, 4, 2})}}, {3, 4})}},
                {3, 4});
  const TensorDict nested_before = td.get_tensordict("nested");
  TensorDict& out = td.pad_({0, 1, 0, 2}, 0.0);
  CHECK(out.is_same(td));
  CHECK(out.get_tensordict("nested").is_same(nested_before));
  CHECK(out.batch_size() == BatchSize{4, 6});
  CHECK(out["a"].sizes().vec() == Shape{4, 6, 1});
  CHECK(out["b"].sizes().vec() == Shape{4, 6, 1, 1});
  CHECK(out.get_tensordict("nested").batch_size() == BatchSize{4, 6});
  CHECK(out[{"nested", "c"}].sizes().vec() == Shape{4, 6, 2});
}

TEST_CASE("test_generic: test_pad_inplace_matches_functional", "[parity][generic]") {
  auto build = [] {
    return TensorDict(
        {{"a", at::arange(3 * 4).view({3, 4}).to(at::kFloat)},
         {"b", at::arange(3 * 4 * 5).view({3, 4, 5}).to(at::kFloat)},
         {"nested",
          TensorDict({{"c", at::arange(3 * 4 * 2).view({3, 4, 2}).to(at::kFloat)}}, {3, 4})}},
        {3, 4});
  };
  for (const Shape& pad_size : {Shape{0, 1, 0, 2}, Shape{1, 0, 0, 2}, Shape{1, 0, 2, 1}}) {
    const TensorDict ref = build().pad(pad_size, 7.0);
    TensorDict td_i = build();
    TensorDict& out = td_i.pad_(pad_size, 7.0);
    CHECK(out.is_same(td_i));
    CHECK(out.batch_size() == ref.batch_size());
    CHECK(out.keys() == ref.keys());
    for (const auto& key : ref.keys(true, true)) {
      INFO(key);
      CHECK(at::equal(out[key], ref[key]));
    }
  }
}

TEST_CASE("test_generic: test_flatten_inplace_lazy_stack_raises", "[parity][generic]") {
  // Python: NotImplementedError naming flatten; here an Error.
  TensorDict lst = lazy_stack(
      {TensorDict({{"x", at::zeros({4})}}, {4}), TensorDict({{"x", at::zeros({4})}}, {4})}, 0);
  CHECK_THROWS_AS(lst.flatten_(0, 1), Error);
}

TEST_CASE("test_generic: test_gather_inplace_lazy_stack_raises", "[parity][generic]") {
  std::vector<TensorDict> tds;
  for (int i = 0; i < 3; ++i) tds.push_back(TensorDict({{"x", at::zeros({4})}}, {4}));
  TensorDict lst = lazy_stack(tds, 0);
  CHECK_THROWS_AS(lst.gather_(0, at::zeros({3, 4}, at::kLong)), Error);
}
