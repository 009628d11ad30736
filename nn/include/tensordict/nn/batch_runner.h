#pragma once
/// \file
/// BatchRunner: serving a module to many callers at once. Callers submit TensorDicts of batch [k]
/// (typically [1]); each request joins the open batch of its layout (below) until that holds
/// max_batch rows;
/// one worker thread takes the oldest batch (waiting at most max_delay for it to fill),
/// concatenates its requests along dim 0, runs the module once, and wakes the batch's callers with
/// one notify; each caller then takes its own rows of the result (views, no copy).
///
/// \code
///   BatchRunner runner(std::make_shared<TensorDictModule>(policy, in_keys, out_keys));
///   TensorDict out = runner.run(request);          // blocks; or runner.submit(request).get()
/// \endcode
///
/// A caller may keep several requests in flight: submit() returns at once with a BatchFuture.
/// Every wait is bounded: submit() waits at most `timeout` for room in the queue, run() at most
/// `timeout` for the result (TimeoutError). One request never changes another's result: requests
/// share a batch only when their layouts match (keys, kinds, dtypes, devices, shapes past the
/// batch dim), so a float64 request never promotes a float32 one; when a batch fails (in the
/// concatenation or in the module), its halves run again, each alone, down to single requests, so
/// that every request that succeeds alone gets its result and every one that fails gets its own
/// error. Destroying the runner fails the requests still queued (Error) after the batch in flight
/// ends.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "tensordict/nn/module.h"

namespace tensordict::nn {

/// The grad mode of a BatchRunner's forwards. Grad mode is per thread: a caller's NoGradGuard does
/// not reach the worker thread, hence this option.
enum class RunnerGradMode {
  /// at::NoGradGuard: outputs do not require grad and no graph is recorded (the default).
  NoGrad,
  /// c10::InferenceMode: a little less work per op than NoGrad, but every tensor of the results
  /// is an inference tensor, which cannot be modified in place or saved for backward outside
  /// inference mode.
  Inference,
  /// Grad enabled, as in a new thread: outputs keep their graph back to the module's parameters.
  Enabled,
};

/// How a BatchRunner forms batches and bounds its waits.
struct BatchRunnerOptions {
  /// Most rows in one forward; a single request larger than this still runs, alone.
  int64_t max_batch = 64;
  /// How long the worker waits for the oldest batch to fill once it has taken it.
  std::chrono::microseconds max_delay{1000};
  /// Most requests waiting; submit() blocks (up to `timeout`) while it is full.
  size_t max_queue = 1024;
  /// Bound of submit()'s wait for room and run()'s wait for the result.
  std::chrono::milliseconds timeout{30000};
  /// Grad mode of the forwards (and of the concatenation before them).
  RunnerGradMode grad_mode = RunnerGradMode::NoGrad;
};

namespace detail {
struct RunnerBatch;  // batch_runner.cpp
}

/// The result of a submitted request, with std::future's interface: get() once (then valid() is
/// false), wait(), wait_for(). Callers of one batch share its state: the worker wakes them all
/// with one notify, and each takes its own rows.
class BatchFuture {
 public:
  BatchFuture() = default;
  /// Movable, not copyable: one owner gets the result.
  ///@{
  BatchFuture(BatchFuture&&) noexcept = default;
  BatchFuture& operator=(BatchFuture&&) noexcept = default;
  ///@}
  BatchFuture(const BatchFuture&) = delete;
  BatchFuture& operator=(const BatchFuture&) = delete;
  ~BatchFuture() = default;

  /// True until get() has taken the result (false for a default-constructed future).
  bool valid() const { return batch_ != nullptr; }
  /// Waits for the batch, then returns the request's entries and the module's outputs, batch
  /// [k, ...]: views of the batch's rows. Rethrows the request's or the module's error. Error
  /// when !valid().
  TensorDict get();
  /// Waits for the batch to finish, without a bound. Error when !valid().
  void wait() const;
  /// Waits at most `timeout`: std::future_status::ready or timeout. Error when !valid().
  template <class Rep, class Period>
  std::future_status wait_for(const std::chrono::duration<Rep, Period>& timeout) const {
    return wait_for_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout));
  }

 private:
  friend class BatchRunner;
  BatchFuture(std::shared_ptr<detail::RunnerBatch> batch, size_t member)
      : batch_(std::move(batch)), member_(member) {}
  std::future_status wait_for_ns(std::chrono::nanoseconds timeout) const;

  std::shared_ptr<detail::RunnerBatch> batch_;
  size_t member_ = 0;
};

/// Serves `module` to many threads at once, batching their requests (see the file comment).
class BatchRunner {
 public:
  /// Starts the worker thread. Error when `module` is null or an option is out of range.
  explicit BatchRunner(std::shared_ptr<const TensorDictModuleBase> module,
                       BatchRunnerOptions options = {});
  ~BatchRunner();
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  /// Queues `request` (batch size [k, ...], k >= 1) and returns the future of its result: the
  /// request's entries plus the module's outputs, batch [k, ...]. ShapeError for a request
  /// without a batch dim; TimeoutError when the queue stays full for `timeout`.
  BatchFuture submit(TensorDict request);
  /// submit() and wait for the result, at most `timeout` (TimeoutError).
  TensorDict run(TensorDict request);

  /// What the worker did so far.
  struct Stats {
    /// Forwards that returned (one per batch; a failed batch adds one per part that then
    /// succeeded alone).
    int64_t batches = 0;
    /// Requests answered with a result.
    int64_t requests = 0;
    /// Rows of those requests.
    int64_t rows = 0;
  };
  /// A snapshot of the counters.
  Stats stats() const;
  /// The options the runner was built with.
  const BatchRunnerOptions& options() const { return options_; }

 private:
  void work();
  // Closes `batch` to new requests (under the lock).
  void close(detail::RunnerBatch& batch);
  void run_batch(detail::RunnerBatch& batch);
  // One forward for members [begin, end) of `batch`; when it fails, each half runs alone.
  void run_members(detail::RunnerBatch& batch, size_t begin, size_t end, Stats& ran) const;

  std::shared_ptr<const TensorDictModuleBase> module_;
  BatchRunnerOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;  // the queue became non-empty, or its oldest batch closed
  std::condition_variable room_;
  // Batches in arrival order; of these, the open ones (still taking requests), one per layout.
  std::deque<std::shared_ptr<detail::RunnerBatch>> queue_;
  std::vector<std::shared_ptr<detail::RunnerBatch>> open_;
  size_t queued_ = 0;  // requests in queue_
  bool stopping_ = false;
  Stats stats_;
  std::thread worker_;
};

}  // namespace tensordict::nn
