#include "driver/driver.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include "check/inherit.h"
#include "emit/yaml_writer.h"
#include "frontend/type_parser.h"
#include "frontend/yaml_reader.h"
#include "model/output_names.h"

namespace tcgen {

namespace fs = std::filesystem;
namespace {

// Runs one step for the file `display`; an exception escaping it (a bug, or an I/O error) becomes
// that file's diagnostic instead of ending the run.
template <class Step>
void guarded(Diagnostics& diagnostics, const std::string& display, Step step) {
  try {
    step();
  } catch (const std::exception& e) {
    diagnostics.error(SourceLoc{display, 0, 0}, std::string("internal error: ") + e.what());
  }
}

// Whether `path` lies in `dir` (both resolved, symlinks included).
bool is_under(const std::string& path, const std::string& dir) {
  std::error_code file_ec, dir_ec;
  const auto file = std::filesystem::weakly_canonical(path, file_ec);
  const auto root = std::filesystem::weakly_canonical(dir, dir_ec);
  if (file_ec || dir_ec) return false;
  return std::mismatch(root.begin(), root.end(), file.begin(), file.end()).first == root.end();
}

// Emits the requested schemas and, with `options.emit_includes`, the included ones that are not
// prebuilt.
void check_and_emit(Compilation& c, const Templates& templates, const CompileOptions& options) {
  resolve_bases(c.schemas, c.diagnostics);
  c.classes = check_schemas(c.schemas, c.diagnostics);
  if (c.diagnostics.has_errors()) return;
  auto prebuilt = [&](const Schema& s) {
    return std::any_of(options.prebuilt_dirs.begin(), options.prebuilt_dirs.end(),
                       [&](const std::string& dir) { return is_under(s.path, dir); });
  };
  std::vector<const Schema*> emitted;
  for (size_t i = 0; i < c.schemas.size(); ++i) {
    if (i < c.requested || (options.emit_includes && !prebuilt(c.schemas[i])))
      emitted.push_back(&c.schemas[i]);
  }
  const EmitRequest request{c.schemas, emitted, c.classes, templates, options.language_options};
  c.outputs = options.language->emit(request, c.diagnostics);
  if (c.diagnostics.has_errors()) c.outputs.clear();
}

// Where an include is: beside the including file, else in the first include dir that has it.
std::string locate(const Include& include, const std::vector<std::string>& include_dirs) {
  std::error_code ec;  // an unreadable path is reported by the caller
  if (std::filesystem::exists(include.path, ec)) return include.path;
  for (const auto& dir : include_dirs) {
    const auto candidate = (std::filesystem::path(dir) / include.name).lexically_normal();
    if (std::filesystem::exists(candidate, ec)) return candidate.string();
  }
  return include.path;
}

// Identity of a schema file for "read once"; its lexical spelling when it cannot be resolved
// (a symlink loop), in which case reading it reports the problem.
std::string file_identity(const std::string& path) {
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  return ec ? std::filesystem::path(path).lexically_normal().string() : canonical.string();
}

// Reads included files (transitively) after the requested ones; each file once.
void read_includes(Compilation& c, const std::vector<std::string>& include_dirs) {
  std::set<std::string> read;
  for (const auto& s : c.schemas) read.insert(file_identity(s.path));
  for (size_t i = 0; i < c.schemas.size(); ++i) {
    const std::vector<Include> includes = c.schemas[i].includes;
    for (const auto& include : includes) {
      const std::string path = locate(include, include_dirs);
      if (!read.insert(file_identity(path)).second) continue;
      const std::string problem = schema_file_problem(path);
      if (!problem.empty()) {
        c.diagnostics.error(include.loc, "included schema '" + include.path + "' " + problem);
        continue;
      }
      const std::string display = display_path(path);
      guarded(c.diagnostics, display,
              [&] { c.schemas.push_back(read_yaml_schema(path, display, c.diagnostics)); });
      c.dependencies.push_back(path);
    }
  }
}

// Schemas of headers that requested headers include, each once and not when requested itself.
void add_included_headers(Compilation& c, std::vector<Schema> schemas) {
  std::set<std::string> read;
  for (const auto& s : c.schemas) read.insert(std::filesystem::weakly_canonical(s.path).string());
  for (auto& schema : schemas) {
    if (!read.insert(std::filesystem::weakly_canonical(schema.path).string()).second) continue;
    c.dependencies.push_back(schema.path);
    c.schemas.push_back(std::move(schema));
  }
}

}  // namespace

Compilation compile(const std::vector<std::string>& schema_paths, const Templates& templates,
                    const CompileOptions& options) {
  Compilation c;
  c.diagnostics = Diagnostics(options.error_limit);
  std::vector<Schema> from_included_headers;
  for (const auto& path : schema_paths) {
    const std::string display = display_path(path);
    guarded(c.diagnostics, display, [&] {
      if (!is_cpp_header(path)) {
        c.schemas.push_back(read_yaml_schema(path, display, c.diagnostics));
        return;
      }
      // Checked before libclang opens it: a FIFO would block it, a huge file be read whole.
      const std::string problem = schema_file_problem(path);
      if (!problem.empty()) {
        c.diagnostics.error(SourceLoc{display, 0, 0}, "schema file " + problem);
        return;
      }
      std::vector<Schema> read = read_header_schemas(path, options.clang, c.diagnostics);
      if (read.empty()) return;
      c.schemas.push_back(std::move(read.front()));
      for (size_t i = 1; i < read.size(); ++i) from_included_headers.push_back(std::move(read[i]));
    });
    c.dependencies.push_back(path);
  }
  if (c.diagnostics.has_errors() && c.schemas.size() < schema_paths.size()) return c;
  c.requested = c.schemas.size();
  const std::string first = schema_paths.empty() ? "tcgen" : display_path(schema_paths.front());
  guarded(c.diagnostics, first, [&] {
    add_included_headers(c, std::move(from_included_headers));
    std::vector<std::string> dirs = options.include_dirs;
    dirs.insert(dirs.end(), options.prebuilt_dirs.begin(), options.prebuilt_dirs.end());
    read_includes(c, dirs);
  });
  guarded(c.diagnostics, first, [&] { check_and_emit(c, templates, options); });
  if (c.diagnostics.has_errors()) c.outputs.clear();
  return c;
}

Compilation compile_text(const std::string& text, const std::string& display,
                         const Templates& templates) {
  Compilation c;
  guarded(c.diagnostics, display, [&] {
    c.schemas.push_back(read_yaml_text(text, display, c.diagnostics));
    c.requested = 1;
    check_and_emit(c, templates, {});
  });
  if (c.diagnostics.has_errors()) c.outputs.clear();
  return c;
}

std::string dump_model(const std::vector<Schema>& schemas) {
  std::ostringstream os;
  for (const auto& schema : schemas) {
    os << "schema " << schema.display_path << " namespace=" << schema.cpp_namespace;
    if (schema.version) os << " version=" << schema.version;
    os << "\n";
    for (const auto& cls : schema.classes) {
      os << "  class " << cls.name << " python=" << python_type_string(cls);
      if (!cls.base.empty()) os << " extends=" << cls.base;
      os << " options=[";
      for (const auto& option : option_names(cls.options)) os << " " << option;
      os << " ] batch_dims=[";
      for (const auto& d : cls.batch_dims) os << " " << d;
      os << " ]\n";
      for (const auto& m : cls.methods) os << "    method " << m << "\n";
      for (const auto& f : cls.fields) {
        os << "    field " << f.name << ": " << type_to_string(f.type);
        if (f.default_value) os << " = " << f.default_value->dump();
        for (const auto& old : f.renamed_from) os << " renamed_from=" << old;
        if (f.deprecated) os << " deprecated=\"" << *f.deprecated << "\"";
        os << "\n";
      }
    }
  }
  return os.str();
}

namespace {

// "runs/ep0/" -> "runs/ep0": a trailing separator would leave the directory's name empty.
std::string trim_separators(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

bool is_directory_argument(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// A file `tcgen import` reads by its name: an AOTInductor package or a safetensors file.
bool is_file_argument(const std::string& path) {
  return is_package_argument(path) || is_safetensors_argument(path);
}

bool is_data_argument(const std::string& path) {
  return is_directory_argument(path) || is_file_argument(path);
}

int import_data(const std::vector<std::string>& sources, const std::string& out_dir,
                const ImportOptions& options, const Templates& templates,
                const std::function<void(const std::string&, const std::string&)>& write,
                std::ostream& err) {
  std::map<std::string, std::string> outputs;  // YAML file name -> its text
  std::map<std::string, std::string> source;   // YAML file name -> the directory or package
  bool failed = false;
  for (const auto& given : sources) {
    const bool file_argument = is_file_argument(given);
    const std::string path = file_argument ? given : trim_separators(given);
    const std::string display = display_path(path);
    Diagnostics diagnostics;
    Schema schema;
    if (is_package_argument(path)) {
      schema = import_package(path, display, options, diagnostics);
    } else if (is_safetensors_argument(path)) {
      schema = import_safetensors(path, display, options, diagnostics);
    } else if (is_directory_argument(path)) {
      schema = import_directory(path, display, options, diagnostics);
    } else {
      diagnostics.error(SourceLoc{display, 0, 0},
                        "neither a directory, a .pt2 package nor a .safetensors file (tcgen "
                        "import takes memmap directories and such files, or annotated headers, "
                        "not both in one run)");
    }
    const fs::path absolute = fs::absolute(path).lexically_normal();
    const std::string file =
        (file_argument ? absolute.stem() : absolute.filename()).string() + ".yaml";
    std::string yaml;
    if (!diagnostics.has_errors()) {
      yaml = write_yaml_schema(schema);
      // What is written must pass tcgen's own checks (names, reserved words, ...).
      Compilation check = compile_text(yaml, file + " (imported from " + display + ")", templates);
      for (const auto& d : check.diagnostics.all()) {
        if (d.severity == Diagnostic::Severity::Error) diagnostics.error(d.loc, d.message);
        if (d.severity == Diagnostic::Severity::Warning) diagnostics.warning(d.loc, d.message);
        if (d.severity == Diagnostic::Severity::Note) diagnostics.note(d.loc, d.message);
      }
    }
    diagnostics.print(err);
    if (diagnostics.has_errors()) {
      failed = true;
      continue;
    }
    const auto [it, fresh] = source.emplace(file, display);
    if (!fresh) {
      err << display << ": error: its YAML schema '" << file << "' would overwrite the one of "
          << it->second << "\n";
      failed = true;
      continue;
    }
    outputs.emplace(file, std::move(yaml));
  }
  if (failed) return 1;
  for (const auto& [file, yaml] : outputs) write((fs::path(out_dir) / file).string(), yaml);
  return 0;
}

}  // namespace tcgen
