// Port of Python tensordict v0.14.0 test/tensordict/test_methods.py, class TestTensorDicts, part
// four (test_to_tensordict .. test_zero_), on the fixtures td, nested_td and stacked_td.
#include <ATen/ATen.h>

#include <set>

#include "parity_fixtures.h"

using namespace tensordict;
using parity::to_tensordict;

namespace {

// The shape of a tensor leaf, or the batch size of a nested TensorDict (Python's value.shape).
std::vector<int64_t> shape_of(const Value& v) { return *v.shape(); }

}  // namespace

TEST_CASE("test_methods: test_to_tensordict", "[parity][methods]") {
  // Python's to_tensordict() is densify().clone() here (a dense copy).
  PARITY_FIXTURE();
  const TensorDict td2 = to_tensordict(td);
  CHECK_FALSE(td2.is_lazy_stack());
  CHECK((td2 == td).all());
}

TEST_CASE("test_methods: test_transpose", "[parity][methods]") {
  PARITY_FIXTURE();
  TensorDict tdt = td.transpose(0, 1);
  const BatchSize& s = td.batch_size();
  CHECK(tdt.batch_size() == BatchSize{s[1], s[0], s[2], s[3]});
  for (const auto& [key, value] : tdt.items(true)) {
    INFO(key);
    std::vector<int64_t> expected = shape_of(td.get_value(key));
    std::swap(expected[0], expected[1]);
    CHECK(shape_of(value) == expected);
  }
  tdt = td.transpose(-1, -2);
  for (const auto& [key, value] : tdt.items(true)) {
    INFO(key);
    std::vector<int64_t> expected = shape_of(td.get_value(key));
    std::swap(expected[2], expected[3]);
    CHECK(shape_of(value) == expected);
  }
  tdt.unlock_();
  CHECK_NOTHROW(tdt.set({"some", "transposed", "tensor"}, at::zeros(tdt.batch_size())));
  CHECK_THROWS_AS(td.transpose(-5, -6), Error);
  CHECK_THROWS_AS(tdt.transpose(-5, -6), Error);
}

TEST_CASE("test_methods: test_movedim", "[parity][methods]") {
  PARITY_FIXTURE();
  const TensorDict td_moved = td.movedim({0}, {-1});
  const BatchSize& s = td.batch_size();
  CHECK(td_moved.batch_size() == BatchSize{s[1], s[2], s[3], s[0]});
  for (const auto& [key, value] : td_moved.items(true)) {
    INFO(key);
    const std::vector<int64_t> original = shape_of(td.get_value(key));
    std::vector<int64_t> expected(original.begin() + 1, original.begin() + td.ndim());
    expected.push_back(original[0]);
    expected.insert(expected.end(), original.begin() + td.ndim(), original.end());
    CHECK(shape_of(value) == expected);
  }
  const TensorDict td_moved2 = td.movedim({0, 1}, {1, 0});
  CHECK(td_moved2.batch_size() == BatchSize{s[1], s[0], s[2], s[3]});
  CHECK_THROWS_AS((td.movedim({0}, {td.ndim() + 5})), Error);
  CHECK_THROWS_AS((td.movedim({td.ndim() + 5}, {0})), Error);
}

TEST_CASE("test_methods: test_swapaxes", "[parity][methods]") {
  PARITY_FIXTURE();
  const BatchSize& s = td.batch_size();
  const BatchSize expected{s[1], s[0], s[2], s[3]};
  CHECK(td.swapaxes(0, 1).batch_size() == expected);
  CHECK(td.swapdims(0, 1).batch_size() == expected);
}

TEST_CASE("test_methods: test_flip", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK(td.flip({0}).batch_size() == td.batch_size());
  CHECK(td.flip({0, 1}).batch_size() == td.batch_size());
}

TEST_CASE("test_methods: test_fliplr_flipud", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK(td.fliplr().batch_size() == td.batch_size());
  CHECK(td.flipud().batch_size() == td.batch_size());
}

TEST_CASE("test_methods: test_roll", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK(td.roll({1}, {0}).batch_size() == td.batch_size());
  CHECK(td.roll({1, 2}, {0, 1}).batch_size() == td.batch_size());
}

TEST_CASE("test_methods: test_rot90", "[parity][methods]") {
  PARITY_FIXTURE();
  const BatchSize s = td.batch_size();
  CHECK(td.rot90().batch_size() == BatchSize{s[1], s[0], s[2], s[3]});
  CHECK(td.rot90(2).batch_size() == s);
}

