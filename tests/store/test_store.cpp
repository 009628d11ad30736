// TensorClass::store against a real redis-server of this process (store_server.h): values round
// trip, and the keys on the server are Python tensordict 0.14's, byte for byte.
#include <ATen/ATen.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "catch2_compat.h"
#include "raw_access.h"
#include "store_server.h"
#include "tensordict/store.h"
#include "tensordict/tensordict.h"

using Catch::Matchers::ContainsSubstring;
using tc_test::RedisServer;
using namespace tc_test::raw_access;
using tensordict::Json;
using tensordict::NestedKey;
using tensordict::NonTensorData;
using tensordict::NonTensorStack;
using tensordict::TensorDict;
using tensordict::store::Connection;
using tensordict::store::Reply;
using tensordict::store::StoreLocation;
using tensordict::store::TensorDictStore;

namespace {

std::string bytes_of(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), c.nbytes());
}

// Every dtype the layout carries, with values that exercise its bytes.
at::Tensor sample(at::ScalarType dtype) {
  const at::Tensor base = at::arange(-3, 3, at::kDouble).reshape({3, 2}) * 1.5;
  if (dtype == at::kBool) return base.gt(0);
  if (dtype == at::kByte) return (base * 40 + 128).to(at::kByte);
  if (at::isComplexType(dtype)) return at::complex(base, -base).to(dtype);
  return base.to(dtype);
}

}  // namespace

TEST_CASE("every dtype round trips in Python's layout", "[store][needs-redis]") {
  const std::vector<std::pair<at::ScalarType, std::string>> dtypes{
      {at::kBool, "torch.bool"},
      {at::kByte, "torch.uint8"},
      {at::kChar, "torch.int8"},
      {at::kShort, "torch.int16"},
      {at::kInt, "torch.int32"},
      {at::kLong, "torch.int64"},
      {at::kHalf, "torch.float16"},
      {at::kBFloat16, "torch.bfloat16"},
      {at::kFloat, "torch.float32"},
      {at::kDouble, "torch.float64"},
      {at::kComplexFloat, "torch.complex64"},
      {at::kComplexDouble, "torch.complex128"}};
  auto store = TensorDictStore::create(here("dtypes"), {3});
  CHECK(get_raw(store, "__batch_size__") == "[3]");
  CHECK(get_raw(store, "__device__").empty());
  std::vector<std::string> names;
  for (const auto& [dtype, text] : dtypes) {
    INFO(text);
    const std::string name = text.substr(6);
    names.push_back(name);
    const at::Tensor value = sample(dtype);
    store.set(name, value);
    // d: the C-contiguous bytes; m: shape as json.dumps writes it, dtype as str(torch.dtype).
    CHECK(get_raw(store, "d:" + name) == bytes_of(value));
    CHECK(hash_raw(store, "m:" + name) ==
          std::map<std::string, std::string>{{"shape", "[3, 2]"}, {"dtype", text}});
    const at::Tensor back = store.get(name);
    CHECK(back.scalar_type() == dtype);
    CHECK(back.sizes() == value.sizes());
    CHECK(at::equal(back, value));
  }
  std::sort(names.begin(), names.end());
  CHECK(set_raw(store, "__keys__") == names);
  // A non-contiguous view is stored as its C-contiguous copy.
  const at::Tensor t = at::arange(6, at::kFloat).reshape({2, 3}).t();
  store.set("transposed", t);
  CHECK(get_raw(store, "d:transposed") == bytes_of(t.contiguous()));
  CHECK(at::equal(store.get("transposed"), t));
}

TEST_CASE("a store without batch dims holds 0-dim leaves", "[store][needs-redis]") {
  auto store = TensorDictStore::create(here("scalar"));
  CHECK(get_raw(store, "__batch_size__") == "[]");
  store.set("x", at::scalar_tensor(2.5, at::kDouble));
  CHECK(hash_raw(store, "m:x").at("shape") == "[]");
  CHECK(store.get("x").item<double>() == 2.5);
  store.set("empty", at::zeros({0, 4}, at::kInt));
  CHECK(get_raw(store, "d:empty").empty());
  CHECK(store.get("empty").sizes() == at::IntArrayRef({0, 4}));
}

