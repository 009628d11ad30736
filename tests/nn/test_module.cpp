// TensorDict <-> torch::nn::Module: the parameter tree, swaps (returned, scoped, in place), the
// errors naming the key, memmap checkpoints (whole and one submodule) and ensembles.
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include "catch2_compat.h"
#include "nn_test_util.h"

#include "io_test_util.h"
#include "tensordict/module.h"

using namespace tensordict;
using Catch::Matchers::Message;
using nn_test::same;

namespace {

torch::nn::Sequential mlp() {
  return torch::nn::Sequential(torch::nn::Linear(3, 4), torch::nn::ReLU(),
                               torch::nn::BatchNorm1d(4), torch::nn::Linear(4, 2));
}

at::Tensor run(torch::nn::Sequential& model, const at::Tensor& x) {
  model->eval();
  return model->forward(x);
}

}  // namespace

TEST_CASE("from_module nests parameters then buffers per submodule, aliasing them", "[module]") {
  auto model = mlp();
  TensorDict params = TensorDict::from_module(*model);
  CHECK(params.keys() == std::vector<NestedKey>{"0", "2", "3"});  // ReLU has none
  CHECK(params.get_tensordict("0").keys() == std::vector<NestedKey>{"weight", "bias"});
  CHECK(params.get_tensordict("2").keys() == std::vector<NestedKey>{"weight", "bias",
                                                                    "running_mean", "running_var",
                                                                    "num_batches_tracked"});
  CHECK(params.batch_size().empty());
  CHECK(params.get({"0", "weight"}).is_same(model[0]->as<torch::nn::Linear>()->weight));
  CHECK(params.get({"0", "weight"}).requires_grad());
  CHECK_FALSE(params.is_locked());
  CHECK(TensorDict::from_module(*model, true).is_locked());
  // The flat keys are the module's state_dict keys.
  std::vector<std::string> flat;
  for (const auto& key : params.flatten_keys().keys()) flat.push_back(key.front());
  std::vector<std::string> expected;
  for (const auto& item : model->named_parameters()) expected.push_back(item.key());
  for (const auto& item : model->named_buffers()) expected.push_back(item.key());
  std::sort(flat.begin(), flat.end());
  std::sort(expected.begin(), expected.end());
  CHECK(flat == expected);
}

TEST_CASE("to_module swaps tensors in and returns the old ones", "[module]") {
  auto model = mlp();
  const at::Tensor x = at::randn({5, 3});
  const at::Tensor before = run(model, x);
  TensorDict params = TensorDict::from_module(*model);
  TensorDict zeros = params.detach().clone().apply_([](const at::Tensor& t) { return t.zero_(); });
  TensorDict old = zeros.to_module(*model);
  // The module now shares the TensorDict's storage: forward sees it, writes reach it.
  CHECK(model[0]->as<torch::nn::Linear>()->weight.data_ptr() ==
        zeros.get({"0", "weight"}).data_ptr());
  CHECK(model[0]->as<torch::nn::Linear>()->weight.requires_grad());
  // 0.14's default preserve_module_state=True: registrations are kept as they were.
  CHECK(model->parameters().size() ==
        static_cast<size_t>(params.keys(true, true).size()) - model->buffers().size());
  CHECK(model->named_buffers().contains("2.running_mean"));
  zeros.get({"3", "bias"}).fill_(1.5);
  CHECK(same(run(model, x), at::full({5, 2}, 1.5)));
  old.to_module(*model);
  CHECK(same(run(model, x), before));
}

TEST_CASE("to_module_scoped restores the module's tensors at scope exit", "[module]") {
  auto model = mlp();
  const at::Tensor x = at::randn({5, 3});
  const at::Tensor before = run(model, x);
  TensorDict other = TensorDict::from_module(*mlp()).detach().clone();
  {
    ModuleSwap swap = other.to_module_scoped(*model);
    CHECK_FALSE(same(run(model, x), before));
    CHECK(swap.originals().keys() == std::vector<NestedKey>{"0", "2", "3"});
  }
  CHECK(same(run(model, x), before));
  // A throw inside the scope restores too.
  try {
    ModuleSwap swap = other.to_module_scoped(*model);
    throw std::runtime_error("inside");
  } catch (const std::runtime_error&) {
  }
  CHECK(same(run(model, x), before));
}

TEST_CASE("to_module in place copies into the module's own storage", "[module]") {
  auto model = mlp();
  auto* weight = &model[0]->as<torch::nn::Linear>()->weight;
  void* storage = weight->data_ptr();
  TensorDict ones = TensorDict::from_module(*model).detach().clone().apply(
      [](const at::Tensor& t) { return at::ones_like(t); });
  TensorDict old = ones.to_module(*model, true);
  CHECK(weight->data_ptr() == storage);
  CHECK(weight->eq(1).all().item<bool>());
  CHECK_FALSE(old.get({"0", "weight"}).eq(1).all().item<bool>());
  TensorDict twos = ones.apply([](const at::Tensor& t) { return t * 2; });
  CHECK(twos.to_module(*model, true, false).is_empty());
  CHECK(weight->data_ptr() == storage);
  CHECK(weight->eq(2).all().item<bool>());
}

