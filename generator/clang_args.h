#pragma once
// The command line libclang parses schema headers with (part of the C++ front end).

#include <clang-c/CXString.h>

#include <string>
#include <vector>

#include "clang_reader.h"

namespace tcgen {

/// The text of a libclang string, which it disposes.
std::string take(CXString text);

/// C++17, libclang's own builtin headers (-resource-dir), the flags of the compilation database's
/// first command (with the libstdc++ directories of the GCC that command names), then
/// `options.args`; `/usr/include` given as -I or -isystem is dropped in any spelling.
std::vector<std::string> clang_arguments(const ClangOptions& options, Diagnostics& diagnostics);

}  // namespace tcgen
