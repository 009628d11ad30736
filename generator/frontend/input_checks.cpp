#include "frontend/input_checks.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <vector>

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

// A `type:` value of a flow mapping that YAML cannot read unquoted, at its line and column.
struct FlowType {
  int line, column;
  std::string value;
};

// The `type:` values of `{...}` mappings that hold brackets. A lexer of YAML's flow syntax (flow
// brackets, quoted scalars, comments), enough to find them in a file YAML could not parse.
std::vector<FlowType> unquoted_flow_types(const std::string& text) {
  std::vector<FlowType> found;
  std::string open;  // the flow brackets open: '{' and '['
  int line = 1;
  size_t line_start = 0;
  char previous = '\n';  // the last character other than a space; '\n' at a line's start
  size_t counted = 0;    // column(): the characters of the line before `counted` are `chars`
  int chars = 0;
  const auto column = [&](size_t at) {  // in characters, as yaml-cpp counts; `at` only grows
    if (counted < line_start) counted = line_start, chars = 0;
    for (; counted < at; ++counted)
      chars += (static_cast<unsigned char>(text[counted]) & 0xC0) != 0x80;
    return chars + 1;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      if (open.empty()) previous = c;  // in a flow collection, a line break is a space
    } else if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\n')) {
      i = std::min(text.find('\n', i), text.size()) - 1;  // a comment, up to the line's end
    } else if ((c == '"' || c == '\'') && std::strchr("\n:,[{-?", previous)) {
      // A quoted scalar: skipped to its closing quote ('' and \" do not close it).
      for (++i; i < text.size() && text[i] != c; ++i) {
        if (text[i] == '\n') ++line, line_start = i + 1;
        if ((c == '"' && text[i] == '\\') || (c == '\'' && text.compare(i, 2, "''") == 0)) ++i;
      }
      previous = c;
    } else if (c == '{' || c == '[') {
      open.push_back(c);
      previous = c;
    } else if (c == '}' || c == ']') {
      if (!open.empty()) open.pop_back();
      previous = c;
    } else if (c != ' ') {
      const bool key = !open.empty() && open.back() == '{' &&
                       (previous == '{' || previous == ',') && text.compare(i, 4, "type") == 0;
      previous = c;
      size_t value = key ? text.find_first_not_of(' ', i + 4) : std::string::npos;
      if (value == std::string::npos || text[value] != ':') continue;
      value = text.find_first_not_of(' ', value + 1);
      if (value == std::string::npos || std::strchr("\"'[{\n", text[value])) continue;
      // The value as meant: up to a ',' or '}' outside its brackets.
      size_t end = value;
      int depth = 0;
      bool brackets = false;
      for (; end < text.size() && text[end] != '\n'; ++end) {
        const char v = text[end];
        if (depth == 0 && (v == ',' || v == '}')) break;
        if (v == '[' || v == '(') ++depth, brackets = true;
        if ((v == ']' || v == ')') && depth > 0) --depth;
      }
      if (!brackets) continue;
      const size_t length = text.find_last_not_of(' ', end - 1) + 1 - value;
      constexpr size_t kQuoted = 60;  // hostile values can be megabytes long
      found.push_back(
          {line, column(value),
           length <= kQuoted ? text.substr(value, length) : text.substr(value, kQuoted) + "..."});
      i = end - 1;
    }
  }
  return found;
}

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

bool explain_flow_types(const std::string& text, const YAML::Mark& mark, const std::string& display,
                        Diagnostics& diagnostics) {
  const std::vector<FlowType> found = unquoted_flow_types(text);
  // The first one broke the parse; a later syntax error has another cause.
  if (found.empty() ||
      std::tie(found[0].line, found[0].column) > std::make_tuple(mark.line + 1, mark.column + 1)) {
    return false;
  }
  for (const auto& type : found) {
    diagnostics.error(
        SourceLoc{display, type.line, type.column},
        "in a {...} mapping a type with brackets must be quoted: type: \"" + type.value + "\"");
  }
  return true;
}

bool check_size(const YAML::Node& root, const std::string& display, Diagnostics& diagnostics) {
  return SizeWalker(display, diagnostics).walk(root, 0);
}

}  // namespace tcgen
