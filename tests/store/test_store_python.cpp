// The store shared with the real Python tensordict (TC_PYTHON_PEER with python3-redis), on this
// process's redis-server: Python's TensorDictStore reads what C++ wrote (row writes included),
// and C++ reads what Python wrote, leaf by leaf with dtype, shape and values.
#include <ATen/ATen.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "catch2_compat.h"
#include "python_peer.h"
#include "ragged_stack.h"
#include "store_peer.h"
#include "store_server.h"
#include "tensordict/dtype.h"
#include "tensordict/json.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/store.h"

using tensordict::Json;
using tensordict::TensorDict;
using tensordict::store::TensorDictStore;

namespace {

const std::string kScript = TC_SOURCE_DIR "/tests/store/store_peer.py";

}  // namespace

std::string tc_test::run_store_peer(const std::string& mode, const std::string& td_id) {
  tc_test::require_python_peer("torch");
  const std::string command = "PYTHONPATH='" TC_SOURCE_DIR "/tests/goldens/python/nested' '" +
                              tc_test::python_peer() + "' '" + kScript + "' " + mode + " '" +
                              tc_test::RedisServer::instance().socket() + "' '" + td_id + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 77) TC_SKIP_WITHOUT_PEER("no redis-py (python3-redis) at TC_PYTHON_PEER");
  INFO(command << "\n" << out);
  REQUIRE(code == 0);
  return out;
}

namespace {

// Every dtype both languages write; C++ also writes bfloat16 (numpy, which Python's store
// writes through, cannot).
const std::vector<at::ScalarType> kPeerDtypes{
    at::kBool, at::kByte,  at::kChar,   at::kShort,        at::kInt,          at::kLong,
    at::kHalf, at::kFloat, at::kDouble, at::kComplexFloat, at::kComplexDouble};

// The same values as leaf() in store_peer.py.
at::Tensor peer_leaf(at::ScalarType dtype) {
  const at::Tensor base = (at::arange(6, at::kDouble).reshape({3, 2}) - 3) * 1.5;
  if (dtype == at::kBool) return base.gt(0);
  if (dtype == at::kByte) return (base * 10 + 128).to(dtype);
  if (at::isComplexType(dtype)) return at::complex(base, -base).to(dtype);
  return base.to(dtype);
}

// The same entries as sample() in store_peer.py, keyed by dtype name.
TensorDict sample_td() {
  TensorDict td({}, {3});
  for (at::ScalarType dtype : kPeerDtypes) td.set(tensordict::dtype_name(dtype), peer_leaf(dtype));
  td.set({"next", "obs"}, at::arange(3, at::kDouble) * 1.25);
  td.set_non_tensor("label", "a text");
  td.set_non_tensor("cfg", Json::parse(R"({"lr": 0.1, "n": [1, 2]})"));
  td.set("tags", tensordict::NonTensorStack({3}, {Json("a"), Json("b"), Json("c")}));
  return td;
}

// A leaf as store_peer.py prints one: dtype, shape, values as doubles (complex: real, imag).
void check_leaf(const Json& printed, const at::Tensor& expected) {
  CHECK(printed.at("dtype").get<std::string>() ==
        "torch." + tensordict::dtype_name(expected.scalar_type()));
  CHECK(printed.at("shape").get<std::vector<int64_t>>() == expected.sizes().vec());
  const at::Tensor real =
      at::isComplexType(expected.scalar_type()) ? at::view_as_real(expected) : expected;
  const at::Tensor flat = real.to(at::kDouble).flatten();
  const auto values = printed.at("values").get<std::vector<double>>();
  REQUIRE(values.size() == static_cast<size_t>(flat.numel()));
  for (size_t i = 0; i < values.size(); ++i)
    CHECK(values[i] == flat[static_cast<int64_t>(i)].item<double>());
}

}  // namespace

TEST_CASE("Python's TensorDictStore reads a store C++ wrote", "[store][needs-peer]") {
  const auto where = tc_test::RedisServer::instance().unix_location("cpp-wrote");
  TensorDict expected = sample_td();
  expected.set("bfloat16", peer_leaf(at::kBFloat16));
  TensorDictStore store = TensorDictStore::from_tensordict(expected, where);
  // Rows written as byte ranges reach Python too.
  store.set_at("float32", 1, at::full({2}, 7.0, at::kFloat));
  expected.get("float32")[1].fill_(7.0);
  store.set_rows("int8", 1, at::full({2, 2}, -5, at::kChar));
  expected.get("int8").slice(0, 1).fill_(-5);

  const Json printed = Json::parse(tc_test::run_store_peer("read", where.td_id));
  CHECK(printed.at("batch_size").get<std::vector<int64_t>>() == std::vector<int64_t>{3});
  const Json& leaves = printed.at("leaves");
  CHECK(leaves.size() == kPeerDtypes.size() + 2);
  for (const auto& key : expected.keys(/*include_nested=*/true, /*leaves_only=*/true)) {
    if (!expected.get_value(key).is_tensor()) continue;
    INFO(key.repr());
    check_leaf(leaves.at(key.join(".")), expected.get(key));
  }
  const Json& non_tensor = printed.at("non_tensor");
  CHECK(non_tensor.at("label") == "a text");
  CHECK(non_tensor.at("cfg") == Json::parse(R"({"lr": 0.1, "n": [1, 2]})"));
  CHECK(non_tensor.at("tags") == Json::parse(R"(["a", "b", "c"])"));
}