TEST_CASE("nested keys are dotted paths and keys() lists them", "[store][needs-redis]") {
  auto store = TensorDictStore::create(here("nested"), {2});
  store.set({"next", "obs"}, at::ones({2, 3}));
  store.set({"next", "deep", "z"}, at::zeros({2}, at::kLong));
  store.set("reward", at::full({2, 1}, 0.5));
  CHECK(set_raw(store, "__keys__") ==
        std::vector<std::string>{"next.deep.z", "next.obs", "reward"});
  CHECK(hash_raw(store, "m:next.deep.z").at("dtype") == "torch.int64");

  CHECK(paths(store.keys()) == std::vector<std::string>{"next", "reward"});
  CHECK(paths(store.keys(false, true)) == std::vector<std::string>{"reward"});
  CHECK(paths(store.keys(true, true)) ==
        std::vector<std::string>{"next.deep.z", "next.obs", "reward"});
  CHECK(paths(store.keys(true, false)) ==
        std::vector<std::string>{"next", "next.deep", "next.deep.z", "next.obs", "reward"});
  CHECK(store.contains({"next", "deep"}));
  CHECK(store.contains({"next", "obs"}));
  CHECK_FALSE(store.contains({"next", "nope"}));

  const TensorDict next = store.get_value("next").tensordict();
  CHECK(next.batch_size() == tensordict::BatchSize{2});
  CHECK(at::equal(next.get({"deep", "z"}), at::zeros({2}, at::kLong)));
  CHECK(at::equal(store.get({"next", "obs"}), at::ones({2, 3})));

  // A TensorDict set under a key: its leaves under that path.
  store.set("extra", TensorDict({{"a", at::arange(2)}, {{"b", "c"}, at::ones({2, 2})}}, {2}));
  CHECK(at::equal(store.get({"extra", "b", "c"}), at::ones({2, 2})));

  store.del_("next");
  CHECK(set_raw(store, "__keys__") == std::vector<std::string>{"extra.a", "extra.b.c", "reward"});
  CHECK(raw()
            .command({"EXISTS", store.redis_key("d:next.obs"), store.redis_key("m:next.obs")})
            .integer == 0);
  CHECK_THROWS_AS(store.del_("next"), tensordict::KeyError);
}

TEST_CASE("non-tensor data is stored as JSON", "[store][needs-redis]") {
  auto store = TensorDictStore::create(here("nontensor"), {3});
  store.set_non_tensor("task", "cartpole");
  CHECK(get_raw(store, "d:task") == "\"cartpole\"");
  CHECK(hash_raw(store, "m:task") ==
        std::map<std::string, std::string>{{"is_non_tensor", "1"}, {"encoding", "json"}});
  // json.dumps spelling: ", " and ": " separators, non-ASCII escaped, floats as repr.
  const Json cfg = Json::parse(R"({"lr": 0.1, "name": "é", "layers": [1, 2]})");
  store.set_non_tensor({"cfg", "opt"}, cfg);
  CHECK(get_raw(store, "d:cfg.opt") == R"({"lr": 0.1, "name": "\u00e9", "layers": [1, 2]})");
  CHECK(store.get_non_tensor({"cfg", "opt"}) == cfg);
  CHECK(store.get_non_tensor("task") == "cartpole");
  CHECK_THROWS_AS(store.get("task"), tensordict::TypeError);

  // A stack along the batch dim is Python's json_array, read back as a stack.
  TensorDict td({{"obs", at::zeros({3})}}, {3});
  td.set("names", NonTensorStack({3}, {Json("a"), Json("b"), Json(nullptr)}));
  td.set("note", "shared");
  store.update(td);
  CHECK(get_raw(store, "d:names") == R"(["a", "b", null])");
  CHECK(hash_raw(store, "m:names").at("encoding") == "json_array");
  const auto names = store.get_value("names");
  REQUIRE(names.is_non_tensor_stack());
  CHECK(names.non_tensor_stack().tolist() == Json::parse(R"(["a", "b", null])"));

  // Python's pickle fallback cannot be read here: a TypeError, not a crash.
  raw().command({"SET", store.redis_key("d:obj"), std::string("\x80\x04K\x01.", 5)});
  raw().command({"HSET", store.redis_key("m:obj"), "is_non_tensor", "1", "encoding", "pickle"});
  raw().command({"SADD", store.redis_key("__keys__"), "obj"});
  store.refresh();  // another client's new key: seen once the cached registry is dropped
  CHECK_THROWS_AS(store.get_value("obj"), tensordict::TypeError);
}

