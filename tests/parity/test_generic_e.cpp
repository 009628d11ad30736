// Port of Python tensordict v0.14.0 test/tensordict/test_generic.py, class TestGeneric, part
// five: gradients (grad, the data of leaves, requires_grad through a lazy stack, a module's
// zero_grad), devices, modules (load on the meta device), memory-mapped IO (memmap_ of a clone, a
// lazy stack with differing keys) and maybe_dense_stack of lazy stacks.
// docs/parity.md lists which tests are ported and why the others are not.
#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/transformer.h>

#include <string>
#include <vector>

#include "io_test_util.h"
#include "parity_fixtures.h"
#include "tensordict/module.h"

using namespace tensordict;

TEST_CASE("test_generic: test_data_grad", "[parity][generic]") {
  // Python's td.data (each leaf's .data) is detach() here; `a is not b` of two calls is two
  // handles that are not the same TensorDict.
  TensorDict td({{"a", at::randn({3, 4}).requires_grad_(true)},
                 {NestedKey{"b", "c"}, at::randn({3, 4, 5}).requires_grad_(true)}},
                {3, 4});
  const TensorDict td1 = td + 1;
  for (const Value& leaf : td1.values(true, true)) leaf.tensor().sum().backward({}, true);
  CHECK_FALSE(td.grad().is_locked());
  CHECK_FALSE(td.grad().is_same(td.grad()));
  CHECK_FALSE(td.detach().is_locked());
  CHECK_FALSE(td.detach().is_same(td.grad()));
  td.lock_();
  CHECK(td.grad().is_locked());
  CHECK(td.detach().is_locked());
}

TEST_CASE("test_generic: test_requires_grad", "[parity][generic]") {
  at::manual_seed(1);
  std::vector<TensorDict> tensordicts;
  for (int i = 0; i < 10; ++i) {
    tensordicts.push_back(TensorDict({{"key1", at::randn({11, 12, 5}).requires_grad_(i == 5)},
                                      {"key2", at::zeros({11, 12, 50}, at::kBool).bernoulli_()}},
                                     {11, 12}));
  }
  const TensorDict stacked_td = lazy_stack(tensordicts, 0);
  CHECK(stacked_td.values()[0].tensor().requires_grad());
}

TEST_CASE("test_generic: test_tensordict_device", "[parity][generic]") {
  // get_available_devices() is ["cpu"] without CUDA.
  const at::Device device(at::kCPU);
  TensorDict tensordict({{"a", at::randn({3, 4})}}, {});
  CHECK_FALSE(tensordict.device().has_value());
  tensordict = TensorDict({{"a", at::randn({3, 4}, at::TensorOptions().device(device))}}, {});
  CHECK(tensordict["a"].device() == device);
  CHECK_FALSE(tensordict.device().has_value());
  tensordict = TensorDict({{"a", at::randn({3, 4}, at::TensorOptions().device(device))},
                           {"b", at::randn({3, 4})},
                           {"c", at::randn({3, 4}, at::TensorOptions().device(at::kCPU))}},
                          {}, device);
  CHECK(tensordict.device() == device);
  CHECK(tensordict["a"].device() == device);
  CHECK(tensordict["b"].device() == device);
  CHECK(tensordict["c"].device() == device);
  tensordict = TensorDict({}, {}, device);
  tensordict.set("a", at::randn({3, 4}));
  tensordict.set("b", at::randn({3, 4}, at::TensorOptions().device(at::kCPU)));
  CHECK(tensordict["a"].device() == device);
  CHECK(tensordict["b"].device() == device);
  tensordict =
      TensorDict({{"a", at::randn({3, 4})}, {"b", TensorDict({{"c", at::randn({3, 4})}}, {})}}, {});
  tensordict = tensordict.to(device);
  CHECK(tensordict.device() == device);
  CHECK(tensordict["a"].device() == device);
  const TensorDict b_before = tensordict.get_tensordict("b");
  TensorDict& tensordict_cpu = tensordict.to_(at::Device(at::kCPU));
  CHECK(tensordict_cpu.device() == at::Device(at::kCPU));
  for (const Value& v : tensordict_cpu.values(true, true))
    CHECK(v.tensor().device() == at::Device(at::kCPU));
  CHECK(&tensordict_cpu == &tensordict);
  CHECK(tensordict_cpu.get_tensordict("b").is_same(b_before));
  CHECK(tensordict_cpu.get_tensordict("b").device() == at::Device(at::kCPU));
}

