// safetensors files against the real Python `safetensors` package (TC_PYTHON_PEER with
// python3-safetensors): its files load with the exact bytes of every dtype both have, our files
// of the same tensors are byte-identical to its own, and it reads what we write.
#include <ATen/ATen.h>

#include <algorithm>
#include <string>
#include <vector>

#include "catch2_compat.h"
#include "io_test_util.h"
#include "python_peer.h"
#include "tensordict/json.h"
#include "tensordict/safetensors.h"

using namespace tensordict;

namespace {

const std::string kScript = TC_SOURCE_DIR "/tests/io/safetensors_peer.py";

// Runs the script's `mode`; skips the case when the peer has no safetensors (exit 77).
std::string run_peer(const std::string& mode, const std::vector<std::string>& args) {
  tc_test::require_python_peer("torch");
  std::string command = "'" + tc_test::python_peer() + "' '" + kScript + "' " + mode;
  for (const auto& a : args) command += " '" + a + "'";
  const auto r = tc_test::run_command(command);
  if (r.code == 77) TC_SKIP_WITHOUT_PEER("no Python safetensors at TC_PYTHON_PEER");
  INFO(command);
  REQUIRE(r.code == 0);
  return r.output;
}

std::string hex(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  const auto* p = static_cast<const unsigned char*>(c.data_ptr());
  std::string out;
  for (size_t i = 0; i < c.nbytes(); ++i) {
    constexpr const char* kDigits = "0123456789abcdef";
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 15];
  }
  return out;
}

}  // namespace

TEST_CASE("safetensors files of Python's package load exactly and write back byte for byte",
          "[io][safetensors][python][needs-peer]") {
  tc_test::TempDir tmp;
  run_peer("write", {tmp.path()});
  const Json expected = Json::parse(tc_test::read_file(tmp / "expected.json"));
  // At least the dtypes every supported libtorch has.
  for (const char* dtype : {"bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                            "bfloat16", "float32", "float64", "complex64"}) {
    INFO(dtype);
    CHECK(std::find(expected["dtypes"].begin(), expected["dtypes"].end(), dtype) !=
          expected["dtypes"].end());
  }
  const TensorDict td = TensorDict::from_safetensors(tmp / "all.safetensors");
  for (const auto& [name, e] : expected["tensors"].items()) {
    INFO(name);
    const at::Tensor t = td.get(NestedKey::split(name));
    CHECK(t.sizes().vec() == e["shape"].get<std::vector<int64_t>>());
    CHECK(hex(t) == e["hex"].get<std::string>());
  }
  td.to_safetensors(tmp / "ours.safetensors");
  CHECK(tc_test::read_file(tmp / "ours.safetensors") ==
        tc_test::read_file(tmp / "all.safetensors"));
  run_peer("check", {tmp / "ours.safetensors", tmp / "expected.json"});
}

TEST_CASE("Python's safetensors reads a structured TensorDict as its flat tensors and metadata",
          "[io][safetensors][python][needs-peer]") {
  tc_test::TempDir tmp;
  TensorDict td({{"obs", at::rand({2, 3})}, {{"next", "reward"}, at::ones({2, 1})}}, {2});
  td.set_non_tensor("tag", "text");
  safetensors::SaveOptions options;
  options.metadata = {{"format", "pt"}};
  safetensors::save(td, tmp / "s.safetensors", options);
  const Json read = Json::parse(run_peer("keys", {tmp / "s.safetensors"}));
  CHECK(read["keys"] == Json::array({"next.reward", "obs"}));
  CHECK(read["metadata"]["format"] == "pt");
  CHECK(read["metadata"].contains(std::string(safetensors::kStructureKey)));
}

TEST_CASE("a file Python wrote comes back byte for byte through a memmap directory",
          "[io][safetensors][python][needs-peer]") {
  tc_test::TempDir tmp;
  run_peer("model", {tmp.path()});
  TensorDict::from_safetensors(tmp / "model.safetensors").memmap(tmp / "dir");
  TensorDict::load_memmap(tmp / "dir").to_safetensors(tmp / "back.safetensors");
  CHECK(tc_test::read_file(tmp / "back.safetensors") ==
        tc_test::read_file(tmp / "model.safetensors"));
}