TEST_CASE("from_tensordict and open round trip through another connection",
          "[store][needs-redis]") {
  TensorDict td({{"obs", at::randn({4, 3})},
                 {{"next", "reward"}, at::arange(4, at::kLong).reshape({4, 1})},
                 {"done", at::zeros({4}, at::kBool)}},
                {4});
  td.set("task", "walk");
  const StoreLocation where = here("roundtrip");
  auto stored = tensordict::store::to_store(td, where);  // Python's td.to_store()
  CHECK(stored.td_id() == where.td_id);
  CHECK(stored.redis_key("__keys__") == "tensordict:{" + where.td_id + "}:__keys__");

  // Over TCP this time, from the id alone.
  auto opened = TensorDictStore::open(RedisServer::instance().tcp_location(where.td_id));
  CHECK(opened.batch_size() == tensordict::BatchSize{4});
  CHECK_FALSE(opened.device().has_value());
  CHECK_FALSE(opened.tensorclass().has_value());
  const TensorDict local = opened.to_local();
  CHECK(local.batch_size() == tensordict::BatchSize{4});
  CHECK(at::equal(local.get("obs"), td.get("obs")));
  CHECK(at::equal(local.get({"next", "reward"}), td.get({"next", "reward"})));
  CHECK(at::equal(local.get("done"), td.get("done")));
  CHECK(local.get_non_tensor("task") == "walk");
  CHECK(local.get_tensordict("next").batch_size() == tensordict::BatchSize{4});

  // A generated id is a UUID4, as Python's str(uuid.uuid4()).
  StoreLocation anon = here("unused");
  anon.td_id.clear();
  const auto fresh = TensorDictStore::create(anon, {1});
  REQUIRE(fresh.td_id().size() == 36);
  CHECK(fresh.td_id()[14] == '4');
  CHECK(fresh.td_id()[8] == '-');

  // A device recorded by the writer comes back.
  auto on_cpu = TensorDictStore::create(here("device"), {}, at::Device("cpu"));
  CHECK(get_raw(on_cpu, "__device__") == "cpu");
  StoreLocation again = RedisServer::instance().unix_location(on_cpu.td_id());
  CHECK(TensorDictStore::open(again).device() == at::Device("cpu"));

  CHECK_THROWS_AS(TensorDictStore::open(here("missing")), tensordict::KeyError);
}

