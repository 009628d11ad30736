#include "v1_tree.h"

#include <ATen/ATen.h>

#include <filesystem>
#include "catch2_compat.h"

#include "io_test_util.h"
#include "tensordict/json.h"

using tensordict::BatchSize;
using tensordict::DimNames;
using tensordict::Json;
using tensordict::TensorDict;
namespace fs = std::filesystem;

namespace tc_test {

const std::string kTd = R"("_type": "<class 'tensordict._td.TensorDict'>")";
const std::string kLazy = R"("_type": "<class 'tensordict._lazy.LazyStackedTensorDict'>")";

std::string leaf(const std::string& dtype, const std::string& shape) {
  return R"({"device": "cpu", "shape": )" + shape + R"(, "dtype": "torch.)" + dtype +
         R"(", "is_nested": false})";
}

namespace {

std::string bytes_of(const at::Tensor& t) {
  return std::string(static_cast<const char*>(t.data_ptr()), t.nbytes());
}

}  // namespace

std::string names_of(const TensorDict& td) {
  Json list = Json::array();
  for (const auto& name : td.names()) list.push_back(name ? Json(*name) : Json(nullptr));
  return tensordict::python_repr(list);
}

void write_v1_tree(const std::string& d, const std::string& root_extra) {
  fs::create_directories(d + "/next");
  fs::create_directories(d + "/steps/0");
  fs::create_directories(d + "/steps/1");
  fs::create_directories(d + "/text");
  fs::create_directories(d + "/tags");
  tc_test::write_file(
      d + "/meta.json",
      R"({"obs": )" + leaf("float32", "[2, 3]") +
          R"(, "next": {"type": "TensorDict"}, "steps": {"type": "LazyStackedTensorDict"}, )"
          R"("text": {"type": "NonTensorData"}, "tags": {"type": "NonTensorStack"}, )"
          R"("shape": [2], "device": "cpu", )" +
          kTd + ", " + root_extra + "}");
  tc_test::write_file(d + "/obs.memmap", bytes_of(at::arange(6, at::kFloat)));
  tc_test::write_file(
      d + "/next/meta.json",
      R"({"reward": )" + leaf("float64", "[2, 1]") + R"(, "shape": [2, 1], "device": "cpu", )" +
          kTd + R"(, "_format_version": 1, "_class": "TensorDict", "_names": ["batch", "agent"]})");
  tc_test::write_file(d + "/next/reward.memmap", bytes_of(at::ones({2, 1}, at::kDouble)));
  tc_test::write_file(
      d + "/steps/meta.json",
      "{" + kLazy +
          R"(, "stack_dim": 0, "_format_version": 1, "_class": "LazyStackedTensorDict", "_names": ["batch", "time"]})");
  for (int64_t i = 0; i < 2; ++i) {
    const std::string n = std::to_string(3 + 2 * i);
    const std::string e = d + "/steps/" + std::to_string(i);
    tc_test::write_file(
        e + "/meta.json",
        R"({"x": )" + leaf("int64", "[" + n + "]") + R"(, "shape": [)" + n +
            R"(], "device": "cpu", )" + kTd +
            R"(, "_format_version": 1, "_class": "TensorDict", "_names": ["time"]})");
    tc_test::write_file(e + "/x.memmap", bytes_of(at::arange(3 + 2 * i) + 10 * i));
  }
  tc_test::write_file(
      d + "/text/meta.json",
      R"({"_type": "<class 'tensordict.tensorclass.NonTensorData'>", "data": "hello", "_is_non_tensor": true, "_metadata": null})");
  tc_test::write_file(
      d + "/tags/meta.json",
      R"({"_type":"<class 'tensordict.tensorclass.NonTensorStack'>","stack_dim":0,"device":"cpu","data":["a","b"]})");
}

void check_v1_tree(const TensorDict& td) {
  CHECK(td.keys() == std::vector<tensordict::NestedKey>{"obs", "next", "steps", "text", "tags"});
  CHECK(td.batch_size() == BatchSize{2});
  CHECK(names_of(td) == "['batch']");
  CHECK(at::equal(td.get("obs"), at::arange(6, at::kFloat).reshape({2, 3})));
  const TensorDict next = td.get_tensordict("next");
  CHECK(names_of(next) == "['batch', 'agent']");
  CHECK(at::equal(next.get("reward"), at::ones({2, 1}, at::kDouble)));
  const TensorDict steps = td.get_tensordict("steps");
  REQUIRE(steps.is_lazy_stack());
  CHECK(steps.batch_size() == BatchSize{2, -1});
  CHECK(names_of(steps) == "['batch', 'time']");
  CHECK(at::equal(steps[1].get("x"), at::arange(5) + 10));
  CHECK(td.get_non_tensor("text") == "hello");
  CHECK(td.get_value("tags").non_tensor_stack().tolist() == Json::array({"a", "b"}));
}

}  // namespace tc_test
