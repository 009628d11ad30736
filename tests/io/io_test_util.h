#pragma once
// Helpers of the IO tests: a temporary directory per test, small file utilities, SHA-256.

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace tc_test {

/// A fresh directory under the system temp dir, removed with its content at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

/// `text` with every `tag` (such as "{dir}") replaced by `value`.
inline std::string expand(std::string text, const std::string& tag, const std::string& value) {
  for (size_t at = text.find(tag); at != std::string::npos; at = text.find(tag, at + value.size()))
    text.replace(at, tag.size(), value);
  return text;
}

/// Exit status and output of a shell command.
struct CommandResult {
  int code;            ///< the exit status, -1 when it did not exit
  std::string output;  ///< what it wrote to stdout (redirect stderr there to have both)
};
CommandResult run_command(const std::string& command);

/// Lower-case hex SHA-256 of `n` bytes.
std::string sha256_hex(const void* data, size_t n);

}  // namespace tc_test
