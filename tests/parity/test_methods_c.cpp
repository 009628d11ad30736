// Port of Python tensordict v0.14.0 test/tensordict/test_methods.py, class TestTensorDicts, part
// three (test_pad .. test_tensordict_set), on the fixtures td, nested_td and stacked_td.
#include <ATen/ATen.h>
#include <ATen/TensorIndexing.h>

#include "parity_fixtures.h"
#include "tensordict/state_dict.h"

using namespace tensordict;
using parity::has_key;
using parity::to_tensordict;

namespace {

// Python's _to_float: td.apply(lambda x: x.float()).
TensorDict to_float(const TensorDict& td) {
  return td.apply([](const at::Tensor& x) { return x.to(at::kFloat); });
}

BatchSize without(BatchSize s, size_t dim) {
  s.erase(s.begin() + static_cast<int64_t>(dim));
  return s;
}

BatchSize with_one(BatchSize s, size_t dim) {
  s[dim] = 1;
  return s;
}

}  // namespace

TEST_CASE("test_methods: test_pad", "[parity][methods]") {
  PARITY_FIXTURE();
  const std::vector<std::vector<int64_t>> paddings{{0, 1, 0, 2}, {1, 0, 0, 2}, {1, 0, 2, 1}};
  for (const auto& pad_size : paddings) {
    const TensorDict padded_td = td.pad(pad_size);
    std::vector<int64_t> amount_expanded(pad_size.size() / 2);
    for (size_t i = 0; i < pad_size.size(); i += 2)
      amount_expanded[i / 2] = pad_size[i] + pad_size[i + 1];
    for (const auto& key : padded_td.keys()) {
      INFO(key);
      std::vector<int64_t> expected = *td.get_value(key).shape();
      for (size_t i = 0; i < amount_expanded.size(); ++i) expected[i] += amount_expanded[i];
      CHECK(*padded_td.get_value(key).shape() == expected);
    }
  }
  CHECK_THROWS(td.pad(std::vector<int64_t>(100, 0)));
  CHECK_THROWS(td.pad({0}));
}

TEST_CASE("test_methods: test_pop", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK(has_key(td.keys(), "a"));
  const at::Tensor a = td["a"].clone();
  td.unlock_();
  Value out = td.pop("a");
  CHECK((out.tensor() == a).all().item<bool>());
  CHECK_FALSE(has_key(td.keys(), "a"));
  CHECK(has_key(td.keys(), "b"));
  const at::Tensor b = td["b"].clone();
  const at::Tensor default_value = at::zeros_like(b);
  CHECK((default_value != b).all().item<bool>());
  out = td.pop("b", default_value);
  CHECK(at::ne(out.tensor(), default_value).all().item<bool>());
  CHECK((out.tensor() == b).all().item<bool>());
  CHECK_FALSE(has_key(td.keys(), "z"));
  out = td.pop("z", default_value);
  CHECK((out.tensor() == default_value).all().item<bool>());
  CHECK_THROWS_AS(td.pop("z"), KeyError);
}

TEST_CASE("test_methods: test_popitem", "[parity][methods]") {
  PARITY_FIXTURE();
  td.unlock_();
  const size_t before = td.keys().size();
  CHECK_NOTHROW(td.popitem());
  CHECK(td.keys().size() == before - 1);
}

