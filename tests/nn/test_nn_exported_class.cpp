// A model exported with generated classes as its argument and result (tcgen's Python module
// registers each class as a pytree node): export_class_policy.py exports and packages it in the
// live Python peer, here, and C++ runs the package on the C++ classes. Needs a peer whose torch
// made the libtorch this build uses (sid: 2.14.1).
#include <torch/version.h>
// Before Catch: torch's headers bring glog's CHECK, which Catch's must replace.
#include "catch2_compat.h"
#include "tensordict/nn/exported.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "python_peer.h"
#include "skip.h"

#ifdef TC_NN_TENSORCLASS_TESTS
#include "policy.h"

using namespace tensordict;
using namespace tensordict::nn;
using nntest::Decision;
using nntest::Goal;
using nntest::Sensed;
namespace fs = std::filesystem;

namespace {

// The package, its input and Python's output, made once per process.
const fs::path& exported_dir() {
  static const fs::path dir = [] {
    const fs::path out =
        fs::temp_directory_path() / ("tc-exported-class-" + std::to_string(::getpid()));
    fs::create_directories(out);
    const std::string command =
        "PYTHONDONTWRITEBYTECODE=1 PYTHONPATH='" TC_NN_PYTHON_DIR "' '" + tc_test::python_peer() +
        "' '" TC_SOURCE_DIR "/tests/nn/export_class_policy.py' '" + out.string() + "'";
    return std::system(command.c_str()) == 0 ? out : fs::path();
  }();
  return dir;
}

ExportedModel load_policy() {
  if (!can_load_exported_models()) TC_SKIP("libtorch " TORCH_VERSION " cannot load packages");
  tc_test::require_python_peer("tensordict, torch._inductor");
  REQUIRE_FALSE(exported_dir().empty());
  return ExportedModel((exported_dir() / "package.pt2").string());
}

Sensed sensed(int64_t batch, std::string mode = "greedy") {
  return Sensed({at::randn({batch, 5}), Goal({at::randn({batch, 3})}, {batch}), std::move(mode),
                 std::nullopt},
                {batch});
}

}  // namespace

TEST_CASE("a package exported with generated classes records them in its call spec",
          "[nn][exported][needs-peer]") {
  const ExportedModel model = load_policy();
  const TreeSpec& arg = model.call_spec().inputs().children[0].children.at(0);
  CHECK(arg.kind == TreeSpec::Kind::Class);
  CHECK(arg.type == "nntest.Sensed");
  CHECK(arg.keys == std::vector<std::string>{"observation", "goal"});
  CHECK(arg.batch_dims == 1);
  CHECK(arg.non_tensor == R"({"mode":"greedy"})");
  CHECK(model.call_spec().outputs().type == "nntest.Decision");
  CHECK(model.call_spec().input_keys({}) ==
        std::vector<NestedKey>{"observation", NestedKey{"goal", "bias"}});
  CHECK(model.call_spec().output_keys({}) ==
        std::vector<NestedKey>{"action", "value", NestedKey{"goal", "bias"}});
  CHECK_NOTHROW((check_classes<Sensed, Decision>(model)));
  CHECK_THROWS_MATCHES(
      (check_classes<Decision, Sensed>(model)), ValueError,
      Catch::Matchers::Message(
          "the AOTInductor package 'package.pt2' does not fit Decision -> Sensed:\n"
          "  input: the package takes nntest.Sensed, not nntest.Decision\n"
          "  output: the package returns nntest.Decision, not nntest.Sensed"));
}

TEST_CASE("a package exported with generated classes runs on the C++ classes",
          "[nn][exported][needs-peer]") {
  const ExportedModel model = load_policy();
  const Sensed input = Sensed::load_memmap((exported_dir() / "input").string());
  const Decision expected = Decision::load_memmap((exported_dir() / "expected").string());
  const Decision out = model.call<Decision>(input);
  CHECK(out.batch_size() == std::vector<int64_t>{6});
  CHECK(out.action().equal(expected.action()));
  CHECK(at::allclose(out.value(), expected.value(), 1e-6, 1e-6));
  CHECK(at::allclose(out.goal().bias(), expected.goal().bias(), 1e-6, 1e-6));
  CHECK(out.goal().batch_size() == std::vector<int64_t>{6});
  CHECK(out.source() == "class-policy");
  CHECK(out.source() == expected.source());
  CHECK_FALSE(out.hidden().has_value());

  SECTION("another batch size within the exported range") {
    const Sensed three = sensed(3);
    const Decision small = model.call<Decision>(three);
    CHECK(small.batch_size() == std::vector<int64_t>{3});
    CHECK(small.value().sizes() == at::IntArrayRef{3, 1});
    CHECK(at::allclose(small.goal().bias(), three.goal().bias() * 0.5));
  }
  SECTION("an instance laid out otherwise than the exported one is refused, naming the field") {
    CHECK_THROWS_MATCHES(model.call<Decision>(sensed(3, "sample")), ValueError,
                         Catch::Matchers::Message("the AOTInductor package 'package.pt2' was "
                                                  "exported with field 'mode' \"greedy\", not "
                                                  "\"sample\""));
    Sensed with_memory = sensed(3);
    with_memory.set_memory(at::zeros({3, 2}));
    CHECK_THROWS_MATCHES(model.call<Decision>(with_memory), ValueError,
                         Catch::Matchers::Message("the AOTInductor package 'package.pt2' was "
                                                  "exported with field 'memory' None, not set"));
  }
  SECTION("another class is refused before the package runs") {
    CHECK_THROWS_WITH(model.call<Sensed>(input),
                      Catch::Matchers::ContainsSubstring(
                          "output: the package returns nntest.Decision, not nntest.Sensed"));
  }
}
#endif
