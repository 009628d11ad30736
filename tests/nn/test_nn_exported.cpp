// Models exported by Python torch and packaged by AOTInductor (fixtures/aoti/<case>, made by
// make_aoti_fixtures.py beside them): run as TensorDictModules on the inputs Python used, they
// give the outputs Python computed. A package loads only in the libtorch release that made it
// (2.14.1 for fixtures/aoti/<case>, 2.6.0 for fixtures/aoti/2.6/<case>); other builds skip those
// cases, and builds before libtorch 2.6 check their refusal instead.
#include <torch/version.h>
// Before Catch: torch's headers bring glog's CHECK, which Catch's must replace.
#include "catch2_compat.h"
#include "tensordict/nn/exported.h"

#include <filesystem>
#include <string>

#include "skip.h"
#include "tensordict/index.h"
#include "tensordict/nn/batch_runner.h"
#include "tensordict/nn/module.h"
#ifdef TC_NN_TENSORCLASS_TESTS
#include "imported_policy.h"
#include "policy.h"
#endif

using namespace tensordict;
using namespace tensordict::nn;
namespace fs = std::filesystem;

namespace {

fs::path case_dir(const std::string& name) {
  const fs::path root = fs::path(TC_FIXTURES_DIR) / "aoti";
  return TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR == 6 ? root / "2.6" / name : root / name;
}

struct Case {
  ExportedModel model;
  TensorDict input;
  TensorDict expected;
};

Case load_case(const std::string& name) {
  if (!can_load_exported_models()) TC_SKIP("libtorch " TORCH_VERSION " cannot load packages");
  const fs::path dir = case_dir(name);
  if (!fs::exists(dir / "package.pt2")) {
    TC_SKIP("no AOTInductor package for libtorch " TORCH_VERSION " at " << dir);
  }
  return {ExportedModel((dir / "package.pt2").string()),
          TensorDict::load_memmap((dir / "input").string()),
          TensorDict::load_memmap((dir / "expected").string())};
}

void check_outputs(const TensorDict& out, const TensorDict& expected) {
  for (const auto& key : expected.keys(/*include_nested=*/true, /*leaves_only=*/true)) {
    INFO(key.repr());
    const at::Tensor want = expected.get(key);
    const at::Tensor got = out.get(key);
    CHECK(got.scalar_type() == want.scalar_type());
    CHECK(got.sizes() == want.sizes());
    CHECK(at::allclose(got, want, /*rtol=*/1e-6, /*atol=*/1e-6));
  }
}

}  // namespace

TEST_CASE("a build without AOTInductor says so when loading a package",
          "[nn][exported][needs-old-libtorch]") {
  if (can_load_exported_models()) TC_SKIP("libtorch " TORCH_VERSION " loads packages");
  CHECK_THROWS_MATCHES(
      ExportedModel("policy.pt2"), tensordict::Error,
      Catch::Matchers::Message("cannot load the AOTInductor package 'policy.pt2': this build uses "
                               "libtorch " TORCH_VERSION
                               ", and loading packages needs libtorch 2.6 or later"));
}

