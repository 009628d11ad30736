// TensorDictParams: a TensorDict's leaves as a module's parameters (float tensors) and buffers
// (the others), named as Python names them (nested keys joined with "_"), shared with the
// TensorDict, so that an optimizer step on the module is a step on the TensorDict.
// Before Catch: torch's headers bring glog's CHECK, which Catch's must replace.
#include "catch2_compat.h"
#include "tensordict/nn/params.h"

#include <torch/optim/sgd.h>

#include "tensordict/lazy_stack.h"

using namespace tensordict;
using namespace tensordict::nn;

namespace {

TensorDict linear_params() {
  return TensorDict(
      {{"linear", TensorDict({{"weight", at::randn({2, 3})}, {"bias", at::zeros({2})}})},
       {"steps", at::zeros({}, at::kLong)},
       {"task", "reach"}});
}

std::vector<std::string> names(const torch::OrderedDict<std::string, at::Tensor>& dict) {
  return dict.keys();
}

}  // namespace

TEST_CASE("float leaves become parameters, the others buffers, shared with the TensorDict",
          "[nn][params]") {
  const TensorDict td = linear_params();
  TensorDictParams params(td);
  CHECK(names(params->named_parameters()) ==
        std::vector<std::string>{"linear_weight", "linear_bias"});
  CHECK(names(params->named_buffers()) == std::vector<std::string>{"steps"});
  const at::Tensor weight = td.get({"linear", "weight"});
  CHECK(weight.requires_grad());
  CHECK(params->named_parameters()["linear_weight"].is_same(weight));
  CHECK(params->tensordict().get({"linear", "bias"}).is_same(td.get({"linear", "bias"})));
  CHECK_FALSE(td.get("steps").requires_grad());

  // Python's no_convert=True: only what already requires grad is a parameter.
  TensorDict frozen = linear_params();
  frozen.get({"linear", "bias"}).requires_grad_(true);
  TensorDictParams kept(frozen, /*no_convert=*/true);
  CHECK(names(kept->named_parameters()) == std::vector<std::string>{"linear_bias"});
  CHECK(names(kept->named_buffers()) == std::vector<std::string>{"linear_weight", "steps"});
}

TEST_CASE("an optimizer trains the TensorDict's leaves through a parent module", "[nn][params]") {
  struct PolicyImpl : torch::nn::Module {
    explicit PolicyImpl(const TensorDict& td) {
      params = register_module("params", TensorDictParams(td));
    }
    TensorDictParams params{nullptr};
  };
  const TensorDict td = linear_params();
  auto policy = std::make_shared<PolicyImpl>(td);
  CHECK(policy->parameters().size() == 2);
  const at::Tensor w0 = td.get({"linear", "weight"}).detach().clone();
  const at::Tensor b0 = td.get({"linear", "bias"}).detach().clone();
  torch::optim::SGD sgd(policy->parameters(), torch::optim::SGDOptions(0.1));
  const at::Tensor x = at::randn({4, 3});
  const at::Tensor y = at::linear(x, td.get({"linear", "weight"}), td.get({"linear", "bias"}));
  y.sum().backward();
  sgd.step();
  // d(sum(x W^T + b))/dW[i] = sum of x's rows; /db[i] = the row count. The backward's matmul
  // and SGD's fused update round differently from these float ops: an element that lands near
  // zero differs by a few ulps of the gradient, so the check needs an absolute tolerance.
  const at::Tensor grad_w = x.sum(0).expand({2, 3});
  CHECK(td.get({"linear", "weight"}).allclose(w0 - 0.1 * grad_w, 1e-5, 1e-5));
  CHECK(td.get({"linear", "bias"}).allclose(b0 - 0.1 * 4, 1e-5, 1e-5));
}

TEST_CASE("TensorDictParams refuses lazy stacks and names that collide", "[nn][params]") {
  const TensorDict lazy = lazy_stack({linear_params(), linear_params()});
  CHECK_THROWS_AS(TensorDictParams(lazy), TypeError);
  TensorDict clash({{"a_b", at::ones({1})}, {"a", TensorDict({{"b", at::ones({1})}})}});
  CHECK_THROWS_MATCHES(TensorDictParams(clash), KeyError,
                       Catch::Matchers::Message("TensorDictParams: key ('a', 'b') and another "
                                                "key both give the name 'a_b'"));
}
