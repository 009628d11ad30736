// TensorClass::nn against the same work done by hand (docs/performance.md, "Models"). Every
// benchmark comes in pairs run in the same process, BM_<what>/tensordict/<batch> against
// BM_<what>/raw/<batch> (the names bench/ratios.py reads):
//   - BM_mlp: a TensorDictModule over a torch::nn::Sequential MLP (32-64-8) on {"obs": [B, 32]}
//     vs mlp->forward(obs) stored by hand;
//   - BM_call (no target): the same over a callable returning its input, the fixed cost of a call;
//   - BM_script: a TensorDictModule over a TorchScript module whose forward takes and returns a
//     Dict[str, Tensor] vs building the c10::Dict by hand, forward, and reading the outputs back;
//   - BM_runner/<model>: BatchRunner throughput, 8 client threads submitting batch-1 requests
//     (1, 8 or 16 in flight each), vs one caller running batch-64 forwards of the same
//     TensorDictModule directly (rows/s counters; p50/p99 per-request latency in µs), for a tiny
//     MLP and a serving-sized one.
// All under at::set_num_threads(1), the torch::nn and TorchScript models in eval mode, no grad.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tensordict/nn/batch_runner.h"
#include "tensordict/nn/module.h"
#include "tensordict/nn/script.h"

namespace {

using tensordict::NestedKey;
using tensordict::TensorDict;
using tensordict::nn::BatchFuture;
using tensordict::nn::BatchRunner;
using tensordict::nn::BatchRunnerOptions;
using tensordict::nn::TensorDictModule;
using Clock = std::chrono::steady_clock;

// ---- 1. TensorDictModule over a torch::nn MLP ------------------------------------------------

struct Mlp {
  torch::nn::Sequential net{torch::nn::Linear(32, 64), torch::nn::ReLU(), torch::nn::Linear(64, 8)};
  TensorDictModule module{net, std::vector<NestedKey>{"obs"}, std::vector<NestedKey>{"out"}};
  Mlp() { net->eval(); }
};

Mlp& mlp() {
  static Mlp model;
  return model;
}

void mlp_tensordict(benchmark::State& state, int64_t batch) {
  at::NoGradGuard no_grad;
  const Mlp& m = mlp();
  TensorDict td({{"obs", at::randn({batch, 32})}}, {batch});
  for (auto _ : state) {
    TensorDict out = m.module(td);  // writes td["out"]
    benchmark::DoNotOptimize(out);
  }
}

void mlp_raw(benchmark::State& state, int64_t batch) {
  at::NoGradGuard no_grad;
  Mlp& m = mlp();
  const at::Tensor obs = at::randn({batch, 32});
  std::vector<at::Tensor> outputs(1);
  for (auto _ : state) {
    outputs[0] = m.net->forward(obs);
    benchmark::DoNotOptimize(outputs.data());
  }
}

// The fixed cost of a call (no target): a TensorDictModule over a callable that returns its input
// vs calling the same callable by hand. What it adds to any module, whatever the model costs.
at::Tensor identity(const at::Tensor& x) { return x; }

void call_tensordict(benchmark::State& state, int64_t batch) {
  const TensorDictModule module(identity, std::vector<NestedKey>{"obs"},
                                std::vector<NestedKey>{"out"});
  TensorDict td({{"obs", at::randn({batch, 32})}}, {batch});
  for (auto _ : state) {
    TensorDict out = module(td);
    benchmark::DoNotOptimize(out);
  }
}

void call_raw(benchmark::State& state, int64_t batch) {
  const std::function<at::Tensor(const at::Tensor&)> fn = identity;  // not inlined, as a module
  const at::Tensor obs = at::randn({batch, 32});
  std::vector<at::Tensor> outputs(1);
  for (auto _ : state) {
    outputs[0] = fn(obs);
    benchmark::DoNotOptimize(outputs.data());
  }
}

// ---- 2. TensorDictModule over a TorchScript dict policy ---------------------------------------

// Linear 32 -> 8 as matmul + bias, and the argmax: small enough for the dict handling to show.
struct ScriptPolicy {
  torch::jit::Module module{"Policy"};
  TensorDictModule actor;
  ScriptPolicy() : actor(build(module), {"obs"}, {"logits", "action"}) {}

