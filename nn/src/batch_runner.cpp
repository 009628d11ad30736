// BatchRunner (tensordict/nn/batch_runner.h): requests form batches as they arrive; one worker
// thread runs each batch once and wakes its callers together.
#include "tensordict/nn/batch_runner.h"

#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tensordict::nn {
namespace detail {

// One batch: built under the runner's lock while open, then owned by the worker, then read by
// its callers once `done`. What the worker writes (`out`, `error`, `plain_views`, the members'
// `start` and `error`) happens before it sets `done`.
struct RunnerBatch {
  struct Member {
    TensorDict td;
    int64_t start = 0;         // first row in `out`
    std::exception_ptr error;  // this request alone failed (it did not concatenate)
  };
  std::vector<Member> members;
  int64_t rows = 0;
  bool closed = false;  // no more requests join (under the runner's lock)

  TensorDict out;            // the module's result for the rows of every member without error
  std::exception_ptr error;  // the whole batch failed
  bool plain_views = false;  // no tensor of `out` requires grad: rows need no autograd views

  std::mutex mutex;
  std::condition_variable finished;
  std::atomic<bool> done{false};  // set under `mutex`; read without it on the fast path

  void finish() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      done.store(true, std::memory_order_release);
    }
    // One wake-up: each caller that slept wakes the next one (await), so the worker does not pay
    // for a wake-up per caller before it can start the next batch.
    finished.notify_one();
  }

  // Waits until done, at most `timeout` when given; false on timeout.
  bool await(std::optional<std::chrono::nanoseconds> timeout) {
    if (done.load(std::memory_order_acquire)) return true;
    std::unique_lock<std::mutex> lock(mutex);
    const auto is_done = [this] { return done.load(std::memory_order_relaxed); };
    if (!timeout) {
      finished.wait(lock, is_done);
    } else if (!finished.wait_for(lock, *timeout, is_done)) {
      return false;
    }
    lock.unlock();
    finished.notify_one();  // pass the wake-up on to the batch's next sleeping caller
    return true;
  }
};

}  // namespace detail

namespace {

int64_t rows_of(const TensorDict& td) { return td.batch_size()[0]; }

// Requests reserved per batch up front, so that members rarely grow under the lock.
size_t initial_members(int64_t max_batch) {
  return static_cast<size_t>(std::min<int64_t>(max_batch, 256));
}

}  // namespace

// ---- BatchFuture -------------------------------------------------------------------------------

TensorDict BatchFuture::get() {
  if (!batch_) {
    throw Error("BatchFuture: no result to get (get() was called already, or nothing submitted)");
  }
  // As std::future: valid() is false from here on, whatever the outcome.
  const std::shared_ptr<detail::RunnerBatch> batch = std::move(batch_);
  batch->await(std::nullopt);
  const auto& member = batch->members[member_];
  if (member.error) std::rethrow_exception(member.error);
  if (batch->error) std::rethrow_exception(batch->error);
  const int64_t rows = rows_of(member.td);
  // A request alone in its batch gets the batch's TensorDict itself; the others, views of their
  // rows, taken here (on the caller's thread, not the worker's).
  if (member.start == 0 && rows == rows_of(batch->out)) return batch->out;
  if (batch->plain_views) {
    // Nothing requires grad, so the views skip autograd's view tracking (half the cost of a
    // row): no graph can reach them, and the rows of different callers do not overlap.
    const at::AutoDispatchBelowADInplaceOrView below_autograd;
    return batch->out.index({Slice(member.start, member.start + rows)});
  }
  return batch->out.index({Slice(member.start, member.start + rows)});
}

void BatchFuture::wait() const {
  if (!batch_) throw Error("BatchFuture: no result to wait for");
  batch_->await(std::nullopt);
}

std::future_status BatchFuture::wait_for_ns(std::chrono::nanoseconds timeout) const {
  if (!batch_) throw Error("BatchFuture: no result to wait for");
  return batch_->await(timeout) ? std::future_status::ready : std::future_status::timeout;
}

// ---- BatchRunner -------------------------------------------------------------------------------

BatchRunner::BatchRunner(std::shared_ptr<const TensorDictModuleBase> module,
                         BatchRunnerOptions options)
    : module_(std::move(module)), options_(options) {
  if (module_ == nullptr) throw Error("BatchRunner: the module is null");
  if (options_.max_batch < 1 || options_.max_queue < 1) {
    throw Error("BatchRunner: max_batch and max_queue must be at least 1");
  }
  worker_ = std::thread([this] { work(); });
}

BatchRunner::~BatchRunner() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  arrived_.notify_all();
  room_.notify_all();
  worker_.join();
  for (const auto& batch : queue_) {
    batch->error = std::make_exception_ptr(Error("BatchRunner: destroyed before the request ran"));
    batch->finish();
  }
}

