// Shape ops over the batch dims, checked against the same op on each raw tensor.
#include "catch2_compat.h"

#include "ops_test_util.h"

using namespace ops_test;
using Catch::Matchers::Message;

namespace {

using RawOp = std::function<at::Tensor(const at::Tensor&, int64_t /*feature dims*/)>;

// Appends a leaf's feature dims to a batch shape.
std::vector<int64_t> with_features(std::vector<int64_t> batch, const at::Tensor& t, int64_t nb) {
  for (int64_t d = nb; d < t.dim(); ++d) batch.push_back(t.size(d));
  return batch;
}

void check(const TensorDict& td, const TensorDict& out, const RawOp& raw) {
  for (const NestedKey& key : {NestedKey("a"), NestedKey("b"), NestedKey({"n", "c"})}) {
    const at::Tensor t = td.get(key);
    CHECK(same(out.get(key), raw(t, t.dim() - 2)));
  }
  CHECK(out.batch_size() == raw(grid(), 0).sizes().vec());
  CHECK(out.get_non_tensor("txt") == "hello");
  CHECK(items_of(out, "s") == expected_items(raw(grid(), 0)));
}

}  // namespace

TEST_CASE("view, reshape, flatten and unflatten reshape the batch dims", "[shape]") {
  TensorDict td = sample();
  check(td, td.view({12}),
        [](const at::Tensor& t, int64_t) { return t.view(with_features({12}, t, 2)); });
  check(td, td.reshape({2, -1}), [](const at::Tensor& t, int64_t) {
    return t.reshape(with_features({2, 6}, t, 2));
  });
  check(td, td.flatten(), [](const at::Tensor& t, int64_t) { return t.flatten(0, 1); });
  TensorDict flat = td.view({12});
  check(td, flat.unflatten(0, {4, 3}), [](const at::Tensor& t, int64_t) { return t; });
  CHECK(td.view({12}).get_tensordict("n").batch_size() == BatchSize{12, 5});
}

TEST_CASE("flatten without batch dims gives batch [1], as Python", "[shape]") {
  const TensorDict td({{"a", at::arange(3)}});
  for (const auto& [start, end] : {std::pair<int64_t, int64_t>{0, -1}, {0, 0}}) {
    const TensorDict flat = td.flatten(start, end);
    CHECK(flat.batch_size() == BatchSize{1});
    CHECK(flat.get("a").equal(at::arange(3).unsqueeze(0)));
  }
}

TEST_CASE("permute, transpose, squeeze, unsqueeze and expand", "[shape]") {
  TensorDict td = sample();
  check(td, td.permute({1, 0}), [](const at::Tensor& t, int64_t) { return t.transpose(0, 1); });
  check(td, td.transpose(0, -1), [](const at::Tensor& t, int64_t) { return t.transpose(0, 1); });
  check(td, td.unsqueeze(1), [](const at::Tensor& t, int64_t) { return t.unsqueeze(1); });
  check(td, td.unsqueeze(-1), [](const at::Tensor& t, int64_t) { return t.unsqueeze(2); });
  check(td, td.unsqueeze(0).squeeze(), [](const at::Tensor& t, int64_t) { return t; });
  check(td, td.unsqueeze(0).squeeze(0), [](const at::Tensor& t, int64_t) { return t; });
  CHECK(td.squeeze(0).batch_size() == BatchSize{4, 3});  // not a size-1 dim: unchanged
  check(td, td.expand({2, 4, 3}), [](const at::Tensor& t, int64_t) {
    return t.expand(with_features({2, 4, 3}, t, 2));
  });
}

TEST_CASE("split, chunk and unbind return views along a batch dim", "[shape]") {
  TensorDict td = sample();
  auto parts = td.split(3, 0);
  REQUIRE(parts.size() == 2);
  check(td, parts[1], [](const at::Tensor& t, int64_t) { return t.narrow(0, 3, 1); });
  auto sized = td.split(at::IntArrayRef({1, 2}), 1);
  REQUIRE(sized.size() == 2);
  check(td, sized[1], [](const at::Tensor& t, int64_t) { return t.narrow(1, 1, 2); });
  auto chunks = td.chunk(2, 0);
  REQUIRE(chunks.size() == 2);
  check(td, chunks[0], [](const at::Tensor& t, int64_t) { return t.narrow(0, 0, 2); });
  auto rows = td.unbind(1);
  REQUIRE(rows.size() == 3);
  check(td, rows[2], [](const at::Tensor& t, int64_t) { return t.select(1, 2); });
  rows[0].get("a").fill_(-5);  // views write through
  CHECK(td.get("a").select(1, 0).eq(-5).all().item<bool>());
}

TEST_CASE("shape op errors name the batch size", "[shape][errors]") {
  TensorDict td = sample();
  CHECK_THROWS_MATCHES(td.view({5}), ShapeError,
                       Message("view: shape [5] is invalid for batch_size [4, 3] (12 elements)"));
  CHECK_THROWS_MATCHES(td.permute({0}), ShapeError,
                       Message("permute: expected 2 dims for batch_size [4, 3], got [0]"));
  CHECK_THROWS_MATCHES(td.unsqueeze(4), ShapeError,
                       Message("unsqueeze: dim 4 is out of range for batch_size [4, 3] (expected "
                               "in [-3, 2])"));
  CHECK_THROWS_MATCHES(td.expand({5, 3}), ShapeError,
                       Message("expand: cannot expand batch_size [4, 3] to [5, 3]"));
  CHECK_THROWS_MATCHES(td.split(at::IntArrayRef({1, 1}), 0), ShapeError,
                       Message("split: sizes [1, 1] do not sum to 4, the size of batch dim 0 of "
                               "batch_size [4, 3]"));
  CHECK_THROWS_AS(td.transpose(0, 2), ShapeError);
  CHECK_THROWS_AS(td.unflatten(0, {3, 3}), ShapeError);
  // A non-contiguous view cannot be viewed; the torch error is reported with the key.
  CHECK_THROWS_WITH(td.permute({1, 0}).view({12}),
                    Catch::Matchers::ContainsSubstring("view: key 'a' of shape [3, 4, 2]"));
}
