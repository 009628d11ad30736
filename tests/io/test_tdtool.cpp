// tdtool as a user runs it: exit codes and exact output on fixtures and temporary directories.
#include <ATen/ATen.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include "catch2_compat.h"

#include "io_test_util.h"
#include "python_peer.h"
#include "skip.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/memmap.h"

using tensordict::TensorDict;
namespace fs = std::filesystem;

namespace {

using Run = tc_test::CommandResult;

Run tdtool(const std::string& args) {
  return tc_test::run_command(std::string(TDTOOL_PATH) + " " + args + " 2>&1");
}

const fs::path kFixtures = fs::path(TC_FIXTURES_DIR) / "python-tensordict";

}  // namespace

TEST_CASE("tdtool ls prints the tree of a Python directory", "[tdtool][needs-fixtures]") {
  if (!fs::is_directory(kFixtures)) {
    TC_SKIP("fixtures folder " << kFixtures.string() << " is absent");
  }
  const std::string dir = (kFixtures / "non_tensor_string" / "td").string();
  Run r = tdtool("ls " + dir);
  CHECK(r.code == 0);
  CHECK(r.output == dir +
                        "/  TensorDict  batch_size=[2]\n"
                        "  obs  float32 [2, 2]  16 bytes\n"
                        "  name  NonTensorData \"hello world\"\n"
                        "  meta/  TensorDict  batch_size=[2]\n"
                        "    unicode  NonTensorData \"h\u00e9llo \u2713 \\\"quoted\\\"\"\n"
                        "  an_int  NonTensorData 7\n"
                        "  a_list  NonTensorData [1, \"two\", 3.0]\n"
                        "total: 1 tensors, 16 bytes\n");
  Run tc = tdtool("ls " + (kFixtures / "tensorclass" / "td").string());
  CHECK(tc.output.find("RefTC (tensorclass <class '__main__.RefTC'>)  batch_size=[2]") !=
        std::string::npos);
  CHECK(tc.output.find("  extra  null\n") != std::string::npos);
}

TEST_CASE("tdtool dump --json prints values", "[tdtool][needs-fixtures]") {
  if (!fs::is_directory(kFixtures)) {
    TC_SKIP("fixtures folder " << kFixtures.string() << " is absent");
  }
  Run r = tdtool("dump --json " + (kFixtures / "zero_dim" / "td").string());
  CHECK(r.code == 0);
  CHECK(
      r.output ==
      R"({"batch_size": [], "entries": {"scalar_f32": {"dtype": "float32", "shape": [], "data": 1.5}, )"
      R"("scalar_i64": {"dtype": "int64", "shape": [], "data": -42}, "scalar_bool": {"dtype": "bool", "shape": [], "data": true}, )"
      R"("vec": {"dtype": "float32", "shape": [3], "data": [1.0, 2.0, 3.0]}}})"
      "\n");
  Run keys = tdtool("dump --json " + (kFixtures / "mmap_example" / "td").string() +
                    " nested.bfloat16 nested.string");
  CHECK(
      keys.output ==
      R"({"batch_size": [2, 1], "entries": {"nested": {"batch_size": [2, 1], "entries": {)"
      R"("bfloat16": {"dtype": "bfloat16", "shape": [2, 1], "data": [[1.0], [1.0]]}, "string": {"non_tensor": ["a string!"]}}}}})"
      "\n");
}

TEST_CASE("tdtool verify: exit 0 when whole, 1 with every problem", "[tdtool]") {
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  TensorDict(
      {{"a", at::ones({4})}, {"b", at::ones({4})}, {"n", TensorDict({{"c", at::ones({4})}}, {4})}},
      {4})
      .memmap(dir);
  Run ok = tdtool("verify " + dir);
  CHECK(ok.code == 0);
  CHECK(ok.output == dir + ": OK\n");

  fs::resize_file(dir + "/a.memmap", 3);
  fs::remove(dir + "/n/c.memmap");
  Run bad = tdtool("verify " + dir);
  CHECK(bad.code == 1);
  CHECK(bad.output == "problem: '" + dir +
                          "/a.memmap' is truncated: 3 bytes, shape [4] of float32 needs 16\n"
                          "problem: missing data file '" +
                          dir + "/n/c.memmap' for key 'c'\n" + dir + ": 2 problem(s)\n");
}