  static const torch::jit::Module& build(torch::jit::Module& policy) {
    policy.register_parameter("weight", at::randn({32, 8}), false);
    policy.register_parameter("bias", at::randn({8}), false);
    policy.define(R"(
def forward(self, td: Dict[str, Tensor]) -> Dict[str, Tensor]:
    logits = torch.matmul(td["obs"], self.weight) + self.bias
    out: Dict[str, Tensor] = {}
    out["logits"] = logits
    out["action"] = torch.argmax(logits, -1)
    return out
)");
    policy.eval();
    return policy;
  }
};

ScriptPolicy& script_policy() {
  static ScriptPolicy policy;
  return policy;
}

void script_tensordict(benchmark::State& state, int64_t batch) {
  at::NoGradGuard no_grad;
  const ScriptPolicy& p = script_policy();
  TensorDict td({{"obs", at::randn({batch, 32})}}, {batch});
  for (auto _ : state) {
    TensorDict out = p.actor(td);  // writes td["logits"], td["action"]
    benchmark::DoNotOptimize(out);
  }
}

void script_raw(benchmark::State& state, int64_t batch) {
  at::NoGradGuard no_grad;
  ScriptPolicy& p = script_policy();
  const at::Tensor obs = at::randn({batch, 32});
  at::Tensor logits;
  at::Tensor action;
  for (auto _ : state) {
    c10::Dict<std::string, at::Tensor> dict;
    dict.insert("obs", obs);
    const c10::IValue result = p.module.forward({dict});
    const auto out = result.toGenericDict();
    logits = out.at("logits").toTensor();
    action = out.at("action").toTensor();
    benchmark::DoNotOptimize(logits);
    benchmark::DoNotOptimize(action);
  }
}

// ---- 3. BatchRunner --------------------------------------------------------------------------

constexpr int kClients = 8;
constexpr int64_t kMaxBatch = 64;

// The runner's models, MLPs on {"obs": [B, in]} writing "logits" [B, 8]:
//   - tiny: 32-32-32-8, a batch-64 forward of some tens of µs with the reference BLAS that
//     Debian's libtorch uses here: the per-request cost of the runner shows;
//   - serving: 128-256-256-8, the issue's model, a few ms per batch-64 forward there.
// Parameters require grad, as trained ones do: the runner's forwards run under its default
// RunnerGradMode::NoGrad, the direct ones under the caller's NoGradGuard.
struct RunnerModel {
  int64_t in = 0;
  std::shared_ptr<const TensorDictModule> module;
};

RunnerModel make_runner_model(int64_t in, int64_t hidden) {
  torch::nn::Sequential net(torch::nn::Linear(in, hidden), torch::nn::ReLU(),
                            torch::nn::Linear(hidden, hidden), torch::nn::ReLU(),
                            torch::nn::Linear(hidden, 8));
  net->eval();
  return {in, std::make_shared<const TensorDictModule>(net, std::vector<NestedKey>{"obs"},
                                                       std::vector<NestedKey>{"logits"})};
}

const RunnerModel& runner_model(const std::string& name) {
  static const RunnerModel tiny = make_runner_model(32, 32);
  static const RunnerModel serving = make_runner_model(128, 256);
  return name == "tiny" ? tiny : serving;
}

// One caller, forwards of `batch` rows.
void runner_direct(benchmark::State& state, const std::string& model, int64_t batch) {
  at::NoGradGuard no_grad;
  const RunnerModel& m = runner_model(model);
  TensorDict td({{"obs", at::randn({batch, m.in})}}, {batch});
  for (auto _ : state) {
    TensorDict out = (*m.module)(td);
    benchmark::DoNotOptimize(out);
  }
  state.counters["rows_per_s"] = benchmark::Counter(static_cast<double>(state.iterations() * batch),
                                                    benchmark::Counter::kIsRate);
}

// What the client threads of one benchmark run share: the runner (made by thread 0 before the
// timed loop, whose start is a barrier of all threads; destroyed by the last thread to finish)
// and every request's latency, for the percentiles that last thread computes.
struct RunnerShared {
  std::unique_ptr<BatchRunner> runner;
  std::mutex mutex;
  std::vector<double> latencies_us;
  int finished = 0;
};

RunnerShared& runner_shared() {
  static RunnerShared shared;
  return shared;
}

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto i = std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()));
  return sorted[i];
}