TEST_CASE("test_methods: test_reduction", "[parity][methods]") {
  PARITY_FIXTURE();
  const std::string red = GENERATE(as<std::string>{}, "mean", "nanmean", "sum", "nansum", "prod",
                                   "std", "var", "quantile");
  INFO("red " << red);
  const TensorDict f = to_float(td);
  using Fn = std::function<TensorDict(const ReduceDims&, bool)>;
  using FnAll = std::function<at::Tensor()>;
  Fn fn;
  FnAll fn_all;
  if (red == "mean") {
    fn = [&](const ReduceDims& d, bool k) { return f.mean(d, k); };
    fn_all = [&] { return f.mean(reduce_all); };
  } else if (red == "nanmean") {
    fn = [&](const ReduceDims& d, bool k) { return f.nanmean(d, k); };
    fn_all = [&] { return f.nanmean(reduce_all); };
  } else if (red == "sum") {
    fn = [&](const ReduceDims& d, bool k) { return f.sum(d, k); };
    fn_all = [&] { return f.sum(reduce_all); };
  } else if (red == "nansum") {
    fn = [&](const ReduceDims& d, bool k) { return f.nansum(d, k); };
    fn_all = [&] { return f.nansum(reduce_all); };
  } else if (red == "prod") {
    fn = [&](const ReduceDims& d, bool k) { return f.prod(d, k); };
    fn_all = [&] { return f.prod(reduce_all); };
  } else if (red == "std") {
    fn = [&](const ReduceDims& d, bool k) { return f.std(d, k); };
    fn_all = [&] { return f.std(reduce_all); };
  } else if (red == "var") {
    fn = [&](const ReduceDims& d, bool k) { return f.var(d, k); };
    fn_all = [&] { return f.var(reduce_all); };
  } else {
    fn = [&](const ReduceDims& d, bool k) { return f.quantile(0.5, d, k); };
    fn_all = [&] { return f.quantile(reduce_all, 0.5); };
  }
  CHECK(fn({}, false).batch_size().empty());
  CHECK(fn(1, false).batch_size() == without(td.batch_size(), 1));
  CHECK(fn(2, true).batch_size() == with_one(td.batch_size(), 2));
  CHECK(fn_all().defined());
}

TEST_CASE("test_methods: test_reduction_feature", "[parity][methods]") {
  PARITY_FIXTURE();
  const std::string red = GENERATE(as<std::string>{}, "mean", "nanmean", "sum", "nansum", "prod",
                                   "std", "var", "quantile");
  INFO("red " << red);
  const TensorDict f = to_float(td);
  const ReduceDims feature = ReduceDims::feature();
  TensorDict tdr;
  at::Tensor tensor;
  if (red == "mean") {
    tdr = f.mean(feature);
    tensor = f.mean(reduce_all, feature);
  } else if (red == "nanmean") {
    tdr = f.nanmean(feature);
    tensor = f.nanmean(reduce_all, feature);
  } else if (red == "sum") {
    tdr = f.sum(feature);
    tensor = f.sum(reduce_all, feature);
  } else if (red == "nansum") {
    tdr = f.nansum(feature);
    tensor = f.nansum(reduce_all, feature);
  } else if (red == "prod") {
    tdr = f.prod(feature);
    tensor = f.prod(reduce_all, feature);
  } else if (red == "std") {
    tdr = f.std(feature);
    tensor = f.std(reduce_all, feature);
  } else if (red == "var") {
    tdr = f.var(feature);
    tensor = f.var(reduce_all, feature);
  } else {
    tdr = f.quantile(0.5, feature);
    tensor = f.quantile(reduce_all, 0.5, feature);
  }
  CHECK(tdr.batch_size() == td.batch_size());
  CHECK(tensor.sizes().vec() == td.batch_size());
}

TEST_CASE("test_methods: test_remove", "[parity][methods]") {
  PARITY_FIXTURE();
  td.unlock_();
  td.del_("a");
  CHECK_FALSE(has_key(td.keys(), "a"));
  td.lock_();
  CHECK_THROWS_AS(td.del_("b"), LockedError);
}

TEST_CASE("test_methods: test_rename_key", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK_THROWS_AS(td.rename_key_("a", "b", true), KeyError);
  const at::Tensor a = td.get("a");
  td.rename_key_("a", "z");
  CHECK_THROWS_AS(td["a"], KeyError);
  CHECK_FALSE(has_key(td.keys(), "a"));
  const at::Tensor z = td.get("z");
  CHECK(at::allclose(a, z));
  at::Tensor new_z = at::randn_like(z);
  td.set("z", new_z);
  CHECK(at::allclose(new_z, td.get("z")));
  new_z = at::randn_like(z);
  td.set_("z", new_z);
  CHECK(at::allclose(new_z, td.get("z")));
}

