// Multi-process tests: each case starts real worker processes (dist_worker) on one machine, over
// a Gloo group on a FileStore (or a TCPStore on 127.0.0.1), and fails when any rank fails or the
// run outlives its deadline (the workers are then killed).
#include "catch2_compat.h"

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

// A rank dies at a step of an operation (scenarios_failure.cpp): it must have exited with 42 (the
// step was reached), every other rank with 0 (each checked its PeerError).
void run_killed(const std::string& scenario, int dying) {
  const dist_test::Outcome out = dist_test::launch(scenario, 2, "file", 30);
  INFO("scenario " << scenario << " (rank " << dying << " dies)");
  CHECK_FALSE(out.timed_out);
  for (size_t r = 0; r < out.exit_codes.size(); ++r) {
    INFO("rank " << r);
    CHECK(out.exit_codes[r] == (static_cast<int>(r) == dying ? 42 : 0));
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

// A peer that dies is a dist::PeerError on the other rank, naming the operation, the peer and the
// key or phase, within seconds (not a timeout, not a Gloo or c10d exception).
TEST_CASE("distributed: a sender killed before its description fails recv", "[distributed]") {
  run_killed("killed_recv_before_metadata", 0);
}
TEST_CASE("distributed: a sender killed between description and data fails recv at the key",
          "[distributed]") {
  run_killed("killed_recv_before_data", 0);
}
TEST_CASE("distributed: a sender killed before its data fails irecv's wait at the key",
          "[distributed]") {
  run_killed("killed_irecv_before_data", 0);
}
TEST_CASE("distributed: a sender killed before its buffer fails from_remote_init",
          "[distributed]") {
  run_killed("killed_from_remote_init_before_data", 0);
}
TEST_CASE("distributed: a receiver killed before the description fails send", "[distributed]") {
  run_killed("killed_send_before_metadata", 1);
}
TEST_CASE("distributed: a receiver killed before the data fails send at the key", "[distributed]") {
  run_killed("killed_send_before_data", 1);
}
TEST_CASE("distributed: a root killed before the metadata fails broadcast", "[distributed]") {
  run_killed("killed_broadcast_before_metadata", 0);
}
TEST_CASE("distributed: a root killed before the data fails broadcast", "[distributed]") {
  run_killed("killed_broadcast_before_data", 0);
}
TEST_CASE("distributed: a rank killed before the structure check fails all_reduce",
          "[distributed]") {
  run_killed("killed_all_reduce_before_metadata", 1);
}
TEST_CASE("distributed: a rank killed before the leaves fails all_reduce at the key",
          "[distributed]") {
  run_killed("killed_all_reduce_before_data", 1);
}
TEST_CASE("distributed: a rank killed before the data fails all_gather", "[distributed]") {
  run_killed("killed_all_gather_before_data", 1);
}
TEST_CASE("distributed: a root killed before the data fails scatter", "[distributed]") {
  run_killed("killed_scatter_before_data", 0);
}
TEST_CASE("distributed: a peer announcing more than the receiver accepts is refused",
          "[distributed]") {
  run("announced_too_large", 2);
}
