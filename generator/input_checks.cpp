#include "input_checks.h"

#include <cstdio>

namespace tcgen {
namespace {

SourceLoc loc_at(const std::string& display, const YAML::Mark& mark) {
  if (mark.line < 0) return SourceLoc{display, 0, 0};
  return SourceLoc{display, mark.line + 1, mark.column + 1};
}

// Length of the UTF-8 sequence at text[i], 0 when it is not a valid one (overlong forms,
// surrogates and code points past U+10FFFF included).
size_t utf8_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned c = byte(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xC2 && c <= 0xDF   ? 2
             : c >= 0xE0 && c <= 0xEF ? 3
             : c >= 0xF0 && c <= 0xF4 ? 4
                                      : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  const unsigned second = byte(i + 1);
  if ((c == 0xE0 && second < 0xA0) || (c == 0xED && second > 0x9F) ||
      (c == 0xF0 && second < 0x90) || (c == 0xF4 && second > 0x8F)) {
    return 0;
  }
  return n;
}

class SizeWalker {
 public:
  SizeWalker(const std::string& display, Diagnostics& diagnostics)
      : display_(display), diagnostics_(diagnostics) {}

  bool walk(const YAML::Node& node, int depth) {
    if (depth > kMaxNesting) {
      diagnostics_.error(loc_at(display_, node.Mark()),
                         "nesting deeper than " + std::to_string(kMaxNesting) + " levels");
      return false;
    }
    if (++nodes_ > kMaxExpandedNodes) {
      diagnostics_.error(loc_at(display_, node.Mark()),
                         "the schema expands to more than " + std::to_string(kMaxExpandedNodes) +
                             " YAML nodes (aliases are counted at each use)");
      return false;
    }
    if (node.IsSequence()) {
      for (const auto& item : node) {
        if (!walk(item, depth + 1)) return false;
      }
    } else if (node.IsMap()) {
      for (const auto& item : node) {
        if (!walk(item.first, depth + 1) || !walk(item.second, depth + 1)) return false;
      }
    }
    return true;
  }

 private:
  const std::string& display_;
  Diagnostics& diagnostics_;
  long nodes_ = 0;
};

}  // namespace

bool check_text(const std::string& text, const std::string& display, Diagnostics& diagnostics) {
  int line = 1, column = 1;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\0') {
      diagnostics.error(SourceLoc{display, line, column}, "NUL byte in the schema file");
      return false;
    }
    const size_t n = utf8_length(text, i);
    if (n == 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[i]));
      diagnostics.error(SourceLoc{display, line, column},
                        std::string("invalid UTF-8 byte ") + hex + " (schema files are UTF-8)");
      return false;
    }
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += n;
  }
  return true;
}

bool is_utf8(const std::string& text) {
  for (size_t i = 0, n = 0; i < text.size(); i += n) {
    if ((n = utf8_length(text, i)) == 0) return false;
  }
  return true;
}

bool explain_tab_indent(const std::string& text, const YAML::Mark& mark, const std::string& display,
                        Diagnostics& diagnostics) {
  if (mark.line < 0) return false;
  size_t begin = 0;
  for (int line = 0; line < mark.line && begin != std::string::npos; ++line) {
    begin = text.find('\n', begin);
    if (begin != std::string::npos) ++begin;
  }
  if (begin == std::string::npos) return false;
  for (size_t i = begin; i < text.size() && (text[i] == ' ' || text[i] == '\t'); ++i) {
    if (text[i] == '\t') {
      diagnostics.error(SourceLoc{display, mark.line + 1, static_cast<int>(i - begin) + 1},
                        "tab character in indentation (YAML indents with spaces only)");
      return true;
    }
  }
  return false;
}

bool check_size(const YAML::Node& root, const std::string& display, Diagnostics& diagnostics) {
  return SizeWalker(display, diagnostics).walk(root, 0);
}

}  // namespace tcgen