BatchFuture BatchRunner::submit(TensorDict request) {
  if (request.ndim() < 1 || rows_of(request) < 1) {
    throw ShapeError("BatchRunner: a request needs a batch dim of at least one row (batch size " +
                     shape_str(request.batch_size()) + ")");
  }
  const int64_t rows = rows_of(request);
  std::shared_ptr<detail::RunnerBatch> batch;
  size_t member = 0;
  bool wake = false;  // the worker waits for a first batch, or for the oldest one to close
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (queued_ >= options_.max_queue) {
      const bool has_room = room_.wait_for(
          lock, options_.timeout, [this] { return stopping_ || queued_ < options_.max_queue; });
      if (!has_room) {
        throw TimeoutError("BatchRunner: the queue stayed full (" +
                           std::to_string(options_.max_queue) + " requests) for " +
                           std::to_string(options_.timeout.count()) + " ms");
      }
    }
    if (stopping_) throw Error("BatchRunner: submit during destruction");
    wake = queue_.empty();
    detail::RunnerBatch* open =
        queue_.empty() || queue_.back()->closed ? nullptr : queue_.back().get();
    if (open != nullptr && open->rows + rows > options_.max_batch) {
      open->closed = true;  // this request does not fit: it starts the next batch
      open = nullptr;
      wake = true;
    }
    if (open == nullptr) {
      queue_.push_back(std::make_shared<detail::RunnerBatch>());
      queue_.back()->members.reserve(initial_members(options_.max_batch));
    }
    batch = queue_.back();
    member = batch->members.size();
    batch->members.push_back({std::move(request), 0, nullptr});
    batch->rows += rows;
    if (batch->rows >= options_.max_batch) {
      batch->closed = true;
      wake = true;
    }
    ++queued_;
  }
  if (wake) arrived_.notify_one();
  return BatchFuture(std::move(batch), member);
}

TensorDict BatchRunner::run(TensorDict request) {
  BatchFuture result = submit(std::move(request));
  if (result.wait_for(options_.timeout) != std::future_status::ready) {
    throw TimeoutError("BatchRunner: no result within " + std::to_string(options_.timeout.count()) +
                       " ms");
  }
  return result.get();
}

BatchRunner::Stats BatchRunner::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void BatchRunner::work() {
  while (true) {
    std::shared_ptr<detail::RunnerBatch> batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      arrived_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      batch = queue_.front();
      if (!batch->closed) {  // wait for it to fill, at most max_delay from now
        arrived_.wait_for(lock, options_.max_delay, [&] { return stopping_ || batch->closed; });
        batch->closed = true;  // taken: later requests start a new batch
      }
      queue_.pop_front();
      queued_ -= batch->members.size();
    }
    room_.notify_all();
    run_batch(*batch);
  }
}

void BatchRunner::run_batch(detail::RunnerBatch& batch) {
  auto& members = batch.members;
  std::optional<at::NoGradGuard> no_grad;
  std::optional<c10::InferenceMode> inference;
  if (options_.grad_mode == RunnerGradMode::NoGrad) no_grad.emplace();
  if (options_.grad_mode == RunnerGradMode::Inference) inference.emplace();
  try {
    TensorDict joined;
    if (members.size() == 1) {
      joined = members.front().td.clone(false);  // the module writes into a copy, not the request
    } else {
      std::vector<TensorDict> inputs;
      inputs.reserve(members.size());
      for (const auto& member : members) inputs.push_back(member.td);
      try {
        joined = cat(inputs);
      } catch (...) {
        // The first request sets the layout; each one that does not concatenate with it fails
        // alone.
        inputs.resize(1);
        for (size_t i = 1; i < members.size(); ++i) {
          try {
            cat({members.front().td, members[i].td});
            inputs.push_back(members[i].td);
          } catch (...) {
            members[i].error = std::current_exception();
          }
        }
        joined = inputs.size() == 1 ? inputs.front().clone(false) : cat(inputs);
      }
    }
    Stats ran;
    ran.batches = 1;
    for (auto& member : members) {
      if (member.error) continue;
      member.start = ran.rows;
      ran.rows += rows_of(member.td);
      ran.requests += 1;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.batches += ran.batches;
      stats_.requests += ran.requests;
      stats_.rows += ran.rows;
    }
    batch.out = module_->forward(joined);
    batch.plain_views = true;
    for (const Value& value : batch.out.values(true, true)) {
      const at::Tensor* t = value.tensor_if();
      if (t != nullptr && t->requires_grad()) batch.plain_views = false;
    }
  } catch (...) {
    batch.error = std::current_exception();
  }
  batch.finish();
}

}  // namespace tensordict::nn
