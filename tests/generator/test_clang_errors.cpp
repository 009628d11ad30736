// Errors of the C++ front end, each with its exact message and location, all of them in one run;
// `tcgen import`, the command line, a header that includes libtorch, compile_commands.json.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <sstream>

#include <sys/wait.h>

#include "clang_support.h"
#include "skip.h"

using namespace tcgen_test;

namespace {

struct BadHeader {
  const char* what;
  const char* snippet;  ///< bad.h from line 2 (line 1 includes prelude.h)
  const char* errors;
};

// clang-format off
const BadHeader kBadHeaders[] = {
  {"unmappable type", "struct TC_CLASS() A {\n  std::map<int, int> m;\n};\n",
   "bad.h:3:22: error: field 'm': C++ type 'std::map<int, int>' has no schema type (use at::Tensor, std::string, int64_t, int, double, float, bool, std::optional<T>, std::vector<T>, tensordict::Json or a TC_CLASS struct)\n"},
  {"unsigned", "struct TC_CLASS() A {\n  unsigned count;\n};\n",
   "bad.h:3:12: error: field 'count': C++ type 'unsigned int' has no schema type (use at::Tensor, std::string, int64_t, int, double, float, bool, std::optional<T>, std::vector<T>, tensordict::Json or a TC_CLASS struct)\n"},
  {"pointer", "struct TC_CLASS() A {\n  at::Tensor* p;\n};\n",
   "bad.h:3:15: error: field 'p': C++ type 'at::Tensor *' has no schema type (use at::Tensor, std::string, int64_t, int, double, float, bool, std::optional<T>, std::vector<T>, tensordict::Json or a TC_CLASS struct)\n"},
  {"list of unmappable", "struct TC_CLASS() A {\n  std::vector<char> v;\n};\n",
   "bad.h:3:21: error: field 'v': C++ type 'std::vector<char>' has no schema type (use at::Tensor, std::string, int64_t, int, double, float, bool, std::optional<T>, std::vector<T>, tensordict::Json or a TC_CLASS struct)\n"},
  {"unknown field key", "struct TC_CLASS() A {\n  TC_FIELD(\"dtyp=float32\") at::Tensor x;\n};\n",
   "bad.h:3:39: error: unknown key 'dtyp' in TC_FIELD (allowed: dtype, shape, default, doc, renamed_from, deprecated)\n"},
  {"entry without =", "struct TC_CLASS() A {\n  TC_FIELD(\"float32\") at::Tensor x;\n};\n",
   "bad.h:3:34: error: 'float32' in TC_FIELD is not key=value\n"},
  {"duplicate key", "struct TC_CLASS() A {\n  TC_FIELD(\"dtype=float32\", \"dtype=int64\") at::Tensor x;\n};\n",
   "bad.h:3:55: error: duplicate key 'dtype' in TC_FIELD\n"},
  {"unknown dtype", "struct TC_CLASS() A {\n  TC_FIELD(\"dtype=flot32\") at::Tensor x;\n};\n",
   "bad.h:3:39: error: field 'x': unknown dtype 'flot32' (expected one of bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)\n"},
  {"malformed shape", "struct TC_CLASS() A {\n  TC_FIELD(\"shape=(N, 3\") at::Tensor x;\n};\n",
   "bad.h:3:38: error: field 'x': malformed type 'tensor[(N, 3]': expected ')'\n"},
  {"dtype of a non-tensor", "struct TC_CLASS() A {\n  TC_FIELD(\"dtype=float32\") int64_t n;\n};\n",
   "bad.h:3:37: error: field 'n': dtype and shape apply to tensors, not int\n"},
  {"default not JSON", "struct TC_CLASS() A {\n  TC_FIELD(\"default=unnamed\") std::string s;\n};\n",
   "bad.h:3:43: error: field 's': default 'unnamed' is not a JSON value (strings are quoted: \"text\")\n"},
  {"default of another type", "struct TC_CLASS() A {\n  TC_FIELD(\"default=1.5\") int64_t n;\n};\n",
   "bad.h:3:35: error: default 1.5 of field 'n' does not fit its type 'int'\n"},
  {"default member initializer", "struct TC_CLASS() A {\n  int64_t n = 3;\n};\n",
   "bad.h:3:11: error: field 'n': default member initializers are not read; write the default as "
   "TC_FIELD(\"default=...\")\n"},
  {"method with a body", "struct TC_CLASS() A {\n  at::Tensor x;\n  int f() const { return 1; }\n};\n",
   "bad.h:4:7: error: method 'f' has a body; declare hand-written members only and define them in a "
   ".cpp that includes the generated header\n"},
  {"base class", "struct Base {\n  int b;\n};\nstruct TC_CLASS() A : Base {\n  at::Tensor x;\n};\n",
   "bad.h:5:19: error: tensorclass 'A' has a base class; list every field in the struct itself\n"},
  {"missing include, then more", "#include \"missing.h\"\nstruct TC_CLASS() A {\n  unsigned x;\n};\n",
   "bad.h:2:10: error: 'missing.h' file not found\n"
   "bad.h:4:12: error: field 'x': C++ type 'unsigned int' has no schema type (use at::Tensor, "
   "std::string, int64_t, int, double, float, bool, std::optional<T>, std::vector<T>, "
   "tensordict::Json or a TC_CLASS struct)\n"},
  {"unknown option", "struct TC_CLASS(\"options=frozn\") A {\n  at::Tensor x;\n};\n",
   "bad.h:2:34: error: unknown option 'frozn' (allowed: frozen, autocast, nocast, tensor_only, shadow)\n"},
  {"option twice", "struct TC_CLASS(\"options=frozen,frozen\") A {\n  at::Tensor x;\n};\n",
   "bad.h:2:42: error: option 'frozen' given twice\n"},
  {"unknown class key", "struct TC_CLASS(\"option=frozen\") A {\n  at::Tensor x;\n};\n",
   "bad.h:2:34: error: unknown key 'option' in TC_CLASS (allowed: options, python, batch_dims, cpp_includes, version)\n"},
  {"bad python name", "struct TC_CLASS(\"python=pkg..A\") A {\n  at::Tensor x;\n};\n",
   "bad.h:2:34: error: python name 'pkg..A' is not a dotted name like pkg.module.Class\n"},
  {"reserved field name", "struct TC_CLASS() A {\n  at::Tensor batch_size;\n};\n",
   "bad.h:3:14: error: field name 'batch_size' is reserved by TensorDict (use option 'shadow' to allow it)\n"},
  {"clang's own error", "struct TC_CLASS() A {\n  Undeclared x;\n};\n",
   "bad.h:3:3: error: unknown type name 'Undeclared'\n"},
  {"not at namespace scope", "struct Outer {\n  struct TC_CLASS() A {\n    at::Tensor x;\n  };\n};\n",
   "bad.h:3:21: error: tensorclass 'A' must be declared at namespace scope\n"},
  {"no annotated struct", "struct A {\n  at::Tensor x;\n};\n",
   "bad.h:1:1: error: no struct of this header is annotated with TC_CLASS\n"},
  {"namespace inside a library's",
   "namespace at::mine {\nstruct TC_CLASS() A {\n  ::at::Tensor x;\n};\n}  // namespace at::mine\n",
   "bad.h:3:19: error: namespace 'at::mine' is inside 'at', a namespace of the libraries the generated code uses\n"},
  {"two namespaces", "namespace a {\nstruct TC_CLASS() A {\n  at::Tensor x;\n};\n}  // namespace a\n"
   "namespace b {\nstruct TC_CLASS() B {\n  at::Tensor y;\n};\n}  // namespace b\n",
   "bad.h:8:19: error: tensorclass 'B' is in namespace 'b', but 'A' of the same header is in 'a' (one namespace per header)\n"},
  {"every error at once", "struct TC_CLASS(\"options=frozn\") A {\n  unsigned a;\n  TC_FIELD(\"dtype=x\") at::Tensor b;\n  Undeclared c;\n};\n",
   // clang's errors come first, then tcgen's, in declaration order.
   "bad.h:5:3: error: unknown type name 'Undeclared'\n"
   "bad.h:2:34: error: unknown option 'frozn' (allowed: frozen, autocast, nocast, tensor_only, shadow)\n"
   "bad.h:3:12: error: field 'a': C++ type 'unsigned int' has no schema type (use at::Tensor, std::string, int64_t, int, double, float, bool, "
   "std::optional<T>, std::vector<T>, tensordict::Json or a TC_CLASS struct)\n"
   "bad.h:4:34: error: field 'b': unknown dtype 'x' (expected one of bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)\n"},
};
// clang-format on

int run(const std::string& args) {
  const std::string command = std::string(TCGEN_EXE) + " " + args + " 2>/dev/null >/dev/null";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string runtime_include() {
  return "--clang-arg=-I" + (source_dir() / "runtime/include").string();
}

}  // namespace

TEST_CASE("clang: each error with its exact message and location", "[generator][clang]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  for (const auto& bad : kBadHeaders) {
    INFO(bad.what << "\n" << bad.snippet);
    tcgen::Compilation c = compile_snippet(bad.snippet);
    CHECK(errors_of(c) == bad.errors);
    CHECK(c.outputs.empty());
  }
}