TEST_CASE("C++ reads a store Python's TensorDictStore wrote", "[store][needs-peer]") {
  const auto where = tc_test::RedisServer::instance().unix_location("python-wrote");
  tc_test::run_store_peer("write", where.td_id);
  const TensorDictStore store = TensorDictStore::open(where);
  const TensorDict local = store.to_local();
  TensorDict expected = sample_td();
  // Python's row writes after the upload: set_at_ and an indexed TensorDict write.
  expected.get("float32")[1].fill_(7.0);
  expected.get("int64")[2].fill_(42);
  CHECK(local.batch_size() == tensordict::BatchSize{3});
  for (const auto& key : expected.keys(/*include_nested=*/true, /*leaves_only=*/true)) {
    if (!expected.get_value(key).is_tensor()) continue;
    INFO(key.repr());
    const at::Tensor got = local.get(key);
    CHECK(got.scalar_type() == expected.get(key).scalar_type());
    CHECK(got.equal(expected.get(key)));
  }
  CHECK(store.get_non_tensor("label") == "a text");
  CHECK(store.get_non_tensor("cfg") == Json::parse(R"({"lr": 0.1, "n": [1, 2]})"));
  // Python's set() writes a stack as one JSON list ("json"): its items come back.
  CHECK(store.get_non_tensor("tags") == Json::parse(R"(["a", "b", "c"])"));
}

TEST_CASE("C++ reads a lazy stack store Python's LazyStackedTensorDictStore wrote",
          "[store][needs-peer]") {
  // The td_id Python chose: the last line it printed (warnings may come before it).
  std::string td_id = tc_test::run_store_peer("write_lazy");
  td_id.erase(td_id.find_last_not_of(" \n") + 1);
  td_id = td_id.substr(td_id.find_last_of('\n') + 1);
  auto where = tc_test::RedisServer::instance().unix_location(td_id);
  const TensorDictStore store = TensorDictStore::open(where);
  CHECK(store.is_lazy_stack());
  CHECK(store.batch_size() == tensordict::BatchSize{2, 3});
  const TensorDict local = store.to_local();
  REQUIRE(local.is_lazy_stack());
  CHECK(local.get("x").equal(at::arange(12, at::kFloat).reshape({2, 3, 2})));
  CHECK(local.tensordicts()[0].get({"n", "r"}).equal(at::arange(6, at::kLong).reshape({3, 2})));
  CHECK(local.tensordicts()[1]
            .get({"n", "r"})
            .equal(at::arange(12, at::kLong).reshape({3, 4}) + 100));
}

TEST_CASE("Python's LazyStackedTensorDictStore reads a lazy stack C++ stored",
          "[store][needs-peer]") {
  // The stack store_peer.py's ragged() makes: "x" homogeneous, "n.r" ragged.
  const TensorDict ragged = tc_test::ragged_stack();
  const auto where = tc_test::RedisServer::instance().unix_location("cpp-wrote-lazy");
  TensorDictStore::from_tensordict(ragged, where);
  tc_test::run_store_peer("read_lazy",
                          where.td_id);  // exits 1, naming the difference, unless Python agrees
}

#ifdef TC_STORE_ACTOR
TEST_CASE("docs/store.md's C++ actor and Python learner share a store", "[store][needs-peer]") {
  // The page's two programs as written (its file= blocks: the actor built by the docs build),
  // started as its last paragraph says: the learner first, waiting for the actor's rollout.
  tc_test::require_python_peer("redis, tensordict");
  const auto& server = tc_test::RedisServer::instance();
  const std::string port = std::to_string(server.port());
  const std::string learner_command = "'" + tc_test::python_peer() +
                                      "' '" TC_STORE_LEARNER "' 127.0.0.1 " + port +
                                      " docs-run 2>&1";
  FILE* learner = popen(learner_command.c_str(), "r");
  REQUIRE(learner != nullptr);
  const std::string actor_command =
      "'" TC_STORE_ACTOR "' redis://127.0.0.1:" + port + "/0/docs-run 2>&1";
  FILE* actor = popen(actor_command.c_str(), "r");
  REQUIRE(actor != nullptr);
  auto finish = [](FILE* pipe, std::string& out) {
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
    const int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  std::string actor_said, learner_said;
  const int actor_code = finish(actor, actor_said);
  const int learner_code = finish(learner, learner_said);
  INFO("actor: " << actor_said << "\nlearner: " << learner_said);
  CHECK(learner_code == 0);
  CHECK(actor_code == 0);
  CHECK_THAT(actor_said, Catch::Matchers::ContainsSubstring("mean reward of 1.75"));
  // The actor deleted the store when it was done.
  CHECK_THROWS_AS(TensorDictStore::open(server.tcp_location("docs-run")), tensordict::KeyError);
}
#endif