TEST_CASE("rows are read and written as byte ranges", "[store][needs-redis]") {
  auto store = TensorDictStore::create(here("rows"), {5});
  const at::Tensor obs = at::arange(15, at::kFloat).reshape({5, 3});
  store.set("obs", obs);
  CHECK(at::equal(store.get_at("obs", 1), obs[1]));
  CHECK(at::equal(store.get_at("obs", -1), obs[4]));
  CHECK(at::equal(store.get_rows("obs", 1, 4), obs.slice(0, 1, 4)));
  CHECK(store.get_rows("obs", 2, 2).sizes() == at::IntArrayRef({0, 3}));

  store.set_at("obs", 2, at::full({3}, -1.0, at::kDouble));  // cast to float32
  store.set_rows("obs", 3, at::full({2, 3}, 7.0));
  at::Tensor expected = obs.clone();
  expected[2] = -1.0;
  expected.slice(0, 3, 5).fill_(7.0);
  CHECK(at::equal(store.get("obs"), expected));
  CHECK(get_raw(store, "d:obs") == bytes_of(expected));
  CHECK(hash_raw(store, "m:obs").at("dtype") == "torch.float32");

  CHECK_THROWS_AS(store.get_at("obs", 5), tensordict::IndexError);
  CHECK_THROWS_AS(store.get_rows("obs", 4, 6), tensordict::IndexError);
  CHECK_THROWS_AS(store.set_rows("obs", 4, at::zeros({2, 3})), tensordict::IndexError);
  CHECK_THROWS_AS(store.set_at("obs", 0, at::zeros({4})), tensordict::ShapeError);

  // Python's first indexed write: a zero-filled leaf of batch_size[0] rows.
  store.set_at("action", 3, at::tensor({1, 2}, at::kLong));
  CHECK(hash_raw(store, "m:action") ==
        std::map<std::string, std::string>{{"shape", "[5, 2]"}, {"dtype", "torch.int64"}});
  at::Tensor action = at::zeros({5, 2}, at::kLong);
  action[3] = at::tensor({1, 2}, at::kLong);
  CHECK(at::equal(store.get("action"), action));
}

TEST_CASE("writes that cannot be stored are refused before anything is written",
          "[store][needs-redis]") {
  auto store = TensorDictStore::create(here("refused"), {4});
  CHECK_THROWS_AS(store.set("x", at::zeros({3})), tensordict::ShapeError);
  CHECK_THROWS_AS(store.set("x", at::zeros({4}, at::kComplexHalf)), tensordict::TypeError);
  CHECK_THROWS_AS(store.set("a.b", at::zeros({4})), tensordict::KeyError);
  // Over the server's 512 MB value limit (an expanded view: no memory behind it).
  const at::Tensor huge = at::zeros({1}).expand({4, TensorDictStore::kMaxValueBytes / 16 + 1});
  try {
    store.set("huge", huge);
    FAIL("no error");
  } catch (const tensordict::ShapeError& e) {
    CHECK_THAT(std::string(e.what()), ContainsSubstring("'huge'"));
  }
  // An update with one bad leaf writes none.
  TensorDict td({{"ok", at::zeros({4})}, {"bad", at::zeros({4}, at::kComplexHalf)}}, {4});
  CHECK_THROWS_AS(store.update(td), tensordict::TypeError);
  CHECK(raw().command({"EXISTS", store.redis_key("__keys__")}).integer == 0);

  store.set({"a", "b"}, at::zeros({4}));
  CHECK_THROWS_AS(store.set("a", at::zeros({4})), tensordict::TypeError);
  CHECK_THROWS_AS(store.set({"a", "b", "c"}, at::zeros({4})), tensordict::TypeError);
  CHECK_THROWS_AS(store.get("a"), tensordict::TypeError);
  CHECK_THROWS_AS(store.get("nope"), tensordict::KeyError);
  CHECK_THROWS_AS(store.get_at("nope", 0), tensordict::KeyError);

  CHECK_THROWS_AS(store.set_batch_size({3}), tensordict::ShapeError);
  CHECK(store.batch_size() == tensordict::BatchSize{4});
  store.set_batch_size({});
  CHECK(get_raw(store, "__batch_size__") == "[]");
}