TEST_CASE("tdtool errors: one line, non-zero exit", "[tdtool]") {
  tc_test::TempDir tmp;
  Run missing = tdtool("ls " + tmp / "nothing");
  CHECK(missing.code == 2);
  CHECK(missing.output == "tdtool: error: '" + tmp / "nothing" + "': no such file or directory\n");
  // A directory that is no save at all is named as such, by ls and dump alike.
  fs::create_directories(tmp / "photos");
  for (const std::string command : {"ls ", "dump --json "}) {
    Run not_a_save = tdtool(command + (tmp / "photos"));
    CHECK(not_a_save.code == 2);
    CHECK(not_a_save.output == "tdtool: error: '" + tmp / "photos" +
                                   "' is not a tensordict save: it holds no meta.json (tdtool "
                                   "reads what memmap() or Python's TensorDict.memmap wrote, and "
                                   ".tdz archives)\n");
  }
  CHECK(tdtool("").code != 0);
  CHECK(tdtool("frobnicate x").code != 0);
  Run version = tdtool("--version");
  CHECK(version.code == 0);
  CHECK(version.output.rfind("tdtool ", 0) == 0);
}

TEST_CASE("tdtool dump --json shows a lazy stack's elements", "[tdtool][lazy]") {
  tc_test::TempDir tmp;
  tensordict::lazy_stack({tensordict::TensorDict({{"x", at::ones({1}, at::kLong)}}, {1}),
                          tensordict::TensorDict({{"x", at::zeros({2}, at::kLong)}}, {2})})
      .memmap(tmp / "ls");
  Run r = tdtool("dump --json " + (tmp / "ls"));
  CHECK(r.code == 0);
  CHECK(
      r.output ==
      R"({"batch_size": [2, -1], "stack_dim": 0, "tensordicts": [)"
      R"({"batch_size": [1], "entries": {"x": {"dtype": "int64", "shape": [1], "data": [1]}}}, )"
      R"({"batch_size": [2], "entries": {"x": {"dtype": "int64", "shape": [2], "data": [0, 0]}}}]})"
      "\n");
}

TEST_CASE("tdtool ls lists a lazy stack's elements (a saved History batch is one)",
          "[tdtool][lazy]") {
  tc_test::TempDir tmp;
  TensorDict first({{"x", at::ones({1}, at::kLong)}}, {1});
  first.set_non_tensor("role", "user");
  TensorDict outer({{"chat", tensordict::lazy_stack(
                                 {first, TensorDict({{"x", at::zeros({2}, at::kLong)}}, {2})})}},
                   {2});
  outer.memmap(tmp / "ls");
  Run r = tdtool("ls " + (tmp / "ls"));
  CHECK(r.code == 0);
  CHECK(r.output == (tmp / "ls") +
                        "/  TensorDict  batch_size=[2]\n"
                        "  chat/  LazyStackedTensorDict stack_dim=0  batch_size=[2, -1]\n"
                        "    0/  TensorDict  batch_size=[1]\n"
                        "      x  int64 [1]  8 bytes\n"
                        "      role  NonTensorData \"user\"\n"
                        "    1/  TensorDict  batch_size=[2]\n"
                        "      x  int64 [2]  16 bytes\n"
                        "total: 2 tensors, 24 bytes\n");
}

