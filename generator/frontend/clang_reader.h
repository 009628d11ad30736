#pragma once
// C++ front end: annotated structs (runtime/include/tensordict/annotate.h) read through libclang
// into the same Schema the YAML front end produces. One header gives one Schema; annotated structs
// of headers it includes come back as further Schemas, named in the first one's `includes`.

#include <string>
#include <vector>

#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// How headers are parsed: extra compiler arguments (`-I`, `-D`, `-std=`), and optionally a
/// directory holding a compile_commands.json whose first command lends its flags.
struct ClangOptions {
  std::vector<std::string> args;
  std::string compile_db_dir;
};

/// True for the extensions the C++ front end reads: .h, .hh, .hpp, .hxx.
bool is_cpp_header(const std::string& path);
/// False when tcgen was built without libclang (headers are then reported as an error).
bool have_libclang();

/// Reads `path`: its own annotated structs first, then one Schema per other header of the
/// translation unit that declares annotated structs. Errors (clang's own, unmappable types, bad
/// annotations) go to `diagnostics`, all of them.
std::vector<Schema> read_header_schemas(const std::string& path, const ClangOptions& options,
                                        Diagnostics& diagnostics);

}  // namespace tcgen
