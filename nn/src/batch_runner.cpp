// BatchRunner (tensordict/nn/batch_runner.h): one worker thread gathering requests into batches.
#include "tensordict/nn/batch_runner.h"

#include <exception>
#include <string>
#include <utility>

namespace tensordict::nn {
namespace {

int64_t rows_of(const TensorDict& td) { return td.batch_size()[0]; }

template <class Requests>
std::vector<TensorDict> inputs_of(const Requests& requests) {
  std::vector<TensorDict> inputs;
  inputs.reserve(requests.size());
  for (const auto* request : requests) inputs.push_back(request->td);
  return inputs;
}

}  // namespace

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
  for (Request& request : queue_) {
    request.result.set_exception(
        std::make_exception_ptr(Error("BatchRunner: destroyed before the request ran")));
  }
}

std::future<TensorDict> BatchRunner::submit(TensorDict request) {
  if (request.ndim() < 1 || rows_of(request) < 1) {
    throw ShapeError("BatchRunner: a request needs a batch dim of at least one row (batch size " +
                     shape_str(request.batch_size()) + ")");
  }
  Request entry{std::move(request), {}};
  std::future<TensorDict> result = entry.result.get_future();
  {
    std::unique_lock<std::mutex> lock(mutex_);
    const bool has_room = room_.wait_for(
        lock, options_.timeout, [this] { return stopping_ || queue_.size() < options_.max_queue; });
    if (stopping_) throw Error("BatchRunner: submit during destruction");
    if (!has_room) {
      throw TimeoutError("BatchRunner: the queue stayed full (" +
                         std::to_string(options_.max_queue) + " requests) for " +
                         std::to_string(options_.timeout.count()) + " ms");
    }
    queue_.push_back(std::move(entry));
  }
  arrived_.notify_one();
  return result;
}

TensorDict BatchRunner::run(TensorDict request) {
  std::future<TensorDict> result = submit(std::move(request));
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

// The requests of the next batch: waits for a first one, then for more until max_batch rows or
// max_delay after the first was taken. Empty when stopping.
std::vector<BatchRunner::Request> BatchRunner::next_batch() {
  std::vector<Request> batch;
  std::unique_lock<std::mutex> lock(mutex_);
  arrived_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
  if (stopping_) return batch;
  const auto deadline = std::chrono::steady_clock::now() + options_.max_delay;
  int64_t rows = 0;
  while (true) {
    while (!queue_.empty() &&
           (batch.empty() || rows + rows_of(queue_.front().td) <= options_.max_batch)) {
      rows += rows_of(queue_.front().td);
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    room_.notify_all();
    if (rows >= options_.max_batch || !queue_.empty()) break;  // full, or the next does not fit
    if (!arrived_.wait_until(lock, deadline, [this] { return stopping_ || !queue_.empty(); })) {
      break;
    }
    if (stopping_) break;
  }
  return batch;
}

void BatchRunner::work() {
  while (true) {
    std::vector<Request> batch = next_batch();
    if (batch.empty()) return;
    run_batch(batch);
  }
}

void BatchRunner::run_batch(std::vector<Request>& batch) {
  std::vector<Request*> members;
  for (Request& request : batch) members.push_back(&request);
  TensorDict joined;
  try {
    joined = members.size() == 1 ? members.front()->td.clone(false) : cat(inputs_of(members));
  } catch (...) {
    // The first request sets the layout; each one that does not concatenate with it fails alone.
    std::vector<Request*> fitting{members.front()};
    for (size_t i = 1; i < members.size(); ++i) {
      try {
        cat({members.front()->td, members[i]->td});
        fitting.push_back(members[i]);
      } catch (...) {
        members[i]->result.set_exception(std::current_exception());
      }
    }
    members = std::move(fitting);
    joined = cat(inputs_of(members));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.batches += 1;
    stats_.requests += static_cast<int64_t>(members.size());
    for (Request* request : members) stats_.rows += rows_of(request->td);
  }
  try {
    TensorDict out = module_->forward(joined);
    int64_t start = 0;
    for (Request* request : members) {
      const int64_t rows = rows_of(request->td);
      request->result.set_value(out.index({Slice(start, start + rows)}));
      start += rows;
    }
  } catch (...) {
    for (Request* request : members) request->result.set_exception(std::current_exception());
  }
}

}  // namespace tensordict::nn
