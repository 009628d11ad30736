// Every directory written by Python tensordict (fixtures/python-tensordict/<case>/td) loads to
// exactly what its expected.json says: structure, batch sizes, dtypes, shapes, values and the
// SHA-256 of each tensor's raw bytes. Saving what was loaded gives the same files byte for byte.
#include <ATen/ATen.h>

#include <filesystem>
#include "catch2_compat.h"

#include "io_test_util.h"
#include "skip.h"
#include "tensordict/dtype.h"
#include "tensordict/json.h"
#include "tensordict/memmap.h"

using tensordict::Json;
using tensordict::TensorDict;
namespace fs = std::filesystem;
namespace memmap = tensordict::memmap;

namespace {

const fs::path kFixtures = fs::path(TC_FIXTURES_DIR) / "python-tensordict";

std::vector<fs::path> fixture_cases() {
  std::vector<fs::path> cases;
  if (!fs::is_directory(kFixtures)) return cases;
  for (const auto& entry : fs::directory_iterator(kFixtures)) {
    if (fs::exists(entry.path() / "expected.json")) cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

Json read_json(const fs::path& path) {
  return tensordict::parse_json(tc_test::read_file(path.string()), path.string());
}

void flatten_values(const Json& values, std::vector<double>& out) {
  if (values.is_array()) {
    for (const auto& v : values) flatten_values(v, out);
  } else {
    out.push_back(values.is_boolean() ? (values.get<bool>() ? 1.0 : 0.0) : values.get<double>());
  }
}

void check_tensor(const std::string& key, const at::Tensor& t, const Json& expected) {
  INFO("tensor " << key);
  CHECK(tensordict::dtype_name(t.scalar_type()) == expected["dtype"].get<std::string>());
  CHECK(t.sizes().vec() == expected["shape"].get<std::vector<int64_t>>());
  std::vector<double> want;
  flatten_values(expected["values"], want);
  at::Tensor got = t.to(at::kDouble).contiguous().flatten();
  REQUIRE(got.numel() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i)
    CHECK(got[static_cast<int64_t>(i)].item<double>() == want[i]);
  if (expected.contains("sha256")) {
    at::Tensor c = t.contiguous();
    CHECK(tc_test::sha256_hex(c.data_ptr(), c.nbytes()) == expected["sha256"].get<std::string>());
  }
}

void check_tensordict(const TensorDict& td, const Json& node, const Json& none_fields);

void check_entry(const TensorDict& td, const std::string& key, const Json& node,
                 const Json& none_fields) {
  const std::string kind = node["kind"];
  if (kind ==
      "none") {  // a tensorclass None field: in the class's meta.json, not in the TensorDict
    CHECK_FALSE(td.contains(key));
    CHECK(none_fields.contains(key));
    CHECK(none_fields.value(key, Json(1)).is_null());
  } else if (kind == "tensor") {
    check_tensor(key, td.get(key), node);
  } else if (kind == "non_tensor") {
    CHECK(td.get_non_tensor(key) == node["data"]);
  } else {
    check_tensordict(td.get_tensordict(key), node, Json::object());
  }
}

void check_tensordict(const TensorDict& td, const Json& node, const Json& none_fields) {
  CHECK(td.batch_size() == node["batch_size"].get<std::vector<int64_t>>());
  std::vector<std::string> want_keys;
  for (const auto& [key, child] : node["entries"].items()) {
    if (child["kind"] != "none") want_keys.push_back(key);
    check_entry(td, key, child, none_fields);
  }
  std::vector<std::string> got_keys;
  for (const auto& k : td.keys()) got_keys.push_back(k.front());
  CHECK(got_keys == want_keys);  // insertion order is Python's item order
}

}  // namespace

TEST_CASE("every Python fixture loads with exact values", "[io][fixtures][needs-fixtures]") {
  const auto cases = fixture_cases();
  if (cases.empty()) {
    TC_SKIP("fixtures folder " << kFixtures.string() << " is absent (set TC_FIXTURES_DIR)");
  }
  for (const auto& dir : cases) {
    SECTION(dir.filename().string()) {
      const Json expected = read_json(dir / "expected.json");
      const Json& root = expected["root"];
      memmap::Loaded loaded = memmap::load((dir / "td").string());
      REQUIRE(loaded.value.is_tensordict());
      CHECK(loaded.type == root["type"].get<std::string>());
      Json none_fields = Json::object();
      if (root["kind"] == "tensorclass") {
        REQUIRE(loaded.class_info);
        none_fields = loaded.class_info->fields;
      } else {
        CHECK_FALSE(loaded.class_info);
      }
      check_tensordict(loaded.value.tensordict(), root, none_fields);
      // The public entry point agrees (a tensorclass directory gives its inner TensorDict).
      TensorDict td = TensorDict::load_memmap((dir / "td").string());
      check_tensordict(td, root, none_fields);
    }
  }
}

TEST_CASE("a nested fixture directory loads on its own", "[io][fixtures][needs-fixtures]") {
  const fs::path nested = kFixtures / "mmap_example" / "td" / "nested";
  if (!fs::is_directory(nested)) {
    TC_SKIP("fixtures folder " << kFixtures.string() << " is absent");
  }
  TensorDict td = TensorDict::load_memmap(nested.string());
  CHECK(td.batch_size() == std::vector<int64_t>{2, 1});
  CHECK(at::equal(td.get("int64"), at::tensor({1, 2}, at::kLong).reshape({2, 1})));
  CHECK(td.get("bfloat16").scalar_type() == at::kBFloat16);
  CHECK(td.get_non_tensor("string") == Json::array({"a string!"}));
}

TEST_CASE("device meta loads shapes and dtypes without opening data files",
          "[io][fixtures][needs-fixtures]") {
  const fs::path src = kFixtures / "flat_dtypes" / "td";
  if (!fs::is_directory(src)) {
    TC_SKIP("fixtures folder " << kFixtures.string() << " is absent");
  }
  tc_test::TempDir tmp;
  fs::copy_file(src / "meta.json", tmp / "meta.json");  // no .memmap file at all
  TensorDict td = TensorDict::load_memmap(tmp.path(), at::Device(at::kMeta));
  CHECK(td.get("f64").device().is_meta());
  CHECK(td.get("f64").sizes().vec() == std::vector<int64_t>{3, 4, 2});
  CHECK(td.get("bf16").scalar_type() == at::kBFloat16);
  CHECK(td.size() == 10);
}

TEST_CASE("saving a loaded fixture reproduces Python's files byte for byte",
          "[io][fixtures][needs-fixtures]") {
  const auto cases = fixture_cases();
  if (cases.empty()) {
    TC_SKIP("fixtures folder " << kFixtures.string() << " is absent");
  }
  for (const auto& dir : cases) {
    const Json expected = read_json(dir / "expected.json");
    if (!expected.contains("files")) continue;  // mmap_example: legacy layout, not reproduced
    SECTION(dir.filename().string()) {
      tc_test::TempDir tmp;
      const std::string out = tmp / "td";
      memmap::Loaded loaded = memmap::load((dir / "td").string());
      memmap::WriteOptions options;
      options.memmap.copy_existing = true;  // the leaves map the fixture's files
      options.memmap.format_version = 0;    // tensordict 0.14's files (format version 0)
      if (loaded.class_info) {
        memmap::save_tensorclass(loaded.value.tensordict(), *loaded.class_info, out, options);
      } else {
        memmap::save_tensordict(loaded.value.tensordict(), out, options);
      }
      size_t files = 0;
      for (const auto& [name, size] : expected["files"].items()) {
        INFO("file " << name);
        const std::string ours = tc_test::read_file(out + "/" + name);
        CHECK(ours.size() == size.get<size_t>());
        CHECK(ours == tc_test::read_file((dir / "td" / name).string()));
        ++files;
      }
      size_t written = 0;
      for (const auto& e : fs::recursive_directory_iterator(out)) written += e.is_regular_file();
      CHECK(written == files);
    }
  }
}
