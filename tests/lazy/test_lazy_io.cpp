// LazyStackedTensorDict on disk (spec §4) and class-preserving saves through the plain TensorDict
// API (spec §3).
#include <ATen/ATen.h>

#include <filesystem>
#include "catch2_compat.h"

#include "io_test_util.h"
#include "lazy_test_util.h"
#include "skip.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/memmap.h"

using namespace tensordict;
using lazy_test::conv;
namespace fs = std::filesystem;

namespace {

const fs::path kFixtures = fs::path(TC_FIXTURES_DIR) / "python-tensordict";

Json meta_of(const std::string& dir) { return Json::parse(tc_test::read_file(dir + "/meta.json")); }

}  // namespace

TEST_CASE("a lazy stack saves in Python's layout: meta.json bytes and element dirs", "[lazy][io]") {
  tc_test::TempDir tmp;
  TensorDict ls = lazy_stack({conv(3, 0), conv(5, 10)});
  MemmapOptions v0;  // Python 0.14's files: format version 0 (docs/format.md)
  v0.format_version = 0;
  TensorDict written = ls.memmap(tmp / "ls", v0);
  CHECK(tc_test::read_file(tmp / "ls/meta.json") ==
        "{\"_type\": \"<class 'tensordict._lazy.LazyStackedTensorDict'>\", \"stack_dim\": 0}");
  CHECK(tc_test::read_file(tmp / "ls/0/meta.json") ==
        "{\"x\": {\"device\": \"cpu\", \"shape\": [3], \"dtype\": \"torch.float32\", "
        "\"is_nested\": false}, \"s\": {\"type\": \"NonTensorData\"}, \"shape\": [3], "
        "\"device\": \"cpu\", \"_type\": \"<class 'tensordict._td.TensorDict'>\"}");
  CHECK(fs::file_size(tmp / "ls/1/x.memmap") == 5 * 4);
  CHECK_FALSE(fs::exists(tmp / "ls/2"));
  REQUIRE(written.is_lazy_stack());
  CHECK(written.is_locked());
  CHECK(MemoryMappedTensor::is_memory_mapped(written[1].get("x")));

  // Ragged: loads as a lazy stack with the exact values.
  TensorDict back = TensorDict::load_memmap(tmp / "ls");
  REQUIRE(back.is_lazy_stack());
  CHECK(back.batch_size() == BatchSize{2, -1});
  CHECK(at::equal(back[1].get("x"), at::arange(5, at::kFloat) + 10));
  CHECK(back[0].get_non_tensor("s") == "text");

  // stack_dim other than 0 is written and read back.
  lazy_stack({conv(3, 0), conv(3, 1)}, 1).memmap(tmp / "d1");
  CHECK(meta_of(tmp / "d1")["stack_dim"] == 1);
  TensorDict d1 = TensorDict::load_memmap(tmp / "d1");
  CHECK(d1.stack_dim() == 1);
  CHECK(d1.batch_size() == BatchSize{3, 2});
}

TEST_CASE("a file in place of a stack element is an error, not a shorter stack", "[lazy][io]") {
  tc_test::TempDir tmp;
  lazy_stack({TensorDict({{"x", at::zeros({1})}}, {1}), TensorDict({{"x", at::ones({1})}}, {1}),
              TensorDict({{"x", at::ones({1})}}, {1})})
      .memmap(tmp / "ls");
  std::filesystem::remove_all(tmp / "ls/1");
  tc_test::write_file(tmp / "ls/1", "not an element");
  CHECK_THROWS_AS(TensorDict::load_memmap(tmp / "ls"), FormatError);
  CHECK_THROWS_WITH(
      TensorDict::load_memmap(tmp / "ls"),
      Catch::Matchers::ContainsSubstring("ls/1' is not a directory (an element of the stack)"));
}

TEST_CASE("lazy stacks of TensorDicts with different keys round-trip", "[lazy][io]") {
  tc_test::TempDir tmp;
  TensorDict a({{"obs", at::zeros({2})}, {"a_only", at::ones({2, 2})}}, {2});
  TensorDict b({{"obs", at::ones({2})}, {"b_only", "hello"}}, {2});
  lazy_stack({a, b}).memmap(tmp / "het");
  TensorDict back = TensorDict::load_memmap(tmp / "het");
  REQUIRE(back.is_lazy_stack());
  CHECK(back.keys() == std::vector<NestedKey>{"obs"});
  CHECK(at::equal(back[0].get("a_only"), at::ones({2, 2})));
  CHECK(back[1].get_non_tensor("b_only") == "hello");
  // Re-saved: still a lazy stack with the same element dirs.
  MemmapOptions copy;
  copy.copy_existing = true;  // the loaded leaves map the first save's files
  back.memmap(tmp / "again", copy);
  CHECK(meta_of(tmp / "again")["_type"] == memmap::kLazyStackType);
  CHECK(meta_of(tmp / "again/1")["b_only"] == Json{{"type", "NonTensorData"}});
}

