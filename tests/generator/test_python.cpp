// tcgen --lang python: tests/goldens/<case>.yaml must generate exactly the modules under
// tests/goldens/python/<case>/, every one of which python3 compiles.
#include "catch2_compat.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "driver/driver.h"
#include "python_peer.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace tcgen_test;

namespace {

tcgen::Compilation compile_python(const std::vector<std::string>& schemas,
                                  tcgen::PythonBase base = tcgen::PythonBase::TensorClass) {
  tcgen::CompileOptions options;
  options.language = &tcgen::output_language("python");
  options.language_options.python_base = base;
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

fs::path python_golden(const std::string& schema, const std::string& file_name,
                       const char* folder = "python") {
  return source_dir() / "tests/goldens" / folder / fs::path(schema).stem() / file_name;
}

}  // namespace

TEST_CASE("generated Python modules match the goldens", "[generator][golden][python]") {
  // contract.yaml names a field like a method every Python TensorClass binds (its C++ accessor
  // takes the `field_` prefix): Python could not read it back, so --lang python refuses it.
  const std::map<std::string, std::string> refused = {
      {"contract.yaml",
       "contract.yaml:20:16: error: field name 'from_tensordict' is a method Python's TensorClass "
       "gives every class whatever its fields (option 'shadow' or not): the field's attribute and "
       "default would read back as it\n"}};
  const auto cases = golden_cases();
  REQUIRE(cases.size() >= 8);
  ScopedCwd cwd(source_dir() / "tests/goldens");
  for (const auto& schema : cases) {
    CAPTURE(schema);
    const tcgen::Compilation c = compile_python({schema});
    if (refused.count(schema)) {
      std::ostringstream text;
      c.diagnostics.print(text);
      CHECK(text.str() == refused.at(schema));
      CHECK(c.outputs.empty());
      continue;
    }
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

TEST_CASE("TypedTensorDict modules match their goldens", "[generator][golden][python]") {
  // What a TypedTensorDict cannot say (a default, an earlier name) refuses the schema; the other
  // cases are written as TypedTensorDict subclasses under tests/goldens/python_typed/<case>/.
  const std::map<std::string, std::string> refused = {
      {"contract.yaml", "field 'lr' has a default"},
      {"defaults.yaml", "field 's' has a default"},
      {"evolution.yaml", "field 'action' has earlier names (renamed_from)"},
      {"hostile_text.yaml", "field 'payload' has a default"},
      {"inherit.yaml", "field 'mass' has a default"},
      {"plain.yaml", "field 'label' has a default"}};
  ScopedCwd cwd(source_dir() / "tests/goldens");
  for (const auto& schema : golden_cases()) {
    CAPTURE(schema);
    const tcgen::Compilation c = compile_python({schema}, tcgen::PythonBase::TypedTensorDict);
    std::ostringstream text;
    c.diagnostics.print(text);
    if (refused.count(schema)) {
      CHECK_THAT(text.str(), Catch::Matchers::ContainsSubstring(refused.at(schema)));
      CHECK_THAT(text.str(), Catch::Matchers::ContainsSubstring("--python-base TensorClass"));
      CHECK(c.outputs.empty());
      continue;
    }
    REQUIRE(text.str().empty());
    REQUIRE_FALSE(c.outputs.empty());
    for (const auto& output : c.outputs) {
      CAPTURE(output.file_name);
      const fs::path golden = python_golden(schema, output.file_name, "python_typed");
      if (updating_goldens()) {
        fs::create_directories(golden.parent_path());
        write_text(golden, output.content);
      }
      CHECK(output.content == read_text(golden));
    }
  }
}

TEST_CASE("what a TypedTensorDict cannot declare is refused", "[generator][python]") {
  // tensordict's test_shadow_blocks_by_default, test_data_requires_shadow and test_invalid_option
  // define such classes in Python; here the schema is refused (`clone` for either base).
  const std::string schema = R"(namespace: golden
classes:
  - name: Hidden
    fields:
      - name: _c
        type: tensor
  - name: WithData
    fields:
      - name: data
        type: tensor
      - name: x
        type: tensor
)";
  const fs::path dir = fs::temp_directory_path() / ("tc-typed-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_text(dir / "hidden.yaml", schema);
  ScopedCwd cwd(dir);
  const tcgen::Compilation c = compile_python({"hidden.yaml"}, tcgen::PythonBase::TypedTensorDict);
  std::ostringstream text;
  c.diagnostics.print(text);
  CHECK(text.str() ==
        "hidden.yaml:5:15: error: field name '_c' starts with '_', which a TypedTensorDict takes "
        "for an attribute, not a key (emit with --python-base TensorClass, which does)\n"
        "hidden.yaml:9:15: error: field name 'data' is a TensorDictBase attribute, which a "
        "TypedTensorDict field may take only with option 'shadow'\n");
  CHECK_FALSE(compile_python({"hidden.yaml"}).diagnostics.has_errors());
  write_text(dir / "bad.yaml", R"(namespace: golden
classes:
  - name: Bad
    fields:
      - name: clone
        type: tensor
  - name: Opt
    options: [invalid_option]
    fields: []
)");
  std::ostringstream bad;
  compile_python({"bad.yaml"}, tcgen::PythonBase::TypedTensorDict).diagnostics.print(bad);
  CHECK(bad.str() ==
        "bad.yaml:5:15: error: field name 'clone' is reserved by TensorDict (use option 'shadow' "
        "to allow it)\n"
        "bad.yaml:8:15: error: unknown option 'invalid_option' (allowed: frozen, autocast, nocast, "
        "tensor_only, shadow)\n");
  fs::remove_all(dir);
}

TEST_CASE("every generated Python module compiles with python3", "[generator][python]") {
  REQUIRE(std::system("python3 -c pass > /dev/null 2>&1") == 0);  // a build requirement
  // The shipped schemas too (History, RewardData): their modules are TorchRL's classes.
  std::vector<fs::path> modules;
  for (const char* folder : {"tests/goldens/python", "tests/goldens/python_typed"})
    for (const auto& entry : fs::recursive_directory_iterator(source_dir() / folder))
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
             Catch::Matchers::ContainsSubstring("from dataclasses import KW_ONLY as _KW_ONLY\n") &&
                 Catch::Matchers::ContainsSubstring(
                     "class Step(_TensorClass):\n    _: _KW_ONLY\n    label: _str = \"a\"\n"
                     "    count: _int\n"));
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

TEST_CASE("what Python cannot name is refused under --lang python", "[generator][python]") {
  // Methods every Python TensorClass binds, whatever its fields and options.
  CHECK(python_errors("method.yaml",
                      "namespace: m\nclasses:\n  - name: A\n    options: [shadow]\n    fields:\n"
                      "      - {name: extend, type: tensor}\n") ==
        "method.yaml:6:16: error: field name 'extend' is a method Python's TensorClass gives "
        "every class whatever its fields (option 'shadow' or not): the field's attribute and "
        "default would read back as it\n");
  // The constructor's own `self`: a field so named can be passed positionally only.
  CHECK(python_errors("self.yaml",
                      "namespace: m\nclasses:\n  - name: A\n    fields:\n"
                      "      - {name: x, type: int, default: 1}\n"
                      "      - {name: self, type: tensor}\n") ==
        "self.yaml:6:16: error: field 'self' would be keyword-only without a default in the "
        "Python class, whose constructor takes its instance as 'self': no call could pass it "
        "(give it a default, or no defaulted field before it)\n");
  // tensordict's metaclass takes any class named `TensorClass` for its own base.
  CHECK(python_errors("base.yaml", "classes:\n  - {name: A, python: m.TensorClass}\n") ==
        "base.yaml:2:23: error: python name 'm.TensorClass' cannot be generated: Python "
        "tensordict takes any class named 'TensorClass' for its own base, which it does not make "
        "a tensorclass\n");
  // A module of the standard library is the one Python imports (`os` is loaded at start-up).
  CHECK(python_errors("stdlib.yaml",
                      "classes:\n  - {name: A, python: os.A}\n"
                      "  - {name: B, python: json.codec.B}\n") ==
        "stdlib.yaml:2:23: error: python name 'os.A' cannot be generated: 'os' is a module of "
        "Python's standard library, and a process holds one module of a name\n"
        "stdlib.yaml:3:23: error: python name 'json.codec.B' cannot be generated: 'json' is a "
        "module of Python's standard library, and a process holds one module of a name\n");
}

namespace {

// Classes and fields named like what a generated module imports or spells (`torch`, `Optional`,
// `list`, ...), `self`, and `batch_size` under `shadow`: the module binds its imports under
// private aliases, so all of them are free.
constexpr const char* kPublicNames = R"(namespace: clash
classes:
  - name: Names
    python: clash.torch
    options: [nocast]
    fields:
      - {name: self, type: str}
      - {name: torch, type: int, default: 2}
      - {name: list, type: "list[str]", default: [a, b]}
      - {name: str, type: str, default: s}
      - {name: Optional, type: "optional[str]"}
      - {name: Any, type: any, default: {k: 1}}
      - {name: field, type: bool, default: true}
      - {name: KW_ONLY, type: "optional[tensor[float32]]"}
      - {name: t, type: tensor}
  - name: Holder
    python: clash.Optional
    fields:
      - {name: inner, type: Names}
      - {name: count, type: "optional[str]"}
  - name: Sized
    python: clash.list
    options: [nocast, shadow]
    fields:
      - {name: batch_size, type: tensor}
      - {name: note, type: str}
  - {name: Empty2, python: clash.KW_ONLY}
  - {name: Empty3, python: clash.field}
  - {name: Empty4, python: clash.Any}
  - {name: Empty5, python: clash.str}
)";

// Run by the Python peer with the generated `clash` module on its path: builds, saves and loads
// instances, checking every value (an assertion exits non-zero).
constexpr const char* kPublicNamesCheck = R"(import sys

try:  # ../shared/python-peer's shims for torch 1.13, before tensordict
    import td_compat  # noqa: F401
except ImportError:
    pass
import torch
from tensordict import TensorDict

import clash

names = clash.torch("me", t=torch.ones(2))
assert names.self == "me" and names.torch == 2 and names.str == "s", names
assert names.list == ["a", "b"] and names.Optional is None and names.Any == {"k": 1}, names
assert names.field is True and names.KW_ONLY is None and torch.equal(names.t, torch.ones(2))
holder = clash.Optional(inner=names, count="3")
holder.memmap(sys.argv[1] + "/holder")
back = TensorDict.load_memmap(sys.argv[1] + "/holder")
assert type(back) is clash.Optional and type(back.inner) is clash.torch, type(back)
assert back.inner.self == "me" and back.inner.list == ["a", "b"] and back.count == "3", back
sized = clash.list.from_tensordict(
    TensorDict({"batch_size": torch.arange(2), "note": "n"}, batch_size=[2]))
sized.memmap(sys.argv[1] + "/sized")
back = TensorDict.load_memmap(sys.argv[1] + "/sized")
assert back.shape == torch.Size([2]), back.shape  # the field shadows the attribute
assert torch.equal(back.batch_size, torch.arange(2)) and back.note == "n", back
for cls in (clash.KW_ONLY, clash.field, clash.Any, clash.str):
    assert type(cls()) is cls
)";

}  // namespace

TEST_CASE("classes and fields may take the names a generated Python module uses",
          "[generator][python][peer][needs-peer]") {
  tc_test::require_python_peer("tensordict");
  const fs::path dir =
      fs::temp_directory_path() / ("tc-python-names-" + std::to_string(::getpid()));
  fs::create_directories(dir / "data");
  write_text(dir / "clash.yaml", kPublicNames);
  write_text(dir / "check.py", kPublicNamesCheck);
  {
    ScopedCwd cwd(dir);
    const tcgen::Compilation c = compile_python({"clash.yaml"});
    REQUIRE_FALSE(c.diagnostics.has_errors());
    REQUIRE(c.outputs.size() == 1);
    write_text(dir / c.outputs[0].file_name, c.outputs[0].content);
  }
  const std::string command = "PYTHONPATH='" + dir.string() + "' '" + tc_test::python_peer() +
                              "' '" + (dir / "check.py").string() + "' '" +
                              (dir / "data").string() + "'";
  CHECK(std::system(command.c_str()) == 0);
  fs::remove_all(dir);
}