TEST_CASE("hostile store contents are FormatErrors naming the key", "[store][needs-redis]") {
  // Without the cache, every call reads the registry the hostile writer changes.
  StoreLocation where = here("hostile");
  where.cache_metadata = false;
  auto store = TensorDictStore::create(where, {2});
  store.set("x", at::zeros({2, 2}));
  const std::string m = store.redis_key("m:x");
  const std::string d = store.redis_key("d:x");
  auto expect_format_error = [&](const char* what) {
    INFO(what);
    try {
      store.get("x");
      FAIL("no error");
    } catch (const tensordict::FormatError& e) {
      CHECK_THAT(std::string(e.what()), ContainsSubstring("'x'"));
    }
    CHECK_THROWS_AS(store.to_local(), tensordict::FormatError);
  };
  raw().command({"HSET", m, "shape", "[2,"});
  expect_format_error("shape is not JSON");
  raw().command({"HSET", m, "shape", "[2, \"a\"]"});
  expect_format_error("shape holds a string");
  raw().command({"HSET", m, "shape", "[2, -2]"});
  expect_format_error("negative size");
  raw().command({"HSET", m, "shape", "[100000000000, 100000000000]"});
  expect_format_error("shape too large");
  raw().command({"HSET", m, "shape", "[2, 3]"});
  expect_format_error("shape larger than the data");
  CHECK_THROWS_AS(store.get_at("x", 0), tensordict::FormatError);
  raw().command({"HSET", m, "shape", "[2, 2]", "dtype", "torch.quint4x2"});
  expect_format_error("unknown dtype");
  raw().command({"HSET", m, "dtype", "torch.float64"});
  expect_format_error("dtype larger than the data");
  raw().command({"HDEL", m, "dtype"});
  expect_format_error("no dtype");
  raw().command({"DEL", m});
  expect_format_error("no hash");
  raw().command({"SET", m, "not a hash"});
  expect_format_error("m: is a string");
  raw().command({"DEL", m});
  raw().command({"HSET", m, "shape", "[2, 2]", "dtype", "torch.float32"});
  CHECK(at::equal(store.get("x"), at::zeros({2, 2})));
  raw().command({"DEL", d});
  raw().command({"HSET", d, "a", "b"});
  expect_format_error("d: is a hash");
  raw().command({"DEL", d});
  raw().command({"SET", d, std::string(16, '\0')});

  raw().command({"SET", store.redis_key("d:j"), "{not json"});
  raw().command({"HSET", store.redis_key("m:j"), "is_non_tensor", "1", "encoding", "json"});
  raw().command({"SADD", store.redis_key("__keys__"), "j"});
  CHECK_THROWS_AS(store.get_value("j"), tensordict::FormatError);
  raw().command({"HSET", store.redis_key("m:j"), "encoding", "yaml"});
  CHECK_THROWS_AS(store.get_value("j"), tensordict::FormatError);

  // The store's own keys of the wrong type or contents.
  raw().command({"SET", store.redis_key("__batch_size__"), "[2, x]"});
  CHECK_THROWS_AS(TensorDictStore::open(where), tensordict::FormatError);
  raw().command({"SET", store.redis_key("__batch_size__"), "[2]"});
  raw().command({"SET", store.redis_key("__device__"), "warp-drive:9"});
  CHECK_THROWS_AS(TensorDictStore::open(where), tensordict::FormatError);
  raw().command({"SET", store.redis_key("__device__"), ""});
  CHECK(TensorDictStore::open(where).batch_size() == tensordict::BatchSize{2});
  raw().command({"SADD", store.redis_key("__keys__"), "bad..path"});
  CHECK_THROWS_AS(store.keys(), tensordict::FormatError);
  CHECK_THROWS_AS(store.to_local(), tensordict::FormatError);
  raw().command({"DEL", store.redis_key("__keys__")});
  raw().command({"SET", store.redis_key("__keys__"), "x"});
  CHECK_THROWS_AS(store.keys(), tensordict::FormatError);
  raw().command({"SET", store.redis_key("__type__"), "lazy_stack"});  // without its __count__
  CHECK_THROWS_AS(TensorDictStore::open(where), tensordict::FormatError);
}

