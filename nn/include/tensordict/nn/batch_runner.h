#pragma once
// BatchRunner: serving a module to many callers at once. Callers submit TensorDicts of batch [k]
// (typically [1]); one worker thread takes requests in arrival order until it has max_batch rows
// or the oldest request has waited max_delay, concatenates them along dim 0, runs the module
// once, and hands every caller its own rows of the result.
//
//   BatchRunner runner(std::make_shared<TensorDictModule>(policy, in_keys, out_keys));
//   TensorDict out = runner.run(request);          // blocks; or runner.submit(request).get()
//
// Every wait is bounded: submit() waits at most `timeout` for room in the queue, run() at most
// `timeout` for the result (TimeoutError). A request that cannot join its batch (other keys, a
// shape that does not concatenate with the batch's first request) fails alone; an exception of the
// module reaches every caller of that batch. Destroying the runner fails the requests still queued
// (Error) after the batch in flight ends.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tensordict/nn/module.h"

namespace tensordict::nn {

struct BatchRunnerOptions {
  /// Most rows in one forward; a single request larger than this still runs, alone.
  int64_t max_batch = 64;
  /// How long the worker waits for more requests once it has one.
  std::chrono::microseconds max_delay{1000};
  /// Most requests waiting; submit() blocks (up to `timeout`) while it is full.
  size_t max_queue = 1024;
  /// Bound of submit()'s wait for room and run()'s wait for the result.
  std::chrono::milliseconds timeout{30000};
};

class BatchRunner {
 public:
  explicit BatchRunner(std::shared_ptr<const TensorDictModuleBase> module,
                       BatchRunnerOptions options = {});
  ~BatchRunner();
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  /// Queues `request` (batch size [k, ...], k >= 1) and returns the future of its result: the
  /// request's entries plus the module's outputs, batch [k, ...]. ShapeError for a request
  /// without a batch dim; TimeoutError when the queue stays full for `timeout`.
  std::future<TensorDict> submit(TensorDict request);
  /// submit() and wait for the result, at most `timeout` (TimeoutError).
  TensorDict run(TensorDict request);

  /// What the worker did so far.
  struct Stats {
    int64_t batches = 0;
    int64_t requests = 0;
    int64_t rows = 0;
  };
  Stats stats() const;
  const BatchRunnerOptions& options() const { return options_; }

 private:
  struct Request {
    TensorDict td;
    std::promise<TensorDict> result;
  };
  void work();
  std::vector<Request> next_batch();
  void run_batch(std::vector<Request>& batch);

  std::shared_ptr<const TensorDictModuleBase> module_;
  BatchRunnerOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::condition_variable room_;
  std::deque<Request> queue_;
  bool stopping_ = false;
  Stats stats_;
  std::thread worker_;
};

}  // namespace tensordict::nn
