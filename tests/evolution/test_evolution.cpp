// Loading a directory written by another version of a class's schema (docs/schema.md, "Versions").
#include <ATen/ATen.h>

#include "catch2_compat.h"
#include <filesystem>

#include "breaking_dtype.h"
#include "breaking_removed.h"
#include "breaking_required.h"
#include "breaking_shape.h"
#include "io_test_util.h"
#include "tensordict/json.h"
#include "tensordict/lazy_stack.h"
#include "unversioned.h"
#include "v1.h"
#include "v2.h"

using tc_test::TempDir;
using tensordict::Json;

namespace {

evo::v1::Step version_one() {
  return evo::v1::Step({at::arange(6, at::kFloat).reshape({2, 3}), at::tensor({4L, 5L}), "hello"},
                       {2});
}

Json schema_file(const std::string& dir) {
  return tensordict::parse_json(tc_test::read_file(dir + "/schema.json"));
}

}  // namespace

TEST_CASE("a save writes its schema version beside meta.json", "[evolution]") {
  TempDir tmp;
  version_one().memmap(tmp / "one");
  CHECK(schema_file(tmp / "one") == Json{{"version", 1}});
  // A class of an unversioned schema writes none (as Python).
  evo::unversioned::Note({"text"}).memmap(tmp / "none");
  CHECK(std::filesystem::exists(tmp / "none/meta.json"));
  CHECK(!std::filesystem::exists(tmp / "none/schema.json"));
}

TEST_CASE("version 1's directory loads as version 2: renamed, deprecated and added fields",
          "[evolution]") {
  TempDir tmp;
  const evo::v1::Step old = version_one();
  old.memmap(tmp / "one");
  evo::v2::Step step = evo::v2::Step::load_memmap(tmp / "one");
  CHECK(at::equal(step.action(), old.act()));  // found under its old name
  CHECK(at::equal(step.obs(), old.obs()));
  CHECK(!step.reward().has_value());                           // added, optional: None
  CHECK(step.source() == "simulator");                         // added: its default
  CHECK(step.get("note")->non_tensor_data().data == "hello");  // deprecated: kept in the data
  CHECK(!step.get("act", std::nullopt).has_value());

  // Saved again, it is version 2's directory (the deprecated field still in it); version 1's
  // class knows neither the added fields nor the renamed one.
  step.clone().memmap(tmp / "two");
  CHECK(schema_file(tmp / "two") == Json{{"version", 2}});
  const evo::v2::Step again = evo::v2::Step::load_memmap(tmp / "two");
  CHECK(again.get("note")->non_tensor_data().data == "hello");
  CHECK(again.source() == "simulator");
  CHECK_THROWS_WITH(evo::v1::Step::load_memmap(tmp / "two"),
                    "'" + tmp / "two" +
                        "': 'reward' is not a field of Step; a field removed from a schema stays "
                        "readable as a deprecated field (written by schema version 2, Step is "
                        "schema version 1)");
}

TEST_CASE("a new instance takes its deprecated field's default", "[evolution]") {
  evo::v2::Step step({at::zeros({2, 3}), at::zeros({2}, at::kLong)}, {2});
  CHECK(step.get("note")->non_tensor_data().data == "");
  CHECK(step.source() == "simulator");
}

TEST_CASE(
    "each change version 1's data cannot take names the field, the directory and both "
    "versions",
    "[evolution]") {
  TempDir tmp;
  const std::string dir = tmp / "one";
  version_one().memmap(dir);
  const std::string versions = " (written by schema version 1, Step is schema version 3)";
  CHECK_THROWS_WITH(
      evo::dtype::Step::load_memmap(dir),
      "'" + dir + "': field 'obs' of Step expects dtype float64, got float32" + versions);
  CHECK_THROWS_WITH(
      evo::shape::Step::load_memmap(dir),
      "'" + dir + "': field 'obs' of Step expects shape [*, 4], got [2, 3]" + versions);
  CHECK_THROWS_WITH(evo::removed::Step::load_memmap(dir),
                    "'" + dir +
                        "': 'note' is not a field of Step; a field removed from a schema stays "
                        "readable as a deprecated field" +
                        versions);
  CHECK_THROWS_WITH(evo::required::Step::load_memmap(dir),
                    "'" + dir +
                        "': field 'seed' of Step is missing; a field added to a schema needs a "
                        "default or an optional[...] type" +
                        versions);
  CHECK_THROWS_AS(evo::dtype::Step::load_memmap(dir), tensordict::FormatError);
}

TEST_CASE("a directory without schema.json (Python's) is of no schema version", "[evolution]") {
  TempDir tmp;
  const std::string dir = tmp / "one";
  version_one().memmap(dir);
  std::filesystem::remove(dir + "/schema.json");
  CHECK(evo::v2::Step::load_memmap(dir).source() == "simulator");
  CHECK_THROWS_WITH(evo::dtype::Step::load_memmap(dir),
                    "'" + dir +
                        "': field 'obs' of Step expects dtype float64, got float32 (written by "
                        "no schema version, Step is schema version 3)");
}

TEST_CASE("an archive keeps the schema version", "[evolution]") {
  TempDir tmp;
  const std::string archive = tmp / "one.tdz";
  version_one().memmap(archive);
  CHECK(evo::v2::Step::load_memmap(archive).source() == "simulator");
  CHECK_THROWS_WITH(evo::dtype::Step::load_memmap(archive),
                    Catch::Matchers::ContainsSubstring("(written by schema version 1, Step is schema version 3)"));
}

TEST_CASE("a lazy stack of version 1 loads as version 2", "[evolution]") {
  TempDir tmp;
  const evo::v1::Step a = version_one();
  const evo::v1::Step b({at::ones({2, 3}), at::tensor({7L, 8L}), "other"}, {2});
  evo::v1::Step::lazy_stack({a, b}).memmap(tmp / "stack");
  const evo::v2::Step stack = evo::v2::Step::load_memmap(tmp / "stack");
  const auto elements = stack._tensordict().tensordicts();
  REQUIRE(elements.size() == 2);
  CHECK(at::equal(elements[1].get("action"), b.act()));
  CHECK(!elements[0].contains("act"));
}
