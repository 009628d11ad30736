// Memory-mapped IO benchmarks (results and method in docs/performance.md, "Memory-mapped IO").
//
//  BM_memmap_write/tensordict/<threads>  TensorDict::memmap of 256 MB in 64 leaves (atomic,
//  durable) BM_memmap_write/raw/<threads>         the same bytes written with write(2) into one
//  file + fsync BM_load_memmap/<MB>                   load_memmap of 64 leaves holding 1 MB or 256
//  MB in total BM_save_load/torch, /memmap           torch::save + torch::load vs memmap +
//  load_memmap (+ a read
//                                        of every byte, so both end with the data in memory)
//  BM_batch_read/tensordict|raw|pread    a random batch of rows from a 512 MB memmapped dataset
//  BM_safetensors_load/mapped|read|torch 1 GB of weights (64 leaves) loaded, every byte then read:
//                                        from_safetensors (mapped) vs read(2) of the same file's
//                                        data into tensors vs torch::load of the same weights
//
// Files go to $TC_BENCH_DIR (default /dev/shm, else /tmp): on tmpfs the numbers measure our CPU
// overhead rather than the disk of a shared VM.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <torch/serialize.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "bench_dir.h"
#include "tensordict/memmap.h"
#include "tensordict/safetensors.h"
#include "tensordict/tensordict.h"

namespace fs = std::filesystem;
using tensordict::TensorDict;

namespace {

constexpr int64_t kLeaves = 64;
constexpr int64_t kMB = 1 << 20;

std::string bench_dir() {
  static const std::string dir = tc_bench::make_bench_dir("memmap");
  return dir;
}

// 64 float32 leaves holding `total_bytes` together.
TensorDict make_td(int64_t total_bytes) {
  TensorDict td;
  const int64_t per_leaf = total_bytes / kLeaves / 4;
  for (int64_t i = 0; i < kLeaves; ++i) td.set("leaf" + std::to_string(i), at::rand({per_leaf}));
  return td;
}

const TensorDict& td_256mb() {
  static const TensorDict td = make_td(256 * kMB);
  return td;
}

void write_raw(const TensorDict& td, const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw std::runtime_error("cannot create " + path);
  for (const auto& value : td.values()) {
    const at::Tensor& t = value.tensor();
    const char* data = static_cast<const char*>(t.data_ptr());
    for (size_t done = 0, n = t.nbytes(); done < n;) {
      const ssize_t w = ::write(fd, data + done, n - done);
      if (w <= 0) throw std::runtime_error("write failed");
      done += static_cast<size_t>(w);
    }
  }
  ::fsync(fd);
  ::close(fd);
}

void BM_memmap_write(benchmark::State& state, bool raw) {
  const TensorDict& td = td_256mb();
  const std::string path = bench_dir() + (raw ? "/raw.bin" : "/td");
  tensordict::MemmapOptions options;
  options.num_threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();  // both start from an empty target: deleting 256 MB is not the write
    fs::remove_all(path);
    state.ResumeTiming();
    if (raw) {
      write_raw(td, path);
    } else {
      benchmark::DoNotOptimize(td.memmap(path, options));
    }
  }
  state.SetBytesProcessed(state.iterations() * 256 * kMB);
}
BENCHMARK_CAPTURE(BM_memmap_write, tensordict, false)
    ->Arg(1)
    ->Arg(4)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_memmap_write, raw, true)
    ->Arg(1)
    ->Arg(4)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_load_memmap(benchmark::State& state) {
  const int64_t mb = state.range(0);
  const std::string path = bench_dir() + "/load_" + std::to_string(mb);
  if (!fs::exists(path)) make_td(mb * kMB).memmap(path);
  for (auto _ : state) benchmark::DoNotOptimize(TensorDict::load_memmap(path));
  state.counters["keys"] = static_cast<double>(kLeaves);
}
BENCHMARK(BM_load_memmap)->Arg(1)->Arg(256)->Unit(benchmark::kMicrosecond)->UseRealTime();

double read_all(const TensorDict& td) {
  double sum = 0;
  for (const auto& value : td.values()) sum += value.tensor().sum().item<double>();
  return sum;
}

void BM_save_load(benchmark::State& state, bool torch_serialize) {
  const TensorDict& td = td_256mb();
  const std::string path = bench_dir() + (torch_serialize ? "/torch.pt" : "/save_load");
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(path);
    state.ResumeTiming();
    if (torch_serialize) {
      std::vector<at::Tensor> leaves;
      for (const auto& value : td.values()) leaves.push_back(value.tensor());
      torch::save(leaves, path);
      std::vector<at::Tensor> back;
      torch::load(back, path);
      TensorDict loaded;
      for (size_t i = 0; i < back.size(); ++i) loaded.set("leaf" + std::to_string(i), back[i]);
      benchmark::DoNotOptimize(read_all(loaded));
    } else {
      td.memmap(path);
      benchmark::DoNotOptimize(read_all(TensorDict::load_memmap(path)));
    }
  }
  state.SetBytesProcessed(state.iterations() * 256 * kMB);
}
BENCHMARK_CAPTURE(BM_save_load, torch, true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_save_load, memmap, false)->Unit(benchmark::kMillisecond)->UseRealTime();

// A random batch of 4096 rows from a memory-mapped dataset of 8 leaves and 512 MB:
//  BM_batch_read/tensordict  td[rows] with 2 threads (the leaves gathered in parallel)
//  BM_batch_read/raw         index_select per mapped leaf, one thread
//  BM_batch_read/pread       the rows read from the leaves' files with pread(2) by hand
constexpr int64_t kDatasetRows = 262144;  // x 64 float32 = 64 MB per leaf
constexpr int64_t kRowFloats = 64;
constexpr int64_t kBatchRows = 4096;

