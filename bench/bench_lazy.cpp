// Lazy stacks and non-tensor stacks at scale: per-row cost of unbind(0) on a [B, 8]
// History must not grow with B, and apply_chat_template on a [10000, 8] batch must cost about
// what rendering the 10,000 conversations one by one does. Results: docs/performance.md.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

#include <string>

#include "history.h"

namespace {

using tensordict::Json;
using torchrl::llm::History;

constexpr int kMessages = 8;

Json chat(int64_t b) {
  Json messages = Json::array();
  for (int m = 0; m < kMessages; ++m) {
    messages.push_back({{"role", m % 2 == 0 ? "user" : "assistant"},
                        {"content", "message " + std::to_string(m) + " of conversation " +
                                        std::to_string(b) + ": some text to render"}});
  }
  return messages;
}

Json chats(int64_t batch) {
  Json out = Json::array();
  for (int64_t b = 0; b < batch; ++b) out.push_back(chat(b));
  return out;
}

// "lazy": History::from_chats (TorchRL's lazy stack); "dense": the same batch densified, so every
// field is a [B, 8] NonTensorStack.
History batch_of(int64_t batch, bool dense) {
  History h = History::from_chats(chats(batch));
  return dense ? History::from_tensordict(h._tensordict().densify()) : h;
}

void set_per_row(benchmark::State& state, int64_t rows) {
  state.counters["per_row"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsIterationInvariantRate |
                                                        benchmark::Counter::kInvert);
}

void unbind_rows(benchmark::State& state, bool dense) {
  const int64_t batch = state.range(0);
  History h = batch_of(batch, dense);
  for (auto _ : state) {
    auto rows = h.unbind(0);
    benchmark::DoNotOptimize(rows.data());
  }
  set_per_row(state, batch);
}

void BM_history_unbind_lazy(benchmark::State& state) { unbind_rows(state, false); }
void BM_history_unbind_dense(benchmark::State& state) { unbind_rows(state, true); }

void BM_chat_template_batch(benchmark::State& state) {
  const int64_t batch = state.range(0);
  History h = batch_of(batch, state.range(1) != 0);
  for (auto _ : state) {
    auto texts = h.apply_chat_template();
    benchmark::DoNotOptimize(texts.data());
  }
  set_per_row(state, batch);
}

void BM_chat_template_one_by_one(benchmark::State& state) {
  const int64_t batch = state.range(0);
  std::vector<History> conversations;
  for (int64_t b = 0; b < batch; ++b) conversations.push_back(History::from_chats(chat(b)));
  for (auto _ : state) {
    for (const auto& c : conversations) {
      auto texts = c.apply_chat_template();
      benchmark::DoNotOptimize(texts.data());
    }
  }
  set_per_row(state, batch);
}

}  // namespace

BENCHMARK(BM_history_unbind_lazy)->Arg(250)->Arg(4000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_history_unbind_dense)->Arg(250)->Arg(4000)->Unit(benchmark::kMicrosecond);
// Second argument: 0 = lazy batch (from_chats), 1 = dense batch.
BENCHMARK(BM_chat_template_batch)
    ->Args({10000, 0})
    ->Args({10000, 1})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_chat_template_one_by_one)->Arg(10000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