TEST_CASE("clear_redis removes every key of the store", "[store][needs-redis]") {
  auto store = TensorDictStore::create(here("clear"), {2});
  auto other = TensorDictStore::create(here("kept"), {2});
  store.set({"a", "b"}, at::ones({2}));
  store.set_non_tensor("t", 1);
  other.set("a", at::ones({2}));
  store.clear_redis();
  const Reply left = raw().command({"KEYS", "tensordict:{" + store.td_id() + "}:*"});
  CHECK(left.element.empty());
  CHECK(at::equal(other.get("a"), at::ones({2})));
}

TEST_CASE("connections select a database and authenticate", "[store][needs-redis]") {
  auto in3 = TensorDictStore::create(here("db", 3), {1});
  in3.set("x", at::ones({1}));
  CHECK(raw(3).command({"EXISTS", in3.redis_key("d:x")}).integer == 1);
  CHECK(raw(0).command({"EXISTS", in3.redis_key("d:x")}).integer == 0);

  raw().command({"ACL", "SETUSER", "alice", "on", ">s3cret", "~*", "&*", "+@all"});
  StoreLocation as_alice = here("auth");
  as_alice.connection.user = "alice";
  as_alice.connection.password = "s3cret";
  auto store = TensorDictStore::create(as_alice, {1});
  store.set("x", at::ones({1}));
  CHECK(raw().command({"ACL", "WHOAMI"}).str == "default");
  CHECK(store.connection().command({"ACL", "WHOAMI"}).str == "alice");
  // A user the server lets read but not write: the refusal is a ConnectionError.
  raw().command({"ACL", "SETUSER", "reader", "on", ">pw", "~*", "&*", "+@all", "-@write"});
  StoreLocation as_reader = RedisServer::instance().unix_location(store.td_id());
  as_reader.connection.user = "reader";
  as_reader.connection.password = "pw";
  auto readonly = TensorDictStore::open(as_reader);
  CHECK(at::equal(readonly.get("x"), at::ones({1})));
  CHECK_THROWS_AS(readonly.set("y", at::ones({1})), tensordict::store::ConnectionError);
  CHECK_FALSE(store.contains("y"));
  as_alice.connection.password = "wrong";
  CHECK_THROWS_AS(TensorDictStore::create(as_alice, {1}), tensordict::store::ConnectionError);

  StoreLocation nowhere = here("nowhere");
  nowhere.connection.unix_socket = RedisServer::instance().socket() + ".absent";
  CHECK_THROWS_AS(TensorDictStore::create(nowhere), tensordict::store::ConnectionError);
}

TEST_CASE("a broken connection reconnects and a slow reply times out", "[store][needs-redis]") {
  auto where = here("reconnect", 2);
  where.connection.command_timeout = std::chrono::milliseconds(300);
  auto store = TensorDictStore::create(where, {2});
  store.set("x", at::ones({2}));
  // Every other client is killed: the store's next command reconnects (AUTH, SELECT again).
  raw().command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  CHECK(at::equal(store.get("x"), at::ones({2})));
  CHECK(store.connection().command({"CLIENT", "INFO"}).str.find("db=2") != std::string::npos);

  CHECK_THROWS_AS(store.connection().command({"BLPOP", "tc-never-pushed", "2"}),
                  tensordict::TimeoutError);
  CHECK(at::equal(store.get("x"), at::ones({2})));
  // The server's own refusals come back as error replies, or ConnectionErrors from the store.
  CHECK(store.connection().command({"NOSUCHCOMMAND"}).type == Reply::Type::Error);
}

