// consolidate(): one flat buffer for every leaf, and the copies that move it whole.
#include <catch2/catch.hpp>

#include "ops_test_util.h"

using namespace ops_test;

namespace {

bool shares_storage(const at::Tensor& a, const at::Tensor& b) {
  return a.storage().unsafeGetStorageImpl() == b.storage().unsafeGetStorageImpl();
}

}  // namespace

TEST_CASE("consolidate packs every leaf into one storage, values unchanged", "[consolidate]") {
  TensorDict td = sample();
  CHECK_FALSE(td.is_consolidated());
  TensorDict c = td.consolidate();
  CHECK(c.is_consolidated());
  CHECK(shares_storage(c.get("a"), c.get("b")));
  CHECK(shares_storage(c.get("a"), c.get({"n", "c"})));
  CHECK(same(c.get("a"), td.get("a")));
  CHECK(same(c.get("b"), td.get("b")));
  CHECK(same(c.get({"n", "c"}), td.get({"n", "c"})));
  CHECK(c.get_non_tensor("txt") == "hello");
  CHECK(items_of(c, "s") == items_of(td, "s"));
  c.set("a", at::zeros({4, 3, 2}));  // a replaced leaf leaves the buffer
  CHECK_FALSE(c.is_consolidated());
}

TEST_CASE("consolidate lays leaves out as Python does", "[consolidate]") {
  // Offsets and size printed by Python tensordict 0.14's consolidate() for the same TensorDict:
  // insertion order, depth first, each leaf padded to a multiple of 8 bytes.
  TensorDict td({{"z", at::zeros({3}, at::kInt)},
                 {{"nested", "b"}, at::zeros({3}, at::kLong)},
                 {{"nested", "a2"}, at::zeros({3, 2}, at::kBool)},
                 {"nested-x", at::zeros({3}, at::kDouble)},
                 {"a", at::zeros({3, 4})}},
                {3});
  TensorDict c = td.consolidate();
  const auto base = static_cast<const char*>(c.get("z").data_ptr());
  auto offset = [&](const tensordict::NestedKey& key) {
    return static_cast<const char*>(c.get(key).data_ptr()) - base;
  };
  CHECK(offset({"nested", "b"}) == 16);
  CHECK(offset({"nested", "a2"}) == 40);
  CHECK(offset("nested-x") == 48);
  CHECK(offset("a") == 72);
  CHECK(c.get("z").storage().nbytes() == 120);
}

TEST_CASE("clone, to, zero_ and update_ keep consolidated TensorDicts whole", "[consolidate]") {
  TensorDict c = sample().consolidate();
  TensorDict copy = c.clone();
  CHECK(copy.is_consolidated());
  CHECK_FALSE(shares_storage(copy.get("a"), c.get("a")));
  CHECK(same(copy.get({"n", "c"}), c.get({"n", "c"})));
  CHECK(copy.get("b").scalar_type() == at::kLong);
  TensorDict moved = c.to(at::Device(at::kCPU));
  CHECK(moved.is_consolidated());
  CHECK(same(moved.get("a"), c.get("a")));

  copy.zero_();
  CHECK(copy.get("a").eq(0).all().item<bool>());
  CHECK(copy.get({"n", "c"}).eq(0).all().item<bool>());
  CHECK(c.get("a").ne(0).any().item<bool>());
  copy.update_(c);  // one buffer copy between equal layouts
  CHECK(same(copy.get("a"), c.get("a")));
  CHECK(same(copy.get({"n", "c"}), c.get({"n", "c"})));
  CHECK(copy.detach().is_consolidated());

  TensorDict shared = sample().consolidate();
  shared.share_memory_();
  CHECK(shared.is_consolidated());
  CHECK(same(shared.get("b"), sample().get("b")));
}

TEST_CASE("ops on a consolidated TensorDict give correct, independent results", "[consolidate]") {
  TensorDict c = sample().consolidate();
  TensorDict row = c[1];
  CHECK(same(row.get({"n", "c"}), sample().get({"n", "c"})[1]));
  CHECK_FALSE(c.to(at::kDouble).is_consolidated());
  CHECK(same(c.to(at::kDouble).get("a"), sample().get("a").to(at::kDouble)));
  TensorDict copy = c.clone();
  copy.get("a").fill_(-9);
  CHECK(same(c.get("a"), sample().get("a")));
}

TEST_CASE("to(device) moves plain and consolidated TensorDicts (runs where CUDA exists)",
          "[consolidate][cuda]") {
  if (!at::hasCUDA()) return;  // nothing to check on a CPU-only machine
  const at::Device cuda(at::kCUDA, 0);
  for (bool consolidated : {false, true}) {
    TensorDict td = consolidated ? sample().consolidate() : sample();
    TensorDict moved = td.to(cuda);
    CHECK(moved.device() == cuda);
    CHECK(moved.get({"n", "c"}).device() == cuda);
    CHECK(moved.is_consolidated() == consolidated);
    CHECK(same(moved.get("a").cpu(), td.get("a")));
    CHECK(same(moved.clone().get("b").cpu(), td.get("b")));
  }
}
