// Lazy stack stores: Python's LazyStackedTensorDictStore layout read and written, byte for byte,
// on this process's redis-server.
#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

#include "catch2_compat.h"
#include "ragged_stack.h"
#include "raw_access.h"
#include "store_server.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/store.h"
#include "tensordict/tensordict.h"

using Catch::Matchers::ContainsSubstring;
using namespace tc_test::raw_access;
using tensordict::TensorDict;

namespace {

// Python's LazyStackedTensorDictStore layout (tensordict/store/_store.py, v0.14.0), written by
// hand: two elements of inner batch [3] along dim 0; "x" homogeneous (one blob of equal rows),
// "r" heterogeneous (the elements' bytes back to back, an offset table, their shapes).
StoreLocation lazy_layout(const std::string& stem) {
  const StoreLocation where = here(stem);
  const std::string p = where.prefix + ":{" + where.td_id + "}:";
  const at::Tensor x = at::arange(12, at::kFloat).reshape({2, 3, 2});
  const at::Tensor r0 = at::arange(6, at::kLong).reshape({3, 2});
  const at::Tensor r1 = at::arange(12, at::kLong).reshape({3, 4}) + 100;
  auto bytes = [](const at::Tensor& t) {
    return std::string(static_cast<const char*>(t.data_ptr()), t.nbytes());
  };
  const std::vector<int64_t> offsets{0, 48, 48 + 96};
  raw().command({"SET", p + "__type__", "lazy_stack"});
  raw().command({"SET", p + "__count__", "2"});
  raw().command({"SET", p + "__stack_dim__", "0"});
  raw().command({"SET", p + "__inner_batch_size__", "[3]"});
  raw().command({"SET", p + "__device__", ""});
  raw().command({"SET", p + "d:x", bytes(x)});
  raw().command(
      {"HSET", p + "m:x", "shape", "[2, 3, 2]", "dtype", "torch.float32", "homogeneous", "1"});
  raw().command({"SET", p + "d:n.r", bytes(r0) + bytes(r1)});
  raw().command(
      {"SET", p + "d:n.r:idx", std::string(reinterpret_cast<const char*>(offsets.data()), 24)});
  raw().command({"HSET", p + "m:n.r", "shape", "[2, 3, 2]", "dtype", "torch.int64", "homogeneous",
                 "0", "shapes", "[[3, 2], [3, 4]]"});
  raw().command({"SADD", p + "__keys__", "x", "n.r"});
  return where;
}

}  // namespace

TEST_CASE("a lazy stack store Python wrote reads as a lazy stack", "[store][needs-redis]") {
  const StoreLocation where = lazy_layout("lazy");
  TensorDictStore store = TensorDictStore::open(where);
  CHECK(store.is_lazy_stack());
  CHECK(store.batch_size() == tensordict::BatchSize{2, 3});
  CHECK(store.keys(true, true) == std::vector<NestedKey>{NestedKey({"n", "r"}), NestedKey("x")});
  const TensorDict local = store.to_local();
  REQUIRE(local.is_lazy_stack());
  CHECK(local.stack_dim() == 0);
  CHECK(local.get("x").equal(at::arange(12, at::kFloat).reshape({2, 3, 2})));
  const auto& rows = local.tensordicts();
  CHECK(rows[0].get({"n", "r"}).equal(at::arange(6, at::kLong).reshape({3, 2})));
  CHECK(rows[1].get({"n", "r"}).equal(at::arange(12, at::kLong).reshape({3, 4}) + 100));
  // Its other operations are refused by name, not done wrong.
  CHECK_THROWS_WITH(store.get("x"),
                    ContainsSubstring("get: store") && ContainsSubstring("holds a lazy stack"));
  CHECK_THROWS_AS(store.set("y", at::zeros({2, 3})), tensordict::TypeError);
  store.clear_redis();
  CHECK_THROWS_AS(TensorDictStore::open(where), tensordict::KeyError);
}

