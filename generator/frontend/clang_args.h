#pragma once
// The command line libclang parses schema headers with (part of the C++ front end).

#include <clang-c/CXString.h>

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/clang_reader.h"

namespace tcgen {

/// The text of a libclang string, which it disposes.
std::string take(CXString text);

/// C++17, libclang's own builtin headers (-resource-dir), the flags of the compilation database's
/// first command (with the libstdc++ directories of the GCC that command names), then
/// `options.args`; `/usr/include` given as -I or -isystem is dropped in any spelling.
std::vector<std::string> clang_arguments(const ClangOptions& options, Diagnostics& diagnostics);

/// Largest file check_includes() lets libclang open (the bound of schema files).
constexpr std::uintmax_t kMaxHeaderBytes = std::uintmax_t{16} << 20;
/// Largest compile_commands.json read for `-p` (a large project's runs to tens of MiB).
constexpr std::uintmax_t kMaxCompileDbBytes = std::uintmax_t{256} << 20;
/// Most files check_includes() reads, and most bytes in all; past either, the rest is not scanned.
constexpr size_t kMaxScannedHeaders = 1000;
constexpr std::uintmax_t kMaxScannedBytes = std::uintmax_t{64} << 20;

/// Refuses what libclang would open and never finish reading, before it opens anything: libclang
/// blocks forever opening a FIFO and reads a device such as /dev/zero until memory runs out, and
/// its C API cannot filter the files it opens. `header`'s `#include`, `#include_next` and
/// `#import` directives (with their `"..."` or `<...>` names, comments and line splices as clang
/// reads them, also in code that `#if` leaves out), and `-include` / `-imacros` of `args`, are
/// looked up as clang would (beside the including file, then the -iquote, -I, -isystem and
/// -idirafter directories of `args`, relative to its -working-directory); a file found that is
/// not a regular file, or is larger than a schema may be (16 MiB), is an error at the directive.
/// Files found are scanned in turn, at most kMaxScannedHeaders of them and kMaxScannedBytes in
/// all. Not seen: an include whose name comes from a macro (`#include HEADER`), files in the
/// compiler's own directories (libstdc++, /usr/include, the resource directory), and a file
/// replaced between this check and libclang's open. False when something was refused.
bool check_includes(const std::string& header, const std::vector<std::string>& args,
                    Diagnostics& diagnostics);

}  // namespace tcgen
