// TensorDict math: every result checked against the same torch op on each leaf.
#include "catch2_compat.h"

#include "ops_test_util.h"

using namespace ops_test;

namespace {

const std::vector<NestedKey> kLeaves = {NestedKey("a"), NestedKey("b"), NestedKey({"n", "c"})};

// `out` holds `expected(leaf)` at every tensor leaf of `td`, same dtype and shape.
template <class F>
void check_leaves(const TensorDict& out, const TensorDict& td, F expected) {
  for (const auto& key : kLeaves) {
    INFO("key " << key.repr());
    const at::Tensor want = expected(td.get(key));
    CHECK(out.get(key).scalar_type() == want.scalar_type());
    CHECK(same(out.get(key), want));
  }
}

TensorDict floats() {
  return sample().apply([](const at::Tensor& t) { return t.to(at::kFloat) + 1; });
}

}  // namespace

TEST_CASE("arith: + - * / with a scalar, leaf by leaf", "[math][arith]") {
  TensorDict td = sample();
  check_leaves(td + 2, td, [](const at::Tensor& t) { return t + 2; });
  check_leaves(td - 1.5, td, [](const at::Tensor& t) { return t - 1.5; });
  check_leaves(td * 3, td, [](const at::Tensor& t) { return t * 3; });
  check_leaves(td / 2, td, [](const at::Tensor& t) { return t / 2; });
  check_leaves(-td, td, [](const at::Tensor& t) { return -t; });
  check_leaves(2 + td, td, [](const at::Tensor& t) { return 2 + t; });
  check_leaves(10 - td, td, [](const at::Tensor& t) { return 10 - t; });
  check_leaves(td.add(1, 3), td, [](const at::Tensor& t) { return t.add(1, 3); });
  check_leaves(td.pow(2), td, [](const at::Tensor& t) { return t.pow(2); });
  TensorDict f = floats();
  check_leaves(2 / f, f, [](const at::Tensor& t) { return 2 / t; });
  // Non-tensor entries are carried over unchanged.
  CHECK((td * 2).get_non_tensor("txt") == "hello");
  CHECK(items_of(td * 2, "s") == items_of(td, "s"));
  CHECK((td * 2).batch_size() == td.batch_size());
}

TEST_CASE("arith: a tensor broadcasts over the batch dims", "[math][arith]") {
  TensorDict td = sample();
  const at::Tensor row = at::arange(4, at::kFloat).view({4, 1});  // batch [4, 3]: dim 0
  TensorDict out = td * row;
  CHECK(same(out.get("a"), td.get("a") * row.view({4, 1, 1})));
  CHECK(same(out.get("b"), td.get("b") * row));
  CHECK(same(out.get({"n", "c"}), td.get({"n", "c"}) * row.view({4, 1, 1})));
  const at::Tensor col = at::tensor({1.f, 10.f, 100.f});  // [3]: the last batch dim
  CHECK(same((td + col).get("a"), td.get("a") + col.view({3, 1})));
  CHECK_THROWS_WITH(td + at::ones({5}),
                    "add: a tensor of shape [5] does not broadcast over the batch dims [4, 3]");
  CHECK_THROWS_WITH(
      td * at::ones({4, 3, 2}),
      "mul: a tensor of shape [4, 3, 2] does not broadcast over the batch dims [4, 3]");
}

TEST_CASE("arith: two TensorDicts with the same keys", "[math][arith]") {
  TensorDict td = sample();
  TensorDict other = td.apply([](const at::Tensor& t) { return t * 0 + 3; });
  check_leaves(td + other, td, [](const at::Tensor& t) { return t + 3; });
  check_leaves(td.sub(other, 2), td, [](const at::Tensor& t) { return t.sub(t * 0 + 3, 2); });
  check_leaves(td * other, td, [](const at::Tensor& t) { return t * 3; });
  TensorDict partial = other.exclude({NestedKey("b")});
  CHECK_THROWS_WITH(td + partial, "add: key 'b' is missing from the other TensorDict");
  TensorDict mine = td.clone();
  CHECK_THROWS_WITH(mine.add_(partial), "add_: key 'b' is missing from the other TensorDict");
}