TEST_CASE("a store another client deleted reads as missing keys", "[store][needs-redis]") {
  const StoreLocation where = here("deleted");
  auto mine = TensorDictStore::create(where, {2});
  mine.set("x", at::ones({2}));
  StoreLocation uncached = where;
  uncached.cache_metadata = false;
  auto watcher = TensorDictStore::open(uncached);
  TensorDictStore::open(where).clear_redis();  // another client, another connection
  CHECK_FALSE(watcher.contains("x"));
  // The registry mine cached still lists "x" (Python's cache_metadata): the read finds no data,
  // says so, and drops the cache.
  CHECK(mine.contains("x"));
  CHECK_THROWS_AS(mine.get("x"), tensordict::KeyError);
  CHECK_THROWS_WITH(mine.get("x"), ContainsSubstring("'x'"));
  CHECK_FALSE(mine.contains("x"));
  CHECK_THROWS_AS(TensorDictStore::open(where), tensordict::KeyError);
}

namespace {
// How many times the test server ran `command` (INFO commandstats), every client together.
int64_t calls(const std::string& command) {
  const std::string info = raw().command({"INFO", "commandstats"}).str;
  const std::string entry = "cmdstat_" + command + ":calls=";
  const size_t at = info.find(entry);
  return at == std::string::npos ? 0 : std::stoll(info.substr(at + entry.size()));
}
}  // namespace

TEST_CASE("a handle caches the key registry as Python's cache_metadata does",
          "[store][needs-redis]") {
  const StoreLocation where = here("cache");
  auto mine = TensorDictStore::create(where, {2});
  mine.set("x", at::ones({2}));
  // Reads and writes of known keys cost no SMEMBERS: one transaction each.
  const int64_t smembers = calls("smembers");
  const int64_t execs = calls("exec");
  CHECK(at::equal(mine.get("x"), at::ones({2})));
  mine.set("x", at::full({2}, 2.0));
  CHECK(at::equal(mine.get("x"), at::full({2}, 2.0)));
  CHECK(calls("smembers") == smembers);
  CHECK(calls("exec") == execs + 3);

  // Another client's rewrite is read at once (metadata comes with the data), its new key after
  // refresh(); a handle without the cache sees both at once.
  auto other = TensorDictStore::open(where);
  other.set("x", at::arange(6, at::kLong).reshape({2, 3}));
  other.set("y", at::zeros({2}));
  CHECK(at::equal(mine.get("x"), at::arange(6, at::kLong).reshape({2, 3})));
  CHECK_FALSE(mine.contains("y"));
  StoreLocation uncached = where;
  uncached.cache_metadata = false;
  CHECK(TensorDictStore::open(uncached).contains("y"));
  mine.refresh();
  CHECK(mine.contains("y"));
  CHECK(calls("smembers") > smembers);

  // What the handle itself deletes leaves its cache.
  mine.del_("y");
  CHECK_FALSE(mine.contains("y"));
  CHECK(paths(mine.keys()) == std::vector<std::string>{"x"});
}

TEST_CASE("an update writes small leaves in one transaction and a large one alone",
          "[store][needs-redis]") {
  auto store = TensorDictStore::create(here("groups"), {2});
  TensorDict td({}, {2});
  td.set("a", at::arange(2, at::kFloat));
  td.set({"n", "b"}, at::arange(4, at::kLong).reshape({2, 2}));
  td.set("big", at::ones({2, 1 << 18}));  // 2 MB: past the 1 MB a group holds
  td.set("c", at::zeros({2}, at::kBool));
  const int64_t execs = calls("exec");
  const int64_t msets = calls("mset");
  store.update(td);
  // [a, n.b] then [big] then [c]: a group ends where the next leaf would take it past 1 MB.
  CHECK(calls("exec") == execs + 3);
  CHECK(calls("mset") == msets + 3);
  const TensorDict back = store.to_local();
  CHECK(back.get({"n", "b"}).equal(td.get({"n", "b"})));
  CHECK(back.get("big").equal(td.get("big")));
  CHECK(back.get("c").equal(td.get("c")));
  CHECK(paths(store.keys()) == std::vector<std::string>{"a", "big", "c", "n"});
}

