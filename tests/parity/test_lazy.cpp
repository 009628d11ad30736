// Ports of Python tensordict v0.14.0 tests on lazy stacks: a mask over several dims including
// the stack dim, pad_ in place along any dim, and contiguous_'s refusal.
#include <ATen/ATen.h>

#include "parity_fixtures.h"

using namespace tensordict;

TEST_CASE("test_methods: test_masking", "[parity][methods]") {
  // torch.masked_select(td, mask) (a __torch_function__ dispatch) is each leaf's masked rows.
  PARITY_FIXTURE();
  at::Tensor mask;
  while (true) {
    mask = at::zeros(td.batch_size(), at::kBool).bernoulli_(0.8);
    if (!mask.all().item<bool>() && mask.any().item<bool>()) break;
  }
  const TensorDict td_masked = td.index({mask});
  for (const auto& key : td.keys(true, true)) {
    INFO(key);
    CHECK(at::allclose(td_masked.get(key).to(at::kDouble),
                       td.get(key).index({mask}).to(at::kDouble)));
  }
  CHECK(td_masked.batch_size()[0] == mask.sum().item<int64_t>());
  CHECK(td_masked.batch_dims() == 1);
}

TEST_CASE("test_generic: test_pad_inplace_lazy_stack_non_stack_dim", "[parity][generic]") {
  TensorDict lst = lazy_stack(
      {TensorDict({{"x", at::ones({4})}}, {4}), TensorDict({{"x", at::ones({4}) * 2}}, {4})}, 0);
  const std::vector<TensorDict> before = lst.tensordicts();
  TensorDict& out = lst.pad_({0, 0, 0, 1}, 0.0);
  CHECK(out.is_same(lst));
  CHECK(out.batch_size() == BatchSize{2, 5});
  for (size_t i = 0; i < before.size(); ++i) CHECK(out.tensordicts()[i].is_same(before[i]));
  CHECK(out.tensordicts()[0]["x"].size(0) == 5);
  CHECK(out.tensordicts()[0]["x"][-1].item<double>() == 0.0);
  CHECK(out.tensordicts()[1]["x"][-1].item<double>() == 0.0);
}

TEST_CASE("test_generic: test_pad_inplace_lazy_stack_stack_dim", "[parity][generic]") {
  TensorDict lst = lazy_stack(
      {TensorDict({{"x", at::ones({4})}}, {4}), TensorDict({{"x", at::ones({4}) * 2}}, {4})}, 0);
  TensorDict& out = lst.pad_({0, 1, 0, 0}, 9.0);
  CHECK(out.is_same(lst));
  CHECK(out.batch_size() == BatchSize{3, 4});
  REQUIRE(out.tensordicts().size() == 3);
  CHECK(at::equal(out.tensordicts()[2]["x"], at::full({4}, 9.0)));
  CHECK(at::equal(out.tensordicts()[0]["x"], at::ones({4})));
  CHECK(at::equal(out.tensordicts()[1]["x"], at::ones({4}) * 2));
}

// Python refuses an in-place contiguous of a lazy stack (NotImplementedError).
TEST_CASE("test_generic: test_contiguous_inplace_lazy_stack_raises", "[parity][generic]") {
  TensorDict lst = lazy_stack(
      {TensorDict({{"x", at::zeros({4})}}, {4}), TensorDict({{"x", at::zeros({4})}}, {4})}, 0);
  CHECK_THROWS_AS(lst.contiguous_(), Error);
}
