// The lazy form in one place, checked: outside the lazy code (runtime/src/lazy/ and
// core/lazy_state.*), a branch on the lazy form (`if (impl_->lazy)`, `if (td.is_lazy_stack())`,
// `if (auto lazy = detail::lazy::on_path(...))`, ...) is a forward: one statement, or one
// statement and an exit (`return;`, `return *this;`, `return td;`, `continue;`). Its semantics
// live in the lazy code. Torch-free; run as
//   tc_lazy_forwards <runtime/src>
// Each branch that holds more is reported as `<file>:<line>: ...`, and the check then fails.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// `text` with comments and string/char literals blanked (newlines kept), so that braces and
// semicolons inside them do not count.
std::string code_only(const std::string& text) {
  std::string out = text;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out.compare(i, 2, "//") == 0) {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (out.compare(i, 2, "/*") == 0) {
      const size_t end = out.find("*/", i + 2);
      const size_t stop = end == std::string::npos ? out.size() : end + 2;
      for (; i < stop; ++i)
        if (out[i] != '\n') out[i] = ' ';
      --i;
    } else if (out[i] == '"' || out[i] == '\'') {
      const char quote = out[i++];
      while (i < out.size() && out[i] != quote) {
        if (out[i] == '\\') out[i++] = ' ';
        if (i < out.size() && out[i] != '\n') out[i++] = ' ';
      }
    }
  }
  return out;
}

// The position of the bracket closing the one at `open` (npos when unbalanced).
size_t closing(const std::string& code, size_t open) {
  const char left = code[open];
  const char right = left == '(' ? ')' : '}';
  int depth = 0;
  for (size_t i = open; i < code.size(); ++i) {
    if (code[i] == left) ++depth;
    if (code[i] == right && --depth == 0) return i;
  }
  return std::string::npos;
}

// The statements of a block's body at its own depth (a nested block counts as one).
std::vector<std::string> statements(const std::string& body) {
  std::vector<std::string> out;
  std::string current;
  int depth = 0;
  for (const char c : body) {
    if (c == '(' || c == '{') ++depth;
    if (c == ')' || c == '}') --depth;
    current += c;
    if ((c == ';' && depth == 0) || (c == '}' && depth == 0)) {
      if (current.find_first_not_of(" \t\n;}") != std::string::npos) out.push_back(current);
      current.clear();
    }
  }
  return out;
}

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\n");
  const size_t b = s.find_last_not_of(" \t\n;");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

bool is_lazy_code(const fs::path& rel) {
  return *rel.begin() == "lazy" || rel.stem() == "lazy_state";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: tc_lazy_forwards <runtime/src>\n";
    return 2;
  }
  const fs::path root = argv[1];
  const std::regex lazy_condition(R"((^|[^A-Za-z0-9_])lazy([^A-Za-z0-9_]|$)|is_lazy_stack\()");
  const std::regex exit_statement(
      R"(^(return|continue|break)( \*this| [A-Za-z_][A-Za-z_0-9]*(\(\))?)?$)");
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".cpp" || ext == ".h")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  int problems = 0;
  int branches = 0;
  for (const fs::path& file : files) {
    const fs::path rel = fs::relative(file, root);
    if (is_lazy_code(rel)) continue;
    std::ifstream in(file);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string code = code_only(buffer.str());
    for (size_t at = code.find("if ("); at != std::string::npos; at = code.find("if (", at + 1)) {
      if (at > 0 && (std::isalnum(static_cast<unsigned char>(code[at - 1])) || code[at - 1] == '_'))
        continue;  // elif, notif, ...
      const size_t open = at + 3;
      const size_t close = closing(code, open);
      if (close == std::string::npos) break;
      if (!std::regex_search(code.substr(open, close - open + 1), lazy_condition)) continue;
      ++branches;
      const size_t body = code.find_first_not_of(" \t\n", close + 1);
      if (body == std::string::npos || code[body] != '{') continue;  // one statement
      const size_t end = closing(code, body);
      if (end == std::string::npos) break;
      const auto parts = statements(code.substr(body + 1, end - body - 1));
      const bool forward =
          parts.size() <= 1 ||
          (parts.size() == 2 && std::regex_match(trimmed(parts[1]), exit_statement));
      if (forward) continue;
      const auto line =
          std::count(code.begin(), code.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
      std::cout << rel.generic_string() << ":" << line << ": a branch on the lazy form holding "
                << parts.size()
                << " statements: move them into a function of the lazy code (lazy/, "
                   "core/lazy_state.cpp) and forward to it in one statement\n";
      ++problems;
    }
  }
  if (problems > 0) {
    std::cout << "lazy forward check failed: " << problems << " problem(s) in " << branches
              << " branches on the lazy form\n";
    return 1;
  }
  std::cout << "lazy forwards: " << branches << " branches on the lazy form outside the lazy code, "
            << "each a forward\n";
  return 0;
}
