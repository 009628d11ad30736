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

// The output of store_peer.py's `mode` on this process's server; skips without redis-py (77).
std::string run_peer(const std::string& mode, const std::string& td_id = "") {
  tc_test::require_python_peer("torch");
  const std::string command = "'" + tc_test::python_peer() + "' '" + kScript + "' " + mode + " '" +
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

// The same values as sample() in store_peer.py.
TensorDict sample_td() {
  TensorDict td({}, {3});
  td.set("f32", at::arange(6, at::kFloat).reshape({3, 2}) * 0.5 - 1);
  td.set("i64", at::arange(3, at::kLong) - 1);
  td.set("u8", at::arange(12, at::kByte).reshape({3, 4}));
  td.set("b", at::arange(3, at::kLong).remainder(2).eq(0));
  td.set({"next", "obs"}, at::arange(3, at::kDouble) * 1.25);
  return td;
}

// `leaf` as store_peer.py prints one: dtype, shape, values as doubles.
void check_leaf(const Json& printed, const at::Tensor& expected) {
  CHECK(printed.at("dtype").get<std::string>() ==
        "torch." + tensordict::dtype_name(expected.scalar_type()));
  CHECK(printed.at("shape").get<std::vector<int64_t>>() == expected.sizes().vec());
  const at::Tensor flat = expected.to(at::kDouble).flatten();
  const auto values = printed.at("values").get<std::vector<double>>();
  REQUIRE(values.size() == static_cast<size_t>(flat.numel()));
  for (size_t i = 0; i < values.size(); ++i)
    CHECK(values[i] == flat[static_cast<int64_t>(i)].item<double>());
}

}  // namespace

TEST_CASE("Python's TensorDictStore reads a store C++ wrote", "[store][needs-peer]") {
  const auto where = tc_test::RedisServer::instance().unix_location("cpp-wrote");
  TensorDict expected = sample_td();
  TensorDictStore store = TensorDictStore::from_tensordict(expected, where);
  // A row written as a byte range reaches Python too.
  store.set_at("f32", 1, at::full({2}, 7.0, at::kFloat));
  expected.get("f32")[1].fill_(7.0);

  const Json printed = Json::parse(run_peer("read", where.td_id));
  CHECK(printed.at("batch_size").get<std::vector<int64_t>>() == std::vector<int64_t>{3});
  const Json& leaves = printed.at("leaves");
  CHECK(leaves.size() == 5);
  for (const char* path : {"f32", "i64", "u8", "b"}) {
    INFO(path);
    check_leaf(leaves.at(path), expected.get(path));
  }
  check_leaf(leaves.at("next.obs"), expected.get({"next", "obs"}));
}

TEST_CASE("C++ reads a store Python's TensorDictStore wrote", "[store][needs-peer]") {
  const auto where = tc_test::RedisServer::instance().unix_location("python-wrote");
  run_peer("write", where.td_id);
  const TensorDict local = TensorDictStore::open(where).to_local();
  const TensorDict expected = sample_td();
  CHECK(local.batch_size() == tensordict::BatchSize{3});
  for (const auto& key : expected.keys(/*include_nested=*/true, /*leaves_only=*/true)) {
    INFO(key.repr());
    const at::Tensor got = local.get(key);
    CHECK(got.scalar_type() == expected.get(key).scalar_type());
    CHECK(got.equal(expected.get(key)));
  }
}

TEST_CASE("C++ reads a lazy stack store Python's LazyStackedTensorDictStore wrote",
          "[store][needs-peer]") {
  // The td_id Python chose: the last line it printed (warnings may come before it).
  std::string td_id = run_peer("write_lazy");
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
  run_peer("read_lazy", where.td_id);  // exits 1, naming the difference, unless Python agrees
}
