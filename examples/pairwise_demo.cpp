// The reward-model data pipeline of TorchRL in C++: a PairwiseDataset of tokenised pairs written to
// disk in Python tensordict's layout, mapped back, and sampled by a random batch of rows.
#include "pairwise_demo.h"

#include <ATen/ATen.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "reward.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

torchrl::llm::RewardData random_answers(int64_t rows, int64_t tokens) {
  return torchrl::llm::RewardData({at::randint(0, 50257, {rows, tokens}, at::kLong),
                                   at::ones({rows, tokens}, at::kLong)},
                                  {rows});
}

}  // namespace

void run_pairwise_demo(const std::string& dir, int64_t rows, int64_t tokens, int64_t batch) {
  using torchrl::llm::PairwiseDataset;
  std::filesystem::remove_all(dir);

  auto start = Clock::now();
  PairwiseDataset data({random_answers(rows, tokens), random_answers(rows, tokens)}, {rows});
  std::cout << "build    " << rows << " x " << tokens << " int64 pairs: " << ms_since(start)
            << " ms\n";

  start = Clock::now();
  data.memmap(dir, {/*num_threads=*/4});
  std::cout << "memmap   to " << dir << ": " << ms_since(start) << " ms\n";

  start = Clock::now();
  PairwiseDataset loaded = PairwiseDataset::load_memmap(dir);
  std::cout << "load     (maps the files, reads no data): " << ms_since(start) << " ms\n";

  start = Clock::now();
  const at::Tensor index = at::randint(0, rows, {batch}, at::kLong);
  PairwiseDataset sample = loaded.index({index});
  const auto ids = sample.chosen_data().input_ids();
  std::cout << "index    random batch of " << batch << " rows: " << ms_since(start) << " ms -> "
            << "chosen input_ids " << ids.sizes() << "\n";

  const bool same = ids.equal(data.chosen_data().input_ids().index_select(0, index));
  std::cout << "sample matches the data written: " << std::boolalpha << same << "\n";
  if (!same) throw std::runtime_error("pairwise demo: reloaded rows differ from the written ones");
}
