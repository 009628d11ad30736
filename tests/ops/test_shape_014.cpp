// The shape ops tensordict added after 0.10 (tensor_split, movedim, swapaxes, flip, fliplr,
// flipud, rot90, roll, narrow, tile, broadcast_to, atleast_nd) and mod, each checked against the
// same torch op on every raw tensor (feature dims untouched) and on the NonTensorStack's items.
#include "catch2_compat.h"

#include "ops_test_util.h"

using namespace ops_test;
using Catch::Matchers::Message;

namespace {

using LeafOp = std::function<at::Tensor(const at::Tensor&)>;

// `items`: the index grid of td's batch (the NonTensorStack's items are "i,j" of grid()).
void check(const TensorDict& td, const TensorDict& out, const LeafOp& raw,
           const at::Tensor& items = grid()) {
  for (const NestedKey& key : {NestedKey("a"), NestedKey("b"), NestedKey({"n", "c"})}) {
    INFO(key.repr());
    CHECK(same(out.get(key), raw(td.get(key))));
  }
  CHECK(out.batch_size() == raw(items).sizes().vec());
  CHECK(out.get_tensordict("n").batch_size().back() == 5);
  CHECK(out.get_non_tensor("txt") == "hello");
  CHECK(items_of(out, "s") == expected_items(raw(items)));
}

}  // namespace

TEST_CASE("tensor_split cuts batch dims as torch.tensor_split does", "[shape][0.14]") {
  TensorDict td = sample();
  auto thirds = td.tensor_split(3, 0);  // 4 rows: 2, 1, 1
  REQUIRE(thirds.size() == 3);
  check(td, thirds[0], [](const at::Tensor& t) { return t.tensor_split(3, 0)[0]; });
  check(td, thirds[2], [](const at::Tensor& t) { return t.tensor_split(3, 0)[2]; });
  auto cut = td.tensor_split(at::IntArrayRef({1, -1}), 1);  // [0:1], [1:2], [2:3]
  REQUIRE(cut.size() == 3);
  check(td, cut[1], [](const at::Tensor& t) { return t.narrow(1, 1, 1); });
  auto past = td.tensor_split(at::IntArrayRef({2, 9}), 0);  // indices clamp to the size
  REQUIRE(past.size() == 3);
  CHECK(past[2].batch_size() == BatchSize{0, 3});
  cut[0].get("a").fill_(-1);  // views
  CHECK(td.get("a").select(1, 0).eq(-1).all().item<bool>());
  CHECK_THROWS_MATCHES(td.tensor_split(0), ShapeError,
                       Message("tensor_split: the number of sections must be positive, got 0"));
}

TEST_CASE("movedim, swapaxes and swapdims move batch dims", "[shape][0.14]") {
  TensorDict td = sample().unsqueeze(0);  // [1, 4, 3]
  const at::Tensor items = grid().unsqueeze(0);
  check(
      td, td.movedim({0}, {2}), [](const at::Tensor& t) { return t.movedim(0, 2); }, items);
  check(
      td, td.movedim({0, -1}, {-1, 0}),
      [](const at::Tensor& t) {
        return t.movedim(at::IntArrayRef({0, 2}), at::IntArrayRef({2, 0}));
      },
      items);
  check(
      td, td.swapaxes(0, 1), [](const at::Tensor& t) { return t.swapaxes(0, 1); }, items);
  check(
      td, td.swapdims(1, 2), [](const at::Tensor& t) { return t.swapdims(1, 2); }, items);
  CHECK_THROWS_MATCHES(
      td.movedim({0, 0}, {1, 2}), ShapeError,
      Message("movedim: a dim is repeated in source [0, 0] or destination [1, 2]"));
  CHECK_THROWS_AS(td.movedim({3}, {0}), ShapeError);
}

