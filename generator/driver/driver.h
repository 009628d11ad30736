#pragma once
// One tcgen run without the command line: read every schema (following includes), check, emit.
// Used by main.cpp and, in-process, by the tests. Also `tcgen import DIR`: a directory read into a
// schema, written as YAML once tcgen's own checks pass.

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "check/check.h"
#include "emit/languages.h"
#include "emit/templates.h"
#include "frontend/clang_reader.h"
#include "frontend/import_dir.h"
#include "frontend/import_package.h"
#include "frontend/import_safetensors.h"
#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

struct Compilation {
  std::vector<Schema> schemas;  ///< the requested files first, then included ones
  size_t requested = 0;         ///< how many of `schemas` were requested
  ClassIndex classes;
  /// One per requested schema (Python: one per module its classes name), then
  /// (CompileOptions::emit_includes) the same for each included schema that is not prebuilt;
  /// empty on error.
  std::vector<Output> outputs;
  std::vector<std::string> dependencies;  ///< every schema file read
  Diagnostics diagnostics;
};

/// How a run reads its inputs and what it emits.
struct CompileOptions {
  /// What a run writes (emit/languages.h): C++ headers by default.
  const OutputLanguage* language = &output_languages().front();
  LanguageOptions language_options;
  /// An `include:` is looked up beside the including file, then in each of these in order.
  std::vector<std::string> include_dirs;
  /// Searched after `include_dirs`; schemas found here have prebuilt headers (the package's
  /// shipped schemas), so they are read but never emitted.
  std::vector<std::string> prebuilt_dirs;
  /// Also emit the headers of included schemas, as protobuf_generate does for imports: a build
  /// then needs to list only the schemas it uses directly.
  bool emit_includes = false;
  /// Errors kept (and printed) at most; 0: all.
  int error_limit = kDefaultErrorLimit;
  /// How headers are parsed (the C++ front end).
  ClangOptions clang;
};

/// Reads, checks and (when there is no error) emits `schema_paths`. Headers (.h, .hpp, ...) are
/// read by the C++ front end with libclang; the annotated structs of headers they include are
/// read with them.
Compilation compile(const std::vector<std::string>& schema_paths, const Templates& templates,
                    const CompileOptions& options = {});
/// Same for schema text given in memory (tests); `display` names it in messages.
Compilation compile_text(const std::string& text, const std::string& display,
                         const Templates& templates);

/// Canonical text of the model (--dump-model): one line per schema, class and field.
std::string dump_model(const std::vector<Schema>& schemas);

/// True when `path` names a directory (then `tcgen import` reads it as a memmap directory).
bool is_directory_argument(const std::string& path);
/// True when `tcgen import` reads `path` as data rather than as an annotated header: a memmap
/// directory or an AOTInductor package (`.pt2`).
bool is_data_argument(const std::string& path);

/// `tcgen import DIR|PACKAGE... -o OUT`: writes `OUT/<directory name>.yaml` for each directory and
/// `OUT/<package stem>.yaml` for each package through `write(path, content)`, after checking every
/// schema with tcgen's own checks; nothing is written when any input fails. Diagnostics go to
/// `err`; returns the exit status.
int import_data(const std::vector<std::string>& sources, const std::string& out_dir,
                const ImportOptions& options, const Templates& templates,
                const std::function<void(const std::string&, const std::string&)>& write,
                std::ostream& err);

}  // namespace tcgen
