#pragma once
// Where the IO benchmarks write: $TC_BENCH_DIR (default /dev/shm, else /tmp), one fresh
// directory per suite and process, so that the numbers measure our overhead over the kernel's
// copy rather than the disk of a shared VM.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tc_bench {

inline std::string make_bench_dir(const std::string& suite) {
  namespace fs = std::filesystem;
  const char* env = std::getenv("TC_BENCH_DIR");
  const std::string base = env ? env : (fs::is_directory("/dev/shm") ? "/dev/shm" : "/tmp");
  const std::string path = base + "/tc_bench_" + suite + "_" + std::to_string(::getpid());
  fs::create_directories(path);
  return path;
}

/// The main of an IO benchmark: runs the registered benchmarks, then removes `dir`.
inline int run_then_remove(int argc, char** argv, const std::string& dir) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace tc_bench
