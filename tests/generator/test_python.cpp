// tcgen --lang python: tests/goldens/<case>.yaml must generate exactly the modules under
// tests/goldens/python/<case>/, every one of which python3 compiles.
#include "catch2_compat.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "driver/driver.h"
#include "skip.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace tcgen_test;

namespace {

tcgen::Compilation compile_python(const std::vector<std::string>& schemas) {
  tcgen::CompileOptions options;
  options.language = tcgen::Language::Python;
  return tcgen::compile(schemas, tcgen::builtin_templates(), options);
}

std::vector<std::string> golden_cases() {
  std::vector<std::string> cases;
  for (const auto& entry : fs::directory_iterator(source_dir() / "tests/goldens")) {
    if (entry.path().extension() == ".yaml") cases.push_back(entry.path().filename().string());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

fs::path python_golden(const std::string& schema, const std::string& file_name) {
  return source_dir() / "tests/goldens/python" / fs::path(schema).stem() / file_name;
}

}  // namespace

TEST_CASE("generated Python modules match the goldens", "[generator][golden][python]") {
  const auto cases = golden_cases();
  REQUIRE(cases.size() >= 8);
  ScopedCwd cwd(source_dir() / "tests/goldens");
  for (const auto& schema : cases) {
    CAPTURE(schema);
    const tcgen::Compilation c = compile_python({schema});
    REQUIRE_FALSE(c.diagnostics.has_errors());
    REQUIRE_FALSE(c.outputs.empty());
    for (const auto& output : c.outputs) {
      CAPTURE(output.file_name);
      const fs::path golden = python_golden(schema, output.file_name);
      if (updating_goldens()) {
        fs::create_directories(golden.parent_path());
        write_text(golden, output.content);
      }
      CHECK(output.content == read_text(golden));
    }
  }
}

TEST_CASE("every generated Python module compiles with python3", "[generator][python]") {
  if (std::system("python3 -c pass > /dev/null 2>&1") != 0) TC_SKIP("python3 is not installed");
  // The shipped schemas too (History, RewardData): their modules are TorchRL's classes.
  std::vector<fs::path> modules;
  for (const auto& entry : fs::recursive_directory_iterator(source_dir() / "tests/goldens/python"))
    if (entry.path().extension() == ".py") modules.push_back(entry.path());
  const fs::path out = fs::temp_directory_path() / ("tc-python-" + std::to_string(::getpid()));
  {
    ScopedCwd cwd(source_dir() / "schemas");
    const tcgen::Compilation shipped = compile_python({"history.yaml", "reward.yaml"});
    REQUIRE_FALSE(shipped.diagnostics.has_errors());
    for (const auto& output : shipped.outputs) {
      fs::create_directories((out / output.file_name).parent_path());
      write_text(out / output.file_name, output.content);
      modules.push_back(out / output.file_name);
    }
  }
  REQUIRE(modules.size() >= 10);
  for (const auto& module : modules) {
    INFO(module.string());
    // compile() checks the syntax without writing a .pyc beside the golden.
    const std::string command =
        "python3 -c \"import sys; compile(open(sys.argv[1]).read(), "
        "sys.argv[1], 'exec')\" '" +
        module.string() + "'";
    CHECK(std::system(command.c_str()) == 0);
  }
  fs::remove_all(out);
}

TEST_CASE("fields keep the schema's order, keyword-only where a dataclass needs it",
          "[generator][python]") {
  ScopedCwd cwd(source_dir() / "tests/schemas/python");
  const tcgen::Compilation c = compile_python({"default_order.yaml"});
  REQUIRE_FALSE(c.diagnostics.has_errors());
  REQUIRE(c.outputs.size() == 1);
  CHECK(c.outputs[0].file_name == "pyorder.py");
  CHECK_THAT(c.outputs[0].content,
             Catch::Matchers::ContainsSubstring("from dataclasses import KW_ONLY\n") &&
                 Catch::Matchers::ContainsSubstring(
                     "class Step(TensorClass):\n    _: KW_ONLY\n    label: str = \"a\"\n"
                     "    count: int\n"));
}

TEST_CASE("two schemas writing one Python module are refused", "[generator][python]") {
  ScopedCwd cwd(source_dir() / "tests/goldens");
  const tcgen::Compilation c = compile_python({"nested.yaml", "defaults.yaml"});
  std::ostringstream text;
  c.diagnostics.print(text);
  CHECK(text.str() ==
        "defaults.yaml:1:1: error: its classes' Python module 'golden.py' is also written from "
        "nested.yaml: one module's classes belong in one schema file\n");
  CHECK(c.outputs.empty());
}

namespace {

// What `tcgen --lang python` reports for `schema`, written as `name` in a scratch directory; on
// errors nothing may be output.
std::string python_errors(const std::string& name, const std::string& schema) {
  const fs::path dir = fs::temp_directory_path() / ("tc-python-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_text(dir / name, schema);
  std::ostringstream text;
  {
    ScopedCwd cwd(dir);
    const tcgen::Compilation c = compile_python({name});
    c.diagnostics.print(text);
    CHECK(c.outputs.empty());
  }
  fs::remove_all(dir);
  return text.str();
}

}  // namespace

TEST_CASE("a module and a package of the same name are refused", "[generator][python]") {
  CHECK(python_errors("clash.yaml",
                      "classes:\n  - name: A\n    python: pkg.mod.A\n    fields: []\n"
                      "  - name: B\n    python: pkg.mod.sub.B\n    fields: []\n") ==
        "clash.yaml:1:1: error: its classes' Python module 'pkg/mod/sub.py' lies in the package "
        "'pkg/mod/', which is also the module 'pkg/mod.py' of clash.yaml: Python could import "
        "only one of them\n");
}

TEST_CASE("a class without a Python module is an error under --lang python",
          "[generator][python]") {
  CHECK(python_errors("loose.yaml", "classes:\n  - name: Loose\n    fields: []\n") ==
        "loose.yaml:2:11: error: class 'Loose' has no Python module: give it `python: "
        "<module>.Loose` or a namespace\n");
}
