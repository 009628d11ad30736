// Checkpoint of a ~100 MB MLP (results and method in docs/performance.md, "Checkpoints"):
//
//  BM_checkpoint_save/torch     torch::save(model, file)
//  BM_checkpoint_save/memmap    TensorDict::from_module(model).memmap(dir, {num_threads = 2})
//  BM_checkpoint_save/raw_write the parameters' bytes written to one file with write(2): the
//                               floor any writer of the same bytes meets
//  BM_checkpoint_load/torch     torch::load(model, file)
//  BM_checkpoint_load/memmap    TensorDict::load_memmap(dir) swapped into the model
//                               (to_module_scoped: Python's `load_memmap(dir).to_module(model)`;
//                               the model's tensors map the files, pages come in on first use)
//  BM_checkpoint_load/copy      TensorDict::load_memmap(dir, {}, 2).to_module(model, inplace):
//                               like torch::load, ends with the values in the model's own memory
//
// Files go to $TC_BENCH_DIR (default /dev/shm, else /tmp), as bench_memmap.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/serialize.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "bench_dir.h"
#include "tensordict/module.h"

using tensordict::TensorDict;

namespace {

std::string bench_dir() {
  static const std::string dir = tc_bench::make_bench_dir("checkpoint");
  return dir;
}

// 6 x Linear(2048, 2048): 25.2 M float32 parameters, 100.7 MB.
torch::nn::Sequential& model() {
  static torch::nn::Sequential m = [] {
    torch::nn::Sequential s;
    for (int i = 0; i < 6; ++i) s->push_back(torch::nn::Linear(2048, 2048));
    return s;
  }();
  return m;
}

const std::string& torch_file() {
  static const std::string path = bench_dir() + "/model.pt";
  return path;
}
const std::string& memmap_dir() {
  static const std::string path = bench_dir() + "/model";
  return path;
}

void set_bytes(benchmark::State& state) {
  int64_t bytes = 0;
  for (const auto& p : model()->parameters()) bytes += static_cast<int64_t>(p.nbytes());
  state.SetBytesProcessed(state.iterations() * bytes);
}

void write_raw(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  for (const auto& p : model()->parameters()) {
    const auto* data = static_cast<const char*>(p.data_ptr());
    size_t left = p.nbytes();
    while (left > 0) {
      const ssize_t n = ::write(fd, data, left);
      if (n <= 0) throw std::runtime_error("write failed on " + path);
      data += n;
      left -= static_cast<size_t>(n);
    }
  }
  ::close(fd);
}

enum class Save { torch, memmap, raw_write };

void BM_checkpoint_save(benchmark::State& state, Save how) {
  for (auto _ : state) {
    if (how == Save::torch) {
      torch::save(model(), torch_file());
    } else if (how == Save::memmap) {
      TensorDict::from_module(*model()).memmap(memmap_dir(), {2});
    } else {
      write_raw(bench_dir() + "/raw.bin");
    }
  }
  set_bytes(state);
}

enum class Load { torch, swap, copy };

void BM_checkpoint_load(benchmark::State& state, Load how) {
  if (how == Load::torch) {
    torch::save(model(), torch_file());
  } else {
    TensorDict::from_module(*model()).memmap(memmap_dir(), {2});
  }
  for (auto _ : state) {
    if (how == Load::torch) {
      torch::load(model(), torch_file());
    } else if (how == Load::swap) {
      auto swap = TensorDict::load_memmap(memmap_dir()).to_module_scoped(*model());
      benchmark::DoNotOptimize(swap);
    } else {
      TensorDict::load_memmap(memmap_dir(), std::nullopt, 2).to_module(*model(), true, false);
    }
  }
  set_bytes(state);
}

}  // namespace

BENCHMARK_CAPTURE(BM_checkpoint_save, torch, Save::torch)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_checkpoint_save, memmap, Save::memmap)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_checkpoint_save, raw_write, Save::raw_write)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_checkpoint_load, torch, Load::torch)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_checkpoint_load, memmap, Load::swap)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_checkpoint_load, copy, Load::copy)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

int main(int argc, char** argv) { return tc_bench::run_then_remove(argc, argv, bench_dir()); }