TEST_CASE("arith: in-place forms write into the leaves", "[math][arith]") {
  TensorDict td = floats();
  const TensorDict before = td.clone();
  const at::Tensor a = td.get("a");
  td += 1;
  td *= 2;
  td -= before;
  td /= 4;
  check_leaves(td, before, [](const at::Tensor& t) { return ((t + 1) * 2 - t) / 4; });
  CHECK(td.get("a").is_same(a));  // same tensor object, written in place
  td.add_(before, 2).sub_(1, 3).mul_(at::full({3}, 2.f)).div_(before).pow_(2);
  check_leaves(td, before, [](const at::Tensor& t) {
    const at::Tensor s = ((t + 1) * 2 - t) / 4;
    const at::Tensor col = at::full({3}, 2.f).view(t.dim() == 3 ? std::vector<int64_t>{3, 1}
                                                                : std::vector<int64_t>{3});
    return ((s + 2 * t - 3) * col / t).pow(2);
  });
  TensorDict ints = sample();
  ints.add_(2, 3);  // an integer leaf stays integer: 2 * 3 is applied as an int
  CHECK(same(ints.get("b"), sample().get("b") + 6));
}

TEST_CASE("arith: lerp_, clamp and comparisons", "[math][arith]") {
  TensorDict td = floats();
  const TensorDict before = td.clone();
  TensorDict end = td.apply([](const at::Tensor& t) { return t * 0 + 100; });
  check_leaves(td.lerp(end, 0.25), before,
               [](const at::Tensor& t) { return t.lerp(t * 0 + 100, 0.25); });
  td.lerp_(end, 0.5);
  check_leaves(td, before, [](const at::Tensor& t) { return t.lerp(t * 0 + 100, 0.5); });
  check_leaves(before.clamp(3, 10), before, [](const at::Tensor& t) { return t.clamp(3, 10); });
  check_leaves(before.clamp_min(5), before, [](const at::Tensor& t) { return t.clamp_min(5); });
  check_leaves(before.clamp_max(5), before, [](const at::Tensor& t) { return t.clamp_max(5); });
  TensorDict clamped = before.clone();
  clamped.clamp_(std::nullopt, 4);
  check_leaves(clamped, before, [](const at::Tensor& t) { return t.clamp_max(4); });
  check_leaves(before < 5, before, [](const at::Tensor& t) { return t < 5; });
  check_leaves(before <= 5, before, [](const at::Tensor& t) { return t <= 5; });
  check_leaves(before > end, before, [](const at::Tensor& t) { return t > 100; });
  check_leaves(before >= 5, before, [](const at::Tensor& t) { return t >= 5; });
  check_leaves(before.ne(5), before, [](const at::Tensor& t) { return t != 5; });
  check_leaves(before.eq(before), before, [](const at::Tensor& t) { return t == t; });
}

TEST_CASE("arith: point-wise functions and their in-place forms", "[math][arith]") {
  const TensorDict td = floats().sub(6.5);
  using Fn = at::Tensor (*)(const at::Tensor&);
  const std::vector<std::pair<TensorDict (TensorDict::*)() const, Fn>> cases = {
      {&TensorDict::abs, [](const at::Tensor& t) { return t.abs(); }},
      {&TensorDict::exp, [](const at::Tensor& t) { return t.exp(); }},
      {&TensorDict::sigmoid, [](const at::Tensor& t) { return t.sigmoid(); }},
      {&TensorDict::tanh, [](const at::Tensor& t) { return t.tanh(); }},
      {&TensorDict::sign, [](const at::Tensor& t) { return t.sign(); }},
      {&TensorDict::floor, [](const at::Tensor& t) { return t.floor(); }},
      {&TensorDict::ceil, [](const at::Tensor& t) { return t.ceil(); }},
      {&TensorDict::round, [](const at::Tensor& t) { return t.round(); }},
      {&TensorDict::neg, [](const at::Tensor& t) { return t.neg(); }}};
  for (const auto& [method, expected] : cases) check_leaves((td.*method)(), td, expected);
  const TensorDict positive = floats();
  check_leaves(positive.log(), positive, [](const at::Tensor& t) { return t.log(); });
  check_leaves(positive.sqrt(), positive, [](const at::Tensor& t) { return t.sqrt(); });
  TensorDict x = td.clone();
  x.abs_().sqrt_().exp_().log_().sigmoid_().tanh_().neg_().sign_().floor_().ceil_().round_();
  check_leaves(x, td, [](const at::Tensor& t) {
    return t.abs().sqrt().exp().log().sigmoid().tanh().neg().sign().floor().ceil().round();
  });
}

