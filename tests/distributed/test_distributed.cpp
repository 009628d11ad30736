// Multi-process tests: each case starts real worker processes (dist_worker) on one machine, over
// a Gloo group on a FileStore (or a TCPStore on 127.0.0.1), and fails when any rank fails or the
// run outlives its deadline (the workers are then killed).
#include <catch2/catch.hpp>

#include "launch.h"

namespace {

void run(const std::string& scenario, int size, const std::string& store = "file") {
  const dist_test::Outcome out = dist_test::launch(scenario, size, store, 30);
  INFO("scenario " << scenario << " on " << size << " ranks (" << store << " store)");
  CHECK_FALSE(out.timed_out);
  for (size_t r = 0; r < out.exit_codes.size(); ++r) {
    INFO("rank " << r);
    CHECK(out.exit_codes[r] == 0);
  }
}

}  // namespace

TEST_CASE("distributed send/recv: checked, Python's messages, consolidated", "[distributed]") {
  run("send_recv", 2);
}
TEST_CASE("distributed isend/irecv both ways at once", "[distributed]") { run("isend_irecv", 2); }
TEST_CASE("distributed send of tensorclasses and init_remote", "[distributed]") {
  run("tensorclass", 2);
}
TEST_CASE("distributed send mismatch names the key on the receiver", "[distributed]") {
  run("mismatch", 2);
}
TEST_CASE("distributed timeouts bound recv and collectives", "[distributed]") { run("timeout", 2); }
TEST_CASE("distributed broadcast over 4 ranks (TCPStore)", "[distributed]") {
  run("broadcast", 4, "tcp");
}
TEST_CASE("distributed all_reduce over 4 ranks", "[distributed]") { run("all_reduce", 4); }
TEST_CASE("distributed all_reduce mismatch names the key on every rank", "[distributed]") {
  run("all_reduce_mismatch", 2);
}
TEST_CASE("distributed all_gather over 4 ranks", "[distributed]") { run("all_gather", 4); }
TEST_CASE("distributed scatter over 4 ranks", "[distributed]") { run("scatter", 4); }
TEST_CASE("distributed: 4 processes read one memmapped dataset at once", "[distributed]") {
  run("shared_dataset", 4);
}