TEST_CASE("a handle caches tensor leaves' metadata as Python's cache_metadata does",
          "[store][needs-redis]") {
  const StoreLocation where = here("meta-cache");
  auto mine = TensorDictStore::create(where, {2});
  mine.set("x", at::ones({2, 3}));
  mine.set_non_tensor("label", tensordict::Json("first"));
  // Leaves it wrote or read are read with one MGET and no HGETALL; non-tensor data always with
  // its hash (its bytes cannot tell a stale encoding).
  const int64_t hgetall = calls("hgetall");
  CHECK(at::equal(mine.get("x"), at::ones({2, 3})));
  CHECK(calls("hgetall") == hgetall);
  CHECK(mine.to_local().get_non_tensor("label") == tensordict::Json("first"));
  CHECK(calls("hgetall") == hgetall + 1);

  // Another client's rewrite that changes the byte count is seen at once (read again with its
  // hash); one of the same size (a reshape) only after refresh(), as in Python.
  auto other = TensorDictStore::open(where);
  other.set("x", at::arange(4, at::kLong).reshape({2, 2}));
  CHECK(at::equal(mine.get("x"), at::arange(4, at::kLong).reshape({2, 2})));
  other.set("x", at::arange(4, at::kLong).reshape({2, 1, 2}));
  CHECK(mine.get("x").sizes() == at::IntArrayRef{2, 2});
  StoreLocation uncached = where;
  uncached.cache_metadata = false;
  CHECK(TensorDictStore::open(uncached).get("x").sizes() == at::IntArrayRef{2, 1, 2});
  mine.refresh();
  CHECK(mine.get("x").sizes() == at::IntArrayRef{2, 1, 2});
  other.set_non_tensor("label", tensordict::Json("second"));
  CHECK(mine.get_non_tensor("label") == tensordict::Json("second"));
}

TEST_CASE("from_schema allocates zero-filled leaves on the server", "[store][needs-redis]") {
  using Leaf = TensorDictStore::LeafSchema;
  const StoreLocation where = here("schema");
  TensorDictStore store = TensorDictStore::from_schema(
      {Leaf{"obs", {84, 84, 3}, at::kByte}, Leaf{"action", {4}, at::kFloat},
       Leaf{"reward", {}, at::kFloat}, Leaf{{"next", "done"}, {}, at::kBool}},
      where, {100});
  // Python's layout: the whole value sized on the server, zero bytes, its shape and dtype.
  CHECK(raw().command({"STRLEN", store.redis_key("d:obs")}).integer == 100 * 84 * 84 * 3);
  CHECK(hash_raw(store, "m:obs") == std::map<std::string, std::string>{
                                        {"shape", "[100, 84, 84, 3]"}, {"dtype", "torch.uint8"}});
  CHECK(set_raw(store, "__keys__") ==
        std::vector<std::string>{"action", "next.done", "obs", "reward"});
  const TensorDictStore opened = TensorDictStore::open(where);
  CHECK(opened.batch_size() == tensordict::BatchSize{100});
  CHECK(at::equal(opened.get("reward"), at::zeros({100})));
  CHECK(at::equal(opened.get({"next", "done"}), at::zeros({100}, at::kBool)));
  // Filled by rows.
  store.set_at("action", 7, at::arange(4, at::kFloat));
  CHECK(at::equal(store.get_at("action", 7), at::arange(4, at::kFloat)));
  CHECK(at::equal(store.get_at("action", 6), at::zeros({4})));

  // A bad leaf writes nothing, not even the store's metadata.
  const StoreLocation refused = here("schema-refused");
  CHECK_THROWS_AS(TensorDictStore::from_schema(
                      {Leaf{"ok", {2}, at::kFloat}, Leaf{"huge", {1 << 20, 1 << 20}, at::kFloat}},
                      refused, {4}),
                  tensordict::ShapeError);
  CHECK_THROWS_AS(TensorDictStore::from_schema({Leaf{"q", {2}, at::kQInt8}}, refused, {4}),
                  tensordict::TypeError);
  CHECK(raw().command({"KEYS", "tensordict:{" + refused.td_id + "}:*"}).element.empty());
}
