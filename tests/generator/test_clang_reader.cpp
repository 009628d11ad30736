// The C++ front end: annotated headers (tests/schemas/clang/) give the model and the header their
// YAML twins give; every unmappable type and bad annotation is reported at its file:line:col.
#include "catch2_compat.h"

#include <regex>

#include "clang_support.h"
#include "model/output_names.h"
#include "skip.h"

using namespace tcgen_test;

namespace {

// The source's own file names are the only difference two front ends may make.
std::string without_sources(std::string text) {
  return std::regex_replace(text, std::regex(R"(\b(\w+)\.(h|yaml)\b)"), "$1.SRC");
}

// A dump of every schema read and the header of the requested one.
std::pair<std::string, std::string> model_and_header(const std::string& file) {
  tcgen::Compilation c = compile_fixture(file);
  INFO(errors_of(c));
  REQUIRE_FALSE(c.diagnostics.has_errors());
  REQUIRE(c.outputs.size() == 1);
  return {without_sources(tcgen::dump_model(c.schemas)), without_sources(c.outputs[0].content)};
}

}  // namespace

TEST_CASE("clang: each C++ type maps to its schema type", "[generator][clang]") {
  if (!tcgen::have_libclang()) {
    CHECK(errors_of(compile_fixture("types.h")).find("built without libclang") !=
          std::string::npos);
    return;
  }
  tcgen::Compilation c = compile_fixture("types.h");
  INFO(errors_of(c));
  REQUIRE_FALSE(c.diagnostics.has_errors());
  CHECK(tcgen::dump_model(c.schemas) ==
        "schema types.h namespace=sim\n"
        "  class Settings python=<class 'sim.Settings'> options=[ ] batch_dims=[ ]\n"
        "    field rate: float = 0.5\n"
        "  class Particles python=<class 'mypkg.sim.Particles'> options=[ frozen ] "
        "batch_dims=[ N ]\n"
        "    method double total_mass() const;\n"
        "    method static Particles from_json(const tensordict::Json& json, int64_t n = 2);\n"
        "    field pos: tensor[float32, (N, 3)]\n"
        "    field mass: optional[tensor[float32]] = null\n"
        "    field label: str = \"unnamed\"\n"
        "    field count: int\n"
        "    field small: int = 3\n"
        "    field ratio: float\n"
        "    field scale: float\n"
        "    field flag: bool = true\n"
        "    field tags: list[str] = [\"a\",\"b\"]\n"
        "    field weights: list[float]\n"
        "    field extra: any\n"
        "    field extras: optional[TensorDict]\n"
        "    field maybe: optional[int]\n"
        "    field settings: Settings\n"
        "    field more: optional[Settings]\n");
  const tcgen::Class& particles = c.schemas[0].classes[1];
  CHECK(particles.doc == "A batch of particles.");
  CHECK(particles.fields[0].doc == "Positions.");  // the doc comment
  CHECK(particles.fields[2].doc == "A label.");    // doc= in TC_FIELD
  CHECK(particles.cpp_includes == std::vector<std::string>{"<cstdint>", "sim/mass.h"});
  CHECK(c.schemas[0].classes[0].doc == "Settings\nof a run.");
  CHECK(particles.fields[0].loc.line == 16);
  CHECK(particles.fields[0].loc.column == 56);
}

TEST_CASE("clang: a header and its YAML twin give the same model dump and header",
          "[generator][clang][needs-libclang]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  for (const std::string name : {"types", "outer", "inherit"}) {
    INFO(name);
    const auto from_header = model_and_header(name + ".h");
    const auto from_yaml = model_and_header(name + ".yaml");
    CHECK(from_header.first == from_yaml.first);
    CHECK(from_header.second == from_yaml.second);
  }
}

TEST_CASE("clang: nesting across two headers", "[generator][clang][needs-libclang]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  tcgen::Compilation c = compile_fixture("outer.h");
  INFO(errors_of(c));
  REQUIRE_FALSE(c.diagnostics.has_errors());
  REQUIRE(c.schemas.size() == 2);
  CHECK(c.requested == 1);
  CHECK(c.schemas[1].display_path == "inner.h");
  REQUIRE(c.schemas[0].includes.size() == 1);
  CHECK(c.schemas[0].includes[0].name == "inner.h");
  CHECK(c.schemas[0].classes[0].fields[0].type.class_name == "sim::parts::Inner");
  CHECK(c.dependencies == std::vector<std::string>{"outer.h", c.schemas[1].path});
  // Requested too, the included header is read once.
  ScopedCwd cwd(kFixtures);
  tcgen::Compilation both = compile_headers({"outer.h", "inner.h"});
  INFO(errors_of(both));
  CHECK_FALSE(both.diagnostics.has_errors());
  CHECK(both.outputs.size() == 2);
}

TEST_CASE("clang: each class option", "[generator][clang][needs-libclang]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  // Each option of the table alone, then two given out of table order.
  std::vector<std::pair<std::string, std::string>> cases = {{"nocast,frozen", "frozen nocast"}};
  for (const auto& row : tensordict::kClassOptions) cases.emplace_back(row.name, row.name);
  for (const auto& [written, expected] : cases) {
    INFO(written);
    tcgen::Compilation c =
        compile_snippet("struct TC_CLASS(\"options=" + written + "\") A {\n  at::Tensor x;\n};\n");
    INFO(errors_of(c));
    REQUIRE_FALSE(c.diagnostics.has_errors());
    std::string names;
    for (const auto& name : tcgen::option_names(c.schemas[0].classes[0].options)) {
      names += (names.empty() ? "" : " ") + name;
    }
    CHECK(names == expected);
  }
}
