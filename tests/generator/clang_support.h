#pragma once
// Helpers of the C++ front end tests: the fixtures in tests/schemas/clang and headers written on
// the fly (which include the fixtures' prelude.h).

#include <unistd.h>

#include "driver/driver.h"
#include "test_support.h"

namespace tcgen_test {

namespace fs = std::filesystem;

inline const fs::path kFixtures = source_dir() / "tests/schemas/clang";

inline tcgen::ClangOptions clang_options() {
  return {{"-I" + (source_dir() / "runtime/include").string()}, ""};
}

/// compile() with clang_options().
inline tcgen::Compilation compile_headers(const std::vector<std::string>& files) {
  tcgen::CompileOptions options;
  options.clang = clang_options();
  return tcgen::compile(files, tcgen::builtin_templates(), options);
}

// Read from tests/schemas/clang, so paths in dumps and stamps are spelled as there.
inline tcgen::Compilation compile_fixture(const std::string& file) {
  ScopedCwd cwd(kFixtures);
  return compile_headers({file});
}

inline std::string errors_of(const tcgen::Compilation& c) {
  std::string out;
  for (const auto& d : c.diagnostics.all()) out += tcgen::format_diagnostic(d) + "\n";
  return out;
}

inline fs::path scratch(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("tcgen_clang_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* file : {"prelude.h", "stand_ins.h"}) fs::copy_file(kFixtures / file, dir / file);
  return dir;
}

// Compiles `snippet` as bad.h (line 1 includes the prelude, the snippet starts on line 2).
inline tcgen::Compilation compile_snippet(const std::string& snippet) {
  const fs::path dir = scratch("snippet");
  write_text(dir / "bad.h", "#include \"prelude.h\"\n" + snippet);
  ScopedCwd cwd(dir);
  return compile_headers({"bad.h"});
}

}  // namespace tcgen_test
