// Interop with Python tensordict: groups that mix dist_worker ranks with python_peer.py ranks
// running Python tensordict's own methods (scenarios_python.cpp). Where no Python tensordict runs
// (TC_PYTHON_PEER cannot import it, as on CI), each case exits 77, which CTest reports as
// skipped.
#include <cstdlib>
#include <iostream>
#include "catch2_compat.h"

#include "launch.h"
#include "python_peer.h"

namespace {

const std::string kPeer = tc_test::python_peer();
const std::string kScript = TC_SOURCE_DIR "/tests/distributed/python_peer.py";

void require_python() { tc_test::require_python_peer("tensordict, torch.distributed"); }

// `layout`: one letter per rank, 'p' for Python, 'c' for C++.
void run(const std::string& scenario, const std::string& layout) {
  require_python();
  std::vector<std::vector<std::string>> commands;
  for (char who : layout) {
    commands.push_back(who == 'p' ? std::vector<std::string>{kPeer, kScript, scenario}
                                  : std::vector<std::string>{DIST_WORKER_PATH, scenario});
  }
  const dist_test::Outcome out = dist_test::launch(commands, "tcp", 60);
  INFO("scenario " << scenario << ", ranks " << layout);
  CHECK_FALSE(out.timed_out);
  for (size_t r = 0; r < out.exit_codes.size(); ++r) {
    INFO("rank " << r << (layout[r] == 'p' ? " (Python)" : " (C++)"));
    CHECK(out.exit_codes[r] == 0);
  }
}

}  // namespace

TEST_CASE("distributed with a Python rank: send, isend, consolidated, init_remote, tensorclasses",
          "[distributed][needs-peer]") {
  run("python_p2p", "pc");
  run("python_p2p", "cp");
}

TEST_CASE("distributed with a Python rank: broadcast, all_gather, scatter, all_reduce",
          "[distributed][needs-peer]") {
  run("python_collectives", "pcc");
  run("python_collectives", "cpc");
}
