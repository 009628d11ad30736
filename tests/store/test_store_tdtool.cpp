// tdtool on stores named by URL: convert copies a directory into a store and a store into an
// archive, and ls, dump --json and verify read one (a lazy stack store too), on this process's
// redis-server.
#include <ATen/ATen.h>

#include <nlohmann/json.hpp>

#include "catch2_compat.h"
#include "io_test_util.h"
#include "ragged_stack.h"
#include "store_server.h"
#include "tensordict/archive.h"
#include "tensordict/memmap.h"
#include "tensordict/store.h"

using Catch::Matchers::ContainsSubstring;
using tensordict::TensorDict;
using tensordict::store::TensorDictStore;

namespace {

tc_test::CommandResult tdtool(const std::string& args) {
  return tc_test::run_command(std::string(TDTOOL_PATH) + " " + args + " 2>&1");
}

// The unix-socket URL of `td_id` on the test server.
std::string url_of(const std::string& td_id) {
  return "'unix://" + tc_test::RedisServer::instance().socket() + "?td_id=" + td_id + "'";
}

}  // namespace

TEST_CASE("tdtool convert copies a directory into a store and a store into an archive",
          "[store][needs-redis][tdtool]") {
  tc_test::TempDir tmp;
  TensorDict td({{"obs", at::arange(6, at::kFloat).reshape({3, 2})},
                 {"next", TensorDict({{"reward", at::ones({3}, at::kLong)}}, {3})},
                 {"note", "hello"}},
                {3});
  td.memmap(tmp / "dir");
  const std::string url = url_of("tdtool-converted");
  const auto converted = tdtool("convert " + tmp / "dir" + " " + url);
  INFO(converted.output);
  REQUIRE(converted.code == 0);
  const TensorDict stored =
      TensorDictStore::open(tc_test::RedisServer::instance().unix_location("tdtool-converted"))
          .to_local();
  CHECK(stored.get("obs").equal(td.get("obs")));
  CHECK(stored.get({"next", "reward"}).equal(td.get({"next", "reward"})));
  CHECK(stored.get_non_tensor("note") == "hello");

  // The store prints as the directory does (its keys sorted: a store keeps no insertion order),
  // and converts into an archive.
  const auto from_store = tdtool("dump --json " + url);
  CHECK(from_store.code == 0);
  CHECK(nlohmann::json::parse(from_store.output) ==
        nlohmann::json::parse(tdtool("dump --json " + tmp / "dir").output));
  CHECK(tdtool("verify " + url).code == 0);
  const auto listed = tdtool("ls " + url);
  CHECK(listed.code == 0);
  CHECK_THAT(listed.output, ContainsSubstring("reward"));
  REQUIRE(tdtool("convert " + url + " " + tmp / "copy.tdz").code == 0);
  CHECK(tensordict::archive::load(tmp / "copy.tdz")
            .value.tensordict()
            .get("obs")
            .equal(td.get("obs")));
}

TEST_CASE("tdtool reads a lazy stack store and reports a broken one",
          "[store][needs-redis][tdtool]") {
  const auto where = tc_test::RedisServer::instance().unix_location("tdtool-lazy");
  TensorDictStore::from_tensordict(tc_test::ragged_stack(), where);
  const auto dumped = tdtool("dump --json " + url_of("tdtool-lazy"));
  INFO(dumped.output);
  CHECK(dumped.code == 0);
  CHECK_THAT(dumped.output, ContainsSubstring("100"));  // the second element's ragged leaf

  // A leaf whose bytes no longer fit its shape: verify lists it, dump fails with one line.
  tensordict::store::Connection raw(where.connection);
  raw.command({"SET", "tensordict:{tdtool-lazy}:d:x", "short"});
  const auto verified = tdtool("verify " + url_of("tdtool-lazy"));
  CHECK(verified.code == 1);
  CHECK_THAT(verified.output, ContainsSubstring("problem: store leaf 'x'"));
  CHECK(tdtool("dump --json " + url_of("tdtool-lazy")).code != 0);
  CHECK(tdtool("ls " + url_of("no-such-store")).code != 0);
}