TEST_CASE("to_module names the key of a mismatch and leaves the module untouched", "[module]") {
  auto model = mlp();
  const at::Tensor x = at::randn({5, 3});
  const at::Tensor before = run(model, x);
  TensorDict params = TensorDict::from_module(*model).detach().clone();
  TensorDict bad_shape = params.clone();
  bad_shape.set({"3", "bias"}, at::zeros({3}));
  bad_shape.set({"0", "bias"}, at::zeros({4}));  // fits, must not be applied either
  CHECK_THROWS_MATCHES(bad_shape.to_module(*model), ShapeError,
                       Message("to_module: key '3.bias' has shape [3] but the module's tensor "
                               "has shape [2]"));
  TensorDict bad_dtype = params.clone();
  bad_dtype.set({"0", "weight"}, at::zeros({4, 3}, at::kDouble));
  CHECK_THROWS_MATCHES(bad_dtype.to_module(*model), TypeError,
                       Message("to_module: key '0.weight' has dtype Double but the module's "
                               "tensor has dtype Float"));
  TensorDict unknown = params.clone();
  unknown.set({"0", "scale"}, at::zeros({1}));
  CHECK_THROWS_MATCHES(unknown.to_module(*model), KeyError,
                       Message("to_module: the module has no parameter or buffer '0.scale'"));
  TensorDict no_child = params.clone();
  no_child.set({"7", "weight"}, at::zeros({1}));
  CHECK_THROWS_MATCHES(no_child.to_module(*model), KeyError,
                       Message("to_module: the module has no submodule '7'"));
  TensorDict text = params.clone();
  text.set({"0", "weight"}, "text");
  CHECK_THROWS_MATCHES(text.to_module(*model), TypeError,
                       Message("to_module: key '0.weight' holds NonTensorData, not a tensor"));
  CHECK(same(run(model, x), before));
}

TEST_CASE("memmap checkpoint: save, load with threads, restore, one submodule", "[module]") {
  tc_test::TempDir dir;
  auto model = mlp();
  const at::Tensor x = at::randn({5, 3});
  const at::Tensor before = run(model, x);
  TensorDict saved = TensorDict::from_module(*model).memmap(dir.path(), {4});
  CHECK(saved.is_memmap());

  auto fresh = mlp();
  TensorDict loaded = TensorDict::load_memmap(dir.path(), std::nullopt, 4);
  loaded.to_module(*fresh, true);
  CHECK(same(run(fresh, x), before));

  // One submodule's slice of the checkpoint.
  auto other = mlp();
  TensorDict first = TensorDict::load_memmap(dir / "0");
  CHECK(first.keys() == std::vector<NestedKey>{"weight", "bias"});
  first.to_module(*other[0], true);
  CHECK(same(other[0]->as<torch::nn::Linear>()->weight, model[0]->as<torch::nn::Linear>()->weight));
}

TEST_CASE("ensembles: stacked parameters, each member swapped in", "[module]") {
  auto model = mlp();
  std::vector<torch::nn::Sequential> members{mlp(), mlp(), mlp()};
  std::vector<TensorDict> params;
  for (auto& m : members) params.push_back(TensorDict::from_module(*m).detach());
  TensorDict stacked = stack(params);
  CHECK(stacked.batch_size() == BatchSize{3});
  const at::Tensor x = at::randn({5, 3});
  const at::Tensor own = run(model, x);
  std::vector<at::Tensor> outs =
      ensemble_apply(stacked, *model, [&](int64_t) { return run(model, x); });
  REQUIRE(outs.size() == 3);
  for (size_t i = 0; i < 3; ++i) CHECK(same(outs[i], run(members[i], x)));
  CHECK(same(run(model, x), own));
  CHECK_THROWS_AS(ensemble_apply(params[0], *model, [&](int64_t) { return x; }), ShapeError);
}

TEST_CASE("holders are taken as Python takes modules: from_module(model), not *model", "[module]") {
  auto model = mlp();
  const at::Tensor x = at::randn({5, 3});
  const at::Tensor before = run(model, x);
  TensorDict params = TensorDict::from_module(model);
  CHECK(params.keys() == TensorDict::from_module(*model).keys());
  TensorDict zeros = params.detach().clone().zero_();
  {
    ModuleSwap swap = zeros.to_module_scoped(model);
    CHECK(same(run(model, x), at::zeros({5, 2})));
  }
  CHECK(same(run(model, x), before));
  TensorDict old = zeros.to_module(model);
  CHECK(same(run(model, x), at::zeros({5, 2})));
  old.to_module(model);
  std::vector<at::Tensor> outs = ensemble_apply(stack({params.detach().clone(), zeros}), model,
                                                [&](int64_t) { return run(model, x); });
  CHECK(same(outs[0], before));
  CHECK(same(outs[1], at::zeros({5, 2})));
}
