// Format version 1 of Python tensordict's layout (docs/format.md, "Format versions"): directories
// and archives written by hand per the spec load with their dim names, a newer or malformed
// version is refused, saves write version 1 (exact meta.json bytes) or version 0 on request, both
// round-trip, and a save replaces an earlier version-1 save but not a newer one.
#include <ATen/ATen.h>

#include <filesystem>
#include <string>
#include "catch2_compat.h"

#include "io_test_util.h"
#include "python_peer.h"
#include "skip.h"
#include "tensordict/archive.h"
#include "tensordict/format_version.h"
#include "tensordict/json.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/memmap.h"
#include "v1_tree.h"

using Catch::Matchers::ContainsSubstring;
using tensordict::BatchSize;
using tensordict::DimNames;
using tensordict::FormatError;
using tensordict::Json;
using tensordict::MemmapOptions;
using tensordict::TensorDict;
namespace archive = tensordict::archive;
namespace fs = std::filesystem;
namespace memmap = tensordict::memmap;
using tc_test::check_v1_tree;
using tc_test::kLazy;
using tc_test::kTd;
using tc_test::leaf;
using tc_test::names_of;
using tc_test::write_v1_tree;

namespace {

std::string meta_of(const std::string& dir) { return tc_test::read_file(dir + "/meta.json"); }

// Replaces the first `from` in `dir`/meta.json by `to`.
void edit_meta(const std::string& dir, const std::string& from, const std::string& to) {
  std::string text = meta_of(dir);
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  tc_test::write_file(dir + "/meta.json", text.replace(at, from.size(), to));
}

// Saves as format version `v`; leaves mapping a loaded tree's files are copied.
MemmapOptions version(int v) {
  MemmapOptions o;
  o.format_version = v;
  o.copy_existing = true;
  return o;
}

// batch [2] named "b", a leaf, a nested TensorDict of batch [2, 3] and a string.
TensorDict named_td() {
  TensorDict td({{"a", at::arange(2, at::kFloat)},
                 {"n", TensorDict({{"y", at::zeros({2, 3}, at::kInt)}}, {2, 3})},
                 {"s", "text"}},
                {2});
  td.set_names(DimNames{"b"});
  return td;
}

// Python with tensordict importable (tests/CMakeLists.txt); the live case skips without it.
const std::string kPeer = tc_test::python_peer();

}  // namespace

TEST_CASE("a version-1 directory loads with its dim names", "[io][format_version]") {
  tc_test::TempDir tmp;
  write_v1_tree(tmp / "v1");
  check_v1_tree(TensorDict::load_memmap(tmp / "v1"));
  CHECK(memmap::verify(tmp / "v1").empty());
  // On the meta device (no data file read), and one level on its own.
  CHECK(names_of(TensorDict::load_memmap(tmp / "v1", at::Device(at::kMeta))) == "['batch']");
  CHECK(names_of(TensorDict::load_memmap(tmp / "v1/next")) == "['batch', 'agent']");
  CHECK(names_of(TensorDict::load_memmap(tmp / "v1/steps")) == "['batch', 'time']");

  // A tensorclass directory: its meta.json has no version entries (they are its fields'
  // namespace), its _tensordict/ does.
  fs::create_directories(tmp / "tc");
  tc_test::write_file(tmp / "tc/meta.json", R"({"_type": "<class 'mod.TC'>", "extra": null})");
  fs::rename(tmp / "v1", tmp / "tc/_tensordict");
  const memmap::Loaded tc = memmap::load(tmp / "tc");
  REQUIRE(tc.class_info);
  CHECK(tc.class_info->fields == Json{{"extra", nullptr}});
  check_v1_tree(tc.value.tensordict());

  // A class other than the two layouts, no `_class`, an unnamed dim: accepted. A root without
  // names takes its named child's, as when that child is set in memory.
  write_v1_tree(tmp / "v1b",
                R"("_format_version": 1, "_class": "TensorDictParams", "_names": [null])");
  CHECK(names_of(TensorDict::load_memmap(tmp / "v1b")) == "['batch']");
  write_v1_tree(tmp / "v1c", R"("_format_version": 1)");
  CHECK(names_of(TensorDict::load_memmap(tmp / "v1c")) == "['batch']");
  CHECK(names_of(TensorDict::load_memmap(tmp / "v1c", at::Device(at::kMeta))) == "['batch']");
}

