// Index assignment into lazy stacks (Python's `lazy[index] = value`), and the batch ops Python's
// lazy stacks answer with a regular TensorDict (flip, roll, narrow, tile, pad, gather, rot90),
// compared with the same op on the dense stack of the same content, along every stack dim.
#include <ATen/ATen.h>

#include "catch2_compat.h"

#include "lazy_test_util.h"
#include "tensordict/lazy_stack.h"

using namespace tensordict;
using lazy_test::grid_element;

namespace {

std::vector<TensorDict> elements() { return {grid_element(0), grid_element(1)}; }

void check_same(const TensorDict& got, const TensorDict& want) {
  REQUIRE(got.batch_size() == want.batch_size());
  REQUIRE(got.keys(true, true).size() == want.keys(true, true).size());
  for (const auto& key : want.keys(true, true)) {
    INFO(key.repr());
    CHECK(got.get(key).equal(want.get(key)));
  }
}

// A value for `index` of a [.., ..] stack: -1 - the dense stack's selected rows, so that every
// written position differs from what it held.
TensorDict value_for(const TensorDict& dense, const Index& index) {
  return dense.index(index).apply([](const at::Tensor& t) { return -1 - t; });
}

}  // namespace

TEST_CASE("index_put_ into a lazy stack writes what it writes into the dense stack",
          "[lazy][index_put]") {
  for (int64_t dim = 0; dim < 3; ++dim) {
    const TensorDict reference = stack(elements(), dim);
    const int64_t n = reference.batch_size()[0];
    const at::Tensor lead_mask = at::arange(n).remainder(2).eq(0);
    const at::Tensor full_mask =
        at::arange(reference.numel()).reshape(reference.batch_size()).remainder(3).eq(1);
    const std::vector<Index> indices{
        {0},
        {-1, 1},
        {Slice(0, 2)},
        {EllipsisIndex{}, 1},
        {Slice(), Slice(1, 3)},
        {lead_mask},
        {full_mask},
        {at::tensor({1, 0}, at::kLong)},
        {Slice(), at::tensor({1, 0}, at::kLong), Slice(0, 1)},
        {EllipsisIndex{}},
    };
    for (size_t i = 0; i < indices.size(); ++i) {
      INFO("stack dim " << dim << ", index " << i);
      TensorDict lazy = lazy_stack(elements(), dim);
      TensorDict dense = stack(elements(), dim);
      const TensorDict value = value_for(dense, indices[i]);
      lazy.index_put_(indices[i], value);
      dense.index_put_(indices[i], value);
      CHECK(lazy.is_lazy_stack());
      check_same(lazy.densify(), dense);
    }
  }
}

TEST_CASE("index_put_ into a lazy stack broadcasts the value and writes in place",
          "[lazy][index_put]") {
  std::vector<TensorDict> parts = elements();
  TensorDict lazy = lazy_stack(parts, 1);  // batch [3, 2, 4]
  TensorDict row({{"x", at::full({2}, -7.0F)},
                  {"n", TensorDict({{"y", at::scalar_tensor(9, at::kLong)}}, {})}},
                 {});
  lazy.index_put_({1}, row);  // batch [2, 4] selected, the value broadcast over it
  // The elements themselves were written: element k's row 1.
  for (const auto& part : parts) {
    CHECK(part.get("x").index({1}).eq(-7).all().item<bool>());
    CHECK(part.get({"n", "y"}).index({1}).eq(9).all().item<bool>());
    CHECK(part.get("x").index({0}).ne(-7).all().item<bool>());
  }
}

TEST_CASE("index_put_ into a lazy stack touches only the elements it selects",
          "[lazy][index_put]") {
  // A 1-D stack of 0-dim elements, as Python's lazy_stack of single rows.
  std::vector<TensorDict> parts{TensorDict({{"a", at::scalar_tensor(1.0)}}, {}),
                                TensorDict({{"a", at::scalar_tensor(2.0)}}, {}),
                                TensorDict({{"a", at::scalar_tensor(3.0)}}, {})};
  TensorDict lazy = lazy_stack(parts, 0);
  lazy.index_put_({at::tensor({0, 1, 1}).to(at::kBool)},
                  TensorDict({{"a", at::tensor({20.0, 30.0})}, {"b", at::tensor({5, 6})}}, {2}));
  CHECK(parts[0].get("a").item<double>() == 1.0);
  CHECK_FALSE(parts[0].contains("b"));  // as Python: a key appears in the elements written
  CHECK(parts[1].get("a").item<double>() == 20.0);
  CHECK(parts[2].get("a").item<double>() == 30.0);
  CHECK(parts[2].get("b").item<int64_t>() == 6);
}

