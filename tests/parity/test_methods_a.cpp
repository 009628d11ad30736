// Port of Python tensordict v0.14.0 test/tensordict/test_methods.py, class TestTensorDicts, part
// one (test_recursive_properties_common_ops .. test_gather): each test runs on the fixtures `td`,
// `nested_td` and `stacked_td` (parity_fixtures.h) with the Python test's inputs and asserted
// values. docs/parity.md lists what is not ported and why.
#include <ATen/ATen.h>

#include <functional>
#include <typeinfo>

#include "parity_fixtures.h"

using namespace tensordict;
using parity::to_tensordict;

namespace {

// Python's _check_recursive_properties: every nested TensorDict's batch size starts with its
// parent's, and its device is the parent's when the parent has one.
bool recursive_properties_hold(const TensorDict& td) {
  for (const auto& value : td.values()) {
    if (!value.is_tensordict()) continue;
    const TensorDict& sub = value.tensordict();
    const auto& bs = sub.batch_size();
    if (bs.size() < td.batch_size().size() ||
        !std::equal(td.batch_size().begin(), td.batch_size().end(), bs.begin()))
      return false;
    if (td.device() && sub.device() != td.device()) return false;
    if (!recursive_properties_hold(sub)) return false;
  }
  return true;
}

bool recursive_properties_hold(const std::vector<TensorDict>& tds) {
  for (const auto& td : tds)
    if (!recursive_properties_hold(td)) return false;
  return true;
}

}  // namespace

TEST_CASE("test_methods: test_recursive_properties_common_ops", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK(recursive_properties_hold(td.clone()));
  const TensorDict dense = to_tensordict(td);
  CHECK(recursive_properties_hold(dense));
  CHECK(recursive_properties_hold(td.select(td.keys(), false)));
  CHECK(recursive_properties_hold(td.exclude({})));
  CHECK(recursive_properties_hold(td.apply([](const at::Tensor& x) { return x; })));
  CHECK(recursive_properties_hold(td.index({Slice()})));
  CHECK(recursive_properties_hold(td[0]));
  CHECK(recursive_properties_hold(td.reshape({-1})));
  CHECK(recursive_properties_hold(stack({td, td.contiguous()}, 0)));
  CHECK(recursive_properties_hold(cat({td, td.clone()}, 0)));
  CHECK(recursive_properties_hold(td.unbind(0)));
  CHECK(recursive_properties_hold(td.split(1, 0)));
  CHECK(recursive_properties_hold(td.chunk(2, 0)));
  CHECK(recursive_properties_hold(td.unsqueeze(0)));
  CHECK(recursive_properties_hold(td.permute({3, 2, 1, 0})));
  TensorDict updated = td.clone();
  updated.unlock_();
  updated.update(TensorDict({{"recursive_check", at::zeros(td.batch_size())}}, td.batch_size()));
  CHECK(recursive_properties_hold(updated));
}

TEST_CASE("test_methods: test_apply", "[parity][methods]") {
  PARITY_FIXTURE();
  const bool inplace = GENERATE(false, true);
  INFO("inplace " << inplace);
  const TensorDict td_c = to_tensordict(td);
  auto plus_one = [](const at::Tensor& x) { return x + 1; };
  if (inplace) {
    TensorDict& td_1 = td.apply_(plus_one);
    CHECK(td_1.is_same(td));
    for (const auto& key : td.keys(true, true)) {
      INFO(key);
      CHECK((td_c[key] + 1 == td[key]).all().item<bool>());
      CHECK((td_1[key] == td[key]).all().item<bool>());
    }
  } else {
    const TensorDict td_1 = td.apply(plus_one);
    for (const auto& key : td.keys(true, true)) {
      INFO(key);
      CHECK((td_c[key] + 1 != td[key]).any().item<bool>());
      CHECK((td_1[key] == td[key] + 1).all().item<bool>());
    }
  }
}

TEST_CASE("test_methods: test_apply_multithread_exception", "[parity][methods]") {
  PARITY_FIXTURE();
  auto raises = [](const at::Tensor&) -> at::Tensor { throw std::runtime_error("Test"); };
  CHECK_THROWS_WITH(td.apply(raises), Catch::Matchers::ContainsSubstring("Test"));
}