TEST_CASE("a version-1 archive loads with its dim names", "[io][format_version][tdz]") {
  tc_test::TempDir tmp;
  write_v1_tree(tmp / "v1");
  archive::pack_memmap(tmp / "v1", tmp / "v1.tdz");
  check_v1_tree(TensorDict::load_memmap(tmp / "v1.tdz"));
  CHECK(archive::verify(tmp / "v1.tdz").empty());
  CHECK(names_of(archive::load_memmap(tmp / "v1.tdz", "next")) == "['batch', 'agent']");
  CHECK(names_of(archive::load_memmap(tmp / "v1.tdz", "steps")) == "['batch', 'time']");
}

TEST_CASE("a newer or malformed format version is refused", "[io][format_version]") {
  tc_test::TempDir tmp;
  const std::string d = tmp / "td";
  const std::string v1 = R"("_format_version": 1)";
  struct Case {
    const char* replacement;
    std::string message;
  };
  const std::vector<Case> cases = {
      {R"("_format_version": 2)",
       "format version 2 is newer than the newest this library reads (1)"},
      {R"("_format_version": 18446744073709551615)",
       "format version 18446744073709551615 is newer than the newest this library reads (1)"},
      {R"("_format_version": -1)", "\"_format_version\" -1 is negative"},
      {R"("_format_version": 1.0)", "\"_format_version\" 1.0 is not an integer (a format version)"},
      {R"("_format_version": "1")",
       "\"_format_version\" \"1\" is not an integer (a format version)"},
      {R"("_format_version": null)",
       "\"_format_version\" null is not an integer (a format version)"},
  };
  for (const auto& c : cases) {
    INFO(c.replacement);
    fs::remove_all(d);
    write_v1_tree(d);
    edit_meta(d, v1, c.replacement);
    const std::string message = "'" + d + "/meta.json': " + c.message;
    CHECK_THROWS_WITH(TensorDict::load_memmap(d), message);
    CHECK(memmap::verify(d) == std::vector<std::string>{message});
    fs::remove(tmp / "td.tdz");
    archive::pack_memmap(d, tmp / "td.tdz");
    CHECK_THROWS_WITH(TensorDict::load_memmap(tmp / "td.tdz"),
                      ContainsSubstring("meta.json': " + c.message));
  }
  // At any level: a nested TensorDict, a lazy stack, its elements, non-tensor data.
  for (const std::string level : {"next", "steps", "steps/1", "text"}) {
    INFO(level);
    fs::remove_all(d);
    write_v1_tree(d);
    if (level == "text") {
      edit_meta(d + "/text", R"("_is_non_tensor")", R"("_format_version": 2, "_is_non_tensor")");
    } else {
      edit_meta(d + "/" + level, v1, R"("_format_version": 2)");
    }
    CHECK_THROWS_WITH(TensorDict::load_memmap(d),
                      "'" + d + "/" + level + "/meta.json': format version 2 is newer than the " +
                          "newest this library reads (1)");
  }
}

