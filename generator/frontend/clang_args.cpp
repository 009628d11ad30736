#include "frontend/clang_args.h"

#include <clang-c/CXCompilationDatabase.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "model/name_rules.h"

namespace tcgen {
namespace {

namespace fs = std::filesystem;

bool is_gcc(const std::string& compiler) {
  const std::string name = fs::path(compiler).filename().string();
  return name.find("clang") == std::string::npos &&
         (name.find("g++") != std::string::npos || name.find("gcc") != std::string::npos ||
          name == "c++" || name == "cc");
}

// The libstdc++ directories GCC searches (`gcc -v` lists them). clang, given a compile command
// of GCC's, would use the libstdc++ of the GCC installation it detects itself, which need not be
// the one the build uses; -nostdinc++ and these directories make it the same.
std::vector<std::string> gcc_libstdcxx_args(const std::string& compiler) {
  const std::string command = "'" + compiler + "' -xc++ -E -v /dev/null 2>&1 >/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return {};
  std::vector<std::string> dirs;
  bool in_list = false;
  char line[4096];
  while (fgets(line, sizeof line, pipe.get())) {
    std::string text = line;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (text.rfind("#include <...> search starts here:", 0) == 0) {
      in_list = true;
    } else if (text.rfind("End of search list.", 0) == 0) {
      in_list = false;
    } else if (in_list && text.find("/c++/") != std::string::npos) {
      dirs.push_back(text.substr(text.find_first_not_of(' ')));
    }
  }
  if (dirs.empty()) return {};
  std::vector<std::string> out = {"-nostdinc++"};
  for (const auto& dir : dirs) out.insert(out.end(), {"-isystem", dir});
  return out;
}

// Flags of the first command of DIR/compile_commands.json (no compiler, source, -c or -o), run
// from the command's directory.
std::vector<std::string> compile_db_args(const std::string& dir, Diagnostics& diagnostics) {
  std::vector<std::string> out;
  // Read whole by libclang: a FIFO would block it, a device never end.
  const std::string db_file = (fs::path(dir) / "compile_commands.json").string();
  std::error_code ec;
  const fs::file_status status = fs::status(db_file, ec);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    diagnostics.error(SourceLoc{display_path(db_file), 0, 0},
                      "the compilation database is not a regular file");
    return out;
  }
  if (fs::exists(status) && fs::file_size(db_file, ec) > kMaxCompileDbBytes && !ec) {
    diagnostics.error(SourceLoc{display_path(db_file), 0, 0},
                      "the compilation database is larger than tcgen reads (256 MiB)");
    return out;
  }
  CXCompilationDatabase_Error error = CXCompilationDatabase_NoError;
  CXCompilationDatabase db = clang_CompilationDatabase_fromDirectory(dir.c_str(), &error);
  if (error != CXCompilationDatabase_NoError) {
    diagnostics.error(SourceLoc{display_path(dir + "/compile_commands.json"), 0, 0},
                      "cannot read the compilation database");
    return out;
  }
  CXCompileCommands commands = clang_CompilationDatabase_getAllCompileCommands(db);
  if (clang_CompileCommands_getSize(commands) > 0) {
    CXCompileCommand command = clang_CompileCommands_getCommand(commands, 0);
    const std::string source = take(clang_CompileCommand_getFilename(command));
    out = {"-working-directory", take(clang_CompileCommand_getDirectory(command))};
    const unsigned n = clang_CompileCommand_getNumArgs(command);
    const std::string compiler = n > 0 ? take(clang_CompileCommand_getArg(command, 0)) : "";
    if (is_gcc(compiler)) {
      for (auto& arg : gcc_libstdcxx_args(compiler)) out.push_back(std::move(arg));
    }
    for (unsigned i = 1; i < n; ++i) {
      std::string arg = take(clang_CompileCommand_getArg(command, i));
      if (arg == "-o") {
        ++i;
      } else if (arg != "-c" && arg != source && arg != "--") {
        out.push_back(std::move(arg));
      }
    }
  }
  clang_CompileCommands_dispose(commands);
  clang_CompilationDatabase_dispose(db);
  return out;
}

bool is_usr_include(const std::string& dir) {
  std::error_code ec;
  return fs::weakly_canonical(dir, ec) == "/usr/include";
}

// Drops `/usr/include` given as -I or -isystem in any spelling: it is already the compiler's
// last system directory, and naming it again puts it before libstdc++'s own headers, whose
// #include_next <stdlib.h> then fails.
std::vector<std::string> without_usr_include(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if ((arg == "-I" || arg == "-isystem") && i + 1 < args.size() && is_usr_include(args[i + 1])) {
      ++i;
    } else if (!((arg.rfind("-I", 0) == 0 && is_usr_include(arg.substr(2))) ||
                 (arg.rfind("-isystem", 0) == 0 && arg.size() > 8 &&
                  is_usr_include(arg.substr(8))))) {
      out.push_back(arg);
    }
  }
  return out;
}

