// BatchRunner: callers get their own rows; requests are batched up to max_batch, by layout; a
// request that fails (alone or in a batch) fails only its caller; every wait is bounded; a
// destroyed runner fails what it did not run. A gate (a module that waits until released) makes
// the batching deterministic: requests queue while the batch before them runs.
// Before Catch: torch's headers bring glog's CHECK, which Catch's must replace.
#include "catch2_compat.h"
#include "tensordict/nn/batch_runner.h"

#include <torch/nn/modules/linear.h>

#include <atomic>
#include <deque>
#include <future>
#include <thread>

using namespace tensordict;
using namespace tensordict::nn;
using namespace std::chrono_literals;
using Catch::Matchers::ContainsSubstring;

namespace {

// A module computing y = 2 * obs + 1 that records each batch's rows and, while closed, waits.
struct Gate {
  std::mutex mutex;
  std::condition_variable opened;
  bool open = true;
  std::vector<int64_t> batch_rows;

  // Closes the gate and forgets the batches so far.
  void close() {
    std::lock_guard<std::mutex> lock(mutex);
    open = false;
    batch_rows.clear();
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      open = true;
    }
    opened.notify_all();
  }
  std::shared_ptr<TensorDictModule> module() {
    return std::make_shared<TensorDictModule>(
        [this](const at::Tensor& obs) {
          std::unique_lock<std::mutex> lock(mutex);
          batch_rows.push_back(obs.size(0));
          opened.wait(lock, [this] { return open; });
          if (obs.isnan().any().item<bool>()) throw std::runtime_error("NaN in the batch");
          return obs * 2 + 1;
        },
        std::vector<NestedKey>{"obs"}, std::vector<NestedKey>{"y"}, "gate");
  }
};

TensorDict request(float value, int64_t rows = 1) {
  return TensorDict({{"obs", at::full({rows, 3}, value)}}, {rows});
}

// Waits until the worker is inside the module with its first batch since close().
void wait_for_first_batch(Gate& gate) {
  while (true) {
    {
      std::lock_guard<std::mutex> lock(gate.mutex);
      if (!gate.batch_rows.empty()) return;
    }
    std::this_thread::sleep_for(1ms);
  }
}

// Closes the gate and submits a first request, returning once the worker holds it inside the
// module: requests submitted next queue behind it.
BatchFuture hold_first_batch(BatchRunner& runner, Gate& gate) {
  gate.close();
  BatchFuture first = runner.submit(request(0));
  wait_for_first_batch(gate);
  return first;
}

// `clients` threads, each submitting `requests` requests (submit(client, i) returns the
// in-flight record) and checking each (check(record)) once `in_flight` of its requests are out.
template <class Submit, class Check>
void run_clients(int clients, int requests, size_t in_flight, Submit submit, Check check) {
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      std::deque<decltype(submit(c, 0))> window;
      for (int i = 0; i < requests; ++i) {
        window.push_back(submit(c, i));
        if (window.size() == in_flight) {
          check(window.front());
          window.pop_front();
        }
      }
      for (auto& rest : window) check(rest);
    });
  }
  for (auto& thread : threads) thread.join();
}

}  // namespace

TEST_CASE("every caller gets its own rows of one batched forward", "[nn][batch_runner]") {
  Gate gate;
  BatchRunnerOptions options;
  options.max_batch = 64;
  options.max_delay = 1000us;
  BatchRunner runner(gate.module(), options);
  auto first = hold_first_batch(runner, gate);
  std::vector<BatchFuture> results;
  for (int i = 1; i <= 10; ++i) results.push_back(runner.submit(request(float(i), i % 3 + 1)));
  gate.release();
  CHECK(first.get().get("y").equal(at::full({1, 3}, 1.0F)));
  for (int i = 1; i <= 10; ++i) {
    TensorDict out = results[size_t(i - 1)].get();
    const int64_t rows = i % 3 + 1;
    CHECK(out.batch_size() == BatchSize{rows});
    CHECK(out.get("obs").equal(at::full({rows, 3}, float(i))));
    CHECK(out.get("y").equal(at::full({rows, 3}, 2.0F * float(i) + 1)));
  }
  CHECK(gate.batch_rows == std::vector<int64_t>{1, 20});  // 10 requests, 20 rows: one forward
  const auto stats = runner.stats();
  CHECK(stats.batches == 2);
  CHECK(stats.requests == 11);
  CHECK(stats.rows == 21);
}

