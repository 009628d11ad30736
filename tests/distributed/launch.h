#pragma once
// Runs N worker processes (dist_worker, or a Python peer) for one scenario and waits for them,
// bounded in time:
// children still running at the deadline are killed and the run fails.
#include <string>
#include <vector>

namespace dist_test {

struct Outcome {
  bool timed_out = false;
  std::vector<int> exit_codes;  // per rank; -1 when killed
};

/// `commands[r]` followed by <rank> <size> <store> as rank r, for every rank. `store` "file" uses
/// a fresh file in a temporary directory, "tcp" a free port on 127.0.0.1.
Outcome launch(const std::vector<std::vector<std::string>>& commands, const std::string& store,
               double deadline_s);
/// dist_worker <scenario> on every rank.
Outcome launch(const std::string& scenario, int size, const std::string& store = "file",
               double deadline_s = 30);

}  // namespace dist_test
