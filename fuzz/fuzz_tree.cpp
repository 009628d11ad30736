#include "fuzz_tree.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tc_fuzz {
namespace fs = std::filesystem;
namespace {

bool safe_path(const std::string& path) {
  if (path.empty() || path.size() > 100) return false;
  int parts = 0;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == ".." || ++parts > 3) return false;
    for (char c : part) {
      const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '.' || c == '%' || c == '-';
      if (!ok) return false;
    }
    start = end + 1;
  }
  return true;
}

}  // namespace

std::string scratch_dir() {
  const fs::path base = fs::is_directory("/dev/shm") ? "/dev/shm" : fs::temp_directory_path();
  const fs::path dir = base / ("tc_fuzz_load_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir.string();
}

void write_tree(const std::string& dir, const std::string& spec) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  const std::string marker = "--- ";
  size_t at = spec.rfind(marker, 0) == 0 ? 0 : spec.find("\n" + marker);
  if (at != 0 && at != std::string::npos) ++at;
  while (at != std::string::npos && at < spec.size()) {
    const size_t name_end = spec.find('\n', at);
    if (name_end == std::string::npos) return;
    const std::string name = spec.substr(at + marker.size(), name_end - at - marker.size());
    size_t next = spec.find("\n" + marker, name_end);
    const size_t content_end = next == std::string::npos ? spec.size() : next;
    if (safe_path(name)) {
      const fs::path path = fs::path(dir) / name;
      fs::create_directories(path.parent_path(), ec);
      std::ofstream(path, std::ios::binary)
          .write(spec.data() + name_end + 1,
                 static_cast<std::streamsize>(content_end - std::min(content_end, name_end + 1)));
    }
    at = next == std::string::npos ? next : next + 1;
  }
}

}  // namespace tc_fuzz
