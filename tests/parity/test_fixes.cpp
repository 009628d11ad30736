// Focused tests of the runtime fixes the port asked for (each names the ported Python test that
// found it): the behaviour Python tensordict 0.14 has, on small inputs.
#include <ATen/ATen.h>

#include "parity_fixtures.h"

using namespace tensordict;

TEST_CASE("fix: set maps a TensorDict with fewer batch dims onto the parent's batch size",
          "[parity][fixes]") {
  // test_methods: test_nested_td_emptyshape. Python clones the value's structure and gives it
  // the parent's batch size; the caller's TensorDict keeps its own.
  TensorDict td({}, {4, 3});
  const TensorDict inner({{"x", at::zeros({4, 3, 2})}}, {});
  td.set("inner", inner);
  CHECK(td.get_tensordict("inner").batch_size() == BatchSize{4, 3});
  CHECK(inner.batch_size().empty());
  CHECK(td.get_tensordict("inner").get("x").is_same(inner.get("x")));
  const TensorDict leading({{"x", at::zeros({4, 3, 2})}}, {4});
  td.set("leading", leading);
  CHECK(td.get_tensordict("leading").batch_size() == BatchSize{4, 3});
  // Entries without the parent's dims, and batch sizes that disagree, are refused.
  CHECK_THROWS_AS(td.set("bad", TensorDict({{"x", at::zeros({5})}}, {})), ShapeError);
  CHECK_THROWS_AS(td.set("other", TensorDict({}, {3})), ShapeError);
}

TEST_CASE("fix: split_keys in place returns this TensorDict without the emptied levels",
          "[parity][fixes]") {
  // test_generic: test_split_keys, test_methods: test_split_keys.
  TensorDict td({{"a", 0}, {"b", TensorDict({{"c", 1}}, {})}, {"g", 3}}, {});
  auto out = td.split_keys({{NestedKey{"b", "c"}}}, true);
  REQUIRE(out.size() == 2);
  CHECK(out[1].is_same(td));
  CHECK(out[0].contains({"b", "c"}));
  CHECK_FALSE(td.contains("b"));
  // Not in place: the rest is a new TensorDict, also without the emptied level.
  TensorDict td2({{"a", 0}, {"b", TensorDict({{"c", 1}}, {})}}, {});
  out = td2.split_keys({{NestedKey{"b", "c"}}});
  CHECK_FALSE(out[1].is_same(td2));
  CHECK_FALSE(out[1].contains("b"));
  CHECK(td2.contains({"b", "c"}));
  // A missing key (strict) leaves the TensorDict as it was, also in place.
  CHECK_THROWS_AS(td2.split_keys({{NestedKey("a"), NestedKey("zz")}}, true), KeyError);
  CHECK(td2.contains("a"));
}

TEST_CASE("fix: index_put_ reads a lazy stack value", "[parity][fixes]") {
  // test_methods: test_setitem_slice, test_setitem_ellipsis (a lazily stacked value was written
  // as if it had no entries).
  const TensorDict value = lazy_stack(
      {TensorDict({{"x", at::ones({2})}}, {2}), TensorDict({{"x", at::ones({2})}}, {2})});
  TensorDict dense({{"x", at::zeros({2, 2})}}, {2, 2});
  dense.index_put_({Slice()}, value);
  CHECK((dense.get("x") == 1).all().item<bool>());
  TensorDict lazy = lazy_stack(
      {TensorDict({{"x", at::zeros({2})}}, {2}), TensorDict({{"x", at::zeros({2})}}, {2})});
  lazy.index_put_({Slice(std::nullopt, 1)}, value.index({Slice(std::nullopt, 1)}));
  CHECK((lazy.get("x").index({0}) == 1).all().item<bool>());
  CHECK((lazy.get("x").index({1}) == 0).all().item<bool>());
}

TEST_CASE("fix: a lazy stack is locked when every element is", "[parity][fixes]") {
  // test_errors: TestLock.test_stack_cache_lock.
  TensorDict td0({{"x", at::zeros({})}}, {});
  TensorDict td1 = td0.clone();
  const TensorDict td = lazy_stack({td0, td1});
  td0.lock_();
  CHECK_FALSE(td.is_locked());
  td1.lock_();
  CHECK(td.is_locked());
  td0.unlock_();
  CHECK_FALSE(td.is_locked());
}
