#pragma once
#include <cstdint>
#include <string>

/// Builds a PairwiseDataset of `rows` x `tokens`, memmaps it under `dir`, reloads it and indexes a
/// random batch of `batch` rows, printing the time of each step.
void run_pairwise_demo(const std::string& dir, int64_t rows, int64_t tokens, int64_t batch);