TEST_CASE("hostile lazy stack stores are FormatErrors naming the key", "[store][needs-redis]") {
  auto expect = [](const StoreLocation& where, const char* what, const char* message) {
    INFO(what);
    CHECK_THROWS_AS(TensorDictStore::open(where).to_local(), tensordict::FormatError);
    CHECK_THROWS_WITH(TensorDictStore::open(where).to_local(), ContainsSubstring(message));
  };
  const auto key = [](const StoreLocation& w, const std::string& suffix) {
    return w.prefix + ":{" + w.td_id + "}:" + suffix;
  };
  StoreLocation w = lazy_layout("lazy-hostile-offsets");
  raw().command({"SETRANGE", key(w, "d:n.r:idx"), "16", std::string(8, '\x7f')});
  expect(w, "offsets past the blob", "'n', 'r') offset table does not span");
  w = lazy_layout("lazy-hostile-table");
  raw().command({"SET", key(w, "d:n.r:idx"), "short"});
  expect(w, "a short offset table", "offset table holds 5 bytes");
  w = lazy_layout("lazy-hostile-shapes");
  raw().command({"HSET", key(w, "m:n.r"), "shapes", "[[3, 2]]"});
  expect(w, "one shape for two elements", "'shapes' is not a list of 2 shapes");
  w = lazy_layout("lazy-hostile-size");
  raw().command({"HSET", key(w, "m:n.r"), "shapes", "[[3, 2], [3, 5]]"});
  expect(w, "a shape larger than its bytes", "holds 96 bytes");
  w = lazy_layout("lazy-hostile-rows");
  raw().command({"HSET", key(w, "m:x"), "shape", "[3, 3, 2]"});
  expect(w, "a homogeneous leaf of another count", "does not hold the stack's 2 elements");
  w = lazy_layout("lazy-hostile-count");
  raw().command({"SET", key(w, "__count__"), "two"});
  CHECK_THROWS_AS(TensorDictStore::open(w), tensordict::FormatError);
  raw().command({"SET", key(w, "__count__"), "0"});
  CHECK_THROWS_AS(TensorDictStore::open(w), tensordict::FormatError);
  // A count no value bounds (elements of zero bytes) is refused before anything is allocated.
  raw().command({"SET", key(w, "__count__"), "1000000000000"});
  CHECK_THROWS_AS(TensorDictStore::open(w), tensordict::FormatError);
}

TEST_CASE("a lazy stack is stored in Python's LazyStackedTensorDictStore layout",
          "[store][needs-redis]") {
  // The stack lazy_layout writes by hand, made and stored by C++: the same keys, byte for byte.
  const TensorDict ragged = tc_test::ragged_stack();
  const StoreLocation written = here("lazy-written");
  const TensorDictStore ours = TensorDictStore::from_tensordict(ragged, written);
  const TensorDictStore theirs = TensorDictStore::open(lazy_layout("lazy-reference"));
  CHECK(ours.is_lazy_stack());
  CHECK(ours.batch_size() == tensordict::BatchSize{2, 3});
  for (const char* suffix : {"__type__", "__count__", "__stack_dim__", "__inner_batch_size__",
                             "__device__", "d:x", "d:n.r", "d:n.r:idx"}) {
    INFO(suffix);
    CHECK(get_raw(ours, suffix) == get_raw(theirs, suffix));
  }
  CHECK(hash_raw(ours, "m:x") == hash_raw(theirs, "m:x"));
  CHECK(hash_raw(ours, "m:n.r") == hash_raw(theirs, "m:n.r"));
  CHECK(set_raw(ours, "__keys__") == set_raw(theirs, "__keys__"));
  const TensorDict back = TensorDictStore::open(written).to_local();
  CHECK(back.tensordicts()[1].get({"n", "r"}).equal(ragged.tensordicts()[1].get({"n", "r"})));

  // Refused before anything is written: dtypes that differ, a key one element lacks.
  const TensorDict mixed =
      tensordict::lazy_stack({TensorDict({{"x", at::zeros({2})}}, {2}),
                              TensorDict({{"x", at::zeros({2}, at::kLong)}}, {2})});
  CHECK_THROWS_AS(TensorDictStore::from_tensordict(mixed, here("lazy-mixed")),
                  tensordict::TypeError);
  const TensorDict missing =
      tensordict::lazy_stack({TensorDict({{"x", at::zeros({2})}, {"y", at::zeros({2})}}, {2}),
                              TensorDict({{"x", at::zeros({2})}}, {2})});
  const StoreLocation untouched = here("lazy-missing");
  CHECK_THROWS_AS(TensorDictStore::from_tensordict(missing, untouched), tensordict::KeyError);
  CHECK_THROWS_AS(TensorDictStore::open(untouched), tensordict::KeyError);
}