TEST_CASE("flip, fliplr, flipud, rot90 and roll reorder batch elements", "[shape][0.14]") {
  TensorDict td = sample();
  check(td, td.flip({0, 1}), [](const at::Tensor& t) { return t.flip({0, 1}); });
  check(td, td.fliplr(), [](const at::Tensor& t) { return t.flip(1); });
  check(td, td.flipud(), [](const at::Tensor& t) { return t.flip(0); });
  check(td, td.rot90(), [](const at::Tensor& t) { return t.rot90(1, {0, 1}); });
  check(td, td.rot90(-3, {1, 0}), [](const at::Tensor& t) { return t.rot90(1, {1, 0}); });
  check(td, td.rot90(2), [](const at::Tensor& t) { return t.rot90(2, {0, 1}); });
  check(td, td.roll({1, -1}, {0, 1}), [](const at::Tensor& t) { return t.roll({1, -1}, {0, 1}); });
  // Without dims Python rolls each leaf flattened, feature dims included.
  TensorDict rolled = td.roll(2);
  CHECK(same(rolled.get("a"), td.get("a").roll(2)));
  CHECK(rolled.batch_size() == td.batch_size());
  TensorDict row({{"x", at::ones({3})}}, {3});
  CHECK_THROWS_MATCHES(row.fliplr(), ShapeError,
                       Message("fliplr: needs at least 2 batch dims (batch_size [3])"));
}

TEST_CASE("rot90 swaps dim names on odd turns, flip and roll keep them", "[shape][0.14][names]") {
  TensorDict td = sample();
  td.refine_names({"x", "y"});
  CHECK((td.rot90().names() == DimNames{"y", "x"}));
  CHECK((td.rot90(2).names() == DimNames{"x", "y"}));
  CHECK((td.flip({0}).names() == DimNames{"x", "y"}));
  CHECK((td.roll({1}, {1}).names() == DimNames{"x", "y"}));
  CHECK((td.narrow(0, 1, 2).names() == DimNames{"x", "y"}));
  CHECK((td.tile({2}).names() == DimNames(2)));  // tile and broadcast_to drop names, as Python
  CHECK((td.broadcast_to({2, 4, 3}).names() == DimNames(3)));
}

TEST_CASE("narrow, tile, broadcast_to and atleast_nd", "[shape][0.14]") {
  TensorDict td = sample();
  check(td, td.narrow(1, 1, 2), [](const at::Tensor& t) { return t.narrow(1, 1, 2); });
  check(td, td.narrow(0, -2, 2), [](const at::Tensor& t) { return t.narrow(0, 2, 2); });
  CHECK_THROWS_MATCHES(td.narrow(0, 3, 2), ShapeError,
                       Message("narrow: start 3 and length 2 do not fit batch dim 0 of batch_size "
                               "[4, 3]"));
  // Reps cover the batch dims only: leaves keep their feature dims.
  auto tiled = [](std::vector<int64_t> batch_reps) {
    return [batch_reps](const at::Tensor& t) {
      std::vector<int64_t> reps = batch_reps;
      reps.resize(reps.size() + static_cast<size_t>(t.dim()) - 2, 1);
      return t.tile(reps);
    };
  };
  check(td, td.tile({2, 1}), tiled({2, 1}));
  check(td, td.tile({3}), tiled({1, 3}));
  TensorDict more = td.tile({2, 1, 1});  // a new leading dim
  CHECK(more.batch_size() == BatchSize{2, 4, 3});
  CHECK(same(more.get("a"), td.get("a").tile({2, 1, 1, 1})));
  check(td, td.broadcast_to({2, 4, 3}), [](const at::Tensor& t) {
    std::vector<int64_t> shape{2};
    shape.insert(shape.end(), t.sizes().begin(), t.sizes().end());
    return t.expand(shape);
  });
  TensorDict scalar({{"x", at::ones({2})}}, {});
  CHECK(scalar.atleast_1d().batch_size() == BatchSize{1});
  CHECK(scalar.atleast_2d().batch_size() == BatchSize{1, 1});
  CHECK(scalar.atleast_3d().batch_size() == BatchSize{1, 1, 1});
  CHECK(scalar.atleast_3d().get("x").sizes() == at::IntArrayRef({1, 1, 1, 2}));
  CHECK(td.atleast_3d().batch_size() == BatchSize{1, 4, 3});
  CHECK(td.atleast_2d().is_same(td));  // enough dims: the same TensorDict, as Python
}

