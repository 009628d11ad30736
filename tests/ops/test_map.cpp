// map(): chunks of dim 0 on worker threads, results concatenated in order.
#include <catch2/catch.hpp>

#include "ops_test_util.h"

using namespace ops_test;

TEST_CASE("map runs fn over chunks and gathers the results in order", "[map]") {
  TensorDict td = sample();
  for (int workers : {1, 3}) {
    for (int64_t chunk : {-1, 1, 3}) {
      TensorDict out = td.map(
          [](const TensorDict& part) { return part.apply([](const at::Tensor& t) { return t * 2; }); },
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
  CHECK_THROWS_MATCHES(td.map([](const TensorDict&) -> TensorDict { throw KeyError("boom"); }, 2, 1),
                       KeyError, Catch::Matchers::Message("boom"));
  CHECK_THROWS_MATCHES(TensorDict().map([](const TensorDict& t) { return t; }), ShapeError,
                       Catch::Matchers::Message("map: needs at least one batch dim to chunk over, "
                                                "batch_size is []"));
}

TEST_CASE("map with pbar draws nothing when stderr is not a terminal", "[map]") {
  TensorDict td = sample();
  TensorDict out = td.map([](const TensorDict& part) { return part.clone(); }, 2, 1, true);
  CHECK(same(out.get("a"), td.get("a")));
}