// ---- check_includes ----------------------------------------------------------------------------

// A header's text without its line splices (backslash-newline), which clang removes before
// anything else; original() maps a position back to the file's.
class Spliced {
 public:
  explicit Spliced(const std::string& raw) {
    text.reserve(raw.size());
    for (size_t i = 0; i < raw.size();) {
      if (raw[i] == '\\') {
        size_t j = i + 1;
        while (j < raw.size() && (raw[j] == ' ' || raw[j] == '\t')) ++j;  // clang allows them
        if (j < raw.size() && raw[j] == '\r' && j + 1 < raw.size() && raw[j + 1] == '\n') ++j;
        if (j < raw.size() && raw[j] == '\n') {
          total_ += j + 1 - i;
          removed_.push_back({text.size(), total_});
          i = j + 1;
          continue;
        }
      }
      text += raw[i++];
    }
  }

  size_t original(size_t pos) const {
    // The last splice at or before `pos` holds the bytes removed up to it.
    const auto after =
        std::upper_bound(removed_.begin(), removed_.end(), std::make_pair(pos, ~size_t{0}));
    return pos + (after == removed_.begin() ? 0 : std::prev(after)->second);
  }

  std::string text;

 private:
  /// (position in text, bytes removed up to there), in order of position
  std::vector<std::pair<size_t, size_t>> removed_;
  size_t total_ = 0;
};

struct Directive {
  std::string name;
  bool angled;
  size_t at;  ///< of the name's opening quote or '<', in the spliced text
};

bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// Skips spaces, tabs and block comments (which may span lines, as in clang) from `i`, not past
// `limit`: a comment not closed before it ends the skip there.
size_t skip_space(const std::string& t, size_t i, size_t limit = std::string::npos) {
  limit = std::min(limit, t.size());
  while (i < limit) {
    if (t[i] == ' ' || t[i] == '\t' || t[i] == '\f' || t[i] == '\v' || t[i] == '\r') {
      ++i;
    } else if (t.compare(i, 2, "/*") == 0) {
      // Searched up to `limit` only: a scan of each line to a far end would be quadratic.
      const size_t end = std::string_view(t.data(), limit).find("*/", i + 2);
      i = end == std::string::npos ? limit : end + 2;
    } else {
      break;
    }
  }
  return i;
}

// The include directive whose '#' ends before `i`, if it is one with a header name; `i` moves past
// what was read, not past `limit`.
std::optional<Directive> read_directive(const std::string& t, size_t& i,
                                        size_t limit = std::string::npos) {
  i = skip_space(t, i, limit);
  const size_t begin = i;
  while (i < t.size() && is_ident_char(t[i])) ++i;
  const std::string keyword = t.substr(begin, i - begin);
  if (keyword != "include" && keyword != "include_next" && keyword != "import") return std::nullopt;
  i = skip_space(t, i, limit);
  if (i >= t.size() || (t[i] != '"' && t[i] != '<')) return std::nullopt;  // a macro's name
  const char close = t[i] == '"' ? '"' : '>';
  const size_t end = t.find_first_of(std::string(1, close) + "\n", i + 1);
  if (end == std::string::npos || t[end] != close) return std::nullopt;
  Directive directive{t.substr(i + 1, end - i - 1), close == '>', i};
  i = end + 1;
  return directive;
}

