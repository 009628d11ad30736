// td[index_tensor] on a memory-mapped dataset (the README's batch read): what index_select per
// leaf gives, with two intra-op threads as with one.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "catch2_compat.h"
#include <string>

#include "io_test_util.h"
#include "tensordict/tensordict.h"

using tensordict::TensorDict;

TEST_CASE("a large batch read from a memmapped dataset equals index_select per leaf", "[io]") {
  tc_test::TempDir tmp;
  TensorDict data({}, {4096});
  for (int i = 0; i < 8; ++i) data.set("leaf" + std::to_string(i), at::randn({4096, 64}));
  TensorDict nested({}, {4096});
  nested.set("ids", at::arange(4096));
  data.set("nested", nested);
  data.set_non_tensor("name", tensordict::Json("dataset"));
  const TensorDict mapped = data.memmap(tmp / "data");
  REQUIRE(mapped.is_memmap());
  const at::Tensor rows = at::randint(4096, {2048}, at::kLong);  // 8 x 512 KiB
  const int threads = at::get_num_threads();
  at::set_num_threads(2);
  const TensorDict batch = mapped.index({rows});
  at::set_num_threads(threads);
  CHECK(batch.batch_size() == tensordict::BatchSize{2048});
  for (int i = 0; i < 8; ++i) {
    const std::string key = "leaf" + std::to_string(i);
    CHECK(at::equal(batch.get(key), data.get(key).index_select(0, rows)));
  }
  CHECK(at::equal(batch.get({"nested", "ids"}), rows));
  CHECK(batch.get_non_tensor("name") == tensordict::Json("dataset"));
  const at::Tensor few = rows.narrow(0, 0, 4);
  CHECK(at::equal(mapped.index({few}).get("leaf3"), data.get("leaf3").index_select(0, few)));
}
