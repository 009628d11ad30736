// Every tests/schemas/bad/<case>.yaml must fail with exactly the diagnostics of <case>.errors
// (message and file:line:col), and produce no output.
#include "catch2_compat.h"

#include <algorithm>
#include <vector>

#include "driver/driver.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace tcgen_test;

namespace {

std::vector<std::string> bad_cases() {
  std::vector<std::string> cases;
  for (const auto& entry : fs::directory_iterator(source_dir() / "tests/schemas/bad")) {
    if (entry.path().extension() == ".yaml") cases.push_back(entry.path().stem().string());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

}  // namespace

TEST_CASE("bad schemas report exact diagnostics", "[generator][diagnostics]") {
  const fs::path dir = source_dir() / "tests/schemas/bad";
  const std::vector<std::string> cases = bad_cases();
  REQUIRE(cases.size() >= 30);
  ScopedCwd cwd(dir);
  for (const auto& name : cases) {
    CAPTURE(name);
    tcgen::Compilation c = tcgen::compile({name + ".yaml"}, tcgen::builtin_templates());
    CHECK(c.diagnostics.has_errors());
    CHECK(c.outputs.empty());
    const std::string actual = diagnostics_text(c.diagnostics);
    if (updating_goldens()) write_text(name + ".errors", actual);
    CHECK(actual == read_text(name + ".errors"));
  }
}

TEST_CASE("all errors of a schema are reported in one run", "[generator][diagnostics]") {
  tcgen::Compilation c = tcgen::compile_text(
      "classes:\n"
      "  - name: A\n"
      "    frozn: true\n"
      "    fields:\n"
      "      - {name: class, type: int}\n"
      "      - {name: y, type: 'tensor[float33]'}\n",
      "inline.yaml", tcgen::builtin_templates());
  // In line order, though the checker finds line 5's after the reader found line 6's.
  REQUIRE(c.diagnostics.all().size() == 3);
  CHECK(tcgen::format_diagnostic(c.diagnostics.all()[0]) ==
        "inline.yaml:3:5: error: unknown key 'frozn' in a class (allowed: name, doc, python, "
        "options, extends, batch_dims, methods, cpp_includes, fields)");
  CHECK(tcgen::format_diagnostic(c.diagnostics.all()[1]) ==
        "inline.yaml:5:16: error: field name 'class' is a C++ keyword");
  CHECK(tcgen::format_diagnostic(c.diagnostics.all()[2]) ==
        "inline.yaml:6:33: error: unknown dtype 'float33' (did you mean 'float32'?)");
}

TEST_CASE("shadow allows reserved field names", "[generator][diagnostics]") {
  const std::string fields = "    fields:\n      - {name: batch_size, type: tensor}\n";
  auto errors = [&](const std::string& options) {
    return tcgen::compile_text("classes:\n  - name: A\n" + options + fields, "s.yaml",
                               tcgen::builtin_templates())
        .diagnostics.all()
        .size();
  };
  CHECK(errors("") == 1);
  CHECK(errors("    options: [shadow]\n") == 0);
}

TEST_CASE("hostile nesting is bounded, not a stack overflow", "[generator][diagnostics]") {
  std::string type;
  for (int i = 0; i < 200000; ++i) type += "list[";
  type += "int" + std::string(200000, ']');
  tcgen::Compilation c = tcgen::compile_text(
      "classes:\n  - name: A\n    fields:\n      - {name: x, type: '" + type + "'}\n", "deep.yaml",
      tcgen::builtin_templates());
  REQUIRE(c.diagnostics.all().size() == 1);
  CHECK(tcgen::format_diagnostic(c.diagnostics.all()[0]) ==
        "deep.yaml:4:350: error: malformed type "
        "'list[list[list[list[list[list[list[list[list[list[list[list[...': nested deeper than 64 "
        "levels");

  c = tcgen::compile_text("classes: " + std::string(200000, '[') + std::string(200000, ']'),
                          "deep.yaml", tcgen::builtin_templates());
  REQUIRE(c.diagnostics.all().size() == 1);
  CHECK(tcgen::format_diagnostic(c.diagnostics.all()[0]) ==
        "deep.yaml:1:400010: error: nesting deeper than 64 levels");
}

TEST_CASE("the error limit keeps the first errors and says so", "[generator][diagnostics]") {
  tcgen::Diagnostics diagnostics(2);
  for (int line = 1; line <= 5; ++line) {
    diagnostics.error({"s.yaml", line, 1}, "bad");
    diagnostics.note({"s.yaml", line, 2}, "here");
  }
  CHECK(diagnostics_text(diagnostics) ==
        "s.yaml:1:1: error: bad\ns.yaml:1:2: note: here\ns.yaml:2:1: error: bad\n"
        "s.yaml:2:2: note: here\ns.yaml: error: too many errors emitted, stopping now "
        "(--error-limit=2)\n");
  tcgen::Diagnostics unlimited(0);
  for (int i = 0; i < 100; ++i) unlimited.error({"s.yaml", 1, 1}, "bad");
  CHECK(unlimited.all().size() == 100);
}

TEST_CASE("diagnostics come in line order, each note after its error", "[generator][diagnostics]") {
  tcgen::Diagnostics diagnostics(3);
  diagnostics.error({"b.yaml", 1, 1}, "b");
  diagnostics.error({"a.yaml", 9, 1}, "late");
  diagnostics.note({"a.yaml", 2, 1}, "its note");
  diagnostics.warning({"a.yaml", 3, 7}, "warned");
  diagnostics.error({"a.yaml", 3, 2}, "early");
  diagnostics.error({"a.yaml", 1, 1}, "past the limit");
  // Files in the order they first appear; the error limit keeps the first errors reported.
  CHECK(diagnostics_text(diagnostics) ==
        "b.yaml:1:1: error: b\na.yaml:3:2: error: early\na.yaml:3:7: warning: warned\n"
        "a.yaml:9:1: error: late\na.yaml:2:1: note: its note\n"
        "a.yaml: error: too many errors emitted, stopping now (--error-limit=3)\n");
}

TEST_CASE("a schema file name the header cannot spell is refused", "[generator][diagnostics]") {
  for (const std::string name : {"a\"b.yaml", "a\\b.yaml", "a\nb.yaml", "a?\?=.yaml"}) {
    tcgen::Compilation c = tcgen::compile_text("classes: []\n", name, tcgen::builtin_templates());
    REQUIRE(c.diagnostics.all().size() == 1);
    CHECK(tcgen::format_diagnostic(c.diagnostics.all()[0]) ==
          name +
              ": error: the schema's file name cannot be written into the generated header (it "
              "has a '\"', a '\\', '?\?' or a control character)");
  }
}

TEST_CASE("plain values stored as tensors in a class with batch dims are warned about",
          "[generator][diagnostics]") {
  auto diagnostics = [](const std::string& options) {
    tcgen::Compilation c =
        tcgen::compile_text("classes:\n  - name: A\n    batch_dims: [N]\n" + options +
                                "    fields:\n"
                                "      - {name: i, type: int}\n"
                                "      - {name: l, type: 'list[float]'}\n"
                                "      - {name: o, type: 'optional[bool]'}\n"
                                "      - {name: s, type: 'list[str]'}\n",
                            "trap.yaml", tcgen::builtin_templates());
    CHECK_FALSE(c.diagnostics.has_errors());
    CHECK(c.outputs.size() == 1);  // warnings do not stop the run
    return diagnostics_text(c.diagnostics);
  };
  CHECK(diagnostics("") ==
        "trap.yaml:5:25: warning: field 'i' of type 'int' is stored as a tensor of its own shape "
        "under default mode (as by Python's @tensorclass), which does not fit the batch dims (N): "
        "only a batch-less instance can hold it; option 'autocast' or option 'nocast' keeps it a "
        "plain value\n"
        "trap.yaml:6:26: warning: field 'l' of type 'list[float]' is stored as a tensor of its own "
        "shape under default mode (as by Python's @tensorclass), which does not fit the batch dims "
        "(N): only a batch-less instance can hold it; option 'autocast' keeps it a plain value\n"
        "trap.yaml:7:26: warning: field 'o' of type 'optional[bool]' is stored as a tensor of its "
        "own shape under default mode (as by Python's @tensorclass), which does not fit the batch "
        "dims (N): only a batch-less instance can hold it; option 'nocast' keeps it a plain "
        "value\n");
  CHECK(diagnostics("    options: [autocast]\n") ==
        "trap.yaml:8:26: warning: field 'o' of type 'optional[bool]' is stored as a tensor of its "
        "own shape under option 'autocast' (as by Python's @tensorclass), which does not fit the "
        "batch dims (N): only a batch-less instance can hold it; option 'nocast' keeps it a plain "
        "value\n");
  CHECK(diagnostics("    options: [nocast]\n") ==
        "trap.yaml:7:26: warning: field 'l' of type 'list[float]' is stored as a tensor of its own "
        "shape under option 'nocast' (as by Python's @tensorclass), which does not fit the batch "
        "dims (N): only a batch-less instance can hold it; option 'autocast' keeps it a plain "
        "value\n");
}

TEST_CASE("a template override may use only the names tcgen provides for it",
          "[generator][diagnostics]") {
  const fs::path dir = fs::temp_directory_path() / "tc_template_names";
  fs::create_directories(dir);
  write_text((dir / "file.mustache").string(), "// {{schema_path}} {{#nonsense}}{{/nonsense}}\n");
  tcgen::Diagnostics diagnostics;
  tcgen::load_templates(dir.string(), diagnostics);
  fs::remove_all(dir);
  REQUIRE(diagnostics.all().size() == 1);
  CHECK_THAT(
      diagnostics.all()[0].message,
      Catch::Matchers::StartsWith("template uses 'nonsense', which tcgen does not provide for "
                                  "'file' (it provides: "));
  CHECK(tcgen::template_names("{{a}} {{& b }} {{{c}}} {{#d}}{{/d}} {{^e}}{{/e}} {{! note }}") ==
        std::set<std::string>{"a", "b", "c", "d", "e"});
}
