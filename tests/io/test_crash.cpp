// Atomic save: a child process saving over an existing directory is killed with SIGKILL at random
// points; the directory must then load as entirely the old save or entirely the new one.
#include <ATen/ATen.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "catch2_compat.h"
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "io_test_util.h"
#include "tensordict/internal.h"  // the save-step hook (fault injection)
#include "tensordict/memmap.h"

using tensordict::TensorDict;
namespace fs = std::filesystem;

namespace {

// Old and new saves differ in every value and in their key sets.
TensorDict make_generation(int gen) {
  TensorDict td({}, {64});
  const int leaves = gen == 0 ? 8 : 12;
  for (int i = 0; i < leaves; ++i) {
    td.set("leaf" + std::to_string(i), at::full({64, 1024}, static_cast<double>(gen + 1)));
  }
  td.set({"nested", "y"}, at::full({64, 16}, static_cast<double>(gen + 1)));
  td.set("gen", std::to_string(gen));
  return td;
}

// Which generation `dir` holds; fails the test on any mix.
int loaded_generation(const std::string& dir) {
  TensorDict td = TensorDict::load_memmap(dir);
  const int gen = std::stoi(td.get_non_tensor("gen").get<std::string>());
  REQUIRE((gen == 0 || gen == 1));
  CHECK(td.size() == (gen == 0 ? 8u : 12u) + 2);
  for (const auto& [key, value] : td.items(true, true)) {
    if (!value.is_tensor()) continue;
    INFO(key.join("."));
    CHECK(at::all(value.tensor() == gen + 1).item<bool>());
  }
  return gen;
}

double seconds_to_save(const TensorDict& td, const std::string& dir) {
  const auto start = std::chrono::steady_clock::now();
  td.memmap(dir);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("a save killed at any point leaves the old or the new directory", "[io][crash]") {
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  const TensorDict old_td = make_generation(0);
  const TensorDict new_td = make_generation(1);
  // Window for the kill: longer than a whole save (a forked child runs slower than the probe), so
  // kills land before, during and after the publishing rename.
  const double window = 3.0 * std::max(seconds_to_save(new_td, tmp / "probe"), 0.001);
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> when(0.0, window);
  int outcomes[2] = {0, 0};
  const int kRuns = 40;
  for (int run = 0; run < kRuns; ++run) {
    old_td.memmap(dir);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      try {
        new_td.memmap(dir);
      } catch (...) {
        ::_exit(2);
      }
      ::_exit(0);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(when(rng)));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK_FALSE((WIFEXITED(status) && WEXITSTATUS(status) != 0));
    outcomes[loaded_generation(dir)]++;
  }
  WARN("killed saves: " << outcomes[0] << " left the old directory, " << outcomes[1]
                        << " the new one");
  CHECK(outcomes[0] + outcomes[1] == kRuns);

  // The next save removes the temporaries the killed children left behind.
  old_td.memmap(dir);
  for (const auto& e : fs::directory_iterator(tmp.path())) {
    const std::string name = e.path().filename().string();
    INFO(name);
    CHECK((name == "td" || name == "probe"));
  }
}

TEST_CASE("a first save killed at any point leaves nothing or the whole directory", "[io][crash]") {
  tc_test::TempDir tmp;
  const TensorDict td = make_generation(1);
  const double window = 2.0 * std::max(seconds_to_save(td, tmp / "probe"), 0.001);
  std::mt19937 rng(678);
  std::uniform_real_distribution<double> when(0.0, window);
  int absent = 0;
  for (int run = 0; run < 20; ++run) {
    const std::string dir = tmp / ("td" + std::to_string(run));
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      td.memmap(dir);
      ::_exit(0);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(when(rng)));
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    if (!fs::exists(dir)) {
      ++absent;
      continue;
    }
    CHECK(loaded_generation(dir) == 1);
  }
  WARN("killed first saves: " << absent << " of 20 left no directory, the others a complete one");
}

namespace {

int g_kill_at = 0;
int g_steps = 0;

void kill_at_step(const char* /*step*/) {
  if (++g_steps == g_kill_at) ::raise(SIGKILL);
}

// Saves `td` to `dir` in a child process killed (SIGKILL) after the save's `step`-th step; the
// child's wait status (exited: the save had fewer steps).
int save_killed_at_step(const TensorDict& td, const std::string& dir, int step) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    g_kill_at = step;
    tensordict::memmap::detail::set_save_step_hook(&kill_at_step);
    td.memmap(dir);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return status;
}

}  // namespace

TEST_CASE("a save killed after each of its steps leaves the old or the new directory",
          "[io][crash]") {
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  const TensorDict old_td = make_generation(0);
  const TensorDict new_td = make_generation(1);
  int outcomes[2] = {0, 0};
  for (int step = 1;; ++step) {
    old_td.memmap(dir);
    const int status = save_killed_at_step(new_td, dir, step);
    outcomes[loaded_generation(dir)]++;
    if (WIFEXITED(status)) {  // the save ran past its last step: every step has been covered
      CHECK(step == 13 + 3 + 4 + 1);  // 13 leaves, 3 meta.json, 4 publication steps
      break;
    }
    REQUIRE(WIFSIGNALED(status));
  }
  WARN("kills after each step: " << outcomes[0] << " left the old directory, " << outcomes[1]
                                 << " the new one");
  CHECK(outcomes[0] == 13 + 3 + 2);  // killed before the exchange: old
  CHECK(outcomes[1] == 3);           // after it ("published", "cleaned") or not killed: new
}

TEST_CASE("a save killed after each of its steps keeps the files a user put in the old one",
          "[io][crash][overwrite]") {
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  const TensorDict old_td = make_generation(0);
  const TensorDict new_td = make_generation(1);
  // Beside the saved tree (one named like its files), in a nested directory, a directory.
  const std::vector<std::string> user = {"notes.txt", "nested/extra.memmap", "leaf7.memmap.bak",
                                         "results/meta.json"};
  int steps = 0;
  for (int step = 1;; ++step) {
    old_td.memmap(dir);
    for (const auto& rel : user) {
      fs::create_directories(fs::path(dir + "/" + rel).parent_path());
      tc_test::write_file(dir + "/" + rel, "kept: " + rel);
    }
    const int status = save_killed_at_step(new_td, dir, step);
    INFO("killed after step " << step);
    const int gen = loaded_generation(dir);
    // The next save puts back what the killed one had moved aside, then keeps it in turn.
    (gen == 0 ? new_td : old_td).memmap(dir);
    for (const auto& rel : user) {
      INFO(rel);
      CHECK(tc_test::read_file(dir + "/" + rel) == "kept: " + rel);
    }
    std::vector<std::string> beside;
    for (const auto& e : fs::directory_iterator(tmp.path())) beside.push_back(e.path().filename());
    CHECK(beside == std::vector<std::string>{"td"});
    if (WIFEXITED(status)) {
      steps = step;
      break;
    }
    REQUIRE(WIFSIGNALED(status));
  }
  // 13 leaves, 3 meta.json, 4 publication steps, one step per entry moved into the new tree.
  CHECK(steps == 13 + 3 + 4 + static_cast<int>(user.size()) + 1);
}