TEST_CASE("a module whose output has not the batch's rows fails each request, not the process",
          "[nn][batch_runner]") {
  auto plus = std::make_shared<TensorDictModule>([](const at::Tensor& x) { return x + 1; },
                                                 std::vector<NestedKey>{"obs"},
                                                 std::vector<NestedKey>{"y"}, "plus");
  plus->write_to(WriteTo::NewTensorDict);  // Python's inplace=False: batch size []
  BatchRunner runner(plus);
  CHECK_THROWS_WITH(runner.run(request(1.0F, 2)),
                    ContainsSubstring("the module returned a TensorDict of batch size [] for 2 "
                                      "rows, which cannot be split among the requests"));
  plus->write_to(WriteTo::EmptyLike);
  CHECK(runner.run(request(1.0F, 2)).get("y").equal(at::full({2, 3}, 2.0F)));
}

TEST_CASE("batches hold at most max_batch rows", "[nn][batch_runner]") {
  Gate gate;
  BatchRunnerOptions options;
  options.max_batch = 4;
  BatchRunner runner(gate.module(), options);
  gate.close();
  std::vector<BatchFuture> results;
  results.push_back(runner.submit(request(0)));
  wait_for_first_batch(gate);
  for (int i = 0; i < 10; ++i) results.push_back(runner.submit(request(1)));
  results.push_back(runner.submit(request(1, 6)));  // larger than max_batch: runs alone
  gate.release();
  for (auto& result : results) result.get();
  CHECK(gate.batch_rows == std::vector<int64_t>{1, 4, 4, 2, 6});
}

TEST_CASE("requests of another layout run apart, and a failing request fails alone",
          "[nn][batch_runner]") {
  Gate gate;
  BatchRunner runner(gate.module());
  auto first = hold_first_batch(runner, gate);
  auto good = runner.submit(request(1));
  auto wide = runner.submit(TensorDict({{"obs", at::ones({1, 5})}}, {1}));
  auto doubles = runner.submit(TensorDict({{"obs", at::full({1, 3}, 2.0, at::kDouble)}}, {1}));
  auto also_good = runner.submit(request(2));
  gate.release();
  CHECK(first.get().get("y").equal(at::ones({1, 3})));
  CHECK(good.get().get("y").equal(at::full({1, 3}, 3.0F)));
  CHECK(also_good.get().get("y").equal(at::full({1, 3}, 5.0F)));
  CHECK(wide.get().get("y").equal(at::full({1, 5}, 3.0F)));
  // The float64 request neither promotes the float32 ones nor is demoted by them.
  CHECK(doubles.get().get("y").equal(at::full({1, 3}, 5.0, at::kDouble)));
  CHECK(gate.batch_rows == std::vector<int64_t>{1, 2, 1, 1});

  auto blocker = hold_first_batch(runner, gate);
  auto before = runner.submit(request(3));
  auto bad = runner.submit(request(std::nanf("")));
  auto after = runner.submit(request(4));
  gate.release();
  blocker.get();
  CHECK_THROWS_WITH(bad.get(), ContainsSubstring("NaN in the batch"));
  CHECK(before.get().get("y").equal(at::full({1, 3}, 7.0F)));
  CHECK(after.get().get("y").equal(at::full({1, 3}, 9.0F)));
  // The batch of 3 failed; its halves ran alone: [before] and [bad, after], then bad and after.
  CHECK(gate.batch_rows == std::vector<int64_t>{1, 3, 1, 2, 1, 1});
  CHECK(runner.run(request(5)).get("y").equal(at::full({1, 3}, 11.0F)));  // the runner goes on
}