TEST_CASE("test_methods: test_narrow", "[parity][methods]") {
  PARITY_FIXTURE();
  const BatchSize& s = td.batch_size();
  const TensorDict td_narrow = td.narrow(0, 0, 1);
  CHECK(td_narrow.batch_size()[0] == 1);
  CHECK(BatchSize(td_narrow.batch_size().begin() + 1, td_narrow.batch_size().end()) ==
        BatchSize(s.begin() + 1, s.end()));
  const TensorDict td_narrow2 = td.narrow(1, 0, 2);
  CHECK(td_narrow2.batch_size()[0] == s[0]);
  CHECK(td_narrow2.batch_size()[1] == 2);
}

TEST_CASE("test_methods: test_tile", "[parity][methods]") {
  PARITY_FIXTURE();
  const std::vector<int64_t> tile_dims(td.ndim(), 2);
  BatchSize expected;
  for (int64_t s : td.batch_size()) expected.push_back(s * 2);
  CHECK(td.tile(tile_dims).batch_size() == expected);
}

TEST_CASE("test_methods: test_broadcast_to", "[parity][methods]") {
  PARITY_FIXTURE();
  const BatchSize original_shape = td.batch_size();
  CHECK(td.broadcast_to(original_shape).batch_size() == original_shape);
  BatchSize new_shape{2};
  new_shape.insert(new_shape.end(), original_shape.begin(), original_shape.end());
  CHECK(td.broadcast_to(new_shape).batch_size() == new_shape);
}

TEST_CASE("test_methods: test_atleast_nd", "[parity][methods]") {
  PARITY_FIXTURE();
  const int64_t original_ndim = td.ndim();
  const TensorDict td1 = td.atleast_1d();
  CHECK(td1.ndim() >= 1);
  if (original_ndim >= 1) CHECK(td1.is_same(td));
  const TensorDict td2 = td.atleast_2d();
  CHECK(td2.ndim() >= 2);
  if (original_ndim >= 2) CHECK(td2.is_same(td));
  const TensorDict td3 = td.atleast_3d();
  CHECK(td3.ndim() >= 3);
  if (original_ndim >= 3) CHECK(td3.is_same(td));
}

TEST_CASE("test_methods: test_unbind", "[parity][methods]") {
  PARITY_FIXTURE();
  const int64_t dim = GENERATE(0, 1, 2, 3);
  INFO("dim " << dim);
  const auto td_unbind = td.unbind(dim);
  CHECK((td == stack(td_unbind, dim).contiguous()).all());
  Index idx(static_cast<size_t>(dim), Slice());
  idx.emplace_back(0);
  CHECK((td.index(idx) == td_unbind[0]).all());
}

TEST_CASE("test_methods: test_unflatten_keys", "[parity][methods]") {
  PARITY_FIXTURE();
  const bool inplace = GENERATE(true, false);
  const std::string separator = GENERATE(as<std::string>{}, ",", "-");
  INFO("inplace " << inplace << " separator " << separator);
  const bool locked = td.is_locked();
  td.unlock_();
  BatchSize shape2 = td.batch_size();
  shape2.push_back(2);
  BatchSize shape23 = shape2;
  shape23.push_back(3);
  const TensorDict nested_nested({{"a", at::zeros(shape23)}}, shape2);
  td.set("nested_tensordict",
         TensorDict({{"a", at::zeros(shape2)}, {"nested_nested_tensordict", nested_nested}},
                    td.batch_size()));
  if (inplace && locked) {
    TensorDict& td_flatten = td.flatten_keys_(separator);
    td_flatten.lock_();
    CHECK_THROWS_AS(td_flatten.unflatten_keys_(separator), LockedError);
    return;
  }
  if (locked) td.lock_();
  TensorDict td_unflatten;
  if (inplace) {
    td_unflatten = td.flatten_keys_(separator).unflatten_keys_(separator);
  } else {
    td_unflatten = td.flatten_keys(separator).unflatten_keys(separator);
  }
  CHECK((td == td.empty(true).update(td_unflatten)).all());
  if (inplace) CHECK(td.is_same(td_unflatten));
}

TEST_CASE("test_methods: test_unlock", "[parity][methods]") {
  PARITY_FIXTURE();
  td.unlock_();
  CHECK_FALSE(td.is_locked());
  CHECK_FALSE(td.is_shared());
  CHECK_FALSE(td.is_memmap());
}

TEST_CASE("test_methods: test_unsqueeze", "[parity][methods]") {
  PARITY_FIXTURE();
  const int64_t squeeze_dim = GENERATE(0, 1);
  INFO("squeeze_dim " << squeeze_dim);
  td.unlock_();
  TensorDict td_unsqueeze = td.unsqueeze(squeeze_dim);
  const at::Tensor tensor = at::ones_like(td.get("a").unsqueeze(squeeze_dim));
  td_unsqueeze.set("a", tensor);
  CHECK((td_unsqueeze.get("a") == tensor).all().item<bool>());
  CHECK((td_unsqueeze.get("a") == 1).all().item<bool>());
}