TEST_CASE("mod is torch.remainder, with scalars, tensors and TensorDicts", "[math][0.14]") {
  TensorDict td({{"a", at::tensor({-3.0, 5.5, 7.0})}, {"b", at::tensor({-7, 4, 9})}}, {3});
  TensorDict by3 = td % 3;
  CHECK(same(by3.get("a"), at::tensor({-3.0, 5.5, 7.0}).remainder(3)));
  CHECK(same(by3.get("b"), at::tensor({2, 1, 0})));
  CHECK(same(td.mod(td + 10).get("b"), at::tensor({-7, 4, 9}).remainder(at::tensor({3, 14, 19}))));
}

TEST_CASE("& | ^ are bitwise_and / or / xor of every leaf", "[math][0.14]") {
  const at::Tensor p = at::tensor({1, 1, 0, 0}).to(at::kBool);
  const at::Tensor q = at::tensor({1, 0, 1, 0}).to(at::kBool);
  const at::Tensor n = at::tensor({12, 10, 6, 5});
  TensorDict td({{"p", p}, {"n", n}}, {4});
  TensorDict other({{"p", q}, {"n", at::tensor({10, 3, 3, 1})}}, {4});
  CHECK(same((td & other).get("p"), p.logical_and(q)));
  CHECK(same((td | other).get("p"), p.logical_or(q)));
  CHECK(same((td ^ other).get("p"), p.logical_xor(q)));
  CHECK(same((td & other).get("n"), at::tensor({8, 2, 2, 1})));
  CHECK(same((td | 1).get("n"), at::tensor({13, 11, 7, 5})));
  CHECK(same(td.bitwise_xor(other).get("n"), at::tensor({6, 9, 5, 4})));
  // A scalar on the left, as Python's `True ^ td`: the same as on the right.
  CHECK(same((true ^ td).get("p"), p.logical_not()));
  CHECK(same((false | td).get("p"), p));
  CHECK(same((false & td).get("p"), at::zeros({4}, at::kBool)));
  CHECK(same((3 & td).get("n"), at::tensor({0, 2, 2, 1})));
  CHECK_THROWS(TensorDict({{"x", at::ones({4})}}, {4}) & 1);  // floats have no bitwise and
}

TEST_CASE("pad pads batch dims from the first, as Python's pad", "[shape][0.14]") {
  TensorDict td = sample();
  // (dim0_left, dim0_right, dim1_left, dim1_right); torch's pad lists dims from the last.
  TensorDict out = td.pad({1, 0, 0, 2}, -1);
  CHECK(out.batch_size() == BatchSize{5, 5});
  CHECK(same(out.get("a"), at::constant_pad_nd(td.get("a"), {0, 0, 0, 2, 1, 0}, -1)));
  CHECK(same(out.get({"n", "c"}), at::constant_pad_nd(td.get({"n", "c"}), {0, 0, 0, 2, 1, 0}, -1)));
  const Value s = out.get_value("s");  // keeps the items alive
  const auto items = s.non_tensor_stack().items();
  REQUIRE(items.size() == 25);
  CHECK(items[0].is_null());                     // the padded first row
  CHECK(items[5] == "0,0");                      // the first original item
  CHECK(items[8].is_null());                     // padded columns of that row
  const Value txt_value = out.get_value("txt");  // as Python: a NonTensorStack now
  const auto txt = txt_value.non_tensor_stack().items();
  CHECK(txt[0].is_null());
  CHECK(txt[5] == "hello");
  CHECK(td.pad({-1, 0}).batch_size() == BatchSize{3, 3});  // negative sizes crop
  CHECK_THROWS_AS(td.pad({1}), ShapeError);
  CHECK_THROWS_AS(td.pad({0, 0, 0, 0, 1, 1}), ShapeError);
  CHECK_THROWS_AS(td.pad({-5, 0}), ShapeError);
}

