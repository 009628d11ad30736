// Fused math on consolidated TensorDicts (ops/fused.cpp): every op over the flat buffer gives, bit
// for bit, what the per-leaf path gives on the same TensorDict unconsolidated; layouts the fused
// path cannot take fall back with the same results.
#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>
#include "catch2_compat.h"

#include "tensordict/tensordict.h"

using tensordict::TensorDict;

namespace {

// Bitwise equality of two leaves (NaN == NaN when the bits agree).
bool same_bits(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || !a.sizes().equals(b.sizes())) return false;
  const at::Tensor x = a.contiguous(), y = b.contiguous();
  return at::equal(x.view({-1}).view(at::kByte), y.view({-1}).view(at::kByte));
}

void require_same(const TensorDict& fused, const TensorDict& per_leaf) {
  const auto keys = per_leaf.keys(true, true);
  REQUIRE(fused.keys(true, true) == keys);
  for (const auto& key : keys) {
    INFO(key.repr());
    if (per_leaf.get_value(key).is_tensor()) CHECK(same_bits(fused.get(key), per_leaf.get(key)));
  }
}

// Float leaves of mixed dtypes (float16 left out: libtorch 1.13 has no CPU exp for it) and odd
// sizes (padding between leaves), nested, a string, a 0-dim leaf; values with negatives, zeros and
// large numbers so exp/log/sqrt meet inf and NaN too.
TensorDict mixed_dtypes() {
  TensorDict td({}, {4});
  td.set("a", at::randn({4, 3}) * 10);
  td.set("b", at::randn({4, 5}, at::kDouble));
  td.set("c", at::randn({4, 7}));
  td.set("d", at::randn({4, 3}).to(at::kBFloat16));
  TensorDict inner({}, {4});
  inner.set("e", at::randn({4, 2, 3}));
  inner.set("f", at::tensor({0.f, -0.f, 1e30f, -1e30f}));
  td.set("nested", inner);
  td.set_non_tensor("label", tensordict::Json("text"));
  td.set("g", at::randn({4}, at::kDouble));
  return td;
}

using Unary = std::function<TensorDict(const TensorDict&)>;

}  // namespace

TEST_CASE("fused element-wise ops equal the per-leaf ones bit for bit", "[ops][fused]") {
  const TensorDict plain = mixed_dtypes();
  const TensorDict packed = plain.consolidate();
  const TensorDict other = (plain * 0.5 + 1.25);
  const TensorDict other_packed = other.consolidate();
  const std::vector<std::pair<const char*, Unary>> ops{
      {"mul_scalar", [](const TensorDict& t) { return t * 3.5; }},
      {"mul_int", [](const TensorDict& t) { return t.mul(2); }},
      {"add_scalar", [](const TensorDict& t) { return t.add(0.25, 3); }},
      {"sub_scalar", [](const TensorDict& t) { return t.sub(1.5, 0.5); }},
      {"div_scalar", [](const TensorDict& t) { return t / 7.0; }},
      {"pow_scalar", [](const TensorDict& t) { return t.pow(2); }},
      {"pow_half", [](const TensorDict& t) { return t.pow(0.5); }},
      {"exp", [](const TensorDict& t) { return t.exp(); }},
      {"neg", [](const TensorDict& t) { return t.neg(); }},
      {"abs", [](const TensorDict& t) { return t.abs(); }},
      {"log", [](const TensorDict& t) { return t.log(); }},
      {"sqrt", [](const TensorDict& t) { return t.sqrt(); }},
      {"sigmoid", [](const TensorDict& t) { return t.sigmoid(); }},
      {"tanh", [](const TensorDict& t) { return t.tanh(); }},
      {"floor", [](const TensorDict& t) { return t.floor(); }},
      {"round", [](const TensorDict& t) { return t.round(); }},
      {"reciprocal", [](const TensorDict& t) { return t.reciprocal(); }},
      {"sign", [](const TensorDict& t) { return t.sign(); }},
  };
  for (const auto& [name, op] : ops) {
    INFO(name);
    const TensorDict fused = op(packed);
    CHECK(fused.is_consolidated());  // the fused path: its leaves view one new buffer
    require_same(fused, op(plain));
    CHECK(fused.get_non_tensor("label") == tensordict::Json("text"));
  }
  SECTION("binary ops between two consolidated TensorDicts of one layout") {
    const std::vector<
        std::pair<const char*, std::function<TensorDict(const TensorDict&, const TensorDict&)>>>
        binary{{"add", [](const TensorDict& a, const TensorDict& b) { return a.add(b, 2); }},
               {"sub", [](const TensorDict& a, const TensorDict& b) { return a - b; }},
               {"mul", [](const TensorDict& a, const TensorDict& b) { return a * b; }},
               {"div", [](const TensorDict& a, const TensorDict& b) { return a / b; }},
               {"pow", [](const TensorDict& a, const TensorDict& b) { return a.pow(b); }}};
    const TensorDict same_layout = packed.clone() * 0.5 + 1.25;  // clone keeps the layout
    REQUIRE(same_layout.is_consolidated());
    for (const auto& [name, op] : binary) {
      INFO(name);
      const TensorDict fused = op(packed, same_layout);
      CHECK(fused.is_consolidated());
      require_same(fused, op(plain, other));
      // Another layout (unconsolidated operand): the per-leaf path, same values.
      require_same(op(packed, other), op(plain, other));
    }
    (void)other_packed;
  }
}