TEST_CASE("a lazy stack nested in a TensorDict and a lazy stack of lazy stacks", "[lazy][io]") {
  tc_test::TempDir tmp;
  TensorDict inner = lazy_stack({conv(3, 0), conv(4, 0)});
  TensorDict parent({{"hist", inner}, {"y", at::arange(2)}}, {2});
  parent.memmap(tmp / "p");
  CHECK(meta_of(tmp / "p")["hist"] == Json{{"type", "LazyStackedTensorDict"}});
  CHECK(meta_of(tmp / "p/hist")["_type"] == memmap::kLazyStackType);
  TensorDict back = TensorDict::load_memmap(tmp / "p");
  CHECK_FALSE(back.is_lazy_stack());
  REQUIRE(back.get_tensordict("hist").is_lazy_stack());
  CHECK(at::equal(back.get_tensordict("hist")[1].get("x"), at::arange(4, at::kFloat)));
  CHECK_THROWS_AS(back.get({"hist", "x"}), ShapeError);

  TensorDict outer = lazy_stack({inner, lazy_stack({conv(1, 0), conv(2, 0)})});
  outer.memmap(tmp / "o");
  CHECK(meta_of(tmp / "o/1")["_type"] == memmap::kLazyStackType);
  TensorDict o = TensorDict::load_memmap(tmp / "o");
  REQUIRE(o[1].is_lazy_stack());
  CHECK(at::equal(o[1][1].get("x"), at::arange(2, at::kFloat)));

  // memmap_ in place: the elements now map the files.
  TensorDict live = lazy_stack({conv(3, 0), conv(4, 0)});
  TensorDict first = live[0];
  live.memmap_(tmp / "live");
  CHECK(MemoryMappedTensor::is_memory_mapped(first.get("x")));
}

TEST_CASE("load then save through the plain API keeps the _type of every level",
          "[lazy][io][needs-fixtures]") {
  const fs::path fixture = kFixtures / "tensorclass" / "td";
  if (!fs::is_directory(fixture)) {
    TC_SKIP("fixtures folder " << kFixtures.string() << " is absent");
  }
  tc_test::TempDir tmp;
  MemmapOptions copy;
  copy.copy_existing = true;
  copy.format_version = 0;  // the fixture's version (tensordict 0.14)
  // A tensorclass directory.
  TensorDict td = TensorDict::load_memmap(fixture.string());
  td.memmap(tmp / "tc", copy);
  CHECK(meta_of(tmp / "tc") == meta_of(fixture.string()));
  CHECK(meta_of(tmp / "tc/_tensordict") == meta_of((fixture / "_tensordict").string()));
  CHECK(tc_test::read_file(tmp / "tc/_tensordict/obs.memmap") ==
        tc_test::read_file((fixture / "_tensordict/obs.memmap").string()));

  // A TensorDict holding that tensorclass, and a lazy stack of it.
  TensorDict holder({{"item", td}}, {2});
  holder.memmap(tmp / "holder", copy);
  CHECK(meta_of(tmp / "holder")["item"] == Json{{"type", "RefTC"}});
  CHECK(meta_of(tmp / "holder/item") == meta_of(fixture.string()));
  TensorDict reloaded = TensorDict::load_memmap(tmp / "holder");
  reloaded.memmap(tmp / "holder2", copy);
  CHECK(meta_of(tmp / "holder2/item")["_type"] == "<class '__main__.RefTC'>");

  // As Python's lazy_stack([tc, tc]): the class over a lazy stack whose rows are plain.
  TensorDict stacked = lazy_stack({td, td});
  stacked.memmap(tmp / "stacked", copy);
  CHECK(meta_of(tmp / "stacked")["_type"] == "<class '__main__.RefTC'>");
  CHECK(meta_of(tmp / "stacked/_tensordict/1")["_type"] == "<class 'tensordict._td.TensorDict'>");
  TensorDict s2 = TensorDict::load_memmap(tmp / "stacked");
  CHECK(s2[1].get_non_tensor("label") == "my-label");
}

TEST_CASE("Python fixtures re-save with the same structure and class",
          "[lazy][io][needs-fixtures]") {
  if (!fs::is_directory(kFixtures)) {
    TC_SKIP("fixtures folder " << kFixtures.string() << " is absent");
  }
  MemmapOptions copy;
  copy.copy_existing = true;
  for (const auto& entry : fs::directory_iterator(kFixtures)) {
    if (!fs::is_directory(entry.path() / "td")) continue;
    SECTION(entry.path().filename().string()) {
      tc_test::TempDir tmp;
      const std::string src = (entry.path() / "td").string();
      TensorDict::load_memmap(src).memmap(tmp / "out", copy);
      // Every meta.json Python wrote has a counterpart naming the same class and entries.
      for (const auto& f : fs::recursive_directory_iterator(src)) {
        if (f.path().filename() != "meta.json") continue;
        const std::string rel = fs::relative(f.path().parent_path(), src).string();
        INFO("level " << rel);
        const Json theirs = meta_of(f.path().parent_path().string());
        const Json ours = meta_of(tmp / ("out/" + rel));
        CHECK(ours["_type"] == theirs["_type"]);
        for (const auto& [key, value] : theirs.items()) {
          if (key == "_metadata" || key == "_is_non_tensor") continue;  // NonTensorData bookkeeping
          if (value.is_object() && value.contains("type")) CHECK(ours[key] == value);
        }
      }
    }
  }
}
