#pragma once
// Helpers of the `tcgen import` tests (test_import_dir.cpp: directories; test_import_package.cpp:
// AOTInductor packages): tcgen run as a user runs it, its YAML compared with the goldens under
// tests/schemas/imported/.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include "catch2_compat.h"
#include "driver/driver.h"
#include "test_support.h"

namespace tcgen_test {

inline std::filesystem::path scratch(const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("tcgen_import_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Exit status and stderr of `tcgen import ARGS` run in `cwd`; with `timeout_s`, killed after that
// many seconds (exit status 124).
inline std::pair<int, std::string> tcgen_import(const std::string& args,
                                                const std::filesystem::path& cwd,
                                                int timeout_s = 0) {
  ScopedCwd in(cwd);
  const std::filesystem::path err =
      std::filesystem::temp_directory_path() / ("tcgen_import_err_" + std::to_string(::getpid()));
  const std::string command =
      (timeout_s > 0 ? "timeout " + std::to_string(timeout_s) + " " : std::string()) +
      std::string(TCGEN_EXE) + " import " + args + " 2>" + err.string() + " >/dev/null";
  const int status = std::system(command.c_str());
  std::string text = read_text(err);
  std::filesystem::remove(err);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

inline const std::filesystem::path kImported = source_dir() / "tests" / "schemas" / "imported";

// Imports `source` (a directory or a package, relative to `cwd`) into `out` with `--namespace ns`
// and `options`, and compares the YAML with the golden `name` (rewritten with
// TC_UPDATE_GOLDENS=1); the YAML passes tcgen's checks.
inline void check_golden(const std::string& source, const std::filesystem::path& cwd,
                         const std::string& ns, const std::string& name,
                         const std::string& options = "") {
  const std::filesystem::path out = scratch("out_" + name);
  REQUIRE(tcgen_import(source + " -o " + out.string() + " --namespace " + ns + " " + options,
                       cwd) == std::make_pair(0, std::string()));
  const std::filesystem::path from(source);
  const std::string yaml = read_text(
      out / ((from.extension() == ".pt2" ? from.stem() : from.filename()).string() + ".yaml"));
  tcgen::Diagnostics template_problems;
  const tcgen::Compilation c =
      tcgen::compile_text(yaml, name, tcgen::load_templates("", template_problems));
  CHECK(c.diagnostics.all().empty());
  if (updating_goldens()) write_text(kImported / name, yaml);
  CHECK(yaml == read_text(kImported / name));
  std::filesystem::remove_all(out);
}

}  // namespace tcgen_test
