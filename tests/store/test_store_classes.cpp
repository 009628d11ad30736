// Stores of generated classes: `__tensorclass__` holds the class's Python path, as Python's
// TensorDictStore.from_tensordict writes it for a tensorclass, and a store naming a class
// registered here reads back as an instance's TensorDict, and both open as the class in Python.
#include <ATen/ATen.h>

#include <optional>
#include <string>

#include "catch2_compat.h"
#include "nested.h"
#include "store_peer.h"
#include "store_server.h"
#include "tensordict/class_registry.h"
#include "tensordict/store.h"

using tc_test::RedisServer;
using tensordict::TensorDict;
using tensordict::store::Reply;
using tensordict::store::TensorDictStore;

namespace {

golden::Outer sample_outer() {
  return golden::Outer({golden::Inner({at::arange(4, at::kFloat).reshape({2, 2})}, {2}),
                        std::nullopt, at::full({2}, 0.5)},
                       {2});
}

}  // namespace

TEST_CASE("a store of a generated class records the class and reads back as it",
          "[store][needs-redis]") {
  const auto where = RedisServer::instance().unix_location("class-outer");
  const golden::Outer outer = sample_outer();
  const TensorDictStore store = TensorDictStore::from_tensordict(outer, where);
  CHECK(store.tensorclass() == std::optional<std::string>("golden.Outer"));
  const Reply recorded = store.connection().command({"GET", store.redis_key("__tensorclass__")});
  CHECK(recorded.str == "golden.Outer");

  const TensorDictStore opened = TensorDictStore::open(where);
  CHECK(opened.tensorclass() == std::optional<std::string>("golden.Outer"));
  const TensorDict local = opened.to_local();
  CHECK(tensordict::class_of(local) == &golden::Outer::class_spec());
  const golden::Outer back = golden::Outer::from_tensordict(local);
  CHECK(at::equal(back.inner().x(), outer.inner().x()));
  CHECK(at::equal(back.y(), outer.y()));
  CHECK_FALSE(back.maybe().has_value());
  // A TensorDict that holds an instance of the class, stored as the class (memmap's rule).
  TensorDict holder({}, {2});
  holder.set("item", outer);
  const TensorDictStore nested = TensorDictStore::from_tensordict(
      holder.get_tensordict("item"), RedisServer::instance().unix_location("class-nested"));
  CHECK(nested.tensorclass() == std::optional<std::string>("golden.Outer"));
}

TEST_CASE("a plain TensorDict's store names no class and an unknown class reads plain",
          "[store][needs-redis]") {
  TensorDict plain({}, {2});
  plain.set("x", at::ones({2}));
  const auto where = RedisServer::instance().unix_location("class-none");
  const TensorDictStore store = TensorDictStore::from_tensordict(plain, where);
  CHECK_FALSE(store.tensorclass().has_value());
  CHECK(store.connection().command({"EXISTS", store.redis_key("__tensorclass__")}).integer == 0);

  // A class no generated header here registered (Python-only): its path is kept, the data reads
  // as a plain TensorDict.
  store.connection().command({"SET", store.redis_key("__tensorclass__"), "elsewhere.Python"});
  const TensorDictStore opened = TensorDictStore::open(where);
  CHECK(opened.tensorclass() == std::optional<std::string>("elsewhere.Python"));
  const TensorDict local = opened.to_local();
  CHECK(tensordict::class_of(local) == nullptr);
  CHECK(at::equal(local.get("x"), at::ones({2})));
}

TEST_CASE("a generated class's store opens as the class in Python and Python's in C++",
          "[store][needs-peer]") {
  const auto mine = tc_test::RedisServer::instance().unix_location("cpp-class");
  TensorDictStore::from_tensordict(sample_outer(), mine);
  tc_test::run_store_peer("read_class",
                          mine.td_id);  // exits 1, naming the difference, unless Python agrees

  const auto theirs = tc_test::RedisServer::instance().unix_location("python-class");
  tc_test::run_store_peer("write_class", theirs.td_id);
  const TensorDictStore store = TensorDictStore::open(theirs);
  CHECK(store.tensorclass() == std::optional<std::string>("golden.Outer"));
  const TensorDict local = store.to_local();
  CHECK(tensordict::class_of(local) == &golden::Outer::class_spec());
  const golden::Outer back = golden::Outer::from_tensordict(local);
  const golden::Outer expected = sample_outer();
  CHECK(at::equal(back.inner().x(), expected.inner().x()));
  CHECK(at::equal(back.y(), expected.y()));
  CHECK_FALSE(back.maybe().has_value());
}
