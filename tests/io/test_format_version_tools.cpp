// Format version 1 in the tools: tdtool ls / dump / verify on a version-1 tree (directory and
// archive) and on a newer version, and, where tdtool is built with tcgen, `verify --schema` and
// `tcgen import` (in process) taking the class's batch dims from `_names`.
#include <ATen/ATen.h>

#include <filesystem>
#include "catch2_compat.h"

#include "io_test_util.h"
#include "tensordict/archive.h"
#include "v1_tree.h"
#ifdef TC_HAVE_TCGEN
#include "frontend/import_dir.h"
#endif

namespace fs = std::filesystem;

namespace {

using Run = tc_test::CommandResult;

Run tdtool(const std::string& args) {
  return tc_test::run_command(std::string(TDTOOL_PATH) + " " + args + " 2>&1");
}

const std::string kListing =
    "/  TensorDict  batch_size=[2]  names=['batch']\n"
    "  obs  float32 [2, 3]  24 bytes\n"
    "  next/  TensorDict  batch_size=[2, 1]  names=['batch', 'agent']\n"
    "    reward  float64 [2, 1]  16 bytes\n"
    "  steps/  LazyStackedTensorDict stack_dim=0  batch_size=[2, -1]  names=['batch', 'time']\n"
    "    0/  TensorDict  batch_size=[3]  names=['time']\n"
    "      x  int64 [3]  24 bytes\n"
    "    1/  TensorDict  batch_size=[5]  names=['time']\n"
    "      x  int64 [5]  40 bytes\n"
    "  text  NonTensorData \"hello\"\n"
    "  tags  NonTensorStack [2] [\"a\", \"b\"]\n"
    "total: 4 tensors, 104 bytes\n";

// `dir` as a tensorclass mod.Obs directory (its meta.json has no version entries).
void as_tensorclass(const std::string& dir, const std::string& tc) {
  fs::create_directories(tc);
  tc_test::write_file(tc + "/meta.json", R"({"_type": "<class 'mod.Obs'>"})");
  fs::rename(dir, tc + "/_tensordict");
}

}  // namespace

TEST_CASE("tdtool ls, dump and verify read format version 1", "[tdtool][format_version]") {
  tc_test::TempDir tmp;
  const std::string d = tmp / "v1";
  tc_test::write_v1_tree(d);
  Run ls = tdtool("ls " + d);
  CHECK(ls.code == 0);
  CHECK(ls.output == d + kListing);
  Run ok = tdtool("verify " + d);
  CHECK(ok.code == 0);
  CHECK(ok.output == d + ": OK\n");
  Run dump = tdtool("dump --json " + d);
  CHECK(dump.code == 0);
  CHECK(dump.output.rfind(R"({"batch_size": [2], "names": ["batch"], "entries": {"obs": )", 0) ==
        0);
  CHECK(dump.output.find(
            R"("steps": {"batch_size": [2, -1], "names": ["batch", "time"], )"
            R"("stack_dim": 0, "tensordicts": [{"batch_size": [3], "names": ["time"], )") !=
        std::string::npos);

  tensordict::archive::pack_memmap(d, tmp / "v1.tdz");
  Run archived = tdtool("ls " + (tmp / "v1.tdz"));
  CHECK(archived.code == 0);
  CHECK(archived.output == (tmp / "v1.tdz") + kListing);
  CHECK(tdtool("verify " + (tmp / "v1.tdz")).output == (tmp / "v1.tdz") + ": OK\n");

  // A newer version: one problem, and no listing.
  tc_test::write_v1_tree(tmp / "v2", R"("_format_version": 2, "_class": "TensorDict")");
  const std::string problem = "'" + (tmp / "v2") +
                              "/meta.json': format version 2 is newer than the newest this "
                              "library reads (1)";
  Run bad = tdtool("verify " + (tmp / "v2"));
  CHECK(bad.code == 1);
  CHECK(bad.output == "problem: " + problem + "\n" + (tmp / "v2") + ": 1 problem(s)\n");
  Run refused = tdtool("ls " + (tmp / "v2"));
  CHECK(refused.code == 2);
  CHECK(refused.output == "tdtool: error: " + problem + "\n");
}

#ifdef TC_HAVE_TCGEN
TEST_CASE("tdtool verify --schema and tcgen import read format version 1",
          "[tdtool][schema][format_version]") {
  tc_test::TempDir tmp;
  tc_test::write_v1_tree(tmp / "v1");
  const std::string tc = tmp / "obs";
  as_tensorclass(tmp / "v1", tc);
  tc_test::write_file(tmp / "s.yaml", R"(classes:
  - name: Obs
    python: mod.Obs
    batch_dims: [batch]
    fields:
      - {name: obs, type: "tensor[float32, (batch, 3)]"}
      - {name: next, type: any}
      - {name: steps, type: any}
      - {name: text, type: str}
      - {name: tags, type: "list[str]"}
)");
  Run r = tdtool("verify --schema " + (tmp / "s.yaml") + " " + tc);
  CHECK(r.code == 0);
  CHECK(r.output == tc + ": OK, matches class Obs of " + (tmp / "s.yaml") + "\n");

  // The batch dims are named as `_names` names them: the TensorDict's, and a lazy stack's.
  tcgen::Diagnostics diagnostics;
  tcgen::Schema schema = tcgen::import_directory(tc, "obs", {}, diagnostics);
  CHECK_FALSE(diagnostics.has_errors());
  REQUIRE(schema.classes.size() == 1);
  CHECK(schema.classes[0].batch_dims == std::vector<std::string>{"batch"});
  tc_test::write_v1_tree(tmp / "v1b");
  fs::rename(tmp / "v1b/steps", tmp / "steps");
  as_tensorclass(tmp / "steps", tmp / "stacked");
  tcgen::Schema stacked = tcgen::import_directory(tmp / "stacked", "stacked", {}, diagnostics);
  CHECK_FALSE(diagnostics.has_errors());
  REQUIRE(stacked.classes.size() == 1);
  CHECK(stacked.classes[0].batch_dims == std::vector<std::string>{"batch", "time"});

  // A newer version is an error naming it.
  tc_test::write_v1_tree(tmp / "v2", R"("_format_version": 2)");
  as_tensorclass(tmp / "v2", tmp / "newer");
  tcgen::Diagnostics refused;
  tcgen::import_directory(tmp / "newer", "newer", {}, refused);
  REQUIRE(refused.has_errors());
  CHECK(refused.all().front().message ==
        "format version 2 is newer than the newest this library reads (1)");
  CHECK(refused.all().front().loc.file == "newer/_tensordict/meta.json");
}
#endif
