// TorchScript modules saved by Python torch 1.13 (fixtures/torchscript/<case>): loaded with
// torch::jit::load, run as TensorDictModules on the inputs Python used (a TensorDict directory),
// they give the outputs Python computed; their parameters come out as case.json lists them.
// Where the fixtures are absent every case exits 77, which CTest reports as skipped.
#include <ATen/Parallel.h>
#include <torch/csrc/jit/serialization/import.h>
// Before Catch: torch's headers bring glog's CHECK, which Catch's must replace.
#include "catch2_compat.h"
#include "tensordict/nn/script.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "io_test_util.h"
#include "skip.h"
#include "tensordict/json.h"
#include "tensordict/safetensors.h"

using namespace tensordict;
using namespace tensordict::nn;
namespace fs = std::filesystem;

namespace {

const fs::path kCases = fs::path(TC_FIXTURES_DIR) / "torchscript";

struct ScriptCase {
  torch::jit::Module module;
  TensorDict input;
  TensorDict expected;
  Json spec;
};

ScriptCase load_script_case(const std::string& name) {
  const fs::path dir = kCases / name;
  if (!fs::exists(dir / "module.pt"))
    TC_SKIP("no TorchScript fixture at " << dir << " (set TC_FIXTURES_DIR)");
  std::ifstream spec_file(dir / "case.json");
  std::string text((std::istreambuf_iterator<char>(spec_file)), std::istreambuf_iterator<char>());
  return {torch::jit::load((dir / "module.pt").string()),
          TensorDict::load_memmap((dir / "input").string()),
          TensorDict::load_memmap((dir / "expected").string()),
          parse_json(text, (dir / "case.json").string())};
}

std::vector<NestedKey> keys_of(const Json& lists) {
  std::vector<NestedKey> keys;
  for (const auto& parts : lists) keys.emplace_back(parts.get<std::vector<std::string>>());
  return keys;
}

// Python's outputs, to the last bit with one thread; float results within 1e-6 relative
// otherwise (the fixture's README: kernels may differ with the thread count).
void check_script_outputs(const TensorDict& out, const TensorDict& expected,
                          const std::vector<NestedKey>& out_keys) {
  for (const auto& key : out_keys) {
    INFO("out_key " << key.repr());
    const at::Tensor got = out.get(key);
    const at::Tensor want = expected.get(key);
    REQUIRE(got.scalar_type() == want.scalar_type());
    REQUIRE(got.sizes() == want.sizes());
    if (at::isFloatingType(want.scalar_type())) {
      CHECK(got.allclose(want, 1e-6, 0));
    } else {
      CHECK(got.equal(want));
    }
  }
}

void check_parameters(const torch::jit::Module& module, const Json& spec) {
  TensorDict flat = from_module(module).flatten_keys(".");
  std::vector<std::string> names;
  for (const auto& key : flat.keys()) names.push_back(key.front());
  std::vector<std::string> expected;
  for (const auto& group : {spec["parameters"], spec["buffers"]}) {
    for (const auto& [name, shape] : group.items()) {
      expected.push_back(name);
      INFO(name);
      REQUIRE(flat.contains(name));
      CHECK(flat.get(name).sizes().vec() == shape.get<std::vector<int64_t>>());
    }
  }
  CHECK(names == expected);
}

}  // namespace

TEST_CASE("Python's dict-in/dict-out policy gives Python's outputs",
          "[nn][fixtures][needs-fixtures]") {
  ScriptCase c = load_script_case("dict_policy");
  REQUIRE(c.spec["forward"] == "dict");
  at::set_num_threads(1);
  const auto out_keys = keys_of(c.spec["out_keys"]);
  TensorDictModule policy(c.module, keys_of(c.spec["in_keys"]), out_keys);
  TensorDict out = policy(c.input.clone());
  check_script_outputs(out, c.expected, out_keys);
  check_parameters(c.module, c.spec);
}

TEST_CASE("Python's positional MLP with a nested in_key gives Python's outputs",
          "[nn][fixtures][needs-fixtures]") {
  ScriptCase c = load_script_case("tuple_mlp");
  REQUIRE(c.spec["forward"] == "tensors");
  at::set_num_threads(1);
  const auto out_keys = keys_of(c.spec["out_keys"]);
  TensorDictModule mlp(c.module, keys_of(c.spec["in_keys"]), out_keys);
  TensorDict out = mlp(c.input.clone());
  check_script_outputs(out, c.expected, out_keys);
  check_parameters(c.module, c.spec);
}

TEST_CASE("a loaded policy's parameters swap and checkpoint like torch::nn's",
          "[nn][fixtures][needs-fixtures]") {
  ScriptCase c = load_script_case("dict_policy");
  const auto out_keys = keys_of(c.spec["out_keys"]);
  TensorDictModule policy(c.module, keys_of(c.spec["in_keys"]), out_keys);
  TensorDict zeros = from_module(c.module).detach().clone().zero_();
  {
    ModuleSwap swap = to_module_scoped(zeros, c.module);
    TensorDict out = policy(c.input.clone());
    CHECK(out.get("logits").abs().sum().item<float>() == 0.0F);
  }
  check_script_outputs(policy(c.input.clone()), c.expected, out_keys);
}

TEST_CASE("a TorchScript policy's weights load from a safetensors file",
          "[nn][fixtures][safetensors][needs-fixtures]") {
  ScriptCase c = load_script_case("dict_policy");
  const auto out_keys = keys_of(c.spec["out_keys"]);
  TensorDictModule policy(c.module, keys_of(c.spec["in_keys"]), out_keys);
  tc_test::TempDir tmp;
  from_module(c.module).to_safetensors(tmp / "policy.safetensors");
  to_module(from_module(c.module).detach().clone().zero_(), c.module, true);
  CHECK(policy(c.input.clone()).get("logits").abs().sum().item<float>() == 0.0F);
  to_module(TensorDict::from_safetensors(tmp / "policy.safetensors"), c.module, true);
  check_script_outputs(policy(c.input.clone()), c.expected, out_keys);
}