const TensorDict& dataset() {
  static const TensorDict dataset_td = [] {
    TensorDict td({}, {kDatasetRows});
    for (int i = 0; i < 8; ++i)
      td.set("leaf" + std::to_string(i), at::rand({kDatasetRows, kRowFloats}));
    TensorDict mapped = td.memmap(bench_dir() + "/dataset");
    // Every page mapped once, so that no variant pays the first touches for the others.
    for (const auto& value : mapped.values()) benchmark::DoNotOptimize(value.tensor().sum());
    return mapped;
  }();
  return dataset_td;
}

// Index tensors cycled through, so that each iteration reads other rows.
const std::vector<at::Tensor>& batches() {
  static const std::vector<at::Tensor> all = [] {
    std::vector<at::Tensor> out;
    for (int i = 0; i < 64; ++i) out.push_back(at::randint(kDatasetRows, {kBatchRows}, at::kLong));
    return out;
  }();
  return all;
}

void BM_batch_read(benchmark::State& state, int variant) {
  const TensorDict& td = dataset();
  const auto& rows = batches();
  const int threads = at::get_num_threads();
  at::set_num_threads(variant == 0 ? 2 : 1);
  std::vector<int> fds;
  for (int i = 0; variant == 2 && i < 8; ++i) {
    fds.push_back(::open((bench_dir() + "/dataset/leaf" + std::to_string(i) + ".memmap").c_str(),
                         O_RDONLY | O_CLOEXEC));
  }
  const int64_t row_bytes = kRowFloats * 4;
  size_t next = 0;
  for (auto _ : state) {
    const at::Tensor& index = rows[next++ % rows.size()];
    if (variant == 0) {
      benchmark::DoNotOptimize(td.index({index}));
    } else if (variant == 1) {
      std::vector<at::Tensor> out;
      for (const auto& value : td.values()) out.push_back(value.tensor().index_select(0, index));
      benchmark::DoNotOptimize(out.data());
    } else {
      std::vector<at::Tensor> out;
      const int64_t* idx = index.data_ptr<int64_t>();
      for (int fd : fds) {
        at::Tensor leaf = at::empty({kBatchRows, kRowFloats});
        char* dst = static_cast<char*>(leaf.data_ptr());
        for (int64_t r = 0; r < kBatchRows; ++r) {
          if (::pread(fd, dst + r * row_bytes, row_bytes, idx[r] * row_bytes) != row_bytes)
            throw std::runtime_error("pread failed");
        }
        out.push_back(std::move(leaf));
      }
      benchmark::DoNotOptimize(out.data());
    }
  }
  for (int fd : fds) ::close(fd);
  at::set_num_threads(threads);
  state.SetBytesProcessed(state.iterations() * 8 * kBatchRows * row_bytes);
}
BENCHMARK_CAPTURE(BM_batch_read, tensordict, 0)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_batch_read, raw, 1)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_batch_read, pread, 2)->Unit(benchmark::kMicrosecond)->UseRealTime();

// 1 GB of float32 weights in 64 leaves, as a safetensors file and as a torch::save file.
enum class WeightsLoad { Mapped, Read, Torch };

void BM_safetensors_load(benchmark::State& state, WeightsLoad how) {
  const std::string file = bench_dir() + "/weights.safetensors";
  const std::string pt = bench_dir() + "/weights.pt";
  if (!fs::exists(file)) {
    const TensorDict td = make_td(1024 * kMB);
    td.to_safetensors(file);
    std::vector<at::Tensor> leaves;
    for (const auto& value : td.values()) leaves.push_back(value.tensor());
    torch::save(leaves, pt);
  }
  for (auto _ : state) {
    if (how == WeightsLoad::Mapped) {
      benchmark::DoNotOptimize(read_all(TensorDict::from_safetensors(file)));
    } else if (how == WeightsLoad::Read) {
      // The baseline: the header's offsets known, each tensor allocated and read(2) into.
      const TensorDict layout = TensorDict::from_safetensors(file, at::Device(at::kMeta));
      const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
      uint64_t header = 0;
      if (::pread(fd, &header, 8, 0) != 8) throw std::runtime_error("pread failed");
      off_t at = static_cast<off_t>(8 + header);
      TensorDict loaded;
      for (const auto& [key, value] : layout.items()) {
        at::Tensor t = at::empty(value.tensor().sizes());
        char* dst = static_cast<char*>(t.data_ptr());
        for (size_t done = 0, n = t.nbytes(); done < n;) {
          const ssize_t got = ::pread(fd, dst + done, n - done, at + static_cast<off_t>(done));
          if (got <= 0) throw std::runtime_error("pread failed");
          done += static_cast<size_t>(got);
        }
        at += static_cast<off_t>(t.nbytes());
        loaded.set(key, t);
      }
      ::close(fd);
      benchmark::DoNotOptimize(read_all(loaded));
    } else {
      std::vector<at::Tensor> back;
      torch::load(back, pt);
      TensorDict loaded;
      for (size_t i = 0; i < back.size(); ++i) loaded.set("leaf" + std::to_string(i), back[i]);
      benchmark::DoNotOptimize(read_all(loaded));
    }
  }
  state.SetBytesProcessed(state.iterations() * 1024 * kMB);
}
BENCHMARK_CAPTURE(BM_safetensors_load, mapped, WeightsLoad::Mapped)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_safetensors_load, read, WeightsLoad::Read)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_safetensors_load, torch, WeightsLoad::Torch)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  at::set_num_threads(1);  // a 2-core shared machine: keep ATen's pool out of the comparison
  return tc_bench::run_then_remove(argc, argv, bench_dir());
}
