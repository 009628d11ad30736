// Per-leaf ops: apply (filtering and two-TensorDict forms), casts, copies and in-place fills.
#include "catch2_compat.h"

#include "ops_test_util.h"

using namespace ops_test;
using Catch::Matchers::Message;

TEST_CASE("apply maps every leaf, returning no tensor drops the leaf", "[apply]") {
  TensorDict td = sample();
  TensorDict plus = td.apply([](const at::Tensor& t) { return t + 1; });
  CHECK(same(plus.get("a"), td.get("a") + 1));
  CHECK(same(plus.get({"n", "c"}), td.get({"n", "c"}) + 1));
  CHECK(plus.get_non_tensor("txt") == "hello");
  TensorDict floats = td.apply([](const at::Tensor& t) {
    return t.is_floating_point() ? t : at::Tensor();  // filter by dtype
  });
  CHECK(floats.contains("a"));
  CHECK_FALSE(floats.contains("b"));
  CHECK(floats.contains({"n", "c"}));
  CHECK_THROWS_MATCHES(td.apply([](const at::Tensor& t) { return t.sum(); }), ShapeError,
                       Message("apply: the result for key 'a' has shape [], which lacks the batch "
                               "dims [4, 3]"));
}

TEST_CASE("apply over two TensorDicts pairs leaves by key", "[apply]") {
  TensorDict x = sample();
  TensorDict y = sample().apply([](const at::Tensor& t) { return t * 2; });
  TensorDict sum = x.apply([](const at::Tensor& a, const at::Tensor& b) { return a + b; }, y);
  CHECK(same(sum.get("b"), x.get("b") * 3));
  CHECK(same(sum.get({"n", "c"}), x.get({"n", "c"}) * 3));
  TensorDict missing({{"a", at::zeros({4, 3, 2})}}, {4, 3});
  CHECK_THROWS_MATCHES(
      x.apply([](const at::Tensor& a, const at::Tensor& b) { return a + b; }, missing), KeyError,
      Message("apply: key 'b' is missing from the other TensorDict"));
}

TEST_CASE("apply_ writes results into the existing tensors", "[apply]") {
  TensorDict td = sample();
  const at::Tensor a = td.get("a");
  const at::Tensor expect = a * 3;
  td.apply_([](const at::Tensor& t) { return t * 3; });
  CHECK(td.get("a").is_same(a));
  CHECK(same(td.get("a"), expect));
  CHECK_THROWS_AS(td.apply_([](const at::Tensor& t) { return t.flatten(); }), ShapeError);
}

TEST_CASE("to, clone, contiguous and detach copy or convert every leaf", "[apply]") {
  TensorDict td = sample();
  TensorDict dbl = td.to(at::kDouble);
  CHECK(dbl.get("b").scalar_type() == at::kDouble);
  CHECK(same(dbl.get({"n", "c"}), td.get({"n", "c"}).to(at::kDouble)));
  TensorDict cpu = td.to(at::Device(at::kCPU));
  CHECK(cpu.device() == at::Device(at::kCPU));
  CHECK(cpu.get_tensordict("n").device() == at::Device(at::kCPU));
  TensorDict t = td.transpose(0, 1);
  CHECK_FALSE(t.get("a").is_contiguous());
  TensorDict c = t.contiguous();
  CHECK(c.get("a").is_contiguous());
  CHECK(same(c.get("a"), t.get("a")));
  at::Tensor w = at::ones({4, 3}).requires_grad_();
  TensorDict g({{"w", w * 2}}, {4, 3});
  CHECK_FALSE(g.detach().get("w").requires_grad());
  CHECK(g.get("w").requires_grad());
  // Python's requires_grad property: some leaf requires grad, at any depth.
  CHECK(g.requires_grad());
  CHECK_FALSE(g.detach().requires_grad());
  TensorDict holder({{"inner", g}, {"x", at::zeros({4, 3})}}, {4, 3});
  CHECK(holder.requires_grad());
  CHECK_FALSE(sample().requires_grad());
}

TEST_CASE("zero_, fill_, masked_fill, where and share_memory_", "[apply]") {
  TensorDict td = sample();
  td.fill_("a", 2.5);
  CHECK(td.get("a").eq(2.5).all().item<bool>());
  td.fill_("n", 4);
  CHECK(td.get({"n", "c"}).eq(4).all().item<bool>());
  CHECK_THROWS_MATCHES(td.fill_("txt", 1), TypeError,
                       Message("fill_: key 'txt' holds a NonTensorData, not a Tensor or "
                               "TensorDict"));

  TensorDict fresh = sample();
  const at::Tensor mask = grid() % 2 == 0;
  TensorDict filled = fresh.masked_fill(mask, -1);
  CHECK(same(filled.get("a"), fresh.get("a").masked_fill(mask.unsqueeze(-1), -1)));
  CHECK(same(filled.get({"n", "c"}), fresh.get({"n", "c"}).masked_fill(mask.unsqueeze(-1), -1)));
  CHECK_THROWS_MATCHES(fresh.masked_fill(at::ones({3}, at::kBool), 0), ShapeError,
                       Message("masked_fill: mask of shape [3] does not match the leading dims of "
                               "batch_size [4, 3]"));

  TensorDict other = sample().apply([](const at::Tensor& t) { return t * 0; });
  other.set("txt", "bye");
  TensorDict picked = fresh.where(mask, other);
  CHECK(same(picked.get("b"), at::where(mask, fresh.get("b"), other.get("b"))));
  CHECK(picked.get_non_tensor("txt")[0] == Json::array({"hello", "bye", "hello"}));

  fresh.zero_();
  CHECK(fresh.get("a").eq(0).all().item<bool>());
  CHECK(fresh.get({"n", "c"}).eq(0).all().item<bool>());

  TensorDict shared = sample();
  const at::Tensor before = shared.get("a");
  shared.share_memory_();
  CHECK(shared.get("a").is_same(before));  // moved in place: handles follow
  CHECK(same(shared.get("a"), sample().get("a")));
}

TEST_CASE("two-TensorDict ops refuse mismatched kinds and masks", "[apply][errors]") {
  TensorDict x = sample();
  TensorDict y = sample();
  y.set("a", "not a tensor");
  CHECK_THROWS_MATCHES(x.where(grid() > 3, y), TypeError,
                       Message("where: key 'a' is a Tensor here but a NonTensorData in the other "
                               "TensorDict"));
  CHECK_THROWS_MATCHES(x.where(grid(), sample()), TypeError,
                       Message("where: the mask must be a bool tensor, got Long"));
  TensorDict z = sample();
  z.get("b").resize_({0});
  CHECK_THROWS_WITH(x.apply([](const at::Tensor& a, const at::Tensor& b) { return a + b; }, z),
                    Catch::Matchers::ContainsSubstring("apply: key 'b' of shape [4, 3]"));
}
