// `tcgen compat OLD NEW` over the versions of tests/evolution (whose loading test_evolution
// checks): every change listed with its verdict (golden files under tests/evolution/compat/), exit
// status 1 exactly when a change breaks what --for selects.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include "catch2_compat.h"

#include "test_support.h"

namespace fs = std::filesystem;
using tcgen_test::read_text;

namespace {

struct Run {
  int status;
  std::string out;
};

// Runs in tests/evolution, so the diagnostics name the schemas by their file names.
Run compat(const std::string& args) {
  const fs::path out = fs::temp_directory_path() / ("tcgen_compat_" + std::to_string(::getpid()));
  const std::string command = "cd '" + (tcgen_test::source_dir() / "tests/evolution").string() +
                              "' && " + TCGEN_EXE + " compat " + args + " >" + out.string() +
                              " 2>&1";
  const int status = std::system(command.c_str());
  Run run{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(out)};
  fs::remove(out);
  return run;
}

void check_golden(const std::string& name, const std::string& actual) {
  const fs::path golden = tcgen_test::source_dir() / "tests/evolution/compat" / (name + ".txt");
  if (tcgen_test::updating_goldens()) tcgen_test::write_text(golden, actual);
  CHECK(actual == read_text(golden));
}

}  // namespace

TEST_CASE("tcgen compat lists every change with its verdict", "[generator][compat]") {
  for (const char* next :
       {"v2", "breaking_dtype", "breaking_shape", "breaking_removed", "breaking_required"}) {
    INFO(next);
    const Run run = compat(std::string("v1.yaml ") + next + ".yaml");
    CHECK(run.status == 1);  // each breaks something
    check_golden(std::string("v1_") + next, run.out);
  }
}

TEST_CASE("tcgen compat --for selects what must not break", "[generator][compat]") {
  // v2 renames and deprecates: safe for the data, breaking for the APIs.
  CHECK(compat("--for data v1.yaml v2.yaml").status == 0);
  CHECK(compat("--for cpp v1.yaml v2.yaml").status == 1);
  CHECK(compat("--for data breaking_dtype.yaml breaking_dtype.yaml").status == 0);
  CHECK(compat("--for data v1.yaml breaking_dtype.yaml").status == 1);
  CHECK(compat("--for python v1.yaml breaking_dtype.yaml").status == 0);
}

TEST_CASE("tcgen compat of a schema with itself lists nothing", "[generator][compat]") {
  const Run run = compat("v2.yaml v2.yaml");
  CHECK(run.status == 0);
  CHECK(run.out.empty());
}

TEST_CASE("tcgen compat refuses invalid schemas with their diagnostics", "[generator][compat]") {
  const Run run = compat("v1.yaml missing.yaml");
  CHECK(run.status == 2);
  CHECK(run.out == "missing.yaml: error: schema file not found\n");
}

TEST_CASE("tcgen compat hints at a rename that lacks renamed_from", "[generator][compat]") {
  // `act` removed and `action` of its type added (optional now): maybe `act` renamed, whose data
  // only `renamed_from` keeps readable. `note` has no counterpart of its type (`label` is float).
  const fs::path dir =
      fs::temp_directory_path() / ("tcgen_compat_rename_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  tcgen_test::write_text(dir / "old.yaml",
                         "version: 1\nclasses:\n  - name: Step\n    fields:\n"
                         "      - {name: obs, type: \"tensor[float32]\"}\n"
                         "      - {name: act, type: \"tensor[int64]\"}\n"
                         "      - {name: note, type: str}\n");
  tcgen_test::write_text(dir / "new.yaml",
                         "version: 2\nclasses:\n  - name: Step\n    fields:\n"
                         "      - {name: obs, type: \"tensor[float32]\"}\n"
                         "      - {name: action, type: \"optional[tensor[int64]]\"}\n"
                         "      - {name: label, type: \"optional[float]\"}\n");
  // Outside tests/evolution, the diagnostics name the schemas by their file names.
  const Run run = compat((dir / "old.yaml").string() + " " + (dir / "new.yaml").string());
  fs::remove_all(dir);
  CHECK(run.status == 1);
  CHECK(run.out ==
        "new.yaml:6:16: note: class 'Step': field 'action' added [safe]\n"
        "new.yaml:7:16: note: class 'Step': field 'label' added [safe]\n"
        "old.yaml:6:16: error: class 'Step': field 'act' removed (directories holding it no "
        "longer load; deprecate it instead) [breaks data, C++, Python]; hint: if 'action' is "
        "'act' renamed, declare it with renamed_from: act\n"
        "old.yaml:7:16: error: class 'Step': field 'note' removed (directories holding it no "
        "longer load; deprecate it instead) [breaks data, C++, Python]\n");
}
