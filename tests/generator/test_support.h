#pragma once
// Helpers shared by the generator tests.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "model/diagnostics.h"

namespace tcgen_test {

/// Every diagnostic, one formatted line each, as tcgen prints them.
inline std::string diagnostics_text(const tcgen::Diagnostics& diagnostics) {
  std::string text;
  for (const auto& d : diagnostics.all()) text += tcgen::format_diagnostic(d) + "\n";
  return text;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// Runs the enclosing scope with `dir` as the working directory, so that schema paths (and the
/// file names in stamps and diagnostics) are spelled relative to it.
class ScopedCwd {
 public:
  explicit ScopedCwd(const std::filesystem::path& dir) : old_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~ScopedCwd() { std::filesystem::current_path(old_); }
  ScopedCwd(const ScopedCwd&) = delete;
  ScopedCwd& operator=(const ScopedCwd&) = delete;

 private:
  std::filesystem::path old_;
};

/// Set TC_UPDATE_GOLDENS=1 to rewrite expected files from the current output (then review the
/// diff).
inline bool updating_goldens() {
  const char* flag = std::getenv("TC_UPDATE_GOLDENS");
  return flag && std::string(flag) == "1";
}

inline std::filesystem::path source_dir() { return TC_SOURCE_DIR; }

}  // namespace tcgen_test