TEST_CASE("test_methods: test_apply_other", "[parity][methods]") {
  PARITY_FIXTURE();
  const bool inplace = GENERATE(false, true);
  INFO("inplace " << inplace);
  const TensorDict td_c = to_tensordict(td);
  auto add = [](const at::Tensor& x, const at::Tensor& y) { return x + y; };
  if (inplace) {
    TensorDict& td_1 = td.apply_(add, td_c);
    for (const auto& key : td.keys(true, true)) {
      INFO(key);
      CHECK((td_c[key] * 2 == td[key]).all().item<bool>());
      CHECK((td_1[key] == td[key]).all().item<bool>());
    }
  } else {
    const TensorDict td_1 = td.apply(add, td_c);
    for (const auto& key : td.keys(true, true)) {
      INFO(key);
      CHECK((td_c[key] * 2 != td[key]).any().item<bool>());
      CHECK((td_1[key] == td[key] * 2).all().item<bool>());
    }
  }
}

TEST_CASE("test_methods: test_assert", "[parity][methods]") {
  // Python refuses bool(td) ("Converting a tensordict to boolean value is not permitted"); in
  // C++ a TensorDict does not convert to bool at all.
  CHECK_FALSE(std::is_constructible_v<bool, TensorDict>);
  CHECK_FALSE(std::is_convertible_v<TensorDict, bool>);
}

TEST_CASE("test_methods: test_auto_batch_size_", "[parity][methods]") {
  PARITY_FIXTURE();
  const BatchSize batch_size = td.batch_size();
  const std::type_info* error = nullptr;
  try {
    td.set_batch_size({});
  } catch (const std::exception& e) {
    error = &typeid(e);
  }
  if (error) {
    bool same_type = false;
    try {
      td.auto_batch_size_();
    } catch (const std::exception& e) {
      same_type = typeid(e) == *error;
    }
    CHECK(same_type);
    return;
  }
  td.auto_batch_size_();
  REQUIRE(td.batch_size().size() >= batch_size.size());
  CHECK(BatchSize(td.batch_size().begin(), td.batch_size().begin() + 4) == batch_size);
  td.auto_batch_size_(1);
  CHECK(td.batch_size().size() == 1);
}

TEST_CASE("test_methods: test_broadcast", "[parity][methods]") {
  PARITY_FIXTURE();
  TensorDict sub_td = to_tensordict(td.index({Slice(), Slice(std::nullopt, 2)}));
  sub_td.zero_();
  td.index_put_({Slice(), Slice(std::nullopt, 2)}, sub_td);
  CHECK((td.index({Slice(), Slice(std::nullopt, 2)}) == 0).all());
}

TEST_CASE("test_methods: test_cast_to", "[parity][methods]") {
  // The dtype casts; Python's "cpu:1" devices, `to(other=td)` and `to(batch_size=)` are listed
  // in docs/parity.md.
  PARITY_FIXTURE();
  const TensorDict td_dtype = td.to(at::kInt);
  for (const auto& value : td_dtype.values(true, true)) CHECK(value.tensor().dtype() == at::kInt);
}

TEST_CASE("test_methods: test_casts", "[parity][methods]") {
  PARITY_FIXTURE();
  for (const auto dtype : {at::kFloat, at::kDouble, at::kBFloat16, at::kHalf, at::kInt}) {
    INFO(dtype);
    const TensorDict cast = td.to(dtype);
    for (const auto& value : cast.values(true, true)) CHECK(value.tensor().dtype() == dtype);
  }
}

TEST_CASE("test_methods: test_chunk", "[parity][methods]") {
  PARITY_FIXTURE();
  const int64_t dim = GENERATE(0, 1);
  int64_t chunks = GENERATE(1, 2);
  INFO("dim " << dim << " chunks " << chunks);
  chunks = std::min(td.batch_size()[dim], chunks);
  const auto td_chunks = td.chunk(chunks, dim);
  CHECK(static_cast<int64_t>(td_chunks.size()) == chunks);
  int64_t total = 0;
  for (const auto& c : td_chunks) total += c.batch_size()[dim];
  CHECK(total == td.batch_size()[dim]);
  CHECK((cat(td_chunks, dim) == td).all());
}

TEST_CASE("test_methods: test_clamp", "[parity][methods]") {
  PARITY_FIXTURE();
  TensorDict tdc = td.clamp(-1, 1);
  CHECK((tdc <= 1).all());
  CHECK((tdc >= -1).all());
  tdc = td.clamp(std::nullopt, 1);
  CHECK((tdc <= 1).all());
  tdc = td.clamp(-1, std::nullopt);
  CHECK((tdc >= -1).all());
}

TEST_CASE("test_methods: test_clone_td", "[parity][methods]") {
  PARITY_FIXTURE();
  const TensorDict clone = td.clone();
  CHECK((clone == td).all());
  CHECK(td.batch_size() == clone.batch_size());
  CHECK(td.clone(false).is_lazy_stack() == td.is_lazy_stack());
  if (td_name == "stacked_td") {
    CHECK_FALSE(td.clone(false).get("a").is_same(td.get("a")));
  } else {
    CHECK(td.clone(false).get("a").is_same(td.get("a")));
  }
}

