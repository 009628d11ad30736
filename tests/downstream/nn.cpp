// TensorClass::nn as a downstream project uses it: a torch::nn module and a TorchScript module
// (scripted here) chained on one TensorDict; exits non-zero when a value is wrong.
#include <torch/nn/modules/linear.h>

#include <iostream>

#include "tensordict/nn/script.h"

using tensordict::TensorDict;
using tensordict::nn::TensorDictModule;
using tensordict::nn::TensorDictSequential;

int main() {
  torch::nn::Linear linear(3, 2);
  torch::jit::Module head("Head");
  head.define(R"(
def forward(self, td: Dict[str, Tensor]) -> Dict[str, Tensor]:
    out: Dict[str, Tensor] = {}
    out["value"] = td["hidden"].sum(-1)
    return out
)");
  TensorDictSequential model(TensorDictModule(linear, {"obs"}, {"hidden"}),
                             TensorDictModule(head, {"hidden"}, {"value"}));
  TensorDict data({{"obs", at::randn({4, 3})}}, {4});
  model(data);
  const at::Tensor expected = linear->forward(data.get("obs")).sum(-1);
  const bool ok =
      data.get("value").allclose(expected) &&
      tensordict::nn::from_ivalue(tensordict::nn::to_ivalue(data), {4}).keys() == data.keys();
  std::cout << "downstream nn: " << (ok ? "ok" : "WRONG") << "\n";
  return ok ? 0 : 1;
}
