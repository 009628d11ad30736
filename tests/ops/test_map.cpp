// map(): chunks of dim 0 on worker threads, results concatenated in order.
#include "catch2_compat.h"

#include <atomic>
#include <mutex>

#include "ops_test_util.h"

using namespace ops_test;

TEST_CASE("map runs fn over chunks and gathers the results in order", "[map]") {
  TensorDict td = sample();
  for (int workers : {1, 3}) {
    for (int64_t chunk : {-1, 1, 3}) {
      TensorDict out = td.map(
          [](const TensorDict& part) {
            return part.apply([](const at::Tensor& t) { return t * 2; });
          },
          workers, chunk);
      CHECK(out.batch_size() == td.batch_size());
      CHECK(same(out.get("a"), td.get("a") * 2));
      CHECK(same(out.get({"n", "c"}), td.get({"n", "c"}) * 2));
      CHECK(items_of(out, "s") == items_of(td, "s"));
    }
  }
}

TEST_CASE("map rethrows the first failure of fn", "[map][errors]") {
  TensorDict td = sample();
  CHECK_THROWS_MATCHES(
      td.map([](const TensorDict&) -> TensorDict { throw KeyError("boom"); }, 2, 1), KeyError,
      Catch::Matchers::Message("boom"));
  CHECK_THROWS_MATCHES(TensorDict().map([](const TensorDict& t) { return t; }), ShapeError,
                       Catch::Matchers::Message("map: needs at least one batch dim to chunk over, "
                                                "batch_size is []"));
}

TEST_CASE("map with pbar draws nothing when stderr is not a terminal", "[map]") {
  TensorDict td = sample();
  TensorDict out = td.map([](const TensorDict& part) { return part.clone(); }, 2, 1, true);
  CHECK(same(out.get("a"), td.get("a")));
}

TEST_CASE("map with chunksize 0 passes one element at a time and stacks the results", "[map]") {
  TensorDict td = sample();
  std::atomic<int> calls{0};
  std::mutex seen_mutex;
  std::vector<BatchSize> seen;
  TensorDict out = td.map(
      [&](const TensorDict& element) {
        ++calls;
        std::lock_guard<std::mutex> lock(seen_mutex);
        seen.push_back(element.batch_size());
        return element.apply([](const at::Tensor& t) { return t + 1; });
      },
      2, 0);
  CHECK(calls == 4);
  for (const auto& batch : seen) CHECK(batch == BatchSize{3});
  CHECK(out.batch_size() == td.batch_size());
  CHECK(same(out.get("a"), td.get("a") + 1));
  // The default makes one chunk per worker.
  calls = 0;
  td.map([&](const TensorDict& chunk) { return ++calls, chunk; }, 2);
  CHECK(calls == 2);
}

TEST_CASE("map with a function that writes in place and returns nothing", "[map]") {
  TensorDict td = sample();
  const at::Tensor before = td.get("a").clone();
  auto add_one = [](const TensorDict& chunk) { chunk.get("a").add_(1); };
  static_assert(std::is_void_v<decltype(td.map(add_one))>);
  td.map(add_one, 2, 1);
  CHECK(same(td.get("a"), before + 1));
}