TEST_CASE("with 8 clients and one bad request in 7, every request gets its own answer",
          "[nn][batch_runner]") {
  torch::nn::Linear linear(3, 2);
  auto module = std::make_shared<TensorDictModule>(
      [linear](const at::Tensor& obs) mutable {
        if (obs.isnan().any().item<bool>()) throw std::runtime_error("a poisoned row");
        return linear->forward(obs);
      },
      std::vector<NestedKey>{"obs"}, std::vector<NestedKey>{"y"}, "policy");
  BatchRunnerOptions options;
  options.max_batch = 16;
  options.max_delay = 200us;
  BatchRunner runner(module, options);
  constexpr int kClients = 8;
  constexpr int kRequests = 140;
  constexpr size_t kInFlight = 3;
  // Request i of a client: every 7th is bad, in turn float64, 5 columns wide, or poisoned; every
  // 7th + 3 carries an extra key, which the module ignores and the result keeps.
  struct Sent {
    at::Tensor obs;
    std::string error;  // what the bad one's error must say; empty for a good one
    bool extra = false;
    BatchFuture result;
  };
  auto make = [&](int c, int i) {
    Sent sent;
    sent.obs = at::full({1, 3}, static_cast<float>(c * kRequests + i) / 100.0F);
    if (i % 7 == 0) {
      switch ((i / 7) % 3) {
        case 0:
          sent.obs = sent.obs.to(at::kDouble);
          sent.error = "same dtype";
          break;
        case 1:
          sent.obs = at::ones({1, 5});
          sent.error = "cannot be multiplied";
          break;
        default:
          sent.obs[0][1] = std::nanf("");
          sent.error = "a poisoned row";
      }
    }
    TensorDict td({{"obs", sent.obs}}, {1});
    if (i % 7 == 3) {
      sent.extra = true;
      td.set("extra", at::full({1}, i));
    }
    sent.result = runner.submit(td);
    return sent;
  };
  std::atomic<int> wrong{0};
  std::atomic<int> bad_answered{0};
  std::atomic<int> good_answered{0};
  auto check = [&](Sent& sent) {
    if (!sent.error.empty()) {
      try {
        sent.result.get();
        ++wrong;  // a bad request got a result
      } catch (const std::exception& e) {
        const bool own = std::string(e.what()).find(sent.error) != std::string::npos;
        ++(own ? bad_answered : wrong);
      }
      return;
    }
    TensorDict out = sent.result.get();
    const at::Tensor expected = linear->forward(sent.obs).detach();
    const at::Tensor y = out.get("y");
    if (y.scalar_type() != at::kFloat || !at::allclose(y, expected, 1e-6, 1e-6) ||
        out.contains("extra") != sent.extra) {
      ++wrong;
    } else {
      ++good_answered;
    }
  };
  run_clients(kClients, kRequests, kInFlight, make, check);
  CHECK(wrong == 0);
  CHECK(bad_answered == kClients * 20);  // i = 0, 7, ..., 133
  CHECK(good_answered == kClients * (kRequests - 20));
  CHECK(runner.stats().requests == kClients * (kRequests - 20));
}

TEST_CASE("every wait is bounded", "[nn][batch_runner]") {
  Gate gate;
  BatchRunnerOptions options;
  options.max_queue = 1;
  options.timeout = 50ms;
  BatchRunner runner(gate.module(), options);
  auto running = hold_first_batch(runner, gate);
  CHECK_THROWS_AS(runner.run(request(1)), TimeoutError);  // queued, but never run in time
  CHECK_THROWS_AS(runner.submit(request(2)), TimeoutError);
  CHECK_THROWS_WITH(runner.submit(request(2)),
                    "BatchRunner: the queue stayed full (1 requests) "
                    "for 50 ms");
  gate.release();
  running.get();
}

TEST_CASE("requests need a batch dim, and a destroyed runner fails what it did not run",
          "[nn][batch_runner]") {
  Gate gate;
  BatchFuture queued;
  BatchFuture running;
  std::thread release;
  {
    BatchRunner runner(gate.module());
    CHECK_THROWS_AS(runner.submit(TensorDict({{"obs", at::ones({3})}}, {})), ShapeError);
    running = hold_first_batch(runner, gate);
    queued = runner.submit(request(1));
    release = std::thread([&] {
      std::this_thread::sleep_for(20ms);
      gate.release();
    });
  }  // the batch in flight ends, then the queue is failed
  release.join();
  CHECK(running.get().get("y").equal(at::ones({1, 3})));
  CHECK_THROWS_WITH(queued.get(), "BatchRunner: destroyed before the request ran");
}