TEST_CASE("fused in-place ops equal the per-leaf ones and touch only their leaves",
          "[ops][fused]") {
  const std::vector<std::pair<const char*, std::function<void(TensorDict&, const TensorDict&)>>>
      ops{{"mul_", [](TensorDict& t, const TensorDict&) { t.mul_(1.5); }},
          {"add_", [](TensorDict& t, const TensorDict&) { t.add_(2, 0.5); }},
          {"div_", [](TensorDict& t, const TensorDict&) { t.div_(3); }},
          {"exp_", [](TensorDict& t, const TensorDict&) { t.exp_(); }},
          {"neg_", [](TensorDict& t, const TensorDict&) { t.neg_(); }},
          {"sign_", [](TensorDict& t, const TensorDict&) { t.sign_(); }},
          {"add_td", [](TensorDict& t, const TensorDict& o) { t.add_(o); }},
          {"mul_td", [](TensorDict& t, const TensorDict& o) { t.mul_(o); }}};
  const TensorDict source = mixed_dtypes();
  for (const auto& [name, op] : ops) {
    INFO(name);
    TensorDict plain = source.clone();
    TensorDict packed = source.consolidate();
    const at::Tensor buffer_before = packed.get("a");
    op(plain, source);
    op(packed, packed.clone());
    require_same(packed, plain);
    CHECK(packed.is_consolidated());
    CHECK(packed.get("a").is_same(buffer_before));  // in place: the same tensors
  }
  SECTION("a selection of a consolidated TensorDict leaves the other leaves alone") {
    TensorDict packed = source.consolidate();
    const TensorDict untouched = packed.clone();
    TensorDict some = packed.select({"a", "g"});  // same buffer, another leaf between them
    some.mul_(100.0);
    CHECK(same_bits(packed.get("b"), untouched.get("b")));
    CHECK(same_bits(packed.get("c"), untouched.get("c")));
    CHECK(same_bits(packed.get("a"), untouched.get("a") * 100.0));
  }
}

TEST_CASE("layouts the fused path cannot take fall back with the same results", "[ops][fused]") {
  TensorDict td({}, {4});
  td.set("x", at::randn({4, 3}));
  td.set("i", at::arange(4));  // an integer leaf: int * 2.5 is float, exp of int is float
  const TensorDict packed = td.consolidate();
  const TensorDict scaled = packed * 2.5;
  CHECK(!scaled.is_consolidated());
  CHECK(scaled.get("i").scalar_type() == at::kFloat);
  require_same(scaled, td * 2.5);
  require_same(packed.exp(), td.exp());
  TensorDict in_place = packed.clone();
  in_place.mul_(3);
  require_same(in_place, td * 3);
  // A transposed leaf (not contiguous, still a view of the buffer).
  TensorDict t = packed.clone();
  t.set("x", t.get("x").t().t().transpose(0, 1).transpose(0, 1));
  require_same(t.neg(), td.neg());
}

TEST_CASE("fused reductions over every leaf equal concatenating the leaves", "[ops][fused]") {
  TensorDict td({}, {8});
  for (int i = 0; i < 6; ++i) td.set("k" + std::to_string(i), at::randn({8, 4}));  // 128 bytes
  TensorDict inner({}, {8});
  inner.set("z", at::randn({8, 2}));
  td.set("nested", inner);
  const TensorDict packed = td.consolidate();
  using tensordict::reduce_all;
  CHECK(same_bits(packed.sum(reduce_all), td.sum(reduce_all)));
  CHECK(same_bits(packed.mean(reduce_all), td.mean(reduce_all)));
  CHECK(same_bits(packed.norm(reduce_all), td.norm(reduce_all)));
  CHECK(same_bits(packed.max(reduce_all), td.max(reduce_all)));
  CHECK(same_bits(packed.min(reduce_all), td.min(reduce_all)));
  CHECK(same_bits(packed.std(reduce_all), td.std(reduce_all)));
  CHECK(same_bits(packed.prod(reduce_all), td.prod(reduce_all)));
  // The value is the reduction of the concatenated leaves.
  std::vector<at::Tensor> parts;
  for (const auto& key : td.keys(true, true)) parts.push_back(td.get(key).reshape({-1}));
  CHECK(same_bits(packed.sum(reduce_all), at::cat(parts).sum()));
  // Padding after a leaf of 12 bytes is never read: the per-leaf path.
  TensorDict odd({}, {3});
  odd.set("a", at::randn({3, 1}));
  odd.set("b", at::randn({3, 2}));
  CHECK(same_bits(odd.consolidate().sum(reduce_all), odd.sum(reduce_all)));
}

TEST_CASE("fused transcendental ops stay bit-exact on long runs", "[ops][fused]") {
  // Runs far longer than a leaf (and than ATen's parallel grain): the vectorised and scalar parts
  // of a kernel split a run elsewhere than its leaves, which must not change a value.
  TensorDict td({}, {64});
  for (int i = 0; i < 100; ++i) td.set("k" + std::to_string(i), at::randn({64, 16}));
  td.set("odd", at::randn({64, 13}));
  td.set("big", at::randn({64, 1001}));
  const TensorDict packed = td.consolidate();
  require_same(packed.exp(), td.exp());
  require_same(packed.tanh(), td.tanh());
  require_same(packed.sigmoid(), td.sigmoid());
  require_same(packed.abs().log(), td.abs().log());
  require_same(packed * 1.7 + 0.3, td * 1.7 + 0.3);
}