TEST_CASE("test_methods: test_default_nested", "[parity][methods]") {
  PARITY_FIXTURE();
  const at::Tensor default_val = at::randn({});
  const at::Tensor timbers = td.get({"shiver", "my", "timbers"}, default_val);
  CHECK((timbers == default_val).item<bool>());
}

TEST_CASE("test_methods: test_delitem", "[parity][methods]") {
  PARITY_FIXTURE();
  td.del_("a");
  const auto keys = td.keys();
  CHECK(std::find(keys.begin(), keys.end(), NestedKey("a")) == keys.end());
}

TEST_CASE("test_methods: test_empty", "[parity][methods]") {
  PARITY_FIXTURE();
  TensorDict td_empty = td.empty();
  CHECK_FALSE(td_empty.is_locked());
  CHECK(td_empty.batch_size() == td.batch_size());
  CHECK((td_empty.names() == td.names()));
  CHECK(td_empty.device() == td.device());
  CHECK_NOTHROW(td_empty.set("a", at::zeros({}).expand(td.batch_size())));
}

TEST_CASE("test_methods: test_equal", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK((td == to_tensordict(td)).all());
  const TensorDict td0 = to_tensordict(td).zero_();
  CHECK((td != td0).any());
}

TEST_CASE("test_methods: test_equal_float", "[parity][methods]") {
  PARITY_FIXTURE();
  td.zero_();
  CHECK((td == 0.0).all());
  TensorDict td0 = td.clone();
  td0.zero_();
  CHECK(td0.ne(1.0).all());
}

TEST_CASE("test_methods: test_equal_int", "[parity][methods]") {
  PARITY_FIXTURE();
  td.zero_();
  CHECK((td == 0).all());
  const TensorDict td0 = to_tensordict(td).zero_();
  CHECK(td0.ne(1).all());
}

TEST_CASE("test_methods: test_equal_tensor", "[parity][methods]") {
  PARITY_FIXTURE();
  td.zero_();
  CHECK(td.eq(at::zeros({}, at::kInt)).all());
  const TensorDict td0 = to_tensordict(td).zero_();
  CHECK(td0.ne(at::ones({}, at::kInt)).all());
}

TEST_CASE("test_methods: test_exclude", "[parity][methods]") {
  PARITY_FIXTURE();
  const TensorDict td2 = td.exclude({"a"});
  CHECK_FALSE(td2.is_same(td));
  const auto has_a = [](const TensorDict& t) {
    const auto keys = t.keys();
    return std::find(keys.begin(), keys.end(), NestedKey("a")) != keys.end();
  };
  CHECK(td2.keys().size() == td.keys().size() - 1);
  CHECK_FALSE(has_a(td2));
  CHECK(td2.clone().keys().size() == td.keys().size() - 1);
  CHECK_FALSE(has_a(td2.clone()));
  td.unlock_();
  TensorDict& td3 = td.exclude_({"a"});
  CHECK(td3.is_same(td));
}

TEST_CASE("test_methods: test_exclude_missing", "[parity][methods]") {
  PARITY_FIXTURE();
  const bool nested = GENERATE(true, false);
  INFO("nested " << nested);
  const TensorDict td2 = nested ? td.exclude({"this key is missing", NestedKey{"this one too"}})
                                : td.exclude({"this key is missing"});
  CHECK((td == td2).all());
}

TEST_CASE("test_methods: test_exclude_nested", "[parity][methods]") {
  PARITY_FIXTURE();
  const bool nested = GENERATE(true, false);
  INFO("nested " << nested);
  td.unlock_();
  if (td_name == "stacked_td") {
    for (TensorDict element : td.tensordicts())
      element.set({"newnested", "first"}, at::randn(element.batch_size()));
  } else {
    td.set({"newnested", "first"}, at::randn(td.batch_size()));
  }
  auto has = [](const std::vector<NestedKey>& keys, const NestedKey& key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  };
  TensorDict td2;
  if (nested) {
    td2 = td.exclude({NestedKey("a"), NestedKey{"newnested", "first"}});
    CHECK(has(td.keys(), "a"));
    CHECK_FALSE(has(td2.keys(), "a"));
    CHECK(has(td.keys(true), NestedKey{"newnested", "first"}));
    CHECK_FALSE(has(td2.keys(true), NestedKey{"newnested", "first"}));
  } else {
    td2 = td.exclude({"a"});
    CHECK(has(td.keys(), "a"));
    CHECK_FALSE(has(td2.keys(), "a"));
  }
  CHECK(td2.is_lazy_stack() == td.is_lazy_stack());
}

