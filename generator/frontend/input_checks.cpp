#include "frontend/input_checks.h"

#include <cstdio>

#include "model/source_text.h"

namespace tcgen {
namespace {

SourceLoc loc_at(const std::string& display, const YAML::Mark& mark) {
  if (mark.line < 0) return SourceLoc{display, 0, 0};
  return SourceLoc{display, mark.line + 1, mark.column + 1};
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