TEST_CASE("tdtool ls exits non-zero on missing or truncated data files", "[tdtool]") {
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  TensorDict({{"a", at::ones({4})}, {"b", at::ones({4})}}, {4}).memmap(dir);
  fs::resize_file(dir + "/a.memmap", 3);
  Run truncated = tdtool("ls " + dir);
  CHECK(truncated.code == 2);
  CHECK(truncated.output ==
        "tdtool: error: '" + dir +
            "/a.memmap' is truncated: 3 bytes, shape [4] of float32 needs 16\n");
  fs::remove(dir + "/a.memmap");
  Run missing = tdtool("ls " + dir);
  CHECK(missing.code == 2);
  CHECK(missing.output == "tdtool: error: missing data file '" + dir + "/a.memmap' for key 'a'\n");
}

TEST_CASE("tdtool on hostile meta.json files: one error line, no crash", "[tdtool]") {
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  TensorDict({{"s", "text"}}, {}).memmap(dir);
  // NonTensorData "data" nested 100,000 deep (a 600 KB meta.json) used to overflow the stack.
  tc_test::write_file(dir + "/s/meta.json", std::string(R"({"_type": ")") +
                                                tensordict::memmap::kNonTensorDataType +
                                                R"(", "data": )" + std::string(100000, '[') +
                                                std::string(100000, ']') + "}");
  const std::string deep = "'" + dir + "/s/meta.json': JSON nested deeper than 1000 levels";
  for (const char* command : {"ls ", "dump --json "}) {
    Run r = tdtool(command + dir);
    CHECK(r.code == 2);
    CHECK(r.output == "tdtool: error: " + deep + "\n");
  }
  Run verify = tdtool("verify " + dir);
  CHECK(verify.code == 1);
  CHECK(verify.output == "problem: " + deep + "\n" + dir + ": 1 problem(s)\n");

  // A shape whose byte size overflows: a FormatError, not c10::Error with a backtrace.
  tc_test::write_file(dir + "/meta.json",
                      std::string(R"({"x": {"shape": [4611686018427387904, 4], "dtype": )"
                                  R"("torch.float32"}, "shape": [], "_type": ")") +
                          tensordict::memmap::kTensorDictType + "\"}");
  Run overflow = tdtool("ls " + dir);
  CHECK(overflow.code == 2);
  CHECK(overflow.output == "tdtool: error: '" + dir +
                               "/x.memmap': shape [4611686018427387904, 4] of float32 is too "
                               "large (more than 2^63 bytes)\n");
}

TEST_CASE("tdtool dump --json names the class of a nested tensorclass, with its None fields",
          "[tdtool]") {
  tc_test::TempDir tmp;
  TensorDict inner({{"x", at::zeros({2}, at::kLong)}}, {2});
  tensordict::memmap::set_class_info(inner, {"<class 'mod.Inner'>", {{"note", nullptr}}});
  TensorDict({{"inner", inner}}, {2}).memmap(tmp / "td");
  Run r = tdtool("dump --json " + (tmp / "td"));
  CHECK(r.code == 0);
  CHECK(r.output == R"({"batch_size": [2], "entries": {"inner": {"batch_size": [2], "entries": {)"
                    R"("x": {"dtype": "int64", "shape": [2], "data": [0, 0]}, "note": null}, )"
                    R"("class": "<class 'mod.Inner'>"}}})"
                    "\n");
  // As `tdtool ls` lists it.
  CHECK(tdtool("ls " + (tmp / "td")).output.find("    note  null\n") != std::string::npos);
  // A selection shows what it names only.
  CHECK(tdtool("dump --json " + (tmp / "td") + " inner.x").output.find("note") ==
        std::string::npos);
}

TEST_CASE("tdtool dump --json refuses a tensor with thousands of dims instead of crashing",
          "[tdtool]") {
  tc_test::TempDir tmp;
  TensorDict({{"deep", at::zeros(std::vector<int64_t>(2000, 1))}}, {}).memmap(tmp / "td");
  Run r = tdtool("dump --json " + (tmp / "td"));
  CHECK(r.code == 2);
  CHECK(
      r.output.find("key 'deep': a tensor of 2000 dims is deeper than tdtool prints (998 dims)") !=
      std::string::npos);
}