TEST_CASE("a dict forward runs by the keys of its call spec", "[nn][exported][needs-aoti]") {
  const Case c = load_case("dict_policy");
  CHECK(c.model.metadata().at("AOTI_DEVICE_KEY") == "cpu");
  TensorDictModule policy(c.model);
  CHECK(policy.in_keys() == std::vector<NestedKey>{"observation", NestedKey{"goal", "bias"}});
  CHECK(policy.out_keys() == std::vector<NestedKey>{"logits", "action", "value"});
  CHECK(policy.name() == "package.pt2");
  check_outputs(policy(c.input.clone()), c.expected);

  SECTION("another batch size within the package's range") {
    const tensordict::Index rows{tensordict::Slice(0, 3)};
    check_outputs(policy(c.input.index(rows).clone()), c.expected.index(rows));
  }
  SECTION("batch 1, which torch.export records as a range from 2") {
    const tensordict::Index first{tensordict::Slice(0, 1)};
    check_outputs(policy(c.input.index(first).clone()), c.expected.index(first));
  }
  SECTION("an input of another shape or dtype is refused naming its key") {
    TensorDict wrong = c.input.clone();
    wrong.set("observation", at::zeros({8, 4}));
    if (c.model.input_signatures().empty()) {  // torch 2.6: the package's own refusal
      CHECK_THROWS_WITH(policy(wrong), Catch::Matchers::ContainsSubstring(
                                           "refused its inputs (float32 [8, 4]; float32 [8, 3])"));
    } else {
      CHECK_THROWS_MATCHES(
          policy(wrong), tensordict::ShapeError,
          Catch::Matchers::Message("the AOTInductor package 'package.pt2': input 'observation' has "
                                   "shape [8, 4], the package takes [2..1024, 5]"));
      wrong.set("observation", at::zeros({8, 5}, at::kDouble));
      CHECK_THROWS_MATCHES(
          policy(wrong), tensordict::TypeError,
          Catch::Matchers::Message("the AOTInductor package 'package.pt2': input 'observation' is "
                                   "float64, the package takes float32"));
      wrong = TensorDict({{"observation", at::zeros({1025, 5})},
                          {"goal", TensorDict({{"bias", at::zeros({1025, 3})}}, {1025})}},
                         {1025});
      CHECK_THROWS_AS(policy(wrong), tensordict::ShapeError);
    }
  }
  SECTION("a missing input is a KeyError naming the key and what the package takes") {
    TensorDict missing = c.input.clone();
    missing.del_(NestedKey{"goal", "bias"});
    CHECK_THROWS_AS(policy(missing), tensordict::KeyError);
    CHECK_THROWS_WITH(policy(missing),
                      Catch::Matchers::ContainsSubstring(
                          "missing in_key ('goal', 'bias') (it takes in_keys ['observation', "
                          "('goal', 'bias')])"));
  }
}

TEST_CASE("a package's signature is read from its source, on any libtorch",
          "[nn][exported][needs-fixtures]") {
  // The torch 2.14.1 package records input checks; torch 2.6.0's does not.
  const fs::path root = fs::path(TC_FIXTURES_DIR) / "aoti";
  const fs::path recent = root / "dict_policy" / "package.pt2";
  if (!fs::exists(recent)) TC_SKIP("no AOTInductor fixtures at " << root);
  const PackageSignature package = read_package_signature(recent.string());
  CHECK(package.call_spec.input_keys({}) ==
        std::vector<NestedKey>{"observation", NestedKey{"goal", "bias"}});
  CHECK(package.call_spec.output_keys({}) == std::vector<NestedKey>{"logits", "action", "value"});
  const auto& inputs = package.inputs;
  REQUIRE(inputs.size() == 2);
  CHECK(inputs[0].dtype == "float32");
  REQUIRE(inputs[0].dims.size() == 2);
  CHECK(inputs[0].dims[0].min == 2);
  CHECK(inputs[0].dims[0].max == 1024);
  CHECK(inputs[0].dims[1].is_static());
  CHECK(inputs[0].dims[1].max == 5);
  REQUIRE(inputs[1].dims.size() == 2);
  CHECK(inputs[1].dims[1].max == 3);
  const fs::path old = root / "2.6" / "tuple_mlp" / "package.pt2";
  if (fs::exists(old)) {  // its spec is an escaped string literal
    const PackageSignature mlp = read_package_signature(old.string());
    CHECK(mlp.inputs.empty());
    CHECK(mlp.call_spec.input_keys({"x", "scale"}) == std::vector<NestedKey>{"x", "scale"});
    CHECK(mlp.call_spec.outputs().leaves() == 2);
  }
  CHECK_THROWS_AS(read_package_signature((root / "README.md").string()), tensordict::FormatError);
}

TEST_CASE("positional tensors and a tuple result take in_keys and out_keys",
          "[nn][exported][needs-aoti]") {
  const Case c = load_case("tuple_mlp");
  TensorDictModule mlp(c.model, {"x", NestedKey{"params", "scale"}}, {"y", "y_sum"});
  check_outputs(mlp(c.input.clone()), c.expected);
  CHECK_THROWS_AS(TensorDictModule(c.model), tensordict::ValueError);  // no names for them
}

