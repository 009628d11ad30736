// Ports of Python tensordict v0.14.0 tests on the TensorDict API added for them (shape,
// is_shared, replace, update with keys_to_update, where with a scalar or pad, to_, tensor
// repeat_interleave), and on share_memory_'s lock and repeat's names.
#include <ATen/ATen.h>

#include "parity_fixtures.h"

using namespace tensordict;
using parity::to_tensordict;

TEST_CASE("test_methods: test_apply_out", "[parity][methods]") {
  PARITY_FIXTURE();
  TensorDict td_c = td.clone();
  const TensorDict& out = td.apply_out(td_c, [](const at::Tensor& x) { return x + 1; });
  CHECK(out.is_same(td_c));
  CHECK(parity::allclose_td(td.apply([](const at::Tensor& x) { return x + 1; }), td_c));
}

TEST_CASE("test_methods: test_data_ptr", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK(td.data_ptr().batch_size().empty());
  CHECK(td.data_ptr(/*storage=*/true).batch_size().empty());
}

TEST_CASE("test_methods: test_new_tensor", "[parity][methods]") {
  PARITY_FIXTURE();
  at::Tensor tdn = td.new_tensor(at::zeros({0}));
  CHECK(tdn.device() == at::Device(at::kCPU));
  CHECK(tdn.sizes() == at::IntArrayRef({0}));
  tdn = td.new_tensor(at::zeros({2}));
  CHECK(tdn.sizes() == at::IntArrayRef({2}));
  const TensorDict from_td = td.new_tensor(td[0] * 0);
  CHECK(from_td.device() == td.device());
  CHECK((from_td == 0).all());
  CHECK(from_td.batch_size() == BatchSize(td.batch_size().begin() + 1, td.batch_size().end()));
}

TEST_CASE("test_methods: test_update_at_nontensor_data", "[parity][methods]") {
  // The Python test ignores its fixture; method is update_at_ or copy_at_.
  const bool copy = GENERATE(false, true);
  TensorDict td({{"val", NonTensorData{Json(0)}}}, {10});
  const TensorDict newdata({{"val", NonTensorData{Json(1)}}}, {5});
  if (copy) {
    td.copy_at_(newdata, {Slice(1, std::nullopt, 2)});
  } else {
    td.update_at_(newdata, {Slice(1, std::nullopt, 2)});
  }
  CHECK(td.get_non_tensor("val") == Json::parse("[0, 1, 0, 1, 0, 1, 0, 1, 0, 1]"));
}

TEST_CASE("test_methods: test_repeat_interleave_tensor", "[parity][methods]") {
  PARITY_FIXTURE();
  const at::Tensor repeats = at::tensor(std::vector<int64_t>{3, 4, 5});
  const at::Tensor t = at::empty(td.batch_size());
  const TensorDict td_repeat = td.repeat_interleave(repeats, 1);
  CHECK(td_repeat.batch_size() == t.repeat_interleave(repeats, 1).sizes().vec());
  CHECK(td_repeat.device() == td.device());
  CHECK(at::allclose(td["a"].repeat_interleave(repeats, 1), td_repeat["a"]));
}

TEST_CASE("test_methods: test_replace", "[parity][methods]") {
  PARITY_FIXTURE();
  const TensorDict zeros = td.clone().zero_();
  const TensorDict td_replace = td.replace(zeros);
  CHECK_FALSE(td_replace.is_same(td));
  CHECK((td_replace == 0).all());
}

TEST_CASE("test_methods: test_update_select", "[parity][methods]") {
  PARITY_FIXTURE();
  auto make = [](double v) {
    auto t = [v] { return at::full({}, v).expand({4, 3, 2, 1}); };
    return TensorDict({{NestedKey{"My", "father", "was"}, t()},
                       {NestedKey{"My", "father", "a"}, t()},
                       {NestedKey{"My", "relentlessly"}, t()},
                       {"self-improving", t()}},
                      {4, 3, 2, 1});
  };
  td.update(make(0), {{"My", {"father"}, "was"}, {"My", "relentlessly"}});
  CHECK(td.contains({"My", "father", "was"}));
  CHECK(td.contains({"My", "relentlessly"}));
  CHECK_FALSE(td.contains("self-improving"));
  td.update(make(1), {{"My", "relentlessly"}});
  CHECK((td[{"My", "relentlessly"}] == 1).all().item<bool>());
  CHECK((td[{"My", "father", "was"}] == 0).all().item<bool>());
}

TEST_CASE("test_methods: test_where_pad", "[parity][methods]") {
  PARITY_FIXTURE();
  const at::Tensor mask = at::zeros(td.batch_size(), at::kBool).bernoulli_();
  const TensorDict result = td.where(mask, td.empty(), /*pad=*/1);
  for (const auto& v : result.values(true, true))
    CHECK((v.tensor().index({~mask}) == 1).all().item<bool>());
  CHECK_THROWS_AS(td.where(mask, td.empty()), KeyError);
  const TensorDict td_where = td.where(mask, 0);
  for (const auto& k : td.keys(true, true))
    CHECK((td_where.get(k).index({~mask}) == 0).all().item<bool>());
}

TEST_CASE("test_methods: test_to_device_dtype_inplace", "[parity][methods]") {
  PARITY_FIXTURE();
  td.to_(at::kFloat);
  for (const auto& v : td.values(true, true)) CHECK(v.tensor().dtype() == at::kFloat);
  td.to_(at::Device(at::kCPU));
  CHECK(td.device() == at::Device(at::kCPU));
}

TEST_CASE("test_methods: test_shape", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK(td.shape() == td.batch_size());
}

TEST_CASE("test_generic: test_memory_lock", "[parity][generic]") {
  // method="share_memory"; "memmap" calls memmap_() without a prefix (not applicable). Python's
  // set(key, value) raises on a locked TensorDict, for an existing key too; set_ writes in place.
  TensorDict td({{"a", at::randn({4, 5})}}, {4, 5});
  td.share_memory_();
  CHECK_THROWS_AS(td.set("a", at::randn({4, 5})), LockedError);
  CHECK_NOTHROW(td.set_("a", at::randn({4, 5})));
  CHECK_THROWS_AS(td.set("b", at::randn({4, 5})), LockedError);
}

TEST_CASE("test_generic: test_refine_names_setitem_subtd", "[parity][generic]") {
  const int64_t batch_size = 1, seq_len = 2, n_agents = 3;
  TensorDict td({{"agents", TensorDict({{"obs", at::zeros({batch_size, seq_len, n_agents, 5})},
                                        {"dones", at::zeros({batch_size, seq_len, n_agents, 1})}},
                                       {batch_size, seq_len, n_agents}, std::nullopt,
                                       DimNames{std::nullopt, "time", "other"})},
                 {"dones", at::zeros({batch_size, seq_len})}},
                {batch_size, seq_len}, std::nullopt, DimNames{std::nullopt, "time"});
  td.set("agents", td.get_tensordict("agents").repeat_interleave(2, -1));
  CHECK(td.get_tensordict("agents").names().size() == 3);
  CHECK((td.get_tensordict("agents").names().back() == "other"));
  td.set("agents", td.get_tensordict("agents").repeat({1, 1, 2}));
  CHECK((td.get_tensordict("agents").names().back() == "other"));
  td.set("agents", cat({td.get_tensordict("agents"), td.get_tensordict("agents")}, 2));
  CHECK((td.get_tensordict("agents").names().back() == "other"));
}
