// Port of Python tensordict v0.14.0 test/tensordict/test_methods.py, class TestTensorDicts, part
// five: the tests of members the runtime gained for them (apply with a default, clear,
// create_nested, cat/stack_tensors, the is* predicates, logsumexp, softmax, maximum, new_*,
// repeat, update_at_, to_lazystack, view(dtype), autograd), on the fixtures td, nested_td and
// stacked_td.
#include <ATen/ATen.h>

#include "parity_fixtures.h"

using namespace tensordict;
using parity::to_tensordict;

TEST_CASE("test_methods: test_apply_default", "[parity][methods]") {
  PARITY_FIXTURE();
  const bool inplace = GENERATE(false, true);
  INFO("inplace " << inplace);
  const TensorDict td_c = to_tensordict(td);
  td.zero_();
  td.unlock_();
  td.set({"nested", "newkey"}, at::zeros(td.batch_size()));
  auto get_old_val = [](const at::Tensor& newval, const at::Tensor& oldval) {
    return oldval.defined() ? oldval : newval;
  };
  const TensorDict td_1 = inplace ? td.apply_(get_old_val, td_c, /*default_none=*/true)
                                  : td.apply(get_old_val, td_c, /*default_none=*/true);
  for (const auto& key : td.keys(true, true)) {
    INFO(key);
    if (inplace) {
      if (td_c.contains(key)) {
        CHECK((td_c[key] == td[key]).all().item<bool>());
      } else {
        CHECK(key == NestedKey{"nested", "newkey"});
        CHECK((td_1[key] == 0).all().item<bool>());
      }
      CHECK((td_1[key] == td[key]).all().item<bool>());
    } else if (td_c.contains(key)) {
      CHECK((td_c[key] == td_1[key]).all().item<bool>());
    } else {
      CHECK(key == NestedKey{"nested", "newkey"});
      CHECK((td_1[key] == 0).all().item<bool>());
    }
  }
}

TEST_CASE("test_methods: test_cat_tensors", "[parity][methods]") {
  PARITY_FIXTURE();
  const int keep = GENERATE(0, 1, 2);  // Python's keep_entries False, True, None (default)
  INFO("keep_entries " << keep);
  td.unlock_();
  const at::Tensor a = td.pop("a").tensor();
  td.set("a", a.unsqueeze(-1));
  td.set("a_bis", td["a"] + 1);
  const at::Tensor pred_stack = at::cat({td["a"], td["a_bis"]}, -1);
  if (keep == 2) {
    td.cat_tensors({"a", "a_bis"}, "cat", -1);
  } else {
    td.cat_tensors({"a", "a_bis"}, "cat", -1, keep == 1);
  }
  CHECK((td["cat"] == pred_stack).all().item<bool>());
  CHECK(td.contains("a") == (keep == 1));
}

TEST_CASE("test_methods: test_stack_tensors", "[parity][methods]") {
  PARITY_FIXTURE();
  const int keep = GENERATE(0, 1, 2);  // Python's keep_entries False, True, None (default)
  INFO("keep_entries " << keep);
  td.unlock_();
  td.set("a_bis", td["a"] + 1);
  const at::Tensor pred_stack = at::stack({td["a"], td["a_bis"]}, -1);
  if (keep == 2) {
    td.stack_tensors({"a", "a_bis"}, "stack", -1);
  } else {
    td.stack_tensors({"a", "a_bis"}, "stack", -1, keep == 1);
  }
  CHECK((td["stack"] == pred_stack).all().item<bool>());
  CHECK(td.contains("a") == (keep == 1));
}

TEST_CASE("test_methods: test_clear", "[parity][methods]") {
  PARITY_FIXTURE();
  td.unlock_();
  TensorDict& tdc = td.clear();
  CHECK(tdc.is_empty());
  CHECK(tdc.is_same(td));
}

TEST_CASE("test_methods: test_create_nested", "[parity][methods]") {
  PARITY_FIXTURE();
  td.unlock_();
  td.create_nested("root");
  CHECK(td.get_tensordict("root").batch_size() == td.batch_size());
  CHECK(td.get_value("root").is_tensordict());
  td.create_nested({"some", "nested", "key"});
  const TensorDict some = td.get_tensordict("some");
  const TensorDict nested = some.get_tensordict("nested");
  CHECK_NOTHROW(nested.get_tensordict("key"));
  CHECK(td.get_tensordict({"some", "nested", "key"}).batch_size() == td.batch_size());
  CHECK(td.get_value({"some", "nested", "key"}).is_tensordict());
  td.del_("root");
  td.lock_();
  CHECK_THROWS_AS(td.create_nested("root"), LockedError);
}

