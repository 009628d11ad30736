// tcgen: compiles tensorclass schemas into C++ headers.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "check/compat.h"
#include "driver/driver.h"
#include "emit/yaml_writer.h"
#include "frontend/import_dir.h"
#include "version.h"

namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes through a temporary and a rename, and only when the content changes (keeps mtimes, so
// builds depending on the header do not rerun). True when it wrote.
bool write_if_changed(const fs::path& path, const std::string& content) {
  if (read_file(path) == content) return false;
  fs::create_directories(path.parent_path());
  // Named by the process: two tcgen runs may write the header of a schema both include.
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  std::ofstream(tmp, std::ios::binary) << content;
  fs::rename(tmp, path);
  return true;
}

// --check: every output must exist in `out_dir` with exactly this content.
int check_outputs(const tcgen::Compilation& c, const fs::path& out_dir) {
  int stale = 0;
  for (const auto& output : c.outputs) {
    const fs::path path = out_dir / output.file_name;
    if (read_file(path) != output.content) {
      std::cerr << path.generic_string() << ": out of date (rerun tcgen without --check)\n";
      ++stale;
    }
  }
  return stale ? 1 : 0;
}

// Make-style depfile: every output (or `target`, e.g. a build system's stamp file) depends on
// every schema read.
void write_depfile(const tcgen::Compilation& c, const fs::path& out_dir, const fs::path& depfile,
                   const std::string& target) {
  std::string text = target.empty() ? "" : target + " ";
  for (const auto& output : c.outputs) {
    if (!target.empty()) break;
    text += (out_dir / output.file_name).generic_string() + " ";
  }
  text += ":";
  for (const auto& dep : c.dependencies) text += " " + fs::absolute(dep).generic_string();
  write_if_changed(depfile, text + "\n");
}

// `tcgen import`: every schema read (the requested headers' and those of headers they include)
// written as YAML, only when all of them are free of errors.
int import_schemas(const tcgen::Compilation& c, const fs::path& out_dir) {
  std::map<std::string, std::string> written;  // YAML file name -> header
  for (const auto& schema : c.schemas) {
    auto [it, fresh] = written.emplace(tcgen::yaml_file_name(schema.path), schema.display_path);
    if (!fresh) {
      std::cerr << schema.display_path << ": error: its YAML schema '" << it->first
                << "' would overwrite the one of " << it->second << "\n";
      return 1;
    }
  }
  for (const auto& schema : c.schemas) {
    write_if_changed(out_dir / tcgen::yaml_file_name(schema.path),
                     tcgen::write_yaml_schema(schema));
  }
  return 0;
}

// `tcgen compat OLD NEW`: both schemas must be valid; the changes go to stdout, one per line.
int compat(const std::string& old_path, const std::string& new_path,
           const std::vector<tcgen::Audience>& audiences, const tcgen::Templates& templates,
           const tcgen::CompileOptions& options) {
  tcgen::Compilation before = tcgen::compile({old_path}, templates, options);
  tcgen::Compilation after = tcgen::compile({new_path}, templates, options);
  before.diagnostics.print(std::cerr);
  after.diagnostics.print(std::cerr);
  if (before.diagnostics.has_errors() || after.diagnostics.has_errors()) return 2;
  bool breaking = false;
  for (const auto& d : tcgen::compat_report(tcgen::compare_schemas(before.schemas, after.schemas),
                                            audiences, before.schemas, after.schemas)) {
    std::cout << tcgen::format_diagnostic(d) << "\n";
    breaking = breaking || d.severity == tcgen::Diagnostic::Severity::Error;
  }
  return breaking ? 1 : 0;
}

// Options of the C++ front end, on the main command and on `import`.
void add_clang_options(CLI::App& app, tcgen::ClangOptions& clang) {
  app.add_option("--clang-arg", clang.args,
                 "argument for clang when reading headers (--clang-arg=-Ipath, repeatable)");
  app.add_option("-p,--compile-commands", clang.compile_db_dir,
                 "directory of a compile_commands.json lending its flags to header parsing");
}

}  // namespace