TEST_CASE("tdtool ls, dump and verify read _SubTensorDict directories Python writes",
          "[tdtool][python][peer][needs-peer]") {
  tc_test::require_python_peer("tensordict");
  const tc_test::TempDir tmp;
  REQUIRE(
      std::system(("'" + tc_test::python_peer() +
                   "' '" TC_SOURCE_DIR "/tests/io/make_sub_tensordicts.py' '" + tmp.path() + "'")
                      .c_str()) == 0);
  for (const char* name : {"slice", "mask"}) {
    INFO(name);
    const std::string dir = tmp / name;
    Run ls = tdtool("ls " + dir);
    CHECK(ls.code == 0);
    CHECK(ls.output == dir +
                           "/  TensorDict  batch_size=[2, 3]\n"
                           "  a  float32 [2, 3, 2]  48 bytes\n"
                           "  n/  TensorDict  batch_size=[2, 3]\n"
                           "    b  int64 [2, 3]  48 bytes\n"
                           "  s  NonTensorData \"hello\"\n"
                           "total: 2 tensors, 96 bytes\n");
    Run verify = tdtool("verify " + dir);
    CHECK(verify.code == 0);
    Run dump = tdtool("dump --json " + dir);
    CHECK(dump.code == 0);
    // The second row of "a" is source row 1 for the slice, row 2 for the mask.
    CHECK(dump.output.find(name[0] == 's' ? "[[6.0, 7.0]" : "[[12.0, 13.0]") != std::string::npos);
  }
}

TEST_CASE("tdtool reads safetensors files and converts between the three forms",
          "[tdtool][safetensors]") {
  tc_test::TempDir tmp;
  const std::string file = tmp / "w.safetensors";
  // A file of the default structure (no metadata entry), as Python's safetensors writes one.
  TensorDict({{{"layer", "weight"}, at::ones({2, 3})}, {"step", at::scalar_tensor(3, at::kLong)}})
      .to_safetensors(file);
  Run ls = tdtool("ls " + file);
  CHECK(ls.code == 0);
  CHECK(ls.output == file +
                         "/  TensorDict  batch_size=[]\n"
                         "  step  int64 []  8 bytes\n"
                         "  layer/  TensorDict  batch_size=[]\n"
                         "    weight  float32 [2, 3]  24 bytes\n"
                         "total: 2 tensors, 32 bytes\n");
  Run dump = tdtool("dump --json " + file + " step");
  CHECK(dump.code == 0);
  CHECK_THAT(dump.output, Catch::Matchers::ContainsSubstring("\"data\": 3"));
  CHECK(tdtool("verify " + file).output == file + ": OK\n");

  // To a directory and an archive and back: the same bytes.
  REQUIRE(tdtool("convert " + file + " " + (tmp / "dir")).code == 0);
  CHECK(TensorDict::load_memmap(tmp / "dir").get({"layer", "weight"}).equal(at::ones({2, 3})));
  REQUIRE(tdtool("convert " + (tmp / "dir") + " " + (tmp / "a.tdz")).code == 0);
  REQUIRE(tdtool("convert " + (tmp / "a.tdz") + " " + (tmp / "back.safetensors")).code == 0);
  CHECK(tc_test::read_file(tmp / "back.safetensors") == tc_test::read_file(file));

  // A structured TensorDict keeps its batch size and class through every form.
  TensorDict td({{"x", at::arange(4)}}, {4});
  td.memmap(tmp / "batched");
  REQUIRE(tdtool("convert " + (tmp / "batched") + " " + (tmp / "b.safetensors")).code == 0);
  REQUIRE(tdtool("convert " + (tmp / "b.safetensors") + " " + (tmp / "b2")).code == 0);
  CHECK(TensorDict::load_memmap(tmp / "b2").batch_size() == tensordict::BatchSize{4});

  tc_test::write_file(tmp / "bad.safetensors", std::string(8, '\xff'));
  Run bad = tdtool("verify " + (tmp / "bad.safetensors"));
  CHECK(bad.code == 1);
  CHECK_THAT(bad.output, Catch::Matchers::ContainsSubstring("past the format's bound"));
}