TEST_CASE("test_methods: test_isfinite", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK(td.isfinite().all());
}

TEST_CASE("test_methods: test_isnan", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK_FALSE(td.isnan().any());
}

TEST_CASE("test_methods: test_isreal", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK(td.isreal().all());
}

TEST_CASE("test_methods: test_isposinf", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK_FALSE(td.isposinf().any());
}

TEST_CASE("test_methods: test_isneginf", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK_FALSE(td.isneginf().any());
}

TEST_CASE("test_methods: test_logsumexp", "[parity][methods]") {
  PARITY_FIXTURE();
  const int has_out = GENERATE(0, 1, 2);  // Python's has_out False, "complete", "empty"
  const bool keepdim = GENERATE(true, false);
  const int dim_case = GENERATE(0, 1, 2);  // Python's dim 1, (1,), (1, -1)
  INFO("has_out " << has_out << " keepdim " << keepdim << " dim case " << dim_case);
  const ReduceDims dims = dim_case == 2 ? ReduceDims{1, -1} : ReduceDims(1);
  if (has_out == 0) {
    CHECK(td.logsumexp(dims, keepdim).batch_size() != td.batch_size());
    return;
  }
  TensorDict out = to_tensordict(td).detach().logsumexp(dims, keepdim);
  if (has_out == 2) out = out.empty();
  const TensorDict out_c = out.clone(/*recurse=*/false);  // Python's copy()
  const TensorDict& tdlse = td.logsumexp_out(out, dims, keepdim);
  CHECK(tdlse.batch_size() != td.batch_size());
  CHECK(tdlse.is_same(out));
  for (const auto& key : out_c.keys(true, true)) {  // Python's `x is y` for out's tensors
    INFO(key);
    CHECK(tdlse[key].is_same(out_c[key]));
  }
  CHECK(parity::allclose_td(tdlse, td.logsumexp(dims, keepdim)));
}

TEST_CASE("test_methods: test_softmax", "[parity][methods]") {
  PARITY_FIXTURE();
  const int64_t dim = GENERATE(0, -1, 3);
  INFO("dim " << dim);
  td = td.apply([](const at::Tensor& x) { return x.to(at::kFloat); });
  const TensorDict tds = td.softmax(dim);
  CHECK(tds.batch_size() == td.batch_size());
}

TEST_CASE("test_methods: test_maximum", "[parity][methods]") {
  // Python asserts the result is a TensorDict; here it runs and keeps the batch size.
  PARITY_FIXTURE();
  CHECK(td.maximum(td).batch_size() == td.batch_size());
}

TEST_CASE("test_methods: test_new_empty", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK(td.new_empty({0}).batch_size() == BatchSize{0});
  CHECK(td.new_empty({2, 3}).batch_size() == BatchSize{2, 3});
}

TEST_CASE("test_methods: test_new_full", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK(td.new_full({0}, 2).batch_size() == BatchSize{0});
  const TensorDict tdn = td.new_full({2, 3}, 2);
  CHECK(tdn.batch_size() == BatchSize{2, 3});
  CHECK((tdn == 2).all());
}

TEST_CASE("test_methods: test_new_ones", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK(td.new_ones({0}).batch_size() == BatchSize{0});
  const TensorDict tdn = td.new_ones({2, 3});
  CHECK(tdn.batch_size() == BatchSize{2, 3});
  CHECK((tdn == 1).all());
}

TEST_CASE("test_methods: test_new_zeros", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK(td.new_zeros({0}).batch_size() == BatchSize{0});
  const TensorDict tdn = td.new_zeros({2, 3});
  CHECK(tdn.batch_size() == BatchSize{2, 3});
  CHECK((tdn == 0).all());
}

TEST_CASE("test_methods: test_repeat", "[parity][methods]") {
  PARITY_FIXTURE();
  CHECK((td.repeat({1, 1, 1, 1}) == td).all());
  CHECK((td.repeat({2, 1, 1, 1}) == cat({td, td}, 0)).all());
  CHECK((td.repeat({1, 2, 1, 1}) == cat({td, td}, 1)).all());
  CHECK((td.repeat({1, 1, 2, 1}) == cat({td, td}, 2)).all());
  CHECK((td.repeat({1, 1, 1, 2}) == cat({td, td}, 3)).all());
}

