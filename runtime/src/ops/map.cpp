// map(fn, num_workers, chunksize, pbar): fn over chunks of batch dim 0 on a pool of threads; the
// results are concatenated in chunk order.
#include <ATen/ATen.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include "ops/util.h"

namespace tensordict {
namespace {

// A one-line progress bar on stderr, drawn only when stderr is a terminal.
class ProgressBar {
 public:
  ProgressBar(bool wanted, size_t total) : on_(wanted && isatty(STDERR_FILENO)), total_(total) {}
  void tick() {
    if (!on_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    ++done_;
    constexpr size_t kWidth = 30;
    const size_t filled = total_ ? done_ * kWidth / total_ : kWidth;
    std::fprintf(stderr, "\r[%s%s] %zu/%zu chunks", std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, ' ').c_str(), done_, total_);
    if (done_ == total_) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  bool on_;
  size_t total_;
  size_t done_ = 0;
  std::mutex mutex_;
};

}  // namespace

std::vector<TensorDict> TensorDict::run_chunks(
    const std::function<TensorDict(const TensorDict&)>& fn, int num_workers, int64_t chunksize,
    bool pbar) const {
  if (ndim() == 0) {
    throw ShapeError("map: needs at least one batch dim to chunk over, batch_size is []");
  }
  const int64_t n = batch_size()[0];
  const int workers = std::max(1, num_workers);
  std::vector<TensorDict> chunks;
  if (chunksize == 0) {
    chunks = unbind(0);
  } else {
    chunks =
        split(chunksize > 0 ? chunksize : std::max<int64_t>(1, (n + workers - 1) / workers), 0);
  }
  std::vector<TensorDict> results(chunks.size());
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  ProgressBar bar(pbar, chunks.size());
  auto work = [&] {
    for (size_t i = next++; i < chunks.size(); i = next++) {
      try {
        results[i] = fn(chunks[i]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = chunks.size();  // stop handing out chunks
      }
      bar.tick();
    }
  };
  std::vector<std::thread> pool;
  const auto extra = std::min<size_t>(static_cast<size_t>(workers), chunks.size());
  for (size_t w = 1; w < extra; ++w) pool.emplace_back(work);
  work();  // the calling thread is one of the workers
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return results;
}

TensorDict TensorDict::combine_chunks(const std::vector<TensorDict>& results, int64_t chunksize) {
  return chunksize == 0 ? stack(results, 0) : cat(results, 0);
}

}  // namespace tensordict