TEST_CASE("test_methods: test_rename_key_nested", "[parity][methods]") {
  PARITY_FIXTURE();
  td.unlock_();
  td.set({"nested", "conflict"}, at::zeros(td.batch_size()));
  CHECK_THROWS_AS((td.rename_key_({"nested", "conflict"}, "b", true)), KeyError);
  td.set({"nested", "first"}, at::zeros(td.batch_size()));
  td.rename_key_({"nested", "first"}, "second");
  CHECK((td["second"] == 0).all().item<bool>());
  CHECK_FALSE(has_key(td.keys(true), NestedKey{"nested", "first"}));
  td.rename_key_("second", {"nested", "back"});
  CHECK((td[{"nested", "back"}] == 0).all().item<bool>());
  CHECK_FALSE(has_key(td.keys(), "second"));
}

TEST_CASE("test_methods: test_repr", "[parity][methods]") {
  PARITY_FIXTURE();
  std::ostringstream os;
  CHECK_NOTHROW(os << td);
  CHECK_FALSE(os.str().empty());
}

TEST_CASE("test_methods: test_reshape", "[parity][methods]") {
  PARITY_FIXTURE();
  const bool lock = GENERATE(false, true);
  INFO("lock " << lock);
  if (lock) td.lock_();
  TensorDict td_reshape = td.reshape(td.batch_size());
  CHECK(parity::prod(td_reshape.batch_size()) == parity::prod(td.batch_size()));
  CHECK(td_reshape.batch_size() == td.batch_size());
  td_reshape = td.reshape({-1});
  CHECK(td_reshape.is_lazy_stack() == td.is_lazy_stack());
  CHECK(parity::prod(td_reshape.batch_size()) == parity::prod(td.batch_size()));
  CHECK(td_reshape.batch_size() == BatchSize{parity::prod(td.batch_size())});
  if (td.is_locked()) CHECK(td_reshape.is_locked());
}

TEST_CASE("test_methods: test_select", "[parity][methods]") {
  PARITY_FIXTURE();
  const bool strict = GENERATE(true, false);
  const bool inplace = GENERATE(true, false);
  INFO("strict " << strict << " inplace " << inplace);
  std::vector<NestedKey> keys{"a"};
  if (td_name == "nested_td") keys.push_back({"my_nested_td", "inner"});
  const TensorDict td2 = inplace ? td.select_(keys, strict) : td.select(keys, strict);
  CHECK(td2.is_same(td) == inplace);
  CHECK(td2.keys(true, true).size() == keys.size());
  CHECK(has_key(td2.keys(), "a"));
  CHECK(td2.clone().keys(true, true).size() == keys.size());
  CHECK(has_key(td2.clone().keys(), "a"));
}

TEST_CASE("test_methods: test_select_exception", "[parity][methods]") {
  PARITY_FIXTURE();
  const bool strict = GENERATE(true, false);
  INFO("strict " << strict);
  if (strict) {
    CHECK_THROWS_AS((td.select({"tada"}, strict)), KeyError);
  } else {
    const TensorDict td2 = td.select({"tada"}, strict);
    CHECK_FALSE(td2.is_same(td));
    CHECK(td2.keys().empty());
  }
}

TEST_CASE("test_methods: test_set_nested_batch_size", "[parity][methods]") {
  PARITY_FIXTURE();
  td.unlock_();
  BatchSize batch_size = td.batch_size();
  batch_size.push_back(3);
  td.set("some_other_td", TensorDict({}, batch_size));
  CHECK(td.get_tensordict("some_other_td").batch_size() == batch_size);
}

TEST_CASE("test_methods: test_set_requires_grad", "[parity][methods]") {
  PARITY_FIXTURE();
  td.unlock_();
  CHECK_FALSE(td.get("a").requires_grad());
  td.set("a", at::randn_like(td.get("a")).requires_grad_());
  CHECK(td.get("a").requires_grad());
}

