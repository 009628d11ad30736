// The schema's vocabularies are tables (class options: tensordict::kClassOptions; keys:
// tcgen::schema_keys()); these tests hold what is not derived from them to the tables (the fuzz
// dictionary), and the tables to the checks and emitters their rows drive.
#include "catch2_compat.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "driver/driver.h"
#include "model/schema_keys.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace tcgen_test;

namespace {

// The tokens of fuzz/tcgen.dict, without their quotes.
std::vector<std::string> fuzz_tokens() {
  std::vector<std::string> tokens;
  std::istringstream lines(read_text(source_dir() / "fuzz/tcgen.dict"));
  for (std::string line; std::getline(lines, line);) {
    if (line.size() >= 2 && line.front() == '"' && line.back() == '"') {
      tokens.push_back(line.substr(1, line.size() - 2));
    }
  }
  return tokens;
}

bool has_token(const std::vector<std::string>& tokens, const std::string& token) {
  return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
}

tcgen::Compilation compile_with_options(const std::string& options) {
  return tcgen::compile_text("classes:\n  - name: A\n    options: [" + options +
                                 "]\n    fields:\n      - {name: x, type: tensor}\n",
                             "s.yaml", tcgen::builtin_templates());
}

}  // namespace

TEST_CASE("the fuzz dictionary holds every class option and YAML key", "[generator][vocabulary]") {
  const auto tokens = fuzz_tokens();
  REQUIRE_FALSE(tokens.empty());
  for (const auto& row : tensordict::kClassOptions) {
    INFO(row.name);
    CHECK(has_token(tokens, std::string(row.name)));
  }
  for (const auto& key : tcgen::schema_keys()) {
    INFO(key.name);
    if (key.yaml) CHECK(has_token(tokens, std::string(key.name) + ":"));
  }
}

TEST_CASE("schema keys: each annotation takes its keys at positions 1 to n",
          "[generator][vocabulary]") {
  for (const auto scope : {tcgen::KeyScope::Class, tcgen::KeyScope::Field}) {
    const auto keys = tcgen::annotation_keys(scope);
    REQUIRE_FALSE(keys.empty());
    for (size_t i = 0; i < keys.size(); ++i) {
      INFO(keys[i]->name);
      CHECK(keys[i]->annotation == static_cast<int>(i + 1));
    }
  }
  for (const auto& key : tcgen::schema_keys()) {
    INFO(key.name);
    CHECK((key.yaml || key.annotation));  // someone reads it
    CHECK(std::holds_alternative<std::monostate>(key.target) != key.lands.empty());  // it lands
  }
}

TEST_CASE("class options: each compiles alone, each pair fails exactly when excluded",
          "[generator][vocabulary]") {
  for (const auto& a : tensordict::kClassOptions) {
    const std::string name(a.name);
    INFO(name);
    tcgen::Compilation alone = compile_with_options(name);
    INFO(diagnostics_text(alone.diagnostics));
    REQUIRE_FALSE(alone.diagnostics.has_errors());
    CHECK(alone.outputs.size() == 1);
    for (const auto& b : tensordict::kClassOptions) {
      if (&a == &b) continue;
      INFO(b.name);
      const bool excluded = (a.excludes & tensordict::option_bit(b.option)) ||
                            (b.excludes & tensordict::option_bit(a.option));
      CHECK(compile_with_options(name + ", " + std::string(b.name)).diagnostics.has_errors() ==
            excluded);
    }
  }
}

TEST_CASE("class options: the Python class takes each row's keyword", "[generator][vocabulary]") {
  const fs::path dir = fs::temp_directory_path() / ("tc-vocabulary-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  tcgen::CompileOptions options;
  options.language = &tcgen::output_language("python");
  for (const auto& row : tensordict::kClassOptions) {
    ScopedCwd cwd(dir);
    INFO(row.name);
    write_text("s.yaml", "namespace: ns\nclasses:\n  - name: A\n    options: [" +
                             std::string(row.name) +
                             "]\n    fields:\n      - {name: x, type: tensor}\n");
    tcgen::Compilation c = tcgen::compile({"s.yaml"}, tcgen::builtin_templates(), options);
    INFO(diagnostics_text(c.diagnostics));
    REQUIRE(c.outputs.size() == 1);
    CHECK(c.outputs[0].content.find(", " + std::string(row.python_keyword) + "=True)") !=
          std::string::npos);
  }
  fs::remove_all(dir);
}