// Every include directive of `t` as clang's lexer finds them: at the start of a line, outside
// comments and raw strings (ordinary literals end at the line's end, so they cannot hide one).
void lex_directives(const std::string& t, std::vector<Directive>& out) {
  bool line_start = true;
  for (size_t i = 0; i < t.size();) {
    const char c = t[i];
    if (c == '\n') {
      line_start = true;
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' ||
               t.compare(i, 2, "/*") == 0) {
      i = skip_space(t, i);
    } else if (t.compare(i, 2, "//") == 0) {
      i = t.find('\n', i);
      if (i == std::string::npos) i = t.size();
    } else if (line_start && (c == '#' || t.compare(i, 2, "%:") == 0)) {
      line_start = false;
      i += c == '#' ? 1 : 2;
      if (auto directive = read_directive(t, i)) out.push_back(std::move(*directive));
    } else if (c == '"' || c == '\'') {
      line_start = false;
      for (++i; i < t.size() && t[i] != c && t[i] != '\n'; ++i) {
        if (t[i] == '\\') ++i;
      }
      if (i < t.size() && t[i] == c) ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < t.size() &&
                std::isdigit(static_cast<unsigned char>(t[i + 1])))) {
      // A pp-number, digit separators ('), exponents' signs and all.
      line_start = false;
      for (++i; i < t.size(); ++i) {
        const char d = t[i];
        const bool sign = (d == '+' || d == '-') && std::strchr("eEpP", t[i - 1]);
        const bool separator = d == '\'' && i + 1 < t.size() && is_ident_char(t[i + 1]);
        if (!is_ident_char(d) && d != '.' && !sign && !separator) break;
      }
    } else if (is_ident_char(c)) {
      line_start = false;
      const size_t begin = i;
      while (i < t.size() && is_ident_char(t[i])) ++i;
      const std::string word = t.substr(begin, i - begin);
      const bool raw = word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR";
      if (raw && i < t.size() && t[i] == '"') {
        // The delimiter is at most 16 characters.
        const size_t open = t.substr(i + 1, 17).find('(');
        if (open != std::string::npos) {
          const size_t delimiter = i + 1;
          const std::string close = ")" + t.substr(delimiter, open) + "\"";
          const size_t end = t.find(close, delimiter + open + 1);
          i = end == std::string::npos ? t.size() : end + close.size();
        }
      }
    } else {
      line_start = false;
      ++i;
    }
  }
}

// The same, line by line, without tracking comments or literals across lines: what a lexer that
// strayed from clang's would miss (a directive at the start of a line) is still seen; a directive
// only this finds (inside a comment) can only make the check stricter.
void line_directives(const std::string& t, std::vector<Directive>& out) {
  for (size_t line = 0; line < t.size();) {
    size_t next = t.find('\n', line);
    if (next == std::string::npos) next = t.size();
    size_t i = skip_space(t, line, next);
    if (i < next && (t[i] == '#' || t.compare(i, 2, "%:") == 0)) {
      i += t[i] == '#' ? 1 : 2;
      if (auto directive = read_directive(t, i, next)) out.push_back(std::move(*directive));
    }
    line = next + 1;
  }
}

// A file as messages name it: relative to the working directory when inside it, else in full
// (`/dev/zero`).
std::string shown(const fs::path& file) {
  std::error_code ec;
  const std::string relative =
      fs::relative(fs::absolute(file, ec), fs::current_path(ec), ec).generic_string();
  if (!ec && !relative.empty() && relative.rfind("..", 0) != 0) return relative;
  return file.lexically_normal().generic_string();
}

