// The runtime's thread fan-out (core/parallel.h).
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "core/parallel.h"

namespace tensordict::detail {

void parallel_for(size_t n, int num_threads, const std::function<void(size_t)>& job) {
  const size_t workers = std::min<size_t>(static_cast<size_t>(std::max(num_threads, 1)), n);
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) job(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        job(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t i = 0; i < workers; ++i) threads.emplace_back(worker);
  for (auto& th : threads) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace tensordict::detail