TEST_CASE("in-place reshape_, flatten_, gather_, pad_ and contiguous_ keep identity",
          "[shape][0.14]") {
  TensorDict td = sample();
  const TensorDict alias = td;  // same TensorDict
  TensorDict nested = td.get_tensordict("n");
  td.reshape_({12});
  CHECK(alias.batch_size() == BatchSize{12});
  CHECK(same(td.get("a"), sample().get("a").reshape({12, 2})));
  CHECK(nested.batch_size() == BatchSize{12, 5});  // nested TensorDicts keep identity too
  CHECK(td.get_tensordict("n").is_same(nested));
  td.pad_({0, 4});
  CHECK(alias.batch_size() == BatchSize{16});
  td.gather_(0, at::tensor({15, 0}, at::kLong));
  CHECK(same(td.get("b"), at::tensor({0, 0}, at::kLong)));  // a padded row, then row 0
  TensorDict grid3 = sample().unsqueeze(0);
  grid3.flatten_(0, 1);
  CHECK(grid3.batch_size() == BatchSize{4, 3});
  TensorDict locked = sample();
  locked.lock_();
  CHECK_THROWS_MATCHES(locked.reshape_({12}), LockedError,
                       Message("reshape_: cannot change a locked TensorDict in place"));
  CHECK(locked.batch_size() == BatchSize{4, 3});
}

TEST_CASE("contiguous(canonical) rewrites strides that only size-1 dims allow", "[shape][0.14]") {
  // [2, 1] with stride 5 on the size-1 dim: contiguous to torch, not canonical.
  const at::Tensor odd = at::arange(10, at::kFloat).as_strided({2, 1}, {1, 5});
  REQUIRE(odd.is_contiguous());
  TensorDict td({{"x", odd}}, {2});
  CHECK(td.contiguous().get("x").is_same(odd));
  const at::Tensor canonical = td.contiguous(true).get("x");
  CHECK(canonical.strides() == at::IntArrayRef({1, 1}));
  CHECK(same(canonical, odd));
  td.contiguous_(true);
  CHECK(td.get("x").strides() == at::IntArrayRef({1, 1}));
}

TEST_CASE("quantile per leaf and over every leaf", "[reduce][0.14]") {
  TensorDict td({{"x", at::arange(12, at::kFloat).view({4, 3})},
                 {"y", at::rand({4, 3, 2})},
                 {"txt", "left out"}},
                {4, 3});
  TensorDict median = td.quantile(0.5, 0);
  CHECK(median.batch_size() == BatchSize{3});
  CHECK(same(median.get("x"), at::quantile(td.get("x"), 0.5, 0)));
  CHECK(same(median.get("y"), at::quantile(td.get("y"), 0.5, 0)));
  CHECK_FALSE(median.contains("txt"));
  CHECK(same(td.quantile(0.25, {}, false, "lower").get("x"),
             at::quantile(td.get("x").reshape({-1}), 0.25, c10::nullopt, false, "lower")));
  CHECK(same(td.quantile(ReduceAll{}, 1.0),
             at::cat({td.get("x").reshape({-1}), td.get("y").reshape({-1})}).max()));
  CHECK_THROWS_AS(td.quantile(0.5, {0, 1}), ShapeError);
  TensorDict ints({{"i", at::arange(4)}}, {4});
  CHECK_THROWS_WITH(ints.quantile(0.5, 0),
                    Catch::Matchers::ContainsSubstring("quantile: key 'i' (int64 [4])"));
}