TEST_CASE("test_methods: test_expand", "[parity][methods]") {
  PARITY_FIXTURE();
  const BatchSize batch_size = td.batch_size();
  BatchSize expected_size{3};
  expected_size.insert(expected_size.end(), batch_size.begin(), batch_size.end());
  const TensorDict new_td = td.expand(expected_size);
  CHECK(new_td.batch_size() == expected_size);
  for (TensorDict row : new_td) CHECK((row == td).all());
  const TensorDict new_td_list = td.expand({3, batch_size[0], batch_size[1], batch_size[2], 1});
  CHECK(new_td_list.batch_size() == expected_size);
  for (TensorDict row : new_td_list) CHECK((row == td).all());
}

TEST_CASE("test_methods: test_fill_", "[parity][methods]") {
  PARITY_FIXTURE();
  TensorDict& new_td = td.fill_("a", 0.1);
  CHECK((td.get("a") == 0.1).all().item<bool>());
  CHECK(new_td.is_same(td));
}

TEST_CASE("test_methods: test_flatten_keys", "[parity][methods]") {
  PARITY_FIXTURE();
  const bool inplace = GENERATE(true, false);
  const std::string separator = GENERATE(as<std::string>{}, ",", "-");
  INFO("inplace " << inplace << " separator " << separator);
  const bool locked = td.is_locked();
  td.unlock_();
  BatchSize shape = td.batch_size();
  BatchSize shape2 = shape;
  shape2.push_back(2);
  BatchSize shape23 = shape2;
  shape23.push_back(3);
  const TensorDict nested_nested({{"a", at::zeros(shape23)}}, shape2);
  const TensorDict nested({{"a", at::zeros(shape2)}, {"nested_nested_tensordict", nested_nested}},
                          shape);
  td.set("nested_tensordict", nested);
  if (locked) td.lock_();
  if (inplace && locked) {
    CHECK_THROWS_AS(td.flatten_keys_(separator), LockedError);
    return;
  }
  const TensorDict td_flatten = inplace ? td.flatten_keys_(separator) : td.flatten_keys(separator);
  for (const auto& value : td_flatten.values()) CHECK_FALSE(value.is_tensordict());
  const auto keys = td_flatten.keys();
  const std::string joined =
      "nested_tensordict" + separator + "nested_nested_tensordict" + separator + "a";
  CHECK(std::find(keys.begin(), keys.end(), NestedKey(joined)) != keys.end());
  CHECK(td_flatten.is_same(td) == inplace);
}

TEST_CASE("test_methods: test_flatten_unflatten", "[parity][methods]") {
  PARITY_FIXTURE();
  const BatchSize& bs = td.batch_size();
  const TensorDict td_flat = td.flatten(0, 2);
  const TensorDict td_unflat = td_flat.unflatten(0, {bs[0], bs[1], bs[2]});
  CHECK((to_tensordict(td) == td_unflat).all());
  CHECK(td.batch_size() == td_unflat.batch_size());
}

TEST_CASE("test_methods: test_flatten_unflatten_bis", "[parity][methods]") {
  PARITY_FIXTURE();
  const BatchSize& bs = td.batch_size();
  const TensorDict td_flat = td.flatten(1, 3);
  const TensorDict td_unflat = td_flat.unflatten(1, {bs[1], bs[2], bs[3]});
  CHECK((to_tensordict(td) == td_unflat).all());
  CHECK(td.batch_size() == td_unflat.batch_size());
}

TEST_CASE("test_methods: test_from_empty", "[parity][methods]") {
  PARITY_FIXTURE();
  TensorDict new_td({}, td.batch_size(), at::Device(at::kCPU));
  for (const auto& [key, item] : td.items()) new_td.set(key, item);
  CHECK(parity::allclose_td(td, new_td));
  CHECK(td.device() == new_td.device());
  CHECK(td.batch_size() == new_td.batch_size());
}

TEST_CASE("test_methods: test_gather", "[parity][methods]") {
  PARITY_FIXTURE();
  const int64_t dim = GENERATE(0, 1, 2, 3, -1, -2, -3);
  INFO("dim " << dim);
  at::Tensor index = at::ones(td.batch_size(), at::kLong);
  const int64_t other_dim = dim < 0 ? dim + index.dim() : dim;
  index = index.narrow(other_dim, 0, std::min<int64_t>(2, index.size(other_dim)));
  index = index.cumsum(other_dim) - 1;
  TensorDict td_gather = td.gather(dim, index);
  CHECK(td_gather.device() == td.device());
  CHECK((td_gather.names() == td.names()));
  // gather with out
  td_gather.zero_();
  TensorDict out = td_gather.clone();
  const TensorDict& td_gather2 = td.gather_out(out, dim, index);
  CHECK(td_gather2.is_same(out));
  CHECK(td_gather2.ne(0).any());
}