TEST_CASE("clang: tcgen HEADER exits 1 and writes nothing on errors", "[generator][clang][cli]") {
  const fs::path dir = scratch("cli_errors");
  write_text(dir / "good.h",
             "#include \"prelude.h\"\nstruct TC_CLASS() A {\n  at::Tensor x;\n};\n");
  write_text(dir / "bad.h", "#include \"prelude.h\"\nstruct TC_CLASS() B {\n  unsigned y;\n};\n");
  const std::string out = (dir / "out").string();
  CHECK(run((dir / "good.h").string() + " " + (dir / "bad.h").string() + " -o " + out + " " +
            runtime_include()) == 1);
  CHECK_FALSE(fs::exists(dir / "out"));
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  CHECK(run((dir / "good.h").string() + " -o " + out + " " + runtime_include()) == 0);
  CHECK(fs::exists(dir / "out" / "good.h"));
}

TEST_CASE("import: tcgen import writes YAML that generates the identical header",
          "[generator][clang][import]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  const fs::path dir = scratch("import");
  for (const char* name : {"types.h", "outer.h", "inner.h"})
    fs::copy_file(kFixtures / name, dir / name);
  ScopedCwd cwd(dir);
  REQUIRE(run("import types.h outer.h -o yaml " + runtime_include()) == 0);
  // outer.h's included header comes along, named by outer.yaml's include.
  for (const char* name : {"types.yaml", "outer.yaml", "inner.yaml"})
    CHECK(fs::exists(fs::path("yaml") / name));
  CHECK(read_text("yaml/outer.yaml").find("include: [inner.yaml]") != std::string::npos);
  REQUIRE(run("types.h outer.h -o from_header " + runtime_include()) == 0);
  {
    ScopedCwd in_yaml(dir / "yaml");
    REQUIRE(run("types.yaml outer.yaml -o ../from_yaml") == 0);
  }
  for (const char* name : {"types.h", "outer.h"}) {
    INFO(name);
    std::string from_header = read_text(fs::path("from_header") / name);
    std::string from_yaml = read_text(fs::path("from_yaml") / name);
    REQUIRE_FALSE(from_header.empty());
    // Only the stamp names the source.
    const std::string stem = fs::path(name).stem().string();
    const auto stamp = from_yaml.find(stem + ".yaml");
    REQUIRE(stamp != std::string::npos);
    from_yaml.replace(stamp, stem.size() + 5, stem + ".h");
    CHECK(from_header == from_yaml);
  }
}