TEST_CASE("test_methods: test_update", "[parity][methods]") {
  // Python updates from dicts; here from TensorDicts with the same entries and td's batch size
  // (the batch size a dict's values take when set). Python's clone=True copies the values, which
  // the asserts do not see: update(other) without it.
  PARITY_FIXTURE();
  td.unlock_();
  const BatchSize bs = td.batch_size();
  auto key_set = [&] {
    const auto keys = td.keys(true);
    return std::set<NestedKey>(keys.begin(), keys.end());
  };
  std::set<NestedKey> keys;
  for (const auto& key : td.keys()) keys.insert(key);
  td.update(TensorDict({{"x", at::zeros(bs)}}, bs));
  std::set<NestedKey> top;
  for (const auto& key : td.keys()) top.insert(key);
  keys.insert("x");
  CHECK(top == keys);
  td.update(TensorDict({{NestedKey{"somenested", "z"}, at::zeros(bs)}}, bs));
  CHECK(td.get_tensordict("somenested").batch_size() == bs);
  CHECK(td[{"somenested", "z"}].sizes().vec() == bs);
  td.update(TensorDict({{NestedKey{"somenested", "zz"}, at::zeros(bs)}}, bs));
  CHECK(td.get_tensordict("somenested").batch_size() == bs);
  CHECK(td[{"somenested", "zz"}].sizes().vec() == bs);
  td.set("newnested", TensorDict({{"z", at::zeros(bs)}}, bs));
  keys = key_set();
  CHECK(keys.count(NestedKey{"newnested", "z"}) == 1);
  td.update(TensorDict({{"newnested", TensorDict({{"y", at::zeros(bs)}}, bs)}}, bs));
  keys.insert(NestedKey{"newnested", "y"});
  CHECK(keys == key_set());
  td.update(TensorDict(
      {{NestedKey{"newnested", "x"}, at::zeros(bs)}, {NestedKey{"newnested", "w"}, at::zeros(bs)}},
      bs));
  keys.insert(NestedKey{"newnested", "x"});
  keys.insert(NestedKey{"newnested", "w"});
  CHECK(keys == key_set());
  td.update(TensorDict({{NestedKey{{"newnested"}}, TensorDict({{"v", at::zeros(bs)}}, bs)}}, bs));
  keys.insert(NestedKey{"newnested", "v"});
  CHECK(keys == key_set());
  td.update(TensorDict({{"newnested", at::zeros(bs)}}, bs));
  CHECK(td.get_value("newnested").is_tensor());
}

TEST_CASE("test_methods: test_view", "[parity][methods]") {
  PARITY_FIXTURE();
  td.unlock_();
  TensorDict td_view = td.view({-1});
  at::Tensor tensor = td.get("a");
  tensor = tensor.view({-1, tensor.numel() / parity::prod(td.batch_size())});
  tensor = at::ones_like(tensor);
  td_view.set("a", tensor);
  CHECK((td_view.get("a") == tensor).all().item<bool>());
  CHECK((td_view.get("a") == 1).all().item<bool>());
}

TEST_CASE("test_methods: test_where", "[parity][methods]") {
  PARITY_FIXTURE();
  const at::Tensor mask = at::zeros(td.batch_size(), at::kBool).bernoulli_();
  const TensorDict zeros_where = td.where(mask, 0);
  for (const auto& k : td.keys(true, true)) {
    INFO(k);
    CHECK((zeros_where.get(k).index({~mask}) == 0).all().item<bool>());
  }
  const TensorDict ones = td.apply([](const at::Tensor& x) { return at::ones_like(x); });
  const TensorDict td_where = td.where(mask, ones);
  for (const auto& k : td.keys(true, true)) {
    INFO(k);
    CHECK((td_where.get(k).index({~mask}) == 1).all().item<bool>());
  }
  TensorDict out = to_tensordict(td);
  td.where_out(out, mask, ones);
  for (const auto& k : td.keys(true, true)) {
    INFO(k);
    CHECK((out.get(k).index({~mask}) == 1).all().item<bool>());
  }
}

TEST_CASE("test_methods: test_zero_", "[parity][methods]") {
  PARITY_FIXTURE();
  TensorDict& new_td = td.zero_();
  CHECK(new_td.is_same(td));
  for (const auto& k : td.keys()) {
    INFO(k);
    const Value v = td.get_value(k);
    if (v.is_tensor()) CHECK((v.tensor() == 0).all().item<bool>());
    if (v.is_tensordict()) CHECK((v.tensordict() == 0).all());
  }
}