TEST_CASE("version 1's _class and _names are checked", "[io][format_version]") {
  tc_test::TempDir tmp;
  const std::string d = tmp / "td";
  struct Case {
    std::string dir;  // relative to d
    std::string from;
    std::string to;
    std::string message;  // after "'{d}/{dir}/meta.json': "
  };
  const std::vector<Case> cases = {
      {"", R"("_class": "TensorDict")", R"("_class": "LazyStackedTensorDict")",
       R"("_class" "LazyStackedTensorDict" does not match _type <class 'tensordict._td.TensorDict'>)"},
      {"steps", R"("_class": "LazyStackedTensorDict")", R"("_class": "tensordict.TensorDict")",
       R"("_class" "tensordict.TensorDict" does not match _type <class 'tensordict._lazy.LazyStackedTensorDict'>)"},
      {"", R"("_class": "TensorDict")", R"("_class": 3)",
       R"("_class" 3 is not a string (a class name))"},
      {"", R"("_names": ["batch"])", R"("_names": "batch")",
       R"("_names" "batch" is not a list of dim names)"},
      {"", R"("_names": ["batch"])", R"("_names": ["batch", null])",
       R"("_names" ["batch",null] has 2 names for 1 batch dims)"},
      {"next", R"("_names": ["batch", "agent"])", R"("_names": ["a", "a"])",
       R"("_names" ["a","a"] names two dims "a")"},
      {"next", R"("_names": ["batch", "agent"])", R"("_names": ["batch", 7])",
       R"("_names" ["batch",7]: 7 is not a string or null)"},
      {"steps", R"("_names": ["batch", "time"])", R"("_names": ["batch", "t"])",
       R"("_names" names dim 1 't', its elements 'time')"},
  };
  for (const auto& c : cases) {
    INFO(c.to);
    fs::remove_all(d);
    write_v1_tree(d);
    const std::string dir = c.dir.empty() ? d : d + "/" + c.dir;
    edit_meta(dir, c.from, c.to);
    CHECK_THROWS_WITH(TensorDict::load_memmap(d), "'" + dir + "/meta.json': " + c.message);
  }
  // A child whose names disagree with its parent's.
  fs::remove_all(d);
  write_v1_tree(d);
  edit_meta(d + "/next", R"("_names": ["batch", "agent"])", R"("_names": ["other", "agent"])");
  CHECK_THROWS_WITH(TensorDict::load_memmap(d),
                    ContainsSubstring("'" + d + "/meta.json': entry 'next' does not fit"));
}

TEST_CASE("version 0 is read as before: no version entries, their names are keys",
          "[io][format_version]") {
  tc_test::TempDir tmp;
  const std::string d = tmp / "td";
  TensorDict td({{"_names", at::ones({2})}, {"_class", at::zeros({2})}}, {2});
  td.memmap(d, version(0));
  CHECK(meta_of(d).find("_format_version") == std::string::npos);
  const TensorDict back = TensorDict::load_memmap(d);
  CHECK(back.keys() == std::vector<tensordict::NestedKey>{"_names", "_class"});
  CHECK(at::equal(back.get("_names"), at::ones({2})));
  // Version 1 reserves these names, as "shape", "device" and "_type".
  CHECK_THROWS_AS(td.memmap(tmp / "v1"), tensordict::KeyError);
  CHECK_FALSE(fs::exists(tmp / "v1"));
  // A version-1 entry in a file without a version is not one.
  edit_meta(d, R"("_names": {)", R"("_names": ["b"], "x": {)");
  CHECK_THROWS_WITH(TensorDict::load_memmap(d),
                    "'" + d + "/meta.json': entry '_names' is not an object");
}