TEST_CASE("test_methods: test_set_unexisting", "[parity][methods]") {
  PARITY_FIXTURE();
  td.set("z", at::ones_like(td.get("a")));
  CHECK((td.get("z") == 1).all().item<bool>());
}

TEST_CASE("test_methods: test_setdefault_existing_key", "[parity][methods]") {
  PARITY_FIXTURE();
  td.unlock_();
  const at::Tensor expected = td.get("a");
  const Value inserted = td.setdefault("a", at::ones_like(td.get("b")));
  CHECK((inserted.tensor() == expected).all().item<bool>());
}

TEST_CASE("test_methods: test_setdefault_missing_key", "[parity][methods]") {
  PARITY_FIXTURE();
  td.unlock_();
  const at::Tensor expected = at::ones_like(td.get("a"));
  const Value inserted = td.setdefault("z", expected);
  CHECK((inserted.tensor() == expected).all().item<bool>());
}

TEST_CASE("test_methods: test_setdefault_nested", "[parity][methods]") {
  PARITY_FIXTURE();
  td.unlock_();
  const at::Tensor tensor = at::randn({4, 3, 2, 1, 5});
  const at::Tensor tensor2 = at::ones({4, 3, 2, 1, 5});
  const TensorDict sub_sub({{"c", tensor}}, {4, 3, 2, 1}, at::Device(at::kCPU));
  const TensorDict sub({{"b", sub_sub}}, {4, 3, 2, 1}, at::Device(at::kCPU));
  td.set("a", sub);
  CHECK(at::allclose(td.setdefault({"a", "b", "c"}, tensor2).tensor(), tensor));
  if (td_name != "stacked_td") {
    CHECK(at::allclose(td.setdefault({"a", "b", "d"}, tensor2).tensor(), tensor2));
    CHECK(at::allclose(td.get({"a", "b", "d"}), tensor2));
  }
}

TEST_CASE("test_methods: test_setitem", "[parity][methods]") {
  // Python's range(n) index is arange(n) here.
  PARITY_FIXTURE();
  const std::vector<std::pair<std::string, IndexItem>> idxs{
      {"slice(1)", Slice(std::nullopt, 1)},
      {"tensor([0])", at::tensor(std::vector<int64_t>{0})},
      {"tensor([0, 1])", at::tensor(std::vector<int64_t>{0, 1})},
      {"range(1)", at::arange(1)},
      {"range(2)", at::arange(2)}};
  for (const auto& [label, idx] : idxs) {
    INFO("idx " << label);
    TensorDict fresh = parity::make(td_name);
    TensorDict td_clone = to_tensordict(fresh.index({idx})).zero_();
    fresh.index_put_({idx}, td_clone);
    CHECK((fresh.index({idx}).get("a") == 0).all().item<bool>());
    td_clone = cat({td_clone, td_clone}, 0);
    CHECK_THROWS(fresh.index_put_({idx}, td_clone));
  }
}

TEST_CASE("test_methods: test_setitem_ellipsis", "[parity][methods]") {
  PARITY_FIXTURE();
  const std::vector<std::pair<std::string, Index>> idxs{{"...", {Ellipsis}},
                                                        {"(..., 0)", {Ellipsis, 0}},
                                                        {"(0, ...)", {0, Ellipsis}},
                                                        {"(0, ..., 0)", {0, Ellipsis, 0}}};
  for (const auto& [label, idx] : idxs) {
    INFO("idx " << label);
    TensorDict td_clone = td.clone();
    TensorDict actual_td = td_clone.index(idx).clone();
    actual_td.zero_();
    for (const auto& key : actual_td.keys())
      CHECK((actual_td.get_value(key).is_tensor() ? (actual_td.get(key) == 0).all().item<bool>()
                                                  : (actual_td.get_tensordict(key) == 0).all()));
    td_clone.index_put_(idx, actual_td);
    for (const auto& key : td_clone.keys()) {
      const TensorDict row = td_clone.index(idx);
      CHECK((row.get_value(key).is_tensor() ? (row.get(key) == 0).all().item<bool>()
                                            : (row.get_tensordict(key) == 0).all()));
    }
  }
}