TEST_CASE("an exported model runs in a chain, a batch runner and on a tensorclass",
          "[nn][exported][needs-aoti]") {
  const Case c = load_case("dict_policy");
  const auto policy = std::make_shared<TensorDictModule>(c.model);

  SECTION("in a TensorDictSequential") {
    TensorDictModule greedy([](const at::Tensor& logits) { return logits.softmax(-1); }, {"logits"},
                            {"probs"}, "softmax");
    TensorDictSequential chain(*policy, greedy);
    TensorDict out = chain(c.input.clone());
    check_outputs(out, c.expected);
    CHECK(at::allclose(out.get("probs"), c.expected.get("logits").softmax(-1), 1e-6, 1e-6));
  }
  SECTION("through a BatchRunner, one row per request") {
    BatchRunner runner(policy);
    std::vector<BatchFuture> rows;
    const int64_t n = c.input.batch_size()[0];
    for (int64_t i = 0; i < n; ++i) {
      rows.push_back(runner.submit(c.input.index({tensordict::Slice(i, i + 1)}).clone()));
    }
    for (int64_t i = 0; i < n; ++i) {
      check_outputs(rows[size_t(i)].get(), c.expected.index({tensordict::Slice(i, i + 1)}));
    }
  }
#ifdef TC_NN_TENSORCLASS_TESTS
  SECTION("on a generated tensorclass, through its fields") {
    nntest::PolicyStep step = nntest::PolicyStep::from_tensordict(c.input.clone());
    step = (*policy)(step);
    REQUIRE(step.logits().has_value());
    CHECK(at::allclose(*step.logits(), c.expected.get("logits"), 1e-6, 1e-6));
    CHECK(step.action()->equal(c.expected.get("action")));
  }
#endif
}

#ifdef TC_NN_TENSORCLASS_TESTS
TEST_CASE("a generated class is checked against a package, on any libtorch",
          "[nn][exported][needs-fixtures]") {
  const fs::path package = fs::path(TC_FIXTURES_DIR) / "aoti" / "dict_policy" / "package.pt2";
  if (!fs::exists(package)) TC_SKIP("no AOTInductor package at " << package);
  // The class tcgen import wrote from the package, and the hand-written one, fit it.
  CHECK_NOTHROW(check_class<imported_policy::ImportedPolicy>(package.string()));
  CHECK_NOTHROW(check_class<nntest::PolicyStep>(package.string()));
  // A class that reads another dtype and width, and lacks or mistypes outputs, is refused with
  // every difference.
  CHECK_THROWS_MATCHES(
      check_class<nntest::ChangedPolicy>(package.string()), tensordict::ValueError,
      Catch::Matchers::Message(
          "the AOTInductor package 'package.pt2' does not fit ChangedPolicy:\n"
          "  input 'observation': the package takes float32 [2..1024, 5], ChangedPolicy declares "
          "float64 [*, 5] (dtype)\n"
          "  input 'goal.bias': the package takes float32 [2..1024, 3], ChangedPolicy declares "
          "float32 [*, 4] (size of dim 1)\n"
          "  output 'action': field 'action' is str, the package returns a tensor\n"
          "  output 'value': ChangedPolicy has no field 'value'"));
  // A class without the nested dict's class field.
  CHECK_THROWS_WITH(
      check_class<nntest::Step>(package.string()),
      Catch::Matchers::ContainsSubstring("input 'goal.bias': Step has no field 'goal'"));
}

TEST_CASE("the imported class runs the loaded package", "[nn][exported][needs-aoti]") {
  const Case c = load_case("dict_policy");
  check_class<imported_policy::ImportedPolicy>(c.model);
  TensorDictModule policy(c.model);
  auto step = imported_policy::ImportedPolicy::from_tensordict(c.input.clone());
  step = policy(step);
  REQUIRE(step.value().has_value());
  CHECK(at::allclose(*step.value(), c.expected.get("value"), 1e-6, 1e-6));
  CHECK(step.goal().bias().equal(c.input.get(NestedKey{"goal", "bias"})));
}
#endif
