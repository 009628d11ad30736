#include "clang_args.h"

#include <clang-c/CXCompilationDatabase.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "names.h"

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
  CXCompilationDatabase_Error error = CXCompilationDatabase_NoError;
  CXCompilationDatabase db = clang_CompilationDatabase_fromDirectory(dir.c_str(), &error);
  std::vector<std::string> out;
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

}  // namespace

std::string take(CXString text) {
  const char* chars = clang_getCString(text);
  std::string out = chars ? chars : "";
  clang_disposeString(text);
  return out;
}

std::vector<std::string> clang_arguments(const ClangOptions& options, Diagnostics& diagnostics) {
  std::vector<std::string> args = {"-x", "c++", "-std=c++17", "-resource-dir",
                                   TC_CLANG_RESOURCE_DIR};
  if (!options.compile_db_dir.empty()) {
    for (auto& arg : compile_db_args(options.compile_db_dir, diagnostics)) args.push_back(arg);
  }
  args.insert(args.end(), options.args.begin(), options.args.end());
  return without_usr_include(args);
}

}  // namespace tcgen
