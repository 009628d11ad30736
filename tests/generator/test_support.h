#pragma once
// Helpers shared by the generator tests.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

/// A zip archive at `path` holding `files` (name, bytes) stored uncompressed: packages made up
/// by a test (an AOTInductor package is a zip of sources and binaries).
inline void write_stored_zip(const std::filesystem::path& path,
                             const std::vector<std::pair<std::string, std::string>>& files) {
  const auto crc32 = [](const std::string& bytes) {
    uint32_t crc = 0xFFFFFFFFu;
    for (const unsigned char c : bytes) {
      crc ^= c;
      for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
  };
  std::string out, directory;
  const auto put = [](std::string& to, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) to += static_cast<char>((value >> (8 * i)) & 0xFF);
  };
  for (const auto& [name, bytes] : files) {
    const uint32_t crc = crc32(bytes);
    const uint64_t offset = out.size();
    // local header: signature, version, flags, method (stored), time, date, crc, sizes, names
    put(out, 0x04034b50, 4), put(out, 20, 2), put(out, 0, 2), put(out, 0, 2), put(out, 0, 4);
    put(out, crc, 4), put(out, bytes.size(), 4), put(out, bytes.size(), 4);
    put(out, name.size(), 2), put(out, 0, 2);
    out += name + bytes;
    put(directory, 0x02014b50, 4), put(directory, 20, 2), put(directory, 20, 2);
    put(directory, 0, 2), put(directory, 0, 2), put(directory, 0, 4), put(directory, crc, 4);
    put(directory, bytes.size(), 4), put(directory, bytes.size(), 4);
    put(directory, name.size(), 2), put(directory, 0, 2), put(directory, 0, 2);
    put(directory, 0, 2), put(directory, 0, 2), put(directory, 0, 4), put(directory, offset, 4);
    directory += name;
  }
  const uint64_t directory_offset = out.size();
  out += directory;
  put(out, 0x06054b50, 4), put(out, 0, 2), put(out, 0, 2), put(out, files.size(), 2);
  put(out, files.size(), 2), put(out, directory.size(), 4), put(out, directory_offset, 4);
  put(out, 0, 2);
  write_text(path, out);
}

}  // namespace tcgen_test