TEST_CASE("saves write version 1 by default, version 0 on request", "[io][format_version]") {
  tc_test::TempDir tmp;
  const TensorDict td = named_td();
  td.memmap(tmp / "v1");
  const std::string a = R"({"a": )" + leaf("float32", "[2]");
  CHECK(meta_of(tmp / "v1") ==
        a +
            R"(, "n": {"type": "TensorDict"}, "s": {"type": "NonTensorData"}, "shape": [2], )"
            R"("device": "cpu", )" +
            kTd + R"(, "_format_version": 1, "_class": "TensorDict", "_names": ["b"]})");
  CHECK(meta_of(tmp / "v1/n") ==
        R"({"y": )" + leaf("int32", "[2, 3]") + R"(, "shape": [2, 3], "device": "cpu", )" + kTd +
            R"(, "_format_version": 1, "_class": "TensorDict", "_names": ["b", null]})");
  CHECK(
      meta_of(tmp / "v1/s") ==
      R"({"_type": "<class 'tensordict.tensorclass.NonTensorData'>", "data": "text", "_is_non_tensor": true, "_metadata": null})");
  // Without dim names there is no "_names".
  TensorDict({{"a", at::zeros({2})}}, {2}).memmap(tmp / "plain");
  CHECK(meta_of(tmp / "plain") == a + R"(, "shape": [2], "device": "cpu", )" + kTd +
                                      R"(, "_format_version": 1, "_class": "TensorDict"})");

  td.memmap(tmp / "v0", version(0));
  CHECK(meta_of(tmp / "v0") ==
        a +
            R"(, "n": {"type": "TensorDict"}, "s": {"type": "NonTensorData"}, "shape": [2], )"
            R"("device": "cpu", )" +
            kTd + "}");
  CHECK(meta_of(tmp / "v0/n") == R"({"y": )" + leaf("int32", "[2, 3]") +
                                     R"(, "shape": [2, 3], "device": "cpu", )" + kTd + "}");

  // A lazy stack: its own entries, each element its own.
  TensorDict a0({{"x", at::zeros({3})}}, {3});
  TensorDict a1({{"x", at::zeros({5})}}, {5});
  TensorDict stack = tensordict::lazy_stack({a0, a1});
  stack.set_names(DimNames{"s", "t"});
  stack.memmap(tmp / "ls");
  CHECK(
      meta_of(tmp / "ls") ==
      "{" + kLazy +
          R"(, "stack_dim": 0, "_format_version": 1, "_class": "LazyStackedTensorDict", "_names": ["s", "t"]})");
  CHECK(meta_of(tmp / "ls/1") ==
        R"({"x": )" + leaf("float32", "[5]") + R"(, "shape": [5], "device": "cpu", )" + kTd +
            R"(, "_format_version": 1, "_class": "TensorDict", "_names": ["t"]})");
  stack.memmap(tmp / "ls0", version(0));
  CHECK(meta_of(tmp / "ls0") == "{" + kLazy + R"(, "stack_dim": 0})");

  // A tensorclass: no entries in its meta.json, version 1 in _tensordict/.
  memmap::save_tensorclass(td, memmap::ClassInfo{"<class 'mod.TC'>", Json{{"none", nullptr}}},
                           tmp / "tc");
  CHECK(meta_of(tmp / "tc") == R"({"_type": "<class 'mod.TC'>", "none": null})");
  CHECK(meta_of(tmp / "tc/_tensordict") == meta_of(tmp / "v1"));

  // Archives: the same files.
  td.save(tmp / "v1.tdz");
  td.save(tmp / "v0.tdz", version(0));
  archive::unpack_memmap(tmp / "v1.tdz", tmp / "v1_unpacked");
  archive::unpack_memmap(tmp / "v0.tdz", tmp / "v0_unpacked");
  CHECK(meta_of(tmp / "v1_unpacked") == meta_of(tmp / "v1"));
  CHECK(meta_of(tmp / "v0_unpacked/n") == meta_of(tmp / "v0/n"));

  // Any other version is refused before anything is written.
  CHECK_THROWS_WITH(td.memmap(tmp / "v2", version(2)),
                    "cannot write format version 2: this library writes versions 0 and 1");
  CHECK_THROWS_AS(td.save(tmp / "v2.tdz", version(-1)), tensordict::ValueError);
  CHECK_FALSE(fs::exists(tmp / "v2"));
  CHECK_FALSE(fs::exists(tmp / "v2.tdz"));
}

