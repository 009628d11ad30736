// Key <-> file name encoding (spec §1.6) and the lookup of an entry's path inside a directory.
// Encoded names contain no '/' and are never "." or "..", so a key can only name an entry directly
// inside its TensorDict's directory.
#include <sys/stat.h>

#include <cctype>

#include "memmap/internal.h"
#include "tensordict/format_version.h"

namespace tensordict::memmap {
namespace {

bool is_unsafe(unsigned char c) {
  switch (c) {
    case '/':
    case '<':
    case '>':
    case ':':
    case '"':
    case '|':
    case '?':
    case '*':
    case '\\':
    case ' ':
    case '%':
      return true;
    default:
      return c < 0x20 || c == 0x7f;
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Raw-name fallback for directories written without key encoding, only when the raw key cannot
// leave the directory (no separator, no drive letter, not "", "." or "..").
bool raw_name_is_safe(const std::string& key, bool directory) {
  if (key.find('/') != std::string::npos || key.find('\\') != std::string::npos) return false;
  if (key.size() >= 2 && std::isalpha(static_cast<unsigned char>(key[0])) && key[1] == ':')
    return false;
  if (key.find('\0') != std::string::npos) return false;
  return !(directory && (key.empty() || key == "." || key == ".."));
}

}  // namespace

std::string encode_key(std::string_view key) {
  if (key.empty()) return "%";
  if (key == ".") return "%2E";
  if (key == "..") return "%2E%2E";
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(key.size());
  for (char ch : key) {
    const auto c = static_cast<unsigned char>(ch);
    if (is_unsafe(c)) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += ch;
    }
  }
  return out;
}

std::string decode_key(std::string_view name) {
  if (name == "%") return "";
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '%' && i + 2 < name.size()) {
      const int hi = hex_value(name[i + 1]);
      const int lo = hex_value(name[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += name[i];
  }
  return out;
}

std::string class_short_name(std::string_view type) { return format::class_name(type); }

namespace detail {

std::string join(const std::string& dir, std::string_view name) {
  std::string out = dir;
  if (!out.empty() && out.back() != '/') out += '/';
  out += name;
  return out;
}

std::vector<std::string> entry_names(const std::string& key, std::string_view suffix,
                                     bool directory) {
  std::vector<std::string> names{encode_key(key) + std::string(suffix)};
  if (raw_name_is_safe(key, directory) && key + std::string(suffix) != names[0]) {
    names.push_back(key + std::string(suffix));
  }
  return names;
}

std::string find_entry(const std::string& dir, const std::string& key, std::string_view suffix,
                       bool directory) {
  for (const std::string& name : entry_names(key, suffix, directory)) {
    const std::string path = join(dir, name);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      throw FormatError("refusing to follow symlink '" + path + "' for key '" + key + "'");
    }
    return path;
  }
  return {};
}

}  // namespace detail
}  // namespace tensordict::memmap
