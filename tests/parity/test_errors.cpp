// Port of Python tensordict v0.14.0 test/tensordict/test_errors.py: error messages, missing
// keys, and the lock graph. Python's get_defaults_to_none switch (get returning None) and its
// weak-reference bookkeeping are not applicable (docs/parity.md); the public behaviour is ported.
#include <ATen/ATen.h>

#include "parity_fixtures.h"

using namespace tensordict;

namespace {

// Python's TensorDict({"a": 0, "b": {"c": 1}}).
TensorDict a0_bc1() { return TensorDict({{"a", 0}, {"b", TensorDict({{"c", 1}}, {})}}, {}); }

}  // namespace

TEST_CASE("test_errors: TestErrorMessage.test_err_msg_missing_nested", "[parity][errors]") {
  // Python: ValueError "Expected a TensorDictBase instance" ("a" is a tensor, not a TensorDict).
  const TensorDict td({{"a", at::zeros({})}}, {});
  CHECK_THROWS_AS((td[{"a", "b"}]), Error);
  CHECK_THROWS_WITH((td[{"a", "b"}]), Catch::Matchers::ContainsSubstring("'a'"));
}

TEST_CASE("test_errors: TestErrorMessage.test_inplace_error", "[parity][errors]") {
  // Python: ValueError "Failed to update 'a'".
  TensorDict td({{"a", at::rand({})}}, {});
  CHECK_THROWS_AS((td.set_("a", at::randn({2}))), Error);
  CHECK_THROWS_WITH((td.set_("a", at::randn({2}))), Catch::Matchers::ContainsSubstring("'a'"));
}

TEST_CASE("test_errors: TestErrors.test_error_get", "[parity][errors]") {
  const TensorDict td = a0_bc1();
  CHECK_THROWS_AS(td.get("c"), KeyError);
  CHECK_THROWS_AS((td.get({"b", "d"})), KeyError);
}

TEST_CASE("test_errors: TestErrors.test_getitem", "[parity][errors]") {
  const TensorDict td = a0_bc1();
  CHECK_THROWS_AS(td["c"], KeyError);
  CHECK_THROWS_AS((td[{"b", "d"}]), KeyError);
}

TEST_CASE("test_errors: TestErrors.test_rename", "[parity][errors]") {
  TensorDict td = a0_bc1();
  const TensorDict tdclone = td.clone();
  CHECK_THROWS_AS(td.rename_key_("c", "d"), KeyError);
  CHECK((td == tdclone).all());
  CHECK_THROWS_AS((td.rename_key_({"b", "d"}, "c")), KeyError);
  CHECK((td == tdclone).all());
}

TEST_CASE("test_errors: TestErrors.test_del", "[parity][errors]") {
  TensorDict td = a0_bc1();
  const TensorDict tdclone = td.clone();
  CHECK_THROWS_AS(td.del_("c"), KeyError);
  CHECK((td == tdclone).all());
  CHECK_THROWS_AS((td.del_({"b", "d"})), KeyError);
  CHECK((td == tdclone).all());
}

TEST_CASE("test_errors: TestErrors.test_select", "[parity][errors]") {
  const TensorDict td = a0_bc1();
  const TensorDict tdclone = td.clone();
  CHECK_THROWS_AS((td.select({"c"})), KeyError);
  CHECK((td == tdclone).all());
  CHECK_THROWS_AS((td.select({NestedKey{"b", "d"}})), KeyError);
  CHECK((td == tdclone).all());
}

TEST_CASE("test_errors: TestErrors.test_split_keys", "[parity][errors]") {
  TensorDict td = a0_bc1();
  const TensorDict tdclone = td.clone();
  CHECK_THROWS_AS((td.split_keys({{"c"}})), KeyError);
  CHECK((td == tdclone).all());
  CHECK_THROWS_AS((td.split_keys({{NestedKey{"b", "d"}}})), KeyError);
  CHECK((td == tdclone).all());
}

TEST_CASE("test_errors: TestLock.test_lock_two_roots", "[parity][errors]") {
  // The weak-reference counts Python checks are not applicable; the unlock refusals are ported.
  TensorDict td({{NestedKey{"a", "b", "c", "d"}, 1.0}}, {});
  td.lock_();
  TensorDict a = td.get_tensordict("a");
  TensorDict other_td({{"a", a}}, {});
  other_td.lock_();
  CHECK_THROWS_AS(other_td.unlock_(), Error);
  CHECK(td.is_locked());
  CHECK_THROWS_AS(td.unlock_(), Error);
  {
    TensorDict supertd({{"td", td}, {"other", other_td}}, {});
    supertd.lock_();
    CHECK_NOTHROW(supertd.unlock_());
    supertd.lock_();
  }
  other_td = TensorDict();
  CHECK_NOTHROW(td.unlock_());
}

TEST_CASE("test_errors: TestLock.test_nested_lock_erros", "[parity][errors]") {
  TensorDict td({{NestedKey{"a", "b", "c", "d"}, 1.0}}, {});
  td.lock_();
  TensorDict a = td.get_tensordict("a");
  TensorDict b = td.get_tensordict({"a", "b"});
  const TensorDict c = td.get_tensordict({"a", "b", "c"});
  CHECK_THROWS_AS(a.unlock_(), Error);
  CHECK_THROWS_AS(b.unlock_(), Error);
  td = TensorDict();  // Python's `del td; gc.collect()`
  CHECK_NOTHROW(a.unlock_());
  a.lock_();
  CHECK_THROWS_AS(b.unlock_(), Error);
}

TEST_CASE("test_errors: TestLock.test_stack_cache_lock", "[parity][errors]") {
  // Python also checks its private `_is_locked` cache, not applicable here.
  TensorDict td0({{NestedKey{"a", "b", "c", "d"}, 1.0}}, {});
  TensorDict td1 = td0.clone();
  TensorDict td = lazy_stack({td0, td1});
  td.lock_();
  CHECK(td.is_locked());
  td.unlock_();
  td0.lock_();
  CHECK_FALSE(td.is_locked());  // every element must be locked
  td1.lock_();
  CHECK(td.is_locked());
  td0.unlock_();  // allowed: the stack was not locked through lock_()
  td.unlock_();
  CHECK_FALSE(td0.is_locked());
  td.lock_();
  CHECK(td1.is_locked());
  CHECK(td0.is_locked());
  CHECK_THROWS_AS(td1.unlock_(), Error);
  CHECK(td1.is_locked());
}

TEST_CASE("test_errors: TestLock.test_stacked_append_and_insert", "[parity][errors]") {
  TensorDict td0({{NestedKey{"a", "b", "c", "d"}, 1.0}}, {});
  TensorDict td1 = td0.clone();
  TensorDict td = lazy_stack({td0, td1});
  td.lock_();
  CHECK_THROWS_AS(td.insert(0, td0), LockedError);
  CHECK_THROWS_AS(td.append(td0), LockedError);
  td.unlock_();
  CHECK_NOTHROW(td.insert(0, td0));
  CHECK_NOTHROW(td.append(td0));
}