TEST_CASE("versions 0 and 1 round-trip both ways", "[io][format_version]") {
  tc_test::TempDir tmp;
  const TensorDict td = named_td();
  auto same_values = [&](const TensorDict& back) {
    CHECK(at::equal(back.get("a"), td.get("a")));
    CHECK(at::equal(back.get({"n", "y"}), td.get({"n", "y"})));
    CHECK(back.get_non_tensor("s") == "text");
  };
  for (const std::string suffix : {"", ".tdz"}) {
    INFO(suffix);
    td.memmap(tmp / ("v1" + suffix));
    const TensorDict v1 = TensorDict::load_memmap(tmp / ("v1" + suffix));
    same_values(v1);
    CHECK(names_of(v1) == "['b']");
    CHECK(names_of(v1.get_tensordict("n")) == "['b', None]");
    // Version 0 keeps no names.
    td.memmap(tmp / ("v0" + suffix), version(0));
    const TensorDict v0 = TensorDict::load_memmap(tmp / ("v0" + suffix));
    same_values(v0);
    CHECK(names_of(v0) == "[None]");
    // 1 -> 0 -> 1 and 0 -> 1.
    v1.memmap(tmp / ("v1_v0" + suffix), version(0));
    const TensorDict again = TensorDict::load_memmap(tmp / ("v1_v0" + suffix));
    same_values(again);
    again.memmap(tmp / ("v1_v0_v1" + suffix), version(1));
    same_values(TensorDict::load_memmap(tmp / ("v1_v0_v1" + suffix)));
    v0.memmap(tmp / ("v0_v1" + suffix), version(1));
    same_values(TensorDict::load_memmap(tmp / ("v0_v1" + suffix)));
  }
  // The hand-written tree: loaded, saved as each version, loaded again.
  write_v1_tree(tmp / "spec");
  const TensorDict spec = TensorDict::load_memmap(tmp / "spec");
  spec.memmap(tmp / "spec_v1", version(1));
  check_v1_tree(TensorDict::load_memmap(tmp / "spec_v1"));
  spec.memmap(tmp / "spec_v0", version(0));
  const TensorDict v0 = TensorDict::load_memmap(tmp / "spec_v0");
  CHECK(at::equal(v0.get("obs"), spec.get("obs")));
  CHECK(names_of(v0.get_tensordict("steps")) == "[None, None]");
}

TEST_CASE("a save replaces an earlier version-1 save, not a newer one", "[io][format_version]") {
  tc_test::TempDir tmp;
  const std::string d = tmp / "td";
  write_v1_tree(d);  // as Python writes version 1
  tc_test::write_file(d + "/notes.txt", "mine");
  const TensorDict td({{"z", at::ones({2})}}, {2});
  td.memmap(d);
  CHECK(TensorDict::load_memmap(d).keys() == std::vector<tensordict::NestedKey>{"z"});
  CHECK(tc_test::read_file(d + "/notes.txt") == "mine");
  CHECK_FALSE(fs::exists(d + "/obs.memmap"));

  // A save of a newer version: what it owns is unknown, so it is left alone.
  edit_meta(d, R"("_format_version": 1)", R"("_format_version": 2)");
  CHECK_THROWS_WITH(
      td.memmap(d),
      "refusing to replace '" + d +
          "': it is not a directory that Python tensordict or this library saved ('" + d +
          "/meta.json': format version 2 is newer than the newest this library reads (1)); move "
          "it away or save elsewhere");
  CHECK(meta_of(d).find(R"("_format_version": 2)") != std::string::npos);

  // Archives alike.
  fs::remove_all(d);
  write_v1_tree(d);
  archive::pack_memmap(d, tmp / "v1.tdz");
  td.save(tmp / "v1.tdz");
  CHECK(TensorDict::load_memmap(tmp / "v1.tdz").keys() == std::vector<tensordict::NestedKey>{"z"});
  edit_meta(d, R"("_format_version": 1)", R"("_format_version": 2)");
  archive::pack_memmap(d, tmp / "v2.tdz");
  CHECK_THROWS_WITH(td.save(tmp / "v2.tdz"),
                    ContainsSubstring("meta.json': format version 2 is newer than the newest"));
  CHECK_THROWS_AS(TensorDict::load_memmap(tmp / "v2.tdz"), FormatError);
}