TEST_CASE("test_methods: test_setitem_nestedtuple", "[parity][methods]") {
  PARITY_FIXTURE();
  if (td.is_locked()) td.unlock_();
  td.set({" a ", {"little", "story"}, "about", {"myself"}}, at::zeros(td.batch_size()));
  CHECK((td[{" a ", "little", "story", "about", "myself"}] == 0).all().item<bool>());
}

TEST_CASE("test_methods: test_setitem_slice", "[parity][methods]") {
  PARITY_FIXTURE();
  const Slice to1(std::nullopt, 1);
  td.index_put_({Slice()}, td.clone());
  td.index_put_({to1}, td.index({to1}).clone().zero_());
  CHECK((td.index({to1}) == 0).all());
  td = parity::make(td_name);
  td.index_put_({to1}, to_tensordict(td.index({to1})).zero_());
  CHECK((td.index({to1}) == 0).all());
  // with broadcast
  td = parity::make(td_name);
  td.index_put_({to1}, td[0].clone().zero_());
  CHECK((td.index({to1}) == 0).all());
  td = parity::make(td_name);
  td.index_put_({to1}, to_tensordict(td[0]).zero_());
  CHECK((td.index({to1}) == 0).all());
  td = parity::make(td_name);
  td.index_put_({to1, 0}, td.index({0, 0}).clone().zero_());
  CHECK((td.index({to1, 0}) == 0).all());
  td = parity::make(td_name);
  td.index_put_({to1, 0}, to_tensordict(td.index({0, 0})).zero_());
  CHECK((td.index({to1, 0}) == 0).all());
  td = parity::make(td_name);
  td.index_put_({to1, Slice(), 0}, td.index({0, Slice(), 0}).clone().zero_());
  CHECK((td.index({to1, Slice(), 0}) == 0).all());
  td = parity::make(td_name);
  td.index_put_({to1, Slice(), 0}, to_tensordict(td.index({0, Slice(), 0})).zero_());
  CHECK((td.index({to1, Slice(), 0}) == 0).all());
}

TEST_CASE("test_methods: test_setitem_string", "[parity][methods]") {
  PARITY_FIXTURE();
  td.unlock_();
  td.set("d", at::randn({4, 3, 2, 1, 5}));
  CHECK(has_key(td.keys(), "d"));
}

TEST_CASE("test_methods: test_sorted_keys", "[parity][methods]") {
  // Python's sorted_keys property is keys(sort=True); its cache (_cache) is not applicable.
  PARITY_FIXTURE();
  const auto sorted_keys = td.keys(false, false, true);
  const auto keys = td.keys();
  REQUIRE(sorted_keys.size() == keys.size());
  for (size_t i = 0; i < keys.size(); ++i) CHECK(sorted_keys[i] == keys[i]);
}

TEST_CASE("test_methods: test_split", "[parity][methods]") {
  PARITY_FIXTURE();
  const at::Tensor t = at::zeros({}).expand(td.batch_size());
  for (int64_t dim = 0; dim < td.batch_dims(); ++dim) {
    const int64_t rep = td.batch_size()[dim] / 2, remainder = td.batch_size()[dim] % 2;
    std::vector<int64_t> split_sizes(rep, 2);
    split_sizes.insert(split_sizes.end(), remainder, 1);
    for (int form = 0; form < 2; ++form) {
      INFO("dim " << dim << (form ? " split sizes" : " split size 2"));
      const auto tensorsplit = form ? t.split_with_sizes(split_sizes, dim) : t.split(2, dim);
      const auto tds = form ? td.split(split_sizes, dim) : td.split(2, dim);
      REQUIRE(tds.size() == tensorsplit.size());
      for (size_t idx = 0; idx < tds.size(); ++idx) {
        const TensorDict& split_td = tds[idx];
        const int64_t expected_split_dim_size = static_cast<int64_t>(idx) == rep ? 1 : 2;
        CHECK(split_td.batch_size() == tensorsplit[idx].sizes().vec());
        if (td_name == "nested_td") {
          CHECK(split_td.get_value("my_nested_td").is_tensordict());
          CHECK(split_td.get_value({"my_nested_td", "inner"}).is_tensor());
        }
        for (const auto& [key, item] : split_td.items()) {
          std::vector<int64_t> expected_shape = *td.get_value(key).shape();
          expected_shape[dim] = expected_split_dim_size;
          CHECK(*item.shape() == expected_shape);
          if (key == NestedKey("my_nested_td")) {
            std::vector<int64_t> inner = td.get({"my_nested_td", "inner"}).sizes().vec();
            inner[dim] = expected_split_dim_size;
            CHECK(item.tensordict().get("inner").sizes().vec() == inner);
          }
        }
      }
    }
  }
}

