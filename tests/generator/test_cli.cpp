// The tcgen command line: outputs only on success, rewritten only when changed, --check,
// --depfile, --template-dir, --version.
#include <sys/stat.h>
#include <fstream>
#include "catch2_compat.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "test_support.h"

namespace fs = std::filesystem;
using namespace tcgen_test;

namespace {

// A fresh scratch directory per test case.
fs::path scratch(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("tcgen_cli_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

int run_tcgen(const std::string& args) {
  const std::string command = std::string(TCGEN_EXE) + " " + args + " 2>/dev/null >/dev/null";
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Exit status and stderr of a run, for exact messages.
std::pair<int, std::string> tcgen_stderr(const std::string& args, const fs::path& dir) {
  const fs::path err = dir / "stderr.txt";
  const std::string command =
      std::string(TCGEN_EXE) + " " + args + " 2>" + err.string() + " >/dev/null";
  int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(err)};
}

const char* kGood = "classes:\n  - name: A\n    fields:\n      - {name: x, type: tensor}\n";

}  // namespace

TEST_CASE("tcgen writes nothing when a schema has errors", "[generator][cli]") {
  fs::path dir = scratch("errors");
  write_text(dir / "good.yaml", kGood);
  write_text(dir / "bad.yaml", "classes:\n  - name: B\n    fields: [{name: y, type: nope}]\n");
  CHECK(run_tcgen((dir / "good.yaml").string() + " " + (dir / "bad.yaml").string() + " -o " +
                  (dir / "out").string()) == 1);
  CHECK_FALSE(fs::exists(dir / "out"));
}

TEST_CASE("tcgen rewrites an output only when its content changes", "[generator][cli]") {
  fs::path dir = scratch("rewrite");
  write_text(dir / "a.yaml", kGood);
  const std::string run = (dir / "a.yaml").string() + " -o " + (dir / "out").string();
  REQUIRE(run_tcgen(run) == 0);
  const fs::path header = dir / "out" / "a.h";
  REQUIRE(fs::exists(header));
  const auto first = fs::last_write_time(header);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(run_tcgen(run) == 0);
  CHECK(fs::last_write_time(header) == first);
  write_text(dir / "a.yaml", std::string(kGood) + "      - {name: y, type: str}\n");
  REQUIRE(run_tcgen(run) == 0);
  CHECK(fs::last_write_time(header) != first);
  CHECK(read_text(header).find("std::string y() const") != std::string::npos);
}

TEST_CASE("tcgen --check reports missing and stale outputs", "[generator][cli]") {
  fs::path dir = scratch("check");
  write_text(dir / "a.yaml", kGood);
  const std::string args = (dir / "a.yaml").string() + " -o " + (dir / "out").string();
  CHECK(run_tcgen("--check " + args) == 1);  // missing
  CHECK_FALSE(fs::exists(dir / "out"));
  REQUIRE(run_tcgen(args) == 0);
  CHECK(run_tcgen("--check " + args) == 0);
  write_text(dir / "out" / "a.h", read_text(dir / "out" / "a.h") + "// edited\n");
  CHECK(run_tcgen("--check " + args) == 1);  // stale
}

TEST_CASE("tcgen --depfile lists the schema and its includes", "[generator][cli]") {
  fs::path dir = scratch("depfile");
  write_text(dir / "base.yaml", kGood);
  write_text(dir / "top.yaml",
             "include: [base.yaml]\nclasses:\n  - name: T\n    fields: [{name: a, type: A}]\n");
  REQUIRE(run_tcgen((dir / "top.yaml").string() + " -o " + (dir / "out").string() + " --depfile " +
                    (dir / "top.d").string()) == 0);
  const std::string deps = read_text(dir / "top.d");
  CHECK(deps == (dir / "out" / "top.h").string() + " : " + (dir / "top.yaml").string() + " " +
                    (dir / "base.yaml").string() + "\n");
  CHECK(read_text(dir / "out" / "top.h").find("#include \"base.h\"") != std::string::npos);

  REQUIRE(run_tcgen((dir / "top.yaml").string() + " -o " + (dir / "out").string() + " --depfile " +
                    (dir / "top.d").string() + " --depfile-target stamp") == 0);
  CHECK(read_text(dir / "top.d") ==
        "stamp : " + (dir / "top.yaml").string() + " " + (dir / "base.yaml").string() + "\n");
}

TEST_CASE("tcgen --template-dir overrides a template", "[generator][cli]") {
  fs::path dir = scratch("templates");
  write_text(dir / "a.yaml", kGood);
  fs::create_directories(dir / "tpl");
  write_text(dir / "tpl" / "file.mustache", "// custom {{schema_path}}\n");
  REQUIRE(run_tcgen((dir / "a.yaml").string() + " -o " + (dir / "out").string() +
                    " --template-dir " + (dir / "tpl").string()) == 0);
  CHECK(read_text(dir / "out" / "a.h") == "// custom a.yaml\n");
  write_text(dir / "tpl" / "file.mustache", "{{#broken}}\n");
  CHECK(run_tcgen((dir / "a.yaml").string() + " -o " + (dir / "out2").string() +
                  " --template-dir " + (dir / "tpl").string()) == 1);
}

TEST_CASE("tcgen --version and --help", "[generator][cli]") {
  CHECK(run_tcgen("--version") == 0);
  CHECK(run_tcgen("--help") == 0);
  CHECK(run_tcgen("") != 0);  // a schema is required
}

TEST_CASE("tcgen -I finds included schemas, classes may be named with their namespace",
          "[generator][cli]") {
  fs::path dir = scratch("include_dirs");
  fs::create_directories(dir / "lib");
  write_text(dir / "lib" / "base.yaml",
             "namespace: other_ns\nclasses:\n  - name: Config\n    fields:\n"
             "      - {name: x, type: tensor}\n");
  write_text(dir / "user.v2.yaml",
             "namespace: app\ninclude: [base.yaml]\nclasses:\n  - name: Run\n    fields:\n"
             "      - {name: config, type: other_ns::Config}\n"
             "      - {name: maybe, type: 'optional[other_ns::Config]'}\n");
  ScopedCwd cwd(dir);
  CHECK(run_tcgen("user.v2.yaml -o out") == 1);  // base.yaml is not beside user.v2.yaml
  CHECK_FALSE(fs::exists("out"));
  REQUIRE(run_tcgen("user.v2.yaml -o out -I lib") == 0);
  const std::string header = read_text("out/user.v2.h");  // `a.b.yaml` -> `a.b.h`
  CHECK(header.find("#include \"base.h\"") != std::string::npos);
  CHECK(header.find("::std::optional<::other_ns::Config> config = ::std::nullopt;") !=
        std::string::npos);
  CHECK(header.find("::std::optional<::other_ns::Config> maybe = ::std::nullopt;") !=
        std::string::npos);
  CHECK(run_tcgen("user.v2.yaml -o out2 -I missing_dir -I lib") == 0);
}

TEST_CASE("tcgen reports unreadable schema files and includes", "[generator][cli]") {
  fs::path dir = scratch("unreadable");
  ScopedCwd cwd(dir);
  fs::create_symlink("loop_b.yaml", "loop_a.yaml");
  fs::create_symlink("loop_a.yaml", "loop_b.yaml");
  fs::create_directory("sub.yaml");
  write_text("top.yaml", "include: [loop_a.yaml, sub.yaml]\nclasses: []\n");
  CHECK(tcgen_stderr("top.yaml", dir) ==
        std::make_pair(1, std::string("top.yaml:1:11: error: included schema 'loop_a.yaml' cannot "
                                      "be read: Too many levels of symbolic links\n"
                                      "top.yaml:1:24: error: included schema 'sub.yaml' is a "
                                      "directory\n")));
  CHECK(tcgen_stderr("loop_a.yaml", dir) ==
        std::make_pair(1, std::string("loop_a.yaml: error: schema file cannot be read: Too many "
                                      "levels of symbolic links\n")));
  CHECK(tcgen_stderr("sub.yaml", dir) ==
        std::make_pair(1, std::string("sub.yaml: error: schema file is a directory\n")));
}

TEST_CASE("tcgen refuses FIFOs and huge files before reading them", "[generator][cli]") {
  fs::path dir = scratch("special");
  ScopedCwd cwd(dir);
  // A FIFO with no writer would block an open() forever (CTest's timeout ends a regression).
  REQUIRE(::mkfifo("pipe.yaml", 0600) == 0);
  REQUIRE(::mkfifo("pipe.h", 0600) == 0);
  CHECK(tcgen_stderr("pipe.yaml", dir) ==
        std::make_pair(1, std::string("pipe.yaml: error: schema file is not a regular file\n")));
  CHECK(tcgen_stderr("pipe.h", dir) ==
        std::make_pair(1, std::string("pipe.h: error: schema file is not a regular file\n")));
  {  // a sparse 4 GiB file: no disk used, and never read
    std::ofstream huge("huge.yaml");
    huge.seekp((std::streamoff{1} << 32) - 1);
    huge.put('\n');
  }
  write_text("top.yaml", "include: [huge.yaml]\nclasses: []\n");
  CHECK(tcgen_stderr("top.yaml", dir) ==
        std::make_pair(1, std::string("top.yaml:1:11: error: included schema 'huge.yaml' is 4096 "
                                      "MiB, more than a schema may be (16 MiB)\n")));
  fs::remove("huge.yaml");
}

TEST_CASE("an unexpected exception is a diagnostic, not std::terminate", "[generator][cli]") {
  fs::path dir = scratch("unexpected");
  ScopedCwd cwd(dir);
  write_text("a.yaml", kGood);
  write_text("file", "");
  // The output directory cannot be created under a regular file: std::filesystem throws.
  const auto [status, message] = tcgen_stderr("a.yaml -o file/out", dir);
  CHECK(status == 1);
  CHECK(message ==
        "a.yaml: error: filesystem error: cannot create directories: Not a directory [file/out]\n");
}

TEST_CASE("tcgen --error-limit", "[generator][cli]") {
  fs::path dir = scratch("error_limit");
  ScopedCwd cwd(dir);
  write_text("bad.yaml",
             "classes:\n  - {name: A, fields: [{name: a, type: x}, {name: b, type: y}]}\n");
  CHECK(
      tcgen_stderr("--error-limit 1 bad.yaml", dir) ==
      std::make_pair(1, std::string("bad.yaml:2:40: error: unknown type 'x'\nbad.yaml: error: "
                                    "too many errors emitted, stopping now (--error-limit=1)\n")));
  CHECK(tcgen_stderr("--error-limit 0 bad.yaml", dir).second ==
        "bad.yaml:2:40: error: unknown type 'x'\nbad.yaml:2:60: error: unknown type 'y'\n");
}

TEST_CASE("tcgen bounds classes per schema and fields per class and schema", "[generator][cli]") {
  fs::path dir = scratch("bounds");
  ScopedCwd cwd(dir);
  // One class a line, C<i> on line i + 2: each class instantiates TensorClass<C>, so 10,000 made
  // a header that failed to compile after 6 minutes.
  auto classes = [](int count, int fields) {
    std::string text = "classes:\n";
    for (int i = 0; i < count; ++i) {
      text += "  - {name: C" + std::to_string(i) + ", fields: [";
      for (int f = 0; f < fields; ++f)
        text += std::string(f ? ", " : "") + "{name: f" + std::to_string(f) + ", type: int}";
      text += "]}\n";
    }
    return text;
  };
  write_text("classes500.yaml", classes(500, 1));
  CHECK(tcgen_stderr("classes500.yaml --dump-model", dir) == std::make_pair(0, std::string()));
  write_text("classes501.yaml", classes(501, 1));
  CHECK(tcgen_stderr("classes501.yaml", dir) ==
        std::make_pair(1, std::string("classes501.yaml:502:12: error: class 'C500': a schema "
                                      "file holds at most 500 classes (split it into files that "
                                      "include each other)\n")));
  write_text("fields1000.yaml", classes(1, 1000));
  CHECK(tcgen_stderr("fields1000.yaml --dump-model", dir) == std::make_pair(0, std::string()));
  write_text("fields1001.yaml", classes(1, 1001));
  CHECK(tcgen_stderr("fields1001.yaml", dir) ==
        std::make_pair(1, std::string("fields1001.yaml:2:24922: error: field 'f1000': class 'C0' "
                                      "has more than 1000 fields, the most a class may have\n")));
  write_text("fields5400.yaml", classes(6, 900));
  CHECK(tcgen_stderr("fields5400.yaml", dir) ==
        std::make_pair(1, std::string("fields5400.yaml:7:12422: error: field 'f500' of class 'C5': "
                                      "a schema file holds at most 5000 fields in all (split it "
                                      "into files that include each other)\n")));
}
