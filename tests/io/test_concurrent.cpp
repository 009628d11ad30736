// Readers see the old save or the new one, never half of each: one process loads a prefix in a
// loop while two others save distinguishable generations to it, and the writers end with one whole
// save. Slow (label `slow`): a few seconds of saving and 1,000 loads.
#include <ATen/ATen.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include "catch2_compat.h"
#include <chrono>
#include <filesystem>
#include <iostream>
#include <set>

#include "io_test_util.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/memmap.h"

using tensordict::TensorDict;
namespace fs = std::filesystem;
namespace memmap = tensordict::memmap;

namespace {

// Every leaf holds `gen`, and the structure depends on it too (a key by parity, a lazy stack of
// gen % 3 + 1 elements): a load that mixes two saves, or reads a half-deleted one, shows.
TensorDict generation(int64_t gen) {
  TensorDict td({{"a", at::full({4, 16}, gen, at::kLong)}, {"b", at::full({4}, gen, at::kDouble)}});
  td.set({"n", "c"}, at::full({4, 2}, gen, at::kLong));
  td.set({"n", "deep", "d"}, at::full({3}, gen, at::kFloat));
  td.set(gen % 2 ? "odd" : "even", at::full({2}, gen, at::kLong));
  td.set("gen", std::to_string(gen));
  std::vector<TensorDict> elements;
  while (elements.size() <= static_cast<size_t>(gen % 3)) {
    elements.push_back(TensorDict({{"z", at::full({2}, gen, at::kLong)}}));
  }
  td.set("ls", tensordict::lazy_stack(elements));
  return td;
}

// Empty when `td` is one whole generation, else what is wrong.
std::string mixed(const TensorDict& td) {
  const int64_t gen = std::stoll(td.get_non_tensor("gen").get<std::string>());
  const TensorDict expected = generation(gen);
  if (td.keys() != expected.keys()) return "generation " + std::to_string(gen) + ": other keys";
  if (td.get_tensordict("ls").tensordicts().size() != static_cast<size_t>(gen % 3 + 1)) {
    return "generation " + std::to_string(gen) + ": a stack of another length";
  }
  for (const auto& [key, value] : td.items(true, true)) {
    if (value.is_tensor() && !at::all(value.tensor() == gen).item<bool>()) {
      return "generation " + std::to_string(gen) + ": key " + key.join(".") + " holds other values";
    }
  }
  return {};
}

// State the processes share (an anonymous shared mapping made before fork).
struct Shared {
  std::atomic<int> stop{0};
  std::atomic<int> saves[2] = {0, 0};
};

// Saves generations writer + 1, writer + 3, ... until told to stop; exit status 1 on any error.
[[noreturn]] void write_generations(const std::string& prefix, int writer, Shared& shared) {
  memmap::WriteOptions options;
  options.durable = false;  // more saves, so more of them overlap the loads
  try {
    for (int64_t gen = writer + 1; !shared.stop.load(); gen += 2) {
      memmap::save_tensordict(generation(gen), prefix, options);
      shared.saves[writer]++;
    }
  } catch (const std::exception& e) {
    std::cerr << "writer " << writer << ": " << e.what() << "\n";
    ::_exit(1);
  }
  ::_exit(0);
}

}  // namespace

TEST_CASE("loads during two processes' saves see one whole save each", "[io][concurrent]") {
  tc_test::TempDir tmp;
  const std::string prefix = tmp / "td";
  generation(0).memmap(prefix);
  void* mem =
      ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(mem != MAP_FAILED);
  auto* shared = new (mem) Shared();
  pid_t writers[2];
  for (int w = 0; w < 2; ++w) {
    writers[w] = ::fork();
    REQUIRE(writers[w] >= 0);
    if (writers[w] == 0) write_generations(prefix, w, *shared);
  }

  // At least 1,000 loads, and on until the writers have replaced the prefix 100 times (15 s at
  // most), so that many loads overlap a save.
  const int kLoads = 1000;
  const int kSaves = 100;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  auto saves = [&] { return shared->saves[0].load() + shared->saves[1].load(); };
  int loads = 0;
  int errors = 0;
  int mixes = 0;
  std::set<int64_t> seen;
  std::string first_problem;
  for (; loads < kLoads || (saves() < kSaves && std::chrono::steady_clock::now() < deadline);
       ++loads) {
    try {
      const TensorDict td = TensorDict::load_memmap(prefix);
      const std::string problem = mixed(td);
      seen.insert(std::stoll(td.get_non_tensor("gen").get<std::string>()));
      if (!problem.empty()) {
        ++mixes;
        if (first_problem.empty()) first_problem = problem;
      }
    } catch (const std::exception& e) {
      ++errors;
      if (first_problem.empty()) first_problem = e.what();
    }
  }
  shared->stop = 1;
  int status[2];
  for (int w = 0; w < 2; ++w) ::waitpid(writers[w], &status[w], 0);

  INFO("first problem: " << first_problem);
  CHECK(errors == 0);
  CHECK(mixes == 0);
  WARN(loads << " loads saw " << seen.size() << " generations while the writers saved "
             << shared->saves[0].load() << " and " << shared->saves[1].load() << " times");
  CHECK(loads >= kLoads);
  CHECK(saves() >= kSaves);
  CHECK(seen.size() > 10);  // the loads did overlap the saves
  for (int w = 0; w < 2; ++w) {
    INFO("writer " << w);
    CHECK(WIFEXITED(status[w]));
    CHECK(WEXITSTATUS(status[w]) == 0);  // never refused, never failed
    CHECK(shared->saves[w].load() > 0);
  }
  // One whole save at the end, and nothing left beside it.
  CHECK(mixed(TensorDict::load_memmap(prefix)).empty());
  CHECK(memmap::verify(prefix).empty());
  std::vector<std::string> beside;
  for (const auto& e : fs::directory_iterator(tmp.path())) beside.push_back(e.path().filename());
  CHECK(beside == std::vector<std::string>{"td"});
  shared->~Shared();
  ::munmap(mem, sizeof(Shared));
}