TEST_CASE("test_methods: test_split_keys", "[parity][methods]") {
  PARITY_FIXTURE();
  const bool inplace = GENERATE(true, false);
  const bool strict = GENERATE(true, false);
  INFO("inplace " << inplace << " strict " << strict);
  const auto all_keys = td.keys(true, true);
  std::vector<NestedKey> keys(all_keys.begin(), all_keys.begin() + 3);
  keys.emplace_back("something that does not exist");
  if (strict) {
    CHECK_THROWS_AS((td.split_keys({keys}, false, strict)), KeyError);
    keys.pop_back();
  }
  const auto out = td.split_keys({keys}, inplace, strict);
  REQUIRE(out.size() == 2);
  const TensorDict &td0 = out[0], &td1 = out[1];
  if (inplace) {
    CHECK(td1.is_same(td));
  } else {
    CHECK_FALSE(td.is_same(td1));
  }
  for (const auto& key : td0.keys(true, true)) CHECK_FALSE(td1.contains(key));
  for (const auto& key : td1.keys(true, true)) CHECK_FALSE(td0.contains(key));
}

TEST_CASE("test_methods: test_squeeze", "[parity][methods]") {
  PARITY_FIXTURE();
  const int64_t squeeze_dim = -1;
  td.unlock_();
  TensorDict td_squeeze = td.squeeze(-1);
  const int64_t tensor_squeeze_dim = td.batch_dims() + squeeze_dim;
  const at::Tensor tensor = at::ones_like(td.get("a").squeeze(tensor_squeeze_dim));
  td_squeeze.set("a", tensor);
  CHECK(td.batch_size().back() == 1);
  CHECK((td_squeeze.get("a") == tensor).all().item<bool>());
  CHECK((td_squeeze.get("a") == 1).all().item<bool>());
}

TEST_CASE("test_methods: test_squeeze_with_none", "[parity][methods]") {
  PARITY_FIXTURE();
  TensorDict td_squeeze = td.squeeze();
  for (int64_t d : td_squeeze.batch_size()) CHECK(d > 1);
  const at::Tensor tensor = at::ones_like(td.get("a").squeeze());
  td_squeeze.set_("a", tensor);
  CHECK((td_squeeze.get("a") == tensor).all().item<bool>());
  CHECK((td_squeeze.get("a") == 1).all().item<bool>());
  CHECK((td.get("a") == 1).all().item<bool>());
}

TEST_CASE("test_methods: test_state_dict", "[parity][methods]") {
  PARITY_FIXTURE();
  const StateDict sd = td.state_dict();
  TensorDict td_zero = td.clone().detach().zero_();
  td_zero.load_state_dict(sd);
  CHECK(parity::allclose_td(td, td_zero));
}

TEST_CASE("test_methods: test_state_dict_assign", "[parity][methods]") {
  PARITY_FIXTURE();
  const StateDict sd = td.state_dict();
  TensorDict td_zero = td.clone().detach().zero_();
  const TensorDict shallow_copy = td_zero.clone(false);
  td_zero.load_state_dict(sd, true, true);
  CHECK((shallow_copy == 0).all());
  CHECK(parity::allclose_td(td, td_zero));
}