TEST_CASE("index_put_ into a lazy stack nested in a dense TensorDict", "[lazy][index_put]") {
  TensorDict outer({{"inner", lazy_stack(elements(), 1)}, {"z", at::zeros({3, 2})}}, {3, 2});
  TensorDict value = outer.index({Slice(1, 3)}).apply([](const at::Tensor& t) { return t + 1000; });
  TensorDict dense = outer.densify();
  outer.index_put_({Slice(1, 3)}, value);
  dense.index_put_({Slice(1, 3)}, value);
  CHECK(outer.get_tensordict("inner").is_lazy_stack());
  check_same(outer.densify(), dense);
}

TEST_CASE("index_put_ into a lazy stack refuses a value of another shape", "[lazy][index_put]") {
  TensorDict lazy = lazy_stack(elements(), 0);
  TensorDict wrong({{"x", at::zeros({5, 2})}}, {5});
  CHECK_THROWS_AS(lazy.index_put_({0}, wrong), ShapeError);
}

TEST_CASE("ops that give a new batch give the dense stack's result, as Python's lazy stacks do",
          "[lazy][shape]") {
  for (int64_t dim = 0; dim < 3; ++dim) {
    INFO("stack dim " << dim);
    const TensorDict lazy = lazy_stack(elements(), dim);
    const TensorDict dense = stack(elements(), dim);
    for (int64_t d = 0; d < 3; ++d) {
      INFO("op dim " << d);
      check_same(lazy.flip({d}), dense.flip({d}));
      check_same(lazy.roll({1}, {d}), dense.roll({1}, {d}));
      check_same(lazy.narrow(d, 1, 1), dense.narrow(d, 1, 1));
      const at::Tensor index = at::zeros(dense.batch_size(), at::kLong).narrow(d, 0, 1);
      check_same(lazy.gather(d, index), dense.gather(d, index));
    }
    check_same(lazy.roll({2}, {}), dense.roll({2}, {}));
    check_same(lazy.rot90(1, {0, 2}), dense.rot90(1, {0, 2}));
    check_same(lazy.tile({2, 1, 1}), dense.tile({2, 1, 1}));
    check_same(lazy.pad({1, 0, 0, 1}, 5), dense.pad({1, 0, 0, 1}, 5));
    CHECK_FALSE(lazy.flip({0}).is_lazy_stack());
  }
}

TEST_CASE("a ragged lazy stack names the op it cannot densify for", "[lazy][shape]") {
  const TensorDict ragged = lazy_stack(
      {TensorDict({{"x", at::zeros({2})}}, {2}), TensorDict({{"x", at::zeros({3})}}, {3})}, 0);
  CHECK_THROWS_WITH(ragged.flip({0}), Catch::Matchers::StartsWith("flip: densify: the lazy stack"));
}

TEST_CASE("map over a lazy stack gives what it gives over the dense stack", "[lazy][map]") {
  const TensorDict lazy = lazy_stack(elements(), 0);
  const TensorDict dense = stack(elements(), 0);
  auto twice = [](const TensorDict& chunk) {
    return chunk.apply([](const at::Tensor& t) { return t * 2; });
  };
  check_same(lazy.map(twice, 2, 1).densify(), dense.map(twice, 2, 1));
  check_same(lazy.map(twice, 1, 0).densify(), dense.map(twice, 1, 0));
}

TEST_CASE("append and insert add elements to a lazy stack, as Python's", "[lazy][append]") {
  TensorDict lazy = lazy_stack(elements(), 1);  // batch [3, 2, 4]
  lazy.append(grid_element(2));
  lazy.insert(0, grid_element(3));
  lazy.insert(-1, grid_element(4));  // before the last, as Python's list.insert
  REQUIRE(lazy.batch_size() == BatchSize{3, 5, 4});
  check_same(lazy.densify(), stack({grid_element(3), grid_element(0), grid_element(1),
                                    grid_element(4), grid_element(2)},
                                   1));
  CHECK_THROWS_AS(lazy.append(TensorDict({{"x", at::zeros({3})}}, {3})), ShapeError);
  lazy.lock_();
  CHECK_THROWS_AS(lazy.append(grid_element(5)), LockedError);
  TensorDict dense = stack(elements(), 0);
  CHECK_THROWS_AS(dense.append(grid_element(0)), TypeError);
}