TEST_CASE("test_methods: test_repeat_interleave", "[parity][methods]") {
  PARITY_FIXTURE();
  for (int64_t d : {0, 1, 2, 3, -1, -2, -3, -4}) {
    INFO("dim " << d);
    const at::Tensor t = at::empty(td.batch_size());
    const TensorDict td_repeat = td.repeat_interleave(3, d);
    CHECK(td_repeat.batch_size() == t.repeat_interleave(3, d).sizes().vec());
    CHECK(td_repeat.device() == td.device());
    const int64_t dim = d < 0 ? td.ndim() + d : d;
    CHECK(at::allclose(td["a"].repeat_interleave(3, dim), td_repeat["a"]));
  }
  const at::Tensor t = at::empty(td.batch_size());
  CHECK(td.repeat_interleave(3).batch_size() == t.repeat_interleave(3).sizes().vec());
}

TEST_CASE("test_methods: test_update_at_", "[parity][methods]") {
  PARITY_FIXTURE();
  const TensorDict td0 = td[1].clone().zero_();
  td.update_at_(td0, {0});
  CHECK((td[0] == 0).all());
}

TEST_CASE("test_methods: test_update_at_nested_time_slice", "[parity][methods]") {
  // The Python test ignores its fixture: it runs once here.
  TensorDict td(
      {{"a", at::zeros({4, 3, 5})}, {"b", TensorDict({{"c", at::zeros({4, 3, 2})}}, {4, 3})}},
      {4, 3});
  const TensorDict td0({{"a", at::ones({4, 5})}, {"b", TensorDict({{"c", at::ones({4, 2})}}, {4})}},
                       {4});
  td.update_at_(td0, {Slice(), 1});
  CHECK((td.index({Slice(), 1}) == td0).all());
  CHECK((td.index({Slice(), 0}) == 0).all());
  CHECK((td.index({Slice(), 2}) == 0).all());
}

TEST_CASE("test_methods: test_update_at_nested_time_slice_locked", "[parity][methods]") {
  // The Python test ignores its fixture: it runs once here.
  TensorDict td(
      {{"a", at::zeros({4, 3, 5})}, {"b", TensorDict({{"c", at::zeros({4, 3, 2})}}, {4, 3})}},
      {4, 3});
  td.lock_();
  const TensorDict td0({{"a", at::ones({4, 5})}, {"b", TensorDict({{"c", at::ones({4, 2})}}, {4})}},
                       {4});
  td.update_at_(td0, {Slice(), 2});
  CHECK((td.index({Slice(), 2}) == td0).all());
}

TEST_CASE("test_methods: test_to_lazystack", "[parity][methods]") {
  PARITY_FIXTURE();
  const TensorDict td2 = td.to_lazystack();
  CHECK(td2.is_lazy_stack());
  CHECK(td2.batch_size() == td.batch_size());
  CHECK((td2.names() == td.names()));
}

TEST_CASE("test_methods: test_view_dtype", "[parity][methods]") {
  PARITY_FIXTURE();
  const TensorDict tview = td.view(at::kByte, {});
  for (const auto& p : tview.values(true, true)) CHECK(p.tensor().dtype() == at::kByte);
}

TEST_CASE("test_methods: test_zero_grad", "[parity][methods]") {
  PARITY_FIXTURE();
  const bool set_to_none = GENERATE(true, false);
  INFO("set_to_none " << set_to_none);
  TensorDict tdr = td.to(at::kFloat);
  tdr.requires_grad_();
  const TensorDict td1 = tdr + 1;
  at::Tensor total;
  for (const auto& v : td1.sum().values(true, true))
    total = total.defined() ? total + v.tensor() : v.tensor();
  total.backward();
  CHECK((tdr.grad() == 1).all());
  tdr.zero_grad(set_to_none);
  if (set_to_none) {
    CHECK(tdr.grad().is_empty());
  } else {
    CHECK((tdr.grad() == 0).all());
  }
}

TEST_CASE("test_methods: test_backward", "[parity][methods]") {
  PARITY_FIXTURE();
  TensorDict inputs = td.to(at::kFloat);
  inputs.requires_grad_();
  const TensorDict outputs = inputs + 1;
  outputs.backward(outputs.apply([](const at::Tensor& x) { return at::ones_like(x); }));
  CHECK((inputs.grad() == 1).all());
}
