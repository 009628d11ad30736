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
// What decides whether two requests may share a forward: every entry's key, kind, dtype,
// device and shape past the batch dim, and the request's batch dims past the first. Requests of
// one layout concatenate without an error and without type promotion, so one request can never
// change the dtype, or the failure, of another's result.
struct RequestLayout {
  struct Entry {
    std::string key;
    Value::Kind kind;
    int8_t dtype = -1;  // tensors only
    std::optional<at::Device> device;
    std::vector<int64_t> trailing;  // sizes past dim 0 (a nested TensorDict's batch size)

    bool operator==(const Entry& o) const {
      return key == o.key && kind == o.kind && dtype == o.dtype && device == o.device &&
             trailing == o.trailing;
    }
  };
  std::vector<int64_t> trailing;  // the request's batch dims past the first
  std::vector<Entry> entries;     // sorted by key

  explicit RequestLayout(const TensorDict& td)
      : trailing(td.batch_size().begin() + 1, td.batch_size().end()) {
    for (auto& [key, value] : td.items(true)) {
      Entry entry{key.repr(), value.kind(), -1, std::nullopt, {}};
      if (const at::Tensor* t = value.tensor_if()) {
        entry.dtype = static_cast<int8_t>(t->scalar_type());
        entry.device = t->device();
      } else if (value.is_tensordict()) {
        entry.device = value.tensordict().device();
      }
      if (auto shape = value.shape(); shape && !shape->empty()) {
        entry.trailing.assign(shape->begin() + 1, shape->end());
      }
      entries.push_back(std::move(entry));
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.key < b.key; });
  }
  bool operator==(const RequestLayout& o) const {
    return trailing == o.trailing && entries == o.entries;
  }
};

struct RunnerBatch {
  struct Member {
    TensorDict td;
    size_t output = 0;         // the forward that answered it: an index into `outputs`
    int64_t start = 0;         // its first row there
    std::exception_ptr error;  // this request failed, on its own
  };
  // One forward's result, with whether its rows need autograd views.
  struct Output {
    TensorDict td;
    bool plain_views = false;  // no tensor requires grad: rows need no autograd views
  };
  explicit RunnerBatch(RequestLayout shared_layout) : layout(std::move(shared_layout)) {}

  const RequestLayout layout;  // that of every member
  std::vector<Member> members;
  int64_t rows = 0;
  bool closed = false;  // no more requests join (under the runner's lock)

  // One forward for all members, or, when that failed, one per part that succeeded alone.
  std::vector<Output> outputs;
  std::exception_ptr error;  // the whole batch failed (the runner was destroyed)

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
  const auto& output = batch->outputs[member.output];
  const int64_t rows = rows_of(member.td);
  // A request alone in its forward gets its TensorDict itself; the others, views of their rows,
  // taken here (on the caller's thread, not the worker's).
  if (member.start == 0 && rows == rows_of(output.td)) return output.td;
  if (output.plain_views) {
    // Nothing requires grad, so the views skip autograd's view tracking (half the cost of a
    // row): no graph can reach them, and the rows of different callers do not overlap.
    const at::AutoDispatchBelowADInplaceOrView below_autograd;
    return output.td.index({Slice(member.start, member.start + rows)});
  }
  return output.td.index({Slice(member.start, member.start + rows)});
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
  open_.clear();
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
  detail::RequestLayout layout(request);  // outside the lock
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
    const auto open = std::find_if(open_.begin(), open_.end(),
                                   [&](const auto& b) { return b->layout == layout; });
    if (open != open_.end()) batch = *open;
    if (batch != nullptr && batch->rows + rows > options_.max_batch) {
      close(*batch);  // this request does not fit: it starts the next batch of its layout
      batch = nullptr;
      wake = true;
    }
    if (batch == nullptr) {
      batch = std::make_shared<detail::RunnerBatch>(std::move(layout));
      batch->members.reserve(initial_members(options_.max_batch));
      queue_.push_back(batch);
      open_.push_back(batch);
    }
    member = batch->members.size();
    batch->members.push_back({std::move(request), 0, 0, nullptr});
    batch->rows += rows;
    if (batch->rows >= options_.max_batch) {
      close(*batch);
      wake = true;
    }
    ++queued_;
  }
  if (wake) arrived_.notify_one();
  return BatchFuture(std::move(batch), member);
}

void BatchRunner::close(detail::RunnerBatch& batch) {
  batch.closed = true;
  open_.erase(
      std::remove_if(open_.begin(), open_.end(), [&](const auto& b) { return b.get() == &batch; }),
      open_.end());
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
        if (!batch->closed) close(*batch);  // taken: later requests start a new batch
      }
      queue_.pop_front();
      queued_ -= batch->members.size();
    }
    room_.notify_all();
    run_batch(*batch);
  }
}

void BatchRunner::run_batch(detail::RunnerBatch& batch) {
  std::optional<at::NoGradGuard> no_grad;
  std::optional<c10::InferenceMode> inference;
  if (options_.grad_mode == RunnerGradMode::NoGrad) no_grad.emplace();
  if (options_.grad_mode == RunnerGradMode::Inference) inference.emplace();
  Stats ran;
  run_members(batch, 0, batch.members.size(), ran);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.batches += ran.batches;
    stats_.requests += ran.requests;
    stats_.rows += ran.rows;
  }
  batch.finish();
}

void BatchRunner::run_members(detail::RunnerBatch& batch, size_t begin, size_t end,
                              Stats& ran) const {
  auto& members = batch.members;
  try {
    TensorDict joined;
    if (end - begin == 1) {
      joined = members[begin].td.clone(false);  // the module writes into a copy, not the request
    } else {
      std::vector<TensorDict> inputs;
      inputs.reserve(end - begin);
      for (size_t i = begin; i < end; ++i) inputs.push_back(members[i].td);
      joined = cat(inputs);
    }
    detail::RunnerBatch::Output output{module_->forward(joined), true};
    // Each request's answer is its rows of the output, which must have the input's rows (not so
    // a module writing into a new TensorDict, WriteTo::NewTensorDict: its batch size is []).
    const BatchSize& out_batch = output.td.batch_size();
    if (out_batch.empty() || out_batch[0] != rows_of(joined)) {
      throw ShapeError("BatchRunner: the module returned a TensorDict of batch size " +
                       shape_str(out_batch) + " for " + std::to_string(rows_of(joined)) +
                       " rows, which cannot be split among the requests (a module that writes "
                       "with WriteTo::NewTensorDict returns batch size []: use WriteTo::Input or "
                       "WriteTo::EmptyLike)");
    }
    for (const Value& value : output.td.values(true, true)) {
      const at::Tensor* t = value.tensor_if();
      if (t != nullptr && t->requires_grad()) output.plain_views = false;
    }
    int64_t start = 0;
    for (size_t i = begin; i < end; ++i) {
      members[i].output = batch.outputs.size();
      members[i].start = start;
      start += rows_of(members[i].td);
    }
    batch.outputs.push_back(std::move(output));
    ran.batches += 1;
    ran.requests += static_cast<int64_t>(end - begin);
    ran.rows += start;
  } catch (...) {
    // Which request failed is unknown: each half runs on its own, down to single requests,
    // which fail with their own error.
    if (end - begin == 1) {
      members[begin].error = std::current_exception();
      return;
    }
    const size_t middle = begin + (end - begin) / 2;
    run_members(batch, begin, middle, ran);
    run_members(batch, middle, end, ran);
  }
}

}  // namespace tensordict::nn