TEST_CASE("test_generic: test_zero_grad_module", "[parity][generic]") {
  const at::Tensor x = at::randn({3, 3});
  torch::nn::Linear linear(3, 4);
  const at::Tensor y = linear(x);
  y.sum().backward();
  TensorDict p = TensorDict::from_module(linear).lock_();
  CHECK_FALSE(p.grad().is_empty());
  linear->zero_grad(/*set_to_none=*/true);
  CHECK(p.grad().is_empty());  // Python's `p.grad is None`
  CHECK_FALSE(linear->weight.grad().defined());
}

TEST_CASE("test_generic: test_load_device", "[parity][generic]") {
  // The CUDA half (skipped in Python without a device) and FakeTensorMode are not applicable.
  // Python's batch_first only changes forward's input layout, not the parameters.
  torch::nn::Transformer t(
      torch::nn::TransformerOptions().d_model(64).nhead(4).num_encoder_layers(3).dim_feedforward(
          128));
  TensorDict state_dict = TensorDict::from_module(t);
  state_dict.detach().zero_();  // Python's state_dict.data.zero_()
  tc_test::TempDir dir;
  state_dict.save(dir.path());
  const TensorDict meta_state_dict = TensorDict::load(dir.path(), at::Device(at::kMeta));
  CHECK_FALSE(meta_state_dict.values(true, true).empty());
  for (const auto& [key, leaf] : meta_state_dict.items(true, true)) {
    INFO(key);
    CHECK(leaf.tensor().device() == at::Device(at::kMeta));
  }
}

TEST_CASE("test_generic: test_memmap_as_tensor", "[parity][generic]") {
  // Python's memmap_() without a prefix is memmap_(dir) here; the pin_memory / CUDA half is not
  // applicable.
  const TensorDict td({{"a", at::randn({3, 4})}, {NestedKey{"b", "c"}, at::randn({3, 4})}}, {3, 4},
                      at::Device(at::kCPU));
  tc_test::TempDir dir;
  TensorDict td_memmap = td.clone();
  td_memmap.memmap_(dir.path());
  CHECK((td == td_memmap).all());
  CHECK((td == td_memmap.apply([](const at::Tensor& x) { return x.clone(); })).all());
}

TEST_CASE("test_generic: test_save_load_memmap_stacked_td", "[parity][generic]") {
  // set_list_to_stack(True) makes Python's [1] the tensor torch.tensor([1]).
  const bool like = GENERATE(true, false);
  INFO("like " << like);
  TensorDict a({{"a", at::tensor(std::vector<int64_t>{1})}}, {});
  const TensorDict b({{"b", at::tensor(std::vector<int64_t>{1})}}, {});
  TensorDict c = lazy_stack({a, b});
  c = c.expand({10, 2});
  tc_test::TempDir dir;
  TensorDict d = like ? c.memmap_like(dir.path()) : c.memmap_(dir.path());
  const TensorDict d2 = TensorDict::load_memmap(dir.path());
  CHECK((d2 == d).all());
  CHECK((d2.index({Slice(), 0}) == d.index({Slice(), 0})).all());
  if (like) {
    CHECK((d2.index({Slice(), 0}) == a.zero_()).all());
  } else {
    CHECK((d2.index({Slice(), 0}) == a).all());
  }
}

TEST_CASE("test_generic: test_lazy_stack_tc_weird_case", "[parity][generic]") {
  // Python's "x" is a TensorClass["nocast"] instance (fields a, b); the TensorDict that holds
  // its fields stands for it here.
  const TensorDict x({{"a", at::randn({2, 3})}, {"b", at::randn({2, 3})}}, {2, 3});
  const TensorDict td_dense({{"x", x}}, {2, 3});
  const TensorDict td = lazy_stack(td_dense.unbind(0), 0);
  const TensorDict x2({{"a", at::randn({2, 4})}, {"b", at::randn({2, 4})}}, {2, 4});
  const TensorDict td2_dense({{"x", x2}}, {2, 4});
  const TensorDict td2 = lazy_stack(td2_dense.unbind(1), 1);
  CHECK(maybe_dense_stack({td, td2}, 0).batch_size() == BatchSize{2, 2, -1});
  CHECK(maybe_dense_stack({td, td2}, 1).batch_size() == BatchSize{2, 2, -1});
  CHECK(maybe_dense_stack({td, td2}, 2).batch_size() == BatchSize{2, -1, 2});
}
