// Fields typed NonTensorData[T] and MetaData[T] (golden tensor_only.yaml `Tagged`): the value is
// always stored as NonTensorData, a number too, so a tensor_only class may hold it as Python's
// does; MetaData stacks with equal values into one value and is saved as Python's MetaData.
#include <ATen/ATen.h>

#include <unistd.h>

#include <filesystem>

#include "catch2_compat.h"
#include "io_test_util.h"
#include "tensor_only.h"
#include "tensordict/json.h"

using namespace golden;
using tensordict::Json;

namespace {

Tagged tagged(const std::string& label, const std::string& source) {
  return Tagged({at::zeros({2}), label, source, 3, std::nullopt, std::vector<std::string>{"p"}},
                {2});
}

}  // namespace

TEST_CASE("NonTensorData and MetaData fields hold their values as non-tensor data",
          "[tensorclass][non-tensor-fields]") {
  const Tagged t = tagged("a", "s");
  CHECK(t.label() == "a");
  CHECK(t.source() == "s");
  CHECK(t.step() == 3);
  CHECK_FALSE(t.info().has_value());
  CHECK(t.tokens() == std::vector<std::string>{"p"});
  // A number stays a value, not a tensor of the batch.
  REQUIRE(t.get_value("step").is_non_tensor_data());
  CHECK(t.get_value("step").non_tensor_data().metadata);
  CHECK(t.get_value("source").non_tensor_data().metadata);
  CHECK_FALSE(t.get_value("label").non_tensor_data().metadata);
  CHECK(t.get_value("tokens").is_non_tensor_data());
  // Python's is_non_tensor(key): what the typed accessors hide.
  CHECK(t.is_non_tensor("label"));
  CHECK(t.is_non_tensor("step"));
  CHECK_FALSE(t.is_non_tensor("x"));
  Tagged u = t.clone();
  u.set_info(Json{{"k", 1}});
  CHECK(u.info() == Json{{"k", 1}});
  CHECK_THROWS_MATCHES(u.set("label", at::zeros({2})), tensordict::TypeError,
                       Catch::Matchers::Message("field Tagged.label holds NonTensorData, got a "
                                                "Tensor"));
}

TEST_CASE("a stack keeps equal MetaData as one value, other non-tensor data as a stack",
          "[tensorclass][non-tensor-fields]") {
  const Tagged stacked = Tagged::stack({tagged("a", "s"), tagged("b", "s")});
  REQUIRE(stacked.get_value("source").is_non_tensor_data());
  CHECK(stacked.get_value("source").non_tensor_data().metadata);
  CHECK(stacked.source() == "s");
  CHECK(stacked.get_value("label").is_non_tensor_stack());
  CHECK(stacked[1][0].label() == "b");
  // MetaData of different values make a stack, as in Python.
  const Tagged mixed = Tagged::stack({tagged("a", "s"), tagged("a", "t")});
  CHECK(mixed.get_value("source").is_non_tensor_stack());
  CHECK(Tagged::lazy_stack({tagged("a", "s"), tagged("b", "s")}).get_non_tensor("source") == "s");
}

TEST_CASE("MetaData saves as Python's MetaData and loads back as it",
          "[tensorclass][non-tensor-fields]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tc-tagged-" + std::to_string(::getpid()));
  tagged("a", "s").memmap(dir.string());
  const Json entries =
      tensordict::parse_json(tc_test::read_file((dir / "_tensordict" / "meta.json").string()));
  CHECK(entries["source"] == Json{{"type", "MetaData"}});
  CHECK(entries["label"] == Json{{"type", "NonTensorData"}});
  const Json source = tensordict::parse_json(
      tc_test::read_file((dir / "_tensordict" / "source" / "meta.json").string()));
  CHECK(source["_type"] == "<class 'tensordict.tensorclass.MetaData'>");
  const Tagged back = Tagged::load_memmap(dir.string());
  CHECK(back.source() == "s");
  CHECK(back.get_value("source").non_tensor_data().metadata);
  CHECK(back.get_value("step").non_tensor_data().metadata);
  CHECK_FALSE(back.get_value("label").non_tensor_data().metadata);
  std::filesystem::remove_all(dir);
}