TEST_CASE("import: nothing is written when a header has errors", "[generator][clang][import]") {
  const fs::path dir = scratch("import_errors");
  write_text(dir / "bad.h", "#include \"prelude.h\"\nstruct TC_CLASS() B {\n  unsigned y;\n};\n");
  CHECK(run("import " + (dir / "bad.h").string() + " -o " + (dir / "yaml").string() + " " +
            runtime_include()) == 1);
  CHECK_FALSE(fs::exists(dir / "yaml"));
}

TEST_CASE("import: two headers of one file name are refused", "[generator][clang][import]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  const fs::path dir = scratch("import_clash");
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  write_text(
      dir / "b" / "x.h",
      "#pragma once\n#include \"../prelude.h\"\nstruct TC_CLASS() B {\n  at::Tensor t;\n};\n");
  write_text(dir / "a" / "x.h", "#include \"../b/x.h\"\nstruct TC_CLASS() A {\n  B b;\n};\n");
  ScopedCwd cwd(dir);
  // Both would be written as yaml/x.yaml, and both generate x.h (a's would include itself).
  CHECK(run("import a/x.h -o yaml " + runtime_include()) == 1);
  CHECK_FALSE(fs::exists(dir / "yaml"));
  CHECK(run("a/x.h -o out " + runtime_include()) == 1);
  CHECK_FALSE(fs::exists(dir / "out"));
}