// kClients threads, each keeping `in_flight` batch-1 requests submitted: an iteration waits for
// the client's oldest request and submits a new one (in_flight 1 is run() in a loop). Latency:
// submit() to the result in hand. Requests still in flight when the timed loop ends are not
// counted.
void runner_clients(benchmark::State& state, const std::string& model, int in_flight,
                    std::chrono::microseconds delay) {
  RunnerShared& shared = runner_shared();
  const RunnerModel& m = runner_model(model);
  if (state.thread_index() == 0) {
    BatchRunnerOptions options;
    options.max_batch = kMaxBatch;
    options.max_delay = delay;
    shared.runner = std::make_unique<BatchRunner>(m.module, options);
    shared.latencies_us.clear();
    shared.finished = 0;
  }
  const TensorDict request({{"obs", at::randn({1, m.in})}}, {1});
  std::vector<double> latencies;
  std::deque<std::pair<Clock::time_point, BatchFuture>> pending;
  for (auto _ : state) {
    while (static_cast<int>(pending.size()) < in_flight) {
      pending.emplace_back(Clock::now(), shared.runner->submit(request));
    }
    TensorDict out = pending.front().second.get();
    latencies.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - pending.front().first).count());
    pending.pop_front();
    benchmark::DoNotOptimize(out);
  }
  for (auto& rest : pending) rest.second.get();  // untimed
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  std::lock_guard<std::mutex> lock(shared.mutex);
  shared.latencies_us.insert(shared.latencies_us.end(), latencies.begin(), latencies.end());
  if (++shared.finished < state.threads()) return;
  // The last thread out: every request has been answered. Counters are summed over the threads,
  // so only this one sets these.
  std::sort(shared.latencies_us.begin(), shared.latencies_us.end());
  state.counters["p50_us"] = percentile(shared.latencies_us, 0.50);
  state.counters["p99_us"] = percentile(shared.latencies_us, 0.99);
  const BatchRunner::Stats stats = shared.runner->stats();
  state.counters["rows_per_batch"] =
      stats.batches ? static_cast<double>(stats.rows) / static_cast<double>(stats.batches) : 0;
  shared.runner.reset();
}

// ---- registration ----------------------------------------------------------------------------

void register_all() {
  for (int64_t batch : {64, 1}) {
    const std::string suffix = "/" + std::to_string(batch);
    benchmark::RegisterBenchmark(("BM_mlp/tensordict" + suffix).c_str(),
                                 [batch](benchmark::State& s) { mlp_tensordict(s, batch); });
    benchmark::RegisterBenchmark(("BM_mlp/raw" + suffix).c_str(),
                                 [batch](benchmark::State& s) { mlp_raw(s, batch); });
    benchmark::RegisterBenchmark(("BM_call/tensordict" + suffix).c_str(),
                                 [batch](benchmark::State& s) { call_tensordict(s, batch); });
    benchmark::RegisterBenchmark(("BM_call/raw" + suffix).c_str(),
                                 [batch](benchmark::State& s) { call_raw(s, batch); });
    benchmark::RegisterBenchmark(("BM_script/tensordict" + suffix).c_str(),
                                 [batch](benchmark::State& s) { script_tensordict(s, batch); });
    benchmark::RegisterBenchmark(("BM_script/raw" + suffix).c_str(),
                                 [batch](benchmark::State& s) { script_raw(s, batch); });
  }
  for (const std::string model : {"tiny", "serving"}) {
    for (int64_t batch : {64, 8, 1}) {
      benchmark::RegisterBenchmark(
          ("BM_runner/" + model + "/direct/" + std::to_string(batch)).c_str(),
          [model, batch](benchmark::State& s) { runner_direct(s, model, batch); })
          ->UseRealTime();
    }
    // in_flight per client: 1 (run() in a loop: at most 8 rows ever wait), 8 (8 x 8 = 64 = one
    // full batch: clients refill while the worker idles) and 16 (the next batch fills while one
    // runs).
    for (int in_flight : {1, 8, 16}) {
      for (int delay_us : {0, 1000}) {
        const std::string name = "BM_runner/" + model + "/clients:" + std::to_string(kClients) +
                                 "/in_flight:" + std::to_string(in_flight) +
                                 "/delay_us:" + std::to_string(delay_us);
        benchmark::RegisterBenchmark(name.c_str(),
                                     [model, in_flight, delay_us](benchmark::State& s) {
                                       runner_clients(s, model, in_flight,
                                                      std::chrono::microseconds(delay_us));
                                     })
            ->Threads(kClients)
            ->UseRealTime();
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  at::set_num_threads(1);  // small models on a 2-core shared machine: one core per forward
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
