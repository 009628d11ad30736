// Shape ops, masks and binary ops on lazy stacks, as Python's LazyStackedTensorDict does them:
// each gives the values the same op gives on the dense stack, over stacks along every dim, and
// stays lazy where Python's does (the elements are reached, not copied).
#include <ATen/ATen.h>

#include "catch2_compat.h"

#include "lazy_test_util.h"
#include "tensordict/lazy_stack.h"

using namespace tensordict;
using lazy_test::grid_element;

namespace {

// The same content as a lazy stack and as a dense one, stacked along `dim`.
std::pair<TensorDict, TensorDict> stacks(int64_t dim) {
  std::vector<TensorDict> tds{grid_element(0), grid_element(1)};
  return {lazy_stack(tds, dim), stack(tds, dim)};
}

void check_same_values(const TensorDict& got, const TensorDict& want) {
  REQUIRE(got.batch_size() == want.batch_size());
  for (const auto& key : want.keys(true, true)) {
    INFO(key.repr());
    CHECK(got.get(key).equal(want.get(key)));
  }
}

}  // namespace

TEST_CASE("lazy shape ops give the dense stack's values, along every stack dim", "[lazy][shape]") {
  for (int64_t dim = 0; dim < 3; ++dim) {
    INFO("stack dim " << dim);
    const auto [lazy, dense] = stacks(dim);
    check_same_values(lazy.transpose(0, 2), dense.transpose(0, 2));
    check_same_values(lazy.transpose(1, 0), dense.transpose(1, 0));
    check_same_values(lazy.permute({2, 0, 1}), dense.permute({2, 0, 1}));
    check_same_values(lazy.movedim({0}, {2}), dense.movedim({0}, {2}));
    for (int64_t d = 0; d <= 3; ++d) check_same_values(lazy.unsqueeze(d), dense.unsqueeze(d));
    check_same_values(lazy.unsqueeze(1).squeeze(1), dense);
    BatchSize wider{5};
    wider.insert(wider.end(), dense.batch_size().begin(), dense.batch_size().end());
    check_same_values(lazy.expand(wider), dense.expand(wider));
    // A one-element stack grows along its stack dim, as Python's repeats its element.
    BatchSize grown = lazy_stack({grid_element(0)}, dim).batch_size();
    grown[static_cast<size_t>(dim)] = 3;
    check_same_values(lazy_stack({grid_element(0)}, dim).expand(grown),
                      stack({grid_element(0)}, dim).expand(grown));
    check_same_values(lazy.unsqueeze(3).unsqueeze(0).squeeze(), dense);
    for (int64_t d = 0; d < 3; ++d) {
      const auto got = lazy.split(1, d);
      const auto want = dense.split(1, d);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) check_same_values(got[i], want[i]);
      const auto halves = lazy.chunk(2, d);
      const auto dense_halves = dense.chunk(2, d);
      REQUIRE(halves.size() == dense_halves.size());
      for (size_t i = 0; i < halves.size(); ++i) check_same_values(halves[i], dense_halves[i]);
    }
    // Merging or splitting dims stays lazy; another shape is a dense reshape.
    const TensorDict flat = lazy.flatten(0, 1);
    CHECK(flat.is_lazy_stack());
    check_same_values(flat, dense.flatten(0, 1));
    check_same_values(lazy.flatten(), dense.flatten());
    check_same_values(lazy.view({-1}), dense.view({-1}));
    check_same_values(flat.unflatten(0, {lazy.batch_size()[0], lazy.batch_size()[1]}), dense);
    check_same_values(lazy.reshape({4, 6}), dense.reshape({4, 6}));
    CHECK_FALSE(lazy.reshape({4, 6}).is_lazy_stack());
    CHECK_THROWS_MATCHES(lazy.view({4, 6}), ShapeError,
                         Catch::Matchers::Message(
                             "view: a lazy stack of batch_size " + shape_str(lazy.batch_size()) +
                             " views only as dims merged or split, not as [4, 6] (call reshape)"));
  }
}

TEST_CASE("lazy views reach the elements, and keep the stack dim's name", "[lazy][shape]") {
  std::vector<TensorDict> tds{grid_element(0), grid_element(1)};
  TensorDict lazy = lazy_stack(tds, 1);
  lazy.set_names(DimNames{"a", "s", "b"});
  TensorDict swapped = lazy.transpose(0, 2);
  CHECK((swapped.names() == DimNames{"b", "s", "a"}));
  swapped.get_tensordict("n").tensordicts()[1].get("y").fill_(-1);
  CHECK((tds[1].get(NestedKey{"n", "y"}) == -1).all().item<bool>());
  // Squeezing the stack dim of a one-element stack gives the element itself.
  const TensorDict single = lazy_stack({tds[0]}, 1);
  CHECK(single.squeeze(1).is_same(tds[0]));
}

TEST_CASE("masks, where, comparisons and math with operands work element by element",
          "[lazy][shape]") {
  for (int64_t dim = 0; dim < 3; ++dim) {
    INFO("stack dim " << dim);
    const auto [lazy, dense] = stacks(dim);
    const at::Tensor mask = at::arange(lazy.numel()).reshape(lazy.batch_size()).remainder(3) == 0;
    check_same_values(lazy.masked_fill(mask, -5), dense.masked_fill(mask, -5));
    const at::Tensor leading = mask.flatten(1).any(1);  // a mask of the leading dim only
    check_same_values(lazy.masked_fill(leading, 7), dense.masked_fill(leading, 7));
    const TensorDict other = dense.apply([](const at::Tensor& t) { return t * 0 - 1; });
    check_same_values(lazy.where(mask, other), dense.where(mask, other));
    check_same_values(lazy + other, dense + other);
    check_same_values(lazy * lazy, dense * dense);
    check_same_values(lazy == dense, dense == dense);
    const at::Tensor weights = at::arange(lazy.numel(), at::kFloat).reshape(lazy.batch_size());
    check_same_values(lazy.mul(weights), dense.mul(weights));
    TensorDict in_place = lazy.clone();
    in_place.add_(other);
    check_same_values(in_place, dense + other);
    in_place.masked_fill_(mask, 0);
    check_same_values(in_place, (dense + other).masked_fill(mask, 0));
    check_same_values(lazy.flatten_keys(), dense.flatten_keys());
    check_same_values(lazy.flatten_keys().unflatten_keys(), dense);
  }
}

TEST_CASE("views keep the lock of what they view, as Python's", "[lazy][shape][lock]") {
  TensorDict dense = stack({grid_element(0), grid_element(1)}).lock_();
  CHECK(dense.reshape({6, 4}).is_locked());
  CHECK(dense.view({-1}).is_locked());
  CHECK(dense.transpose(0, 1).is_locked());
  CHECK(dense.unsqueeze(0).is_locked());
  CHECK(dense.squeeze().is_locked());
  CHECK(dense.expand({5, 2, 3, 4}).is_locked());
  CHECK_FALSE(dense.clone().is_locked());  // a copy is not a view
  TensorDict lazy = lazy_stack({grid_element(0), grid_element(1)}).lock_();
  CHECK(lazy.flatten(0, 1).is_locked());
  CHECK(lazy.transpose(0, 2).is_locked());
  // A nested TensorDict read from a locked lazy stack is locked too.
  CHECK(lazy.get_tensordict("n").is_locked());
  CHECK_THROWS_AS(lazy.get_tensordict("n").set("z", at::zeros({2, 3, 4})), LockedError);
}