TEST_CASE("clang: a header that includes libtorch", "[generator][clang]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  const fs::path dir = scratch("torch");
  write_text(
      dir / "real.h",
      "#include <ATen/core/Tensor.h>\n#include <nlohmann/json.hpp>\n#include <torch/types.h>\n"
      "#include <optional>\n#include \"tensordict/annotate.h\"\n"
      "namespace real {\nstruct TC_CLASS(\"batch_dims=B\") Real {\n"
      "  TC_FIELD(\"dtype=float32\", \"shape=(B, 3)\") at::Tensor a;\n"
      "  std::optional<torch::Tensor> b;\n  nlohmann::ordered_json c;\n};\n"
      "}  // namespace real\n");
  tcgen::CompileOptions options;
  options.clang = clang_options();
  // Torch's include directories as a build passes them, /usr/include among them.
  std::istringstream dirs(TC_TORCH_INCLUDE_DIRS);
  for (std::string d; std::getline(dirs, d, '|');)
    options.clang.args.insert(options.clang.args.end(), {"-isystem", d});
  options.clang.args.insert(options.clang.args.end(), {"-isystem", "/usr/include"});
  ScopedCwd cwd(dir);
  tcgen::Compilation c = tcgen::compile({"real.h"}, tcgen::builtin_templates(), options);
  INFO(errors_of(c));
  REQUIRE_FALSE(c.diagnostics.has_errors());
  CHECK(tcgen::dump_model(c.schemas) ==
        "schema real.h namespace=real\n"
        "  class Real python=<class 'real.Real'> options=[ ] batch_dims=[ B ]\n"
        "    field a: tensor[float32, (B, 3)]\n"
        "    field b: optional[tensor]\n"
        "    field c: any\n");
}

TEST_CASE("clang: flags from compile_commands.json", "[generator][clang][cli]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  const fs::path dir = scratch("compile_db");
  write_text(dir / "db.h",
             "#ifndef FROM_DB\n#error FROM_DB is not defined\n#endif\n#include \"prelude.h\"\n"
             "struct TC_CLASS() Db {\n  at::Tensor x;\n};\n");
  write_text(dir / "main.cpp", "#include \"db.h\"\n");
  write_text(dir / "compile_commands.json", "[{\"directory\": \"" + dir.string() +
                                                "\", \"file\": \"main.cpp\", \"command\": "
                                                "\"c++ -DFROM_DB -I" +
                                                (source_dir() / "runtime/include").string() +
                                                " -std=c++17 -c main.cpp -o main.o\"}]");
  CHECK(run((dir / "db.h").string() + " --dump-model") == 1);
  CHECK(run((dir / "db.h").string() + " --dump-model -p " + dir.string()) == 0);
}

TEST_CASE("clang: a deeply nested default is refused, not a stack overflow", "[generator][clang]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  const std::string deep = std::string(70000, '[') + std::string(70000, ']');
  tcgen::Compilation c = compile_snippet("struct TC_CLASS() A {\n  TC_FIELD(\"default=" + deep +
                                         "\") tensordict::Json j;\n};\n");
  CHECK_THAT(errors_of(c),
             Catch::Contains("error: field 'j': default nested deeper than 64 levels"));
  CHECK(c.outputs.empty());
}

TEST_CASE("clang: a type nested deeper than the YAML front end allows is refused",
          "[generator][clang]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  std::string type = "int64_t";
  for (int i = 0; i < 100; ++i) type = "std::vector<" + type + ">";
  tcgen::Compilation c = compile_snippet("struct TC_CLASS() A {\n  " + type + " v;\n};\n");
  CHECK_THAT(errors_of(c), Catch::Contains("error: type nested deeper than 64 levels"));
  CHECK(c.outputs.empty());
}
