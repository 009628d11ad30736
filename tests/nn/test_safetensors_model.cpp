// A model's weights through safetensors: Python saves a torch.nn model's state_dict with its
// `safetensors` package; C++ loads it into the same architecture (from_safetensors + to_module)
// and gives Python's outputs. And a C++ model's weights round trip through a file.
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include <string>

#include "catch2_compat.h"
#include "io_test_util.h"
#include "python_peer.h"
#include "tensordict/module.h"
#include "tensordict/nn/params.h"
#include "tensordict/safetensors.h"

using namespace tensordict;

namespace {

// The architecture of tests/io/safetensors_peer.py's `model`.
torch::nn::Sequential peer_mlp() {
  return torch::nn::Sequential(torch::nn::Linear(4, 8), torch::nn::ReLU(), torch::nn::Linear(8, 2));
}

}  // namespace

TEST_CASE("weights Python saved as safetensors load into the same torch::nn model",
          "[module][safetensors][python][needs-peer]") {
  tc_test::require_python_peer("torch");
  tc_test::TempDir tmp;
  const auto r = tc_test::run_command("'" + tc_test::python_peer() +
                                      "' '" TC_SOURCE_DIR "/tests/io/safetensors_peer.py' model '" +
                                      tmp.path() + "'");
  if (r.code == 77) TC_SKIP_WITHOUT_PEER("no Python safetensors at TC_PYTHON_PEER");
  REQUIRE(r.code == 0);
  auto model = peer_mlp();
  TensorDict::from_safetensors(tmp / "model.safetensors").to_module(*model, true);
  const TensorDict io = TensorDict::from_safetensors(tmp / "io.safetensors");
  torch::NoGradGuard no_grad;
  CHECK(model->forward(io.get("x")).equal(io.get("y")));
}

TEST_CASE("a torch::nn model's weights round trip through a safetensors file",
          "[module][safetensors]") {
  tc_test::TempDir tmp;
  auto source = peer_mlp();
  TensorDict::from_module(*source).to_safetensors(tmp / "w.safetensors");
  auto target = peer_mlp();
  const TensorDict loaded = TensorDict::from_safetensors(tmp / "w.safetensors");
  // In the file's order: one dtype, so by name.
  CHECK(loaded.flatten_keys().keys() ==
        std::vector<NestedKey>{"0.bias", "0.weight", "2.bias", "2.weight"});
  loaded.to_module(*target, true);
  const at::Tensor x = at::randn({3, 4});
  {
    torch::NoGradGuard no_grad;
    CHECK(target->forward(x).equal(source->forward(x)));
  }
  // TensorDictParams made from a file: its leaves (mapped, copy-on-write) become parameters.
  tensordict::nn::TensorDictParams params(TensorDict::from_safetensors(tmp / "w.safetensors"));
  CHECK(params->parameters().size() == 4);
  CHECK(params->named_parameters()["0_weight"].equal(source[0]->as<torch::nn::Linear>()->weight));
}
