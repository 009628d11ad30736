// tdtool: inspect memmap directories, .tdz archives and .safetensors files (ls), print their
// values (dump --json), check them (verify), convert between them (convert).
#include <CLI/CLI.hpp>

#include <iostream>

#include "commands.h"
#include "tensordict/errors.h"

int main(int argc, char** argv) {
  const char* kInput = "memmap directory, .tdz archive, .safetensors file or store URL";
  CLI::App app{"tdtool: inspect TensorDict memmap directories (Python tensordict's layout)"};
  app.set_version_flag("--version", std::string("tdtool ") + TDTOOL_VERSION);
  app.require_subcommand(1);

  std::string dir;
  std::vector<std::string> keys;
  bool json = false;
  auto* ls =
      app.add_subcommand("ls", "Print the tree: keys, shapes, dtypes, bytes, non-tensor values");
  ls->add_option("DIR", dir, kInput)->required();
  auto* dump = app.add_subcommand("dump", "Print values");
  dump->add_flag("--json", json, "as JSON (the only format)")->required();
  dump->add_option("DIR", dir, kInput)->required();
  dump->add_option("KEY", keys, "keys to print (nested keys dot-separated); all when omitted");
  auto* verify =
      app.add_subcommand("verify", "Check every file against meta.json (exit 1 on problems)");
  verify->add_option("DIR", dir, kInput)->required();
  std::string target;
  auto* convert = app.add_subcommand(
      "convert",
      "Copy a TensorDict between a directory, a .tdz archive, a .safetensors file and a store");
  convert->add_option("SRC", dir, kInput)->required();
  convert
      ->add_option("DST", target,
                   "a store URL (redis://, unix://), else by its suffix: .tdz, .safetensors, else "
                   "a directory")
      ->required();
  std::string schema, class_name;
#ifdef TDTOOL_SCHEMA
  verify->add_option("--schema", schema,
                     "also check the directory against a class of this schema (YAML)");
  verify->add_option("--class", class_name, "the class of --schema (default: the directory's)");
#endif

  CLI11_PARSE(app, argc, argv);
  try {
    if (ls->parsed()) return tdtool::run_ls(dir, std::cout);
    if (dump->parsed()) return tdtool::run_dump(dir, keys, std::cout);
    if (convert->parsed()) return tdtool::run_convert(dir, target, std::cout);
#ifdef TDTOOL_SCHEMA
    if (!schema.empty())
      return tdtool::run_verify_schema(dir, schema, class_name, std::cout, std::cerr);
#endif
    return tdtool::run_verify(dir, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "tdtool: error: " << e.what() << "\n";
    return 2;
  }
}
