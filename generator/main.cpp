// tcgen: compiles tensorclass schemas into C++ headers.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "driver.h"
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
// builds depending on the header do not rerun).
void write_if_changed(const fs::path& path, const std::string& content) {
  if (read_file(path) == content) return;
  fs::create_directories(path.parent_path());
  const fs::path tmp = path.string() + ".tmp";
  std::ofstream(tmp, std::ios::binary) << content;
  fs::rename(tmp, path);
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

}  // namespace

int run(int argc, char** argv, std::vector<std::string>& schemas) {
  CLI::App app{"tcgen: generates typed C++ tensorclasses from YAML schemas"};
  std::string out_dir = ".", depfile, depfile_target, template_dir;
  bool check = false, dump = false;
  tcgen::CompileOptions options;
  app.add_option("schemas", schemas, "schema files (.yaml)")->required();
  app.add_option("-o,--output-dir", out_dir, "directory of the generated headers");
  app.add_flag("--check", check, "write nothing; exit 1 when an output is missing or differs");
  app.add_option("--depfile", depfile, "write a Make-style depfile");
  app.add_option("--depfile-target", depfile_target,
                 "target named in the depfile (default: the outputs)");
  app.add_option("-I,--include-dir", options.include_dirs,
                 "directory searched for included schemas (after the including file's own)");
  app.add_option("--template-dir", template_dir, "directory with templates overriding built-ins");
  app.add_flag("--dump-model", dump, "print the schema model in canonical text and exit");
  app.add_option("--error-limit", options.error_limit, "print at most N errors (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.set_version_flag("--version", std::string("tcgen ") + tcgen::kTcgenVersion);
  CLI11_PARSE(app, argc, argv);

  tcgen::Diagnostics template_problems;
  tcgen::Templates templates = tcgen::load_templates(template_dir, template_problems);
  if (template_problems.has_errors()) {
    template_problems.print(std::cerr);
    return 1;
  }
  tcgen::Compilation c = tcgen::compile(schemas, templates, options);
  if (c.diagnostics.has_errors()) {
    c.diagnostics.print(std::cerr);
    return 1;
  }
  if (dump) {
    std::cout << tcgen::dump_model(c.schemas);
    return 0;
  }
  if (check) return check_outputs(c, out_dir);
  for (const auto& output : c.outputs)
    write_if_changed(fs::path(out_dir) / output.file_name, output.content);
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