TEST_CASE("reductions over every element of each leaf", "[math][reduce]") {
  const TensorDict td = floats();
  TensorDict s = td.sum();
  CHECK(s.batch_size().empty());
  CHECK(s.get_tensordict("n").batch_size().empty());
  CHECK_FALSE(s.contains("txt"));  // non-tensor entries are left out
  check_leaves(s, td, [](const at::Tensor& t) { return t.sum(); });
  check_leaves(td.mean(), td, [](const at::Tensor& t) { return t.mean(); });
  check_leaves(td.std(), td, [](const at::Tensor& t) { return t.std(); });
  check_leaves(td.var(), td, [](const at::Tensor& t) { return t.var(); });
  check_leaves(td.prod(), td, [](const at::Tensor& t) { return t.prod(); });
  check_leaves(td.max(), td, [](const at::Tensor& t) { return t.max(); });
  check_leaves(td.min(), td, [](const at::Tensor& t) { return t.min(); });
  check_leaves(td.norm(), td, [](const at::Tensor& t) { return t.norm(); });
  check_leaves((td > 3).all(ReduceDims()), td, [](const at::Tensor& t) { return (t > 3).all(); });
  CHECK_THROWS_WITH(sample().mean(),
                    Catch::Matchers::ContainsSubstring("mean: key 'b' (int64 [4, 3])"));
}

TEST_CASE("reductions over batch dims, with keepdim, and over feature dims", "[math][reduce]") {
  const TensorDict td = floats();
  TensorDict s0 = td.sum(0);
  CHECK(s0.batch_size() == BatchSize{3});
  CHECK(s0.get_tensordict("n").batch_size() == BatchSize{3, 5});
  check_leaves(s0, td, [](const at::Tensor& t) { return t.sum(0); });
  check_leaves(td.mean(-1, true), td, [](const at::Tensor& t) { return t.mean(1, true); });
  CHECK(td.mean(-1, true).batch_size() == BatchSize{4, 1});
  check_leaves(td.max({0, 1}), td, [](const at::Tensor& t) { return t.amax({0, 1}); });
  check_leaves(td.prod({1, 0}), td, [](const at::Tensor& t) { return t.prod(1).prod(0); });
  check_leaves(td.std(1), td, [](const at::Tensor& t) { return t.std(1); });
  check_leaves(td.norm(0), td, [](const at::Tensor& t) { return t.norm(2, {0}); });
  check_leaves((td > 5).any(1), td, [](const at::Tensor& t) { return (t > 5).any(1); });
  TensorDict feature = td.sum(ReduceDims::feature());
  CHECK(feature.batch_size() == td.batch_size());
  CHECK(same(feature.get("a"), td.get("a").sum(-1)));
  CHECK(same(feature.get("b"), td.get("b")));                // no feature dims: the value itself
  CHECK(same(feature.get({"n", "c"}), td.get({"n", "c"})));  // n's own batch dims [4, 3, 5]
  CHECK_THROWS_WITH(td.sum(2),
                    "sum: dim 2 is out of range for batch_size [4, 3] (expected in [-2, 1])");
  CHECK_THROWS_WITH(td.sum({0, -2}), "sum: batch dim -2 is given twice");
  CHECK_THROWS_WITH(td.sum(ReduceDims::feature(), true),
                    "sum: dims=feature() excludes keepdim=true");
}

TEST_CASE("reductions to one tensor over every leaf (reduce=True)", "[math][reduce]") {
  const TensorDict td = floats();
  const at::Tensor all =
      at::cat({td.get("a").reshape(-1), td.get("b").reshape(-1), td.get({"n", "c"}).reshape(-1)});
  CHECK(same(td.sum(reduce_all), all.sum()));
  CHECK(same(td.mean(reduce_all), all.mean()));
  CHECK(same(td.max(reduce_all), all.max()));
  CHECK(same(td.norm(reduce_all), all.norm()));
  TensorDict flat({{"x", at::rand({4, 3})}, {"y", at::rand({4, 3, 2})}}, {4, 3});
  const at::Tensor per_row =
      at::cat({flat.get("x").unsqueeze(-1), flat.get("y")}, -1).sum(-1);  // [4, 3]
  CHECK(same(flat.sum(reduce_all, ReduceDims::feature()), per_row));
  TensorDict same_shape({{"x", at::rand({4, 3})}, {"y", at::rand({4, 3})}}, {4, 3});
  CHECK(same(same_shape.sum(reduce_all, 0),
             at::cat({same_shape.get("x"), same_shape.get("y")}, 0).sum(0)));
}
