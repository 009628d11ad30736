#pragma once
// The runtime's thread fan-out (private to the runtime): memmap's leaf writes and page prefetch,
// the parallel gather of td[rows].

#include <cstddef>
#include <functional>

namespace tensordict::detail {

/// Runs `job(i)` for i in [0, n) on min(num_threads, n) threads (inline when that is 1); the
/// first exception a job throws is rethrown once every thread has joined.
void parallel_for(size_t n, int num_threads, const std::function<void(size_t)>& job);

}  // namespace tensordict::detail