TEST_CASE("test_methods: test_state_dict_strict", "[parity][methods]") {
  PARITY_FIXTURE();
  StateDict sd = td.state_dict();
  TensorDict td_zero = td.clone().detach().zero_();
  auto& tensors = sd.tensors;
  tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                               [](const auto& kv) { return kv.first == "a"; }),
                tensors.end());
  CHECK_NOTHROW(td_zero.load_state_dict(sd, false));
  CHECK_THROWS(td_zero.load_state_dict(sd, true));
}

TEST_CASE("test_methods: test_tensor_split", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK(td.batch_size() == BatchSize{4, 3, 2, 1});
  const at::Tensor tensor_compare = at::zeros(td.batch_size());
  auto tensor_split = at::tensor_split(tensor_compare, at::IntArrayRef{1, 3});
  REQUIRE(tensor_split.size() == 3);
  CHECK(tensor_split[0].sizes() == at::IntArrayRef{1, 3, 2, 1});
  CHECK(tensor_split[1].sizes() == at::IntArrayRef{2, 3, 2, 1});
  CHECK(tensor_split[2].sizes() == at::IntArrayRef{1, 3, 2, 1});
  tensor_split = at::tensor_split(tensor_compare, at::IntArrayRef{1, 3}, 1);
  REQUIRE(tensor_split.size() == 3);
  CHECK(tensor_split[0].sizes() == at::IntArrayRef{4, 1, 2, 1});
  CHECK(tensor_split[1].sizes() == at::IntArrayRef{4, 2, 2, 1});
  CHECK(tensor_split[2].sizes() == at::IntArrayRef{4, 0, 2, 1});
  tensor_split = at::tensor_split(tensor_compare, 2, 2);
  REQUIRE(tensor_split.size() == 2);
  CHECK(tensor_split[0].sizes() == at::IntArrayRef{4, 3, 1, 1});
  CHECK(tensor_split[1].sizes() == at::IntArrayRef{4, 3, 1, 1});

  auto td_split = td.tensor_split(at::IntArrayRef{1, 3});
  REQUIRE(td_split.size() == 3);
  CHECK(td_split[0].batch_size() == BatchSize{1, 3, 2, 1});
  CHECK(td_split[1].batch_size() == BatchSize{2, 3, 2, 1});
  CHECK(td_split[2].batch_size() == BatchSize{1, 3, 2, 1});
  td_split = td.tensor_split(at::IntArrayRef{1, 3}, 1);
  REQUIRE(td_split.size() == 3);
  CHECK(td_split[0].batch_size() == BatchSize{4, 1, 2, 1});
  CHECK(td_split[1].batch_size() == BatchSize{4, 2, 2, 1});
  CHECK(td_split[2].batch_size() == BatchSize{4, 0, 2, 1});
  td_split = td.tensor_split(2, 2);
  REQUIRE(td_split.size() == 2);
  CHECK(td_split[0].batch_size() == BatchSize{4, 3, 1, 1});
  CHECK(td_split[1].batch_size() == BatchSize{4, 3, 1, 1});
}

TEST_CASE("test_methods: test_tensordict_set", "[parity][methods]") {
  // Python passes numpy arrays; here the same values as tensors.
  PARITY_FIXTURE();
  td.unlock_();
  td.set("key1", at::ones({4, 3, 2, 1, 10}, at::kDouble));
  CHECK((td.get("key1") == 1).all().item<bool>());
  CHECK_THROWS(td.set("key1", at::ones({5, 10}, at::kDouble)));
  td.set_("key1", at::zeros({4, 3, 2, 1, 10}, at::kDouble));
  CHECK((td.get("key1") == 0).all().item<bool>());
  CHECK_THROWS_AS((td.set_("smartypants", at::ones({4, 3, 2, 1, 5}, at::kDouble))), KeyError);
  td.set("key2", at::randn({4, 3, 2, 1, 5}, at::kDouble));
  const at::Tensor x = at::ones({2, 1, 5}, at::kDouble) * 42;
  td.set_at_("key2", x, {2, 2});
  CHECK((td.get("key2").index({2, 2}) == 42).all().item<bool>());
}
