// A generated class is a TensorDict: TensorDict's members are its members, those giving back a
// TensorDict give back the class (in-place ones: this instance), and the object is taken wherever
// a TensorDict is, without a copy. (test_contract checks every member's result type; these check
// what the members do.)
#include <ATen/ATen.h>

#include <type_traits>
#include "catch2_compat.h"

#include "plain.h"
#include "plain_rows.h"

using golden::Plain;
using tensordict::BatchSize;
using tensordict::TensorDict;

namespace {

template <class T>
constexpr bool is_plain = std::is_same_v<T, Plain>;

// Takes any TensorDict (as library code and models do).
void double_obs(TensorDict& td) { td.set_("obs", td.get("obs") * 2); }
int64_t leaf_count(const TensorDict& td) {
  return static_cast<int64_t>(td.keys(true, true).size());
}

}  // namespace

TEST_CASE("TensorDict members give back the class", "[tensorclass][members]") {
  const Plain p = plain_rows(4);
  static_assert(is_plain<decltype(p.select({"obs"}))>);
  static_assert(is_plain<decltype(p.exclude({"mask"}))>);
  static_assert(is_plain<decltype(p.clone())>);
  static_assert(is_plain<decltype(p.sum())>);
  static_assert(std::is_same_v<decltype(p.sum(tensordict::ReduceAll{})), at::Tensor>);
  static_assert(std::is_same_v<decltype(p.all()), bool>);
  static_assert(std::is_same_v<decltype(p.split(2)), std::vector<Plain>>);
  static_assert(is_plain<decltype(p.gather(0, at::tensor({0, 0}, at::kLong)))>);
  static_assert(is_plain<decltype(p.masked_fill(at::ones({4}, at::kBool), 0))>);

  const Plain obs_only = p.select({"obs"});
  CHECK(obs_only.keys() == std::vector<tensordict::NestedKey>{{"obs"}});
  CHECK(obs_only.obs().equal(p.obs()));
  CHECK_FALSE(obs_only.mask().has_value());  // a field left out reads as None

  // Reductions keep the fields: obs sums 0..11, mask counts its trues.
  const Plain total = p.sum();
  CHECK(total.obs().item<float>() == 66.0f);
  CHECK(total.mask()->item<int64_t>() == 4);
  CHECK(p.sum(tensordict::ReduceAll{}).item<double>() == 70.0);

  const std::vector<Plain> halves = p.split(2);
  REQUIRE(halves.size() == 2);
  CHECK(halves[1].obs().equal(p.obs().slice(0, 2, 4)));
  CHECK(halves[1].batch_size() == BatchSize{2});

  const Plain rows = p.gather(0, at::tensor({3, 0}, at::kLong));
  CHECK(rows.obs()[0].equal(p.obs()[3]));
  CHECK(rows.label() == "none");  // non-tensor fields carried over

  const Plain masked = p.masked_fill(at::tensor({1, 0, 0, 1}).to(at::kBool), -1);
  CHECK(masked.obs()[0].equal(at::full({3}, -1.0f)));
  CHECK(masked.obs()[1].equal(p.obs()[1]));
}

TEST_CASE("in-place TensorDict members give back this instance", "[tensorclass][members]") {
  Plain p({at::arange(9, at::kFloat).reshape({3, 3})}, {3});
  Plain& zeroed = p.zero_();
  CHECK(&zeroed == &p);
  CHECK(p.obs().sum().item<float>() == 0.0f);
  Plain& filled = p.fill_("obs", 2.5);
  CHECK(&filled == &p);
  CHECK(p.obs().equal(at::full({3, 3}, 2.5f)));
  Plain& grown = p.add_(1).mul_(2);
  CHECK(&grown == &p);
  CHECK(p.obs().equal(at::full({3, 3}, 7.0f)));
  // A member whose result is its `out` argument gives back that argument.
  TensorDict out = p.clone();
  TensorDict& result = p.apply_out(out, [](const at::Tensor& t) { return t + 1; });
  CHECK(&result == &out);
  CHECK(out.get("obs").equal(at::full({3, 3}, 8.0f)));
}

TEST_CASE("static TensorDict makers give back the class", "[tensorclass][members]") {
  const Plain made = Plain::fromkeys({"obs"}, at::zeros({2, 3}), {2});
  static_assert(is_plain<std::remove_const_t<decltype(made)>>);
  CHECK(made.obs().equal(at::zeros({2, 3})));
  CHECK(made.batch_size() == BatchSize{2});
}

TEST_CASE("a class is taken wherever a TensorDict is, without a copy", "[tensorclass][members]") {
  Plain p = plain_rows(2);
  const at::Tensor before = p.obs().clone();
  double_obs(p);  // writes through to the class's own tensor
  CHECK(p.obs().equal(before * 2));
  CHECK(leaf_count(p) == 3);  // obs, label, mask
  const TensorDict& as_td = p;
  CHECK(as_td.is_same(p._tensordict()));
  // TensorDict's free functions take classes as they are.
  const TensorDict stacked = tensordict::stack({p, p});
  CHECK(stacked.batch_size() == BatchSize{2, 2});
  CHECK(Plain::from_tensordict(stacked).obs().equal(at::stack({p.obs(), p.obs()})));
}

TEST_CASE("the kept members give back a TensorDict", "[tensorclass][members]") {
  const Plain p = plain_rows(2);
  for (const auto& kept : tensordict::kMembersKeptAsTensorDict) {
    INFO(kept.name << ": " << kept.why);
    CHECK_FALSE(kept.why.empty());
  }
  static_assert(std::is_same_v<decltype(p.data_ptr()), TensorDict>);
  CHECK(p.data_ptr().get("obs").item<int64_t>() == reinterpret_cast<int64_t>(p.obs().data_ptr()));
}

TEST_CASE("operators give back the class, a scalar on the left too", "[tensorclass][members]") {
  const Plain p({at::tensor({1.0f, 2.0f, 4.0f}).reshape({1, 3})}, {1});
  const at::Tensor obs = p.obs();
  static_assert(is_plain<decltype(1 + p)>);
  CHECK((1 + p).obs().equal(obs + 1));
  CHECK((1 - p).obs().equal(1 - obs));
  CHECK((2 * p).obs().equal(obs * 2));
  CHECK((1 / p).obs().equal(1 / obs));
  CHECK((p % 3).obs().equal(at::remainder(obs, 3)));
  CHECK((p + p).obs().equal(obs * 2));
  CHECK(p.pow(2).obs().equal(obs * obs));
  CHECK((-p).abs().obs().equal(obs));
  const Plain above = p > 1.5;
  CHECK(above.obs().equal(obs > 1.5));
  CHECK(above.obs().sum().item<int64_t>() == 2);
  // Python's `True ^ c.bool()`, `False | ...`, `False & ...`.
  static_assert(is_plain<decltype(true ^ above)>);
  CHECK((true ^ above).obs().equal(obs <= 1.5));
  CHECK((false | above).obs().equal(above.obs()));
  CHECK_FALSE((false & above).obs().any().item<bool>());
}