int run(int argc, char** argv, std::vector<std::string>& schemas) {
  CLI::App app{"tcgen: generates typed C++ tensorclasses from YAML schemas"};
  std::string out_dir = ".", depfile, depfile_target, template_dir, changed_stamp;
  bool check = false, dump = false;
  tcgen::CompileOptions options;
  tcgen::ClangOptions& clang = options.clang;
  std::vector<std::string> headers;
  std::string import_dir = ".";
  app.add_option("schemas", schemas, "schema files (.yaml) or annotated C++ headers (.h, .hpp)");
  add_clang_options(app, clang);
  CLI::App* import = app.add_subcommand(
      "import",
      "write the YAML schema of annotated headers, of memmap directories' classes, of the "
      "inputs and outputs of AOTInductor packages (.pt2), or of safetensors files' tensors");
  import
      ->add_option("headers", headers,
                   "annotated C++ headers, tensorclass directories, .pt2 packages or "
                   ".safetensors files")
      ->required();
  import->add_option("-o,--output-dir", import_dir, "directory of the YAML schemas");
  tcgen::ImportOptions import_options;
  import->add_option("--namespace", import_options.cpp_namespace,
                     "C++ namespace of the classes imported from directories and packages");
  import->add_option("--class-name", import_options.class_name,
                     "packages and safetensors files: the top class (default: the file's "
                     "name in PascalCase)");
  import
      ->add_option("--in-keys", import_options.in_keys,
                   "packages: keys of the positional inputs, in order (dotted for nested keys)")
      ->delimiter(',');
  import
      ->add_option("--out-keys", import_options.out_keys,
                   "packages: keys of the outputs returned in a tuple, in order")
      ->delimiter(',');
  add_clang_options(*import, clang);
  std::string compat_old;
  std::string compat_new;
  std::vector<tcgen::Audience> audiences{tcgen::Audience::Data, tcgen::Audience::Cpp,
                                         tcgen::Audience::Python};
  CLI::App* compat_cmd = app.add_subcommand(
      "compat", "list the changes between two versions of a schema; exit 1 when one breaks");
  compat_cmd->add_option("old", compat_old, "the old schema")->required();
  compat_cmd->add_option("new", compat_new, "the new schema")->required();
  const std::map<std::string, tcgen::Audience> audience_names{{"data", tcgen::Audience::Data},
                                                              {"cpp", tcgen::Audience::Cpp},
                                                              {"python", tcgen::Audience::Python}};
  compat_cmd
      ->add_option("--for", audiences,
                   "what a breaking change must break to fail the check: data, cpp, python "
                   "(repeatable; default all three)")
      ->transform(CLI::CheckedTransformer(audience_names, CLI::ignore_case));
  add_clang_options(*compat_cmd, clang);
  app.add_option("-o,--output-dir", out_dir, "directory of the generated headers");
  app.add_flag("--check", check, "write nothing; exit 1 when an output is missing or differs");
  app.add_option("--depfile", depfile, "write a Make-style depfile");
  app.add_option("--depfile-target", depfile_target,
                 "target named in the depfile (default: the outputs)");
  app.add_option("--changed-stamp", changed_stamp,
                 "file rewritten whenever an output's content changes (a build makes the sources "
                 "that may include any output depend on it: --with-includes writes headers it "
                 "cannot declare)");
  app.add_option("-I,--include-dir", options.include_dirs,
                 "directory searched for included schemas (after the including file's own)");
  app.add_option("--prebuilt-dir", options.prebuilt_dirs,
                 "directory searched for included schemas after the -I ones, whose headers are "
                 "prebuilt (never written with --with-includes)");
  app.add_flag("--with-includes", options.emit_includes,
               "also write the headers of included schemas, except prebuilt ones");
  std::vector<std::string> language_names;
  std::string language_help = "what to write:";
  for (const auto& language : tcgen::output_languages()) {
    const bool last = &language == &tcgen::output_languages().back();
    language_help += std::string(language_names.empty() ? " "
                                 : last                 ? " or "
                                                        : ", ") +
                     language.name + " (" + language.description + ")";
    language_names.emplace_back(language.name);
  }
  app.add_option_function<std::string>(
         "--lang",
         [&](const std::string& name) { options.language = &tcgen::output_language(name); },
         language_help)
      ->transform(CLI::IsMember(language_names, CLI::ignore_case));
  const std::map<std::string, tcgen::PythonBase> python_bases{
      {"TensorClass", tcgen::PythonBase::TensorClass},
      {"TypedTensorDict", tcgen::PythonBase::TypedTensorDict}};
  app.add_option("--python-base", options.language_options.python_base,
                 "with --lang python, what the classes derive from: TensorClass (the default) or "
                 "TypedTensorDict (declared keys: no defaults, optional fields NotRequired)")
      ->transform(CLI::CheckedTransformer(python_bases, CLI::ignore_case));
  app.add_option("--template-dir", template_dir, "directory with templates overriding built-ins");
  app.add_flag("--dump-model", dump, "print the schema model in canonical text and exit");
  app.add_option("--error-limit", options.error_limit, "print at most N errors (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.set_version_flag("--version", std::string("tcgen ") + tcgen::kTcgenVersion);
  CLI11_PARSE(app, argc, argv);
  if (!import->parsed() && !compat_cmd->parsed() && schemas.empty()) {
    std::cerr << "tcgen: no schema given (tcgen --help)\n";
    return 2;
  }

  tcgen::Diagnostics template_problems;
  tcgen::Templates templates = tcgen::load_templates(template_dir, template_problems);
  if (template_problems.has_errors()) {
    template_problems.print(std::cerr);
    return 1;
  }
  if (compat_cmd->parsed()) {
    return compat(compat_old, compat_new, audiences, templates, options);
  }
  if (import->parsed() && tcgen::is_data_argument(headers.front())) {
    return tcgen::import_data(headers, import_dir, import_options, templates, write_if_changed,
                              std::cerr);
  }
  tcgen::Compilation c = tcgen::compile(import->parsed() ? headers : schemas, templates, options);
  c.diagnostics.print(std::cerr);  // errors, or warnings of a run that goes on
  if (c.diagnostics.has_errors()) return 1;
  if (import->parsed()) return import_schemas(c, import_dir);
  if (dump) {
    std::cout << tcgen::dump_model(c.schemas);
    return 0;
  }
  if (check) return check_outputs(c, out_dir);
  bool changed = false;
  for (const auto& output : c.outputs)
    changed = write_if_changed(fs::path(out_dir) / output.file_name, output.content) || changed;
  if (!changed_stamp.empty() && (changed || !fs::exists(changed_stamp))) {
    std::ofstream(changed_stamp, std::ios::trunc) << "";
  }
  if (!depfile.empty()) write_depfile(c, out_dir, depfile, depfile_target);
  return 0;
}

// Any exception that escapes (a bug, or a file-system error while writing) is one diagnostic line
// naming the schema and exit status 1, never std::terminate.
int main(int argc, char** argv) {
  std::vector<std::string> schemas;
  try {
    return run(argc, argv, schemas);
  } catch (const std::exception& e) {
    std::cerr << (schemas.empty() ? "tcgen" : schemas.front()) << ": error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "tcgen: error: unknown exception\n";
  }
  return 1;
}