TEST_CASE("Python tensordict 0.14 loads our version-1 directories and archives",
          "[io][format_version][python][peer][needs-peer]") {
  tc_test::require_python_peer("tensordict");
  tc_test::TempDir tmp;
  TensorDict td = named_td();
  td.set("steps", tensordict::lazy_stack({TensorDict({{"x", at::arange(3)}}, {3}),
                                          TensorDict({{"x", at::arange(3) + 10}}, {3})}));
  td.set("tags", tensordict::NonTensorStack({2}, {"x", "y"}));
  td.memmap(tmp / "v1");
  td.save(tmp / "v1.tdz");
  REQUIRE(meta_of(tmp / "v1").find(R"("_format_version": 1)") != std::string::npos);
  REQUIRE(meta_of(tmp / "v1/steps").find(R"("_format_version": 1)") != std::string::npos);

  const auto r =
      tc_test::run_command("'" + kPeer + "' '" TC_SOURCE_DIR "/tests/io/python_describe.py' '" +
                           (tmp / "v1") + "' '" + (tmp / "v1.tdz") + "'");
  // 77: the script found no tensordict to import; 126/127: no Python at TC_PYTHON_PEER.
  if (r.code == 77 || r.code == 126 || r.code == 127) {
    TC_SKIP_WITHOUT_PEER("no Python tensordict at TC_PYTHON_PEER='" << kPeer << "'");
  }
  REQUIRE(r.code == 0);
  const Json described = Json::parse(r.output);
  // Version 0 readers ignore the entries version 1 adds: the values load, the dim names do not.
  const std::string element = R"({"cls": "TensorDict", "batch_size": [3], "names": [null], )"
                              R"("entries": {"x": {"dtype": "torch.int64", "shape": [3], "sum": )";
  const Json expected = Json::parse(
      R"({"cls": "TensorDict", "batch_size": [2], "names": [null], "entries": {)"
      R"("a": {"dtype": "torch.float32", "shape": [2], "sum": 1.0}, )"
      R"("n": {"cls": "TensorDict", "batch_size": [2, 3], "names": [null, null], )"
      R"("entries": {"y": {"dtype": "torch.int32", "shape": [2, 3], "sum": 0.0}}}, )"
      R"("s": {"data": "text"}, )"
      R"("steps": {"cls": "LazyStackedTensorDict", "batch_size": [2, 3], "stack_dim": 0, )"
      R"("tensordicts": [)" +
      element + "3.0}}}, " + element +
      R"(33.0}}}]}, )"
      R"("tags": {"data": ["x", "y"]}}})");
  CHECK(described[tmp / "v1"] == expected);
  CHECK(described[tmp / "v1.tdz"] == expected);
}

TEST_CASE("_SubTensorDict directories Python writes load as the indexed view of their source",
          "[io][python][peer][needs-peer]") {
  tc_test::require_python_peer("tensordict");
  const tc_test::TempDir tmp;
  const std::string command = "'" + tc_test::python_peer() +
                              "' '" TC_SOURCE_DIR "/tests/io/make_sub_tensordicts.py' '" +
                              tmp.path() + "'";
  REQUIRE(std::system(command.c_str()) == 0);
  for (const char* name : {"slice", "int", "mask", "tuple", "positions", "ellipsis", "mask2d"}) {
    INFO(name);
    const TensorDict got = TensorDict::load_memmap(tmp / name);
    const TensorDict want = TensorDict::load_memmap(tmp / (std::string(name) + "_expected"));
    CHECK(got.batch_size() == want.batch_size());
    CHECK(got.get("a").equal(want.get("a")));
    CHECK(got.get({"n", "b"}).equal(want.get({"n", "b"})));
    CHECK(got.get_non_tensor("s") == "hello");
    CHECK(memmap::verify(tmp / name).empty());
  }
}
