#pragma once
// Runs N worker processes (dist_worker) for one scenario and waits for them, bounded in time:
// children still running at the deadline are killed and the run fails.
#include <string>
#include <vector>

namespace dist_test {

struct Outcome {
  bool timed_out = false;
  std::vector<int> exit_codes;  // per rank; -1 when killed
};

/// dist_worker <scenario> <rank> <size> <store> for rank 0..size-1. `store` "file" uses a fresh
/// file in a temporary directory, "tcp" a free port on 127.0.0.1.
Outcome launch(const std::string& scenario, int size, const std::string& store = "file",
               double deadline_s = 30);

}  // namespace dist_test