class IncludeScanner {
 public:
  IncludeScanner(const std::vector<std::string>& args, Diagnostics& diagnostics)
      : diagnostics_(diagnostics) {
    std::error_code ec;
    cwd_ = fs::current_path(ec);
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& arg = args[i];
      if (arg == "-working-directory" && i + 1 < args.size()) {
        cwd_ = args[++i];
      } else if (arg.rfind("-working-directory=", 0) == 0) {
        cwd_ = arg.substr(19);
      }
    }
    // Each flag takes its value joined or as the next argument (--include-directory= joined).
    const std::pair<const char*, std::vector<fs::path>*> flags[] = {
        {"-iquote", &quote_},
        {"-isystem", &system_},
        {"-idirafter", &system_},
        {"-cxx-isystem", &system_},
        {"-include", &forced_},
        {"-imacros", &forced_},
        {"--include-directory=", &angled_},
        {"-I", &angled_}};
    for (size_t i = 0; i < args.size(); ++i) {
      for (const auto& [flag, list] : flags) {
        const std::string f = flag;
        if (args[i] == f && f.back() != '=' && i + 1 < args.size()) {
          list->push_back(in_cwd(args[++i]));
          break;
        }
        if (args[i].size() > f.size() && args[i].compare(0, f.size(), f) == 0) {
          list->push_back(in_cwd(args[i].substr(f.size())));
          break;
        }
      }
    }
  }

  bool run(const std::string& header) {
    for (const auto& forced : forced_) {
      const std::string name = forced.string();
      if (auto found = find(name, false, cwd_))
        check(*found, SourceLoc{display_path(header), 0, 0});
    }
    queue(header);
    while (!pending_.empty()) {
      const fs::path file = pending_.front();
      pending_.pop_front();
      scan(file);
    }
    return !refused_;
  }

 private:
  fs::path in_cwd(const fs::path& path) const { return path.is_absolute() ? path : cwd_ / path; }

  void queue(const fs::path& file) {
    std::error_code ec;
    const fs::path identity = fs::weakly_canonical(file, ec);
    if (ec || !seen_.insert(identity).second || seen_.size() > kMaxScannedHeaders) return;
    const std::uintmax_t size = fs::file_size(file, ec);
    if (ec || bytes_ + size > kMaxScannedBytes) return;
    bytes_ += size;
    pending_.push_back(file);
  }

  // Where clang would find `name` included from a file in `dir`: the first candidate that exists
  // and is not a directory (clang goes past those too).
  std::optional<fs::path> find(const std::string& name, bool angled, const fs::path& dir) const {
    std::vector<fs::path> candidates;
    if (fs::path(name).is_absolute()) {
      candidates.push_back(name);
    } else {
      if (!angled) candidates.push_back(dir / name);
      if (!angled) {
        for (const auto& d : quote_) candidates.push_back(d / name);
      }
      for (const auto& d : angled_) candidates.push_back(d / name);
      for (const auto& d : system_) candidates.push_back(d / name);
    }
    for (const auto& candidate : candidates) {
      std::error_code ec;
      const fs::file_status status = fs::status(candidate, ec);
      if (!ec && fs::exists(status) && !fs::is_directory(status)) return candidate;
    }
    return std::nullopt;
  }

  // Why libclang must not open `file`, or "" (once per file).
  const std::string& problem(const fs::path& file) {
    auto [it, fresh] = problems_.emplace(file, "");
    if (!fresh) return it->second;
    std::error_code ec;
    const fs::file_status status = fs::status(file, ec);
    const std::string what = "included file '" + shown(file) + "'";
    const std::uintmax_t size = ec ? 0 : fs::file_size(file, ec);
    if (!fs::is_regular_file(status)) {
      it->second = what +
                   " is not a regular file (libclang would wait forever on a FIFO, or read a "
                   "device without end)";
    } else if (!ec && size > kMaxHeaderBytes) {
      it->second = what + " is " + std::to_string(size >> 20) +
                   " MiB, more than tcgen lets libclang read (16 MiB)";
    }
    return it->second;
  }

  // False when `file` is refused (reported at `loc`).
  bool check(const fs::path& file, const SourceLoc& loc) {
    const std::string& why = problem(file);
    if (why.empty()) return true;
    diagnostics_.error(loc, why);
    refused_ = true;
    return false;
  }

  void scan(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream raw;
    raw << in.rdbuf();
    const std::string original = raw.str();
    const Spliced spliced(original);
    std::vector<Directive> directives;
    lex_directives(spliced.text, directives);
    line_directives(spliced.text, directives);
    std::vector<size_t> line_ends;  // offsets of the original's newlines
    for (size_t at = original.find('\n'); at != std::string::npos; at = original.find('\n', at + 1))
      line_ends.push_back(at);
    std::set<size_t> done;
    std::map<std::pair<std::string, bool>, std::optional<fs::path>> found_as;
    const std::string display = display_path(file.string());
    for (const auto& directive : directives) {
      if (!done.insert(directive.at).second) continue;
      auto [it, fresh] =
          found_as.emplace(std::make_pair(directive.name, directive.angled), std::nullopt);
      if (fresh) it->second = find(directive.name, directive.angled, file.parent_path());
      const std::optional<fs::path>& found = it->second;
      if (!found) continue;  // clang reports it, or it is in the compiler's own directories
      if (problem(*found).empty()) {
        if (fresh) queue(*found);
        continue;
      }
      const size_t at = spliced.original(directive.at);
      const auto line = std::lower_bound(line_ends.begin(), line_ends.end(), at);
      const size_t line_begin = line == line_ends.begin() ? 0 : *std::prev(line) + 1;
      check(*found, SourceLoc{display, static_cast<int>(line - line_ends.begin()) + 1,
                              static_cast<int>(at - line_begin) + 1});
    }
  }

  Diagnostics& diagnostics_;
  fs::path cwd_;
  std::vector<fs::path> quote_, angled_, system_, forced_;
  std::set<fs::path> seen_;
  std::map<fs::path, std::string> problems_;
  std::deque<fs::path> pending_;
  std::uintmax_t bytes_ = 0;
  bool refused_ = false;
};

}  // namespace

std::string take(CXString text) {
  const char* chars = clang_getCString(text);
  std::string out = chars ? chars : "";
  clang_disposeString(text);
  return out;
}

std::vector<std::string> clang_arguments(const ClangOptions& options, Diagnostics& diagnostics) {
  std::vector<std::string> args = {"-x", "c++", TC_CLANG_STD, "-resource-dir",
                                   TC_CLANG_RESOURCE_DIR};
  if (!options.compile_db_dir.empty()) {
    for (auto& arg : compile_db_args(options.compile_db_dir, diagnostics)) args.push_back(arg);
  }
  args.insert(args.end(), options.args.begin(), options.args.end());
  return without_usr_include(args);
}

bool check_includes(const std::string& header, const std::vector<std::string>& args,
                    Diagnostics& diagnostics) {
  return IncludeScanner(args, diagnostics).run(header);
}

}  // namespace tcgen