TEST_CASE("callers of one batch get views of its result, and a future gives its result once",
          "[nn][batch_runner]") {
  Gate gate;
  BatchRunner runner(gate.module());
  auto first = hold_first_batch(runner, gate);
  BatchFuture a = runner.submit(request(1));
  BatchFuture b = runner.submit(request(2, 2));
  CHECK(a.valid());
  CHECK(a.wait_for(1ms) == std::future_status::timeout);  // its batch has not run
  gate.release();
  first.get();
  b.wait();
  CHECK(a.wait_for(0ms) == std::future_status::ready);  // same batch as b
  TensorDict out_a = a.get();
  TensorDict out_b = b.get();
  CHECK_FALSE(a.valid());
  CHECK_THROWS_AS(a.get(), Error);
  CHECK_THROWS_AS(BatchFuture().get(), Error);
  CHECK(gate.batch_rows == std::vector<int64_t>{1, 3});
  // Rows 0 and 1-2 of the batch's output: one storage, no copy per caller.
  CHECK(out_a.get("y").equal(at::full({1, 3}, 3.0F)));
  CHECK(out_b.get("y").equal(at::full({2, 3}, 5.0F)));
  CHECK(out_a.get("y").is_alias_of(out_b.get("y")));
  CHECK(out_b.get("y").storage_offset() == 3);
  CHECK(out_b.batch_size() == BatchSize{2});
}

TEST_CASE("forwards run without grad by default, or in the grad mode the options name",
          "[nn][batch_runner]") {
  auto linear = torch::nn::Linear(3, 2);  // parameters require grad
  auto module = std::make_shared<TensorDictModule>(linear, std::vector<NestedKey>{"obs"},
                                                   std::vector<NestedKey>{"y"});
  const TensorDict one({{"obs", at::ones({1, 3})}}, {1});
  const at::Tensor expected = linear->forward(at::ones({1, 3})).detach();

  BatchRunner no_grad(module);
  CHECK(no_grad.options().grad_mode == RunnerGradMode::NoGrad);
  TensorDict out = no_grad.run(one);
  CHECK_FALSE(out.get("y").requires_grad());
  CHECK_FALSE(out.get("y").is_inference());
  CHECK(out.get("y").allclose(expected));

  BatchRunnerOptions options;
  options.grad_mode = RunnerGradMode::Inference;
  BatchRunner inference(module, options);
  out = inference.run(one);
  CHECK(out.get("y").is_inference());
  CHECK(out.get("y").allclose(expected));

  options.grad_mode = RunnerGradMode::Enabled;
  BatchRunner enabled(module, options);
  out = enabled.run(one);
  CHECK(out.get("y").requires_grad());
  out.get("y").sum().backward();
  CHECK(linear->weight.grad().equal(at::ones({2, 3})));
}

TEST_CASE("many clients with several requests in flight each get their own answers",
          "[nn][batch_runner]") {
  auto module = std::make_shared<TensorDictModule>(
      [](const at::Tensor& obs) { return obs * 2 + 1; }, std::vector<NestedKey>{"obs"},
      std::vector<NestedKey>{"y"});
  BatchRunnerOptions options;
  options.max_batch = 16;
  options.max_delay = 100us;
  BatchRunner runner(module, options);
  constexpr int kClients = 6;
  constexpr int kRequests = 200;
  constexpr size_t kInFlight = 5;
  std::atomic<int> wrong{0};
  run_clients(
      kClients, kRequests, kInFlight,
      [&](int c, int i) {
        const auto v = static_cast<float>(c * kRequests + i);
        return std::make_pair(v, runner.submit(request(v)));
      },
      [&](std::pair<float, BatchFuture>& oldest) {
        TensorDict out = oldest.second.get();
        const float v = oldest.first;
        if (!out.get("obs").equal(at::full({1, 3}, v)) ||
            !out.get("y").equal(at::full({1, 3}, 2 * v + 1))) {
          ++wrong;
        }
      });
  CHECK(wrong == 0);
  const auto stats = runner.stats();
  CHECK(stats.requests == kClients * kRequests);
  CHECK(stats.rows == kClients * kRequests);
  CHECK(stats.batches <= stats.requests);
  CHECK(stats.rows <= stats.batches * options.max_batch);
}
