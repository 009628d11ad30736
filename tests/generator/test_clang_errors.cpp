// Errors of the C++ front end, each with its exact message and location, all of them in one run;
// `tcgen import`, the command line, a header that includes libtorch, compile_commands.json.
#include "catch2_compat.h"

#include <cstdlib>
#include <sstream>

#include <sys/stat.h>
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
   "bad.h:3:22: error: field 'm': C++ type 'std::map<int, int>' has no schema type (use at::Tensor, std::string, int64_t, int, double, float, bool, std::optional<T>, std::vector<T>, tensordict::Json, tensordict::TensorDict or a TC_CLASS struct)\n"},
  {"unsigned", "struct TC_CLASS() A {\n  unsigned count;\n};\n",
   "bad.h:3:12: error: field 'count': C++ type 'unsigned int' has no schema type (use at::Tensor, std::string, int64_t, int, double, float, bool, std::optional<T>, std::vector<T>, tensordict::Json, tensordict::TensorDict or a TC_CLASS struct)\n"},
  {"pointer", "struct TC_CLASS() A {\n  at::Tensor* p;\n};\n",
   "bad.h:3:15: error: field 'p': C++ type 'at::Tensor *' has no schema type (use at::Tensor, std::string, int64_t, int, double, float, bool, std::optional<T>, std::vector<T>, tensordict::Json, tensordict::TensorDict or a TC_CLASS struct)\n"},
  {"list of unmappable", "struct TC_CLASS() A {\n  std::vector<char> v;\n};\n",
   "bad.h:3:21: error: field 'v': C++ type 'std::vector<char>' has no schema type (use at::Tensor, std::string, int64_t, int, double, float, bool, std::optional<T>, std::vector<T>, tensordict::Json, tensordict::TensorDict or a TC_CLASS struct)\n"},
  {"unknown field key", "struct TC_CLASS() A {\n  TC_FIELD(\"dtyp=float32\") at::Tensor x;\n};\n",
   "bad.h:3:39: error: unknown key 'dtyp' in TC_FIELD (allowed: dtype, shape, default, doc, renamed_from, deprecated)\n"},
  {"entry without =", "struct TC_CLASS() A {\n  TC_FIELD(\"float32\") at::Tensor x;\n};\n",
   "bad.h:3:34: error: 'float32' in TC_FIELD is not key=value\n"},
  {"duplicate key", "struct TC_CLASS() A {\n  TC_FIELD(\"dtype=float32\", \"dtype=int64\") at::Tensor x;\n};\n",
   "bad.h:3:55: error: duplicate key 'dtype' in TC_FIELD\n"},
  {"unknown dtype", "struct TC_CLASS() A {\n  TC_FIELD(\"dtype=flot32\") at::Tensor x;\n};\n",
   "bad.h:3:39: error: field 'x': unknown dtype 'flot32' (did you mean 'float32'?)\n"},
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
  {"base that is not a tensorclass", "struct Base {\n  int b;\n};\nstruct TC_CLASS() A : Base {\n  at::Tensor x;\n};\n",
   "bad.h:5:23: error: tensorclass 'A' extends 'Base', which is not a tensorclass (TC_CLASS): its members would be fields the schema does not show\n"},
  {"two bases", "struct TC_CLASS() B {};\nstruct TC_CLASS() C {};\nstruct TC_CLASS() A : B, C {\n  at::Tensor x;\n};\n",
   "bad.h:4:23: error: tensorclass 'A' has 2 base classes; it can extend one tensorclass\n"},
  {"private base", "struct TC_CLASS() B {};\nclass TC_CLASS() A : B {\n  at::Tensor x;\n};\n",
   "bad.h:3:22: error: tensorclass 'A' extends 'B' privately; a derived tensorclass is usable as its base\n"},
  {"missing include, then more", "#include \"missing.h\"\nstruct TC_CLASS() A {\n  unsigned x;\n};\n",
   "bad.h:2:10: error: 'missing.h' file not found\n"
   "bad.h:4:12: error: field 'x': C++ type 'unsigned int' has no schema type (use at::Tensor, "
   "std::string, int64_t, int, double, float, bool, std::optional<T>, std::vector<T>, "
   "tensordict::Json, tensordict::TensorDict or a TC_CLASS struct)\n"},
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
   // clang's and tcgen's, in line order.
   "bad.h:2:34: error: unknown option 'frozn' (allowed: frozen, autocast, nocast, tensor_only, shadow)\n"
   "bad.h:3:12: error: field 'a': C++ type 'unsigned int' has no schema type (use at::Tensor, std::string, int64_t, int, double, float, bool, "
   "std::optional<T>, std::vector<T>, tensordict::Json, tensordict::TensorDict or a TC_CLASS struct)\n"
   "bad.h:4:34: error: field 'b': unknown dtype 'x' (expected one of bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)\n"
   "bad.h:5:3: error: unknown type name 'Undeclared'\n"},
};
// clang-format on

int run(const std::string& args) {
  const std::string command = std::string(TCGEN_EXE) + " " + args + " 2>/dev/null >/dev/null";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Exit status and stderr of a tcgen run bounded in time (and, outside AddressSanitizer, which
// reserves far more address space, in memory), so that a regression that hangs or reads without
// end fails the test instead of stalling it or exhausting the machine.
std::pair<int, std::string> run_bounded(const std::string& args, const fs::path& dir) {
  const fs::path err = dir / "stderr.txt";
#if defined(__SANITIZE_ADDRESS__)
  const std::string limit;
#else
  const std::string limit = "ulimit -v 4000000; ";
#endif
  const std::string command = limit + "timeout 60 " + std::string(TCGEN_EXE) + " " + args + " 2>" +
                              err.string() + " >/dev/null";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(err)};
}

std::string runtime_include() {
  return "--clang-arg=-I" + (source_dir() / "runtime/include").string();
}

}  // namespace

TEST_CASE("clang: each error with its exact message and location",
          "[generator][clang][needs-libclang]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  for (const auto& bad : kBadHeaders) {
    INFO(bad.what << "\n" << bad.snippet);
    tcgen::Compilation c = compile_snippet(bad.snippet);
    CHECK(errors_of(c) == bad.errors);
    CHECK(c.outputs.empty());
  }
}

TEST_CASE("clang: tcgen HEADER exits 1 and writes nothing on errors",
          "[generator][clang][cli][needs-libclang]") {
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
          "[generator][clang][import][needs-libclang]") {
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

TEST_CASE("import: two headers of one file name are refused",
          "[generator][clang][import][needs-libclang]") {
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

TEST_CASE("clang: a header that includes libtorch", "[generator][clang][needs-libclang]") {
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

TEST_CASE("clang: flags from compile_commands.json", "[generator][clang][cli][needs-libclang]") {
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
                                                " -std=c++" + std::to_string(TC_CXX_STANDARD) +
                                                " -c main.cpp -o main.o\"}]");
  CHECK(run((dir / "db.h").string() + " --dump-model") == 1);
  CHECK(run((dir / "db.h").string() + " --dump-model -p " + dir.string()) == 0);
}

TEST_CASE("clang: a deeply nested default is refused, not a stack overflow",
          "[generator][clang][needs-libclang]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  const std::string deep = std::string(70000, '[') + std::string(70000, ']');
  tcgen::Compilation c = compile_snippet("struct TC_CLASS() A {\n  TC_FIELD(\"default=" + deep +
                                         "\") tensordict::Json j;\n};\n");
  CHECK_THAT(errors_of(c), Catch::Matchers::ContainsSubstring(
                               "error: field 'j': default nested deeper than 64 levels"));
  CHECK(c.outputs.empty());
}

TEST_CASE("clang: a type nested deeper than the YAML front end allows is refused",
          "[generator][clang][needs-libclang]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  std::string type = "int64_t";
  for (int i = 0; i < 100; ++i) type = "std::vector<" + type + ">";
  tcgen::Compilation c = compile_snippet("struct TC_CLASS() A {\n  " + type + " v;\n};\n");
  CHECK_THAT(errors_of(c),
             Catch::Matchers::ContainsSubstring("error: type nested deeper than 64 levels"));
  CHECK(c.outputs.empty());
}

TEST_CASE("clang: an include of a FIFO, a device or a huge file is refused before libclang runs",
          "[generator][clang][cli][needs-libclang]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  const fs::path dir = scratch("special_includes");
  ScopedCwd cwd(dir);
  // libclang blocks forever opening a FIFO, and reads /dev/zero until memory runs out.
  REQUIRE(::mkfifo("pipe.h", 0600) == 0);
  fs::create_directories("lib/sub");
  REQUIRE(::mkfifo("lib/sub/pipe.h", 0600) == 0);
  {  // a sparse 4 GiB file: no disk used, and never read
    std::ofstream huge("huge.h");
    huge.seekp((std::streamoff{1} << 32) - 1);
    huge.put('\n');
  }
  const std::string tail = "struct TC_CLASS() A {\n  at::Tensor x;\n};\n";
  const std::string not_regular =
      "' is not a regular file (libclang would wait forever on a FIFO, or read a device without "
      "end)\n";
  write_text("fifo.h", "#include \"prelude.h\"\n#include \"pipe.h\"\n" + tail);
  CHECK(run_bounded("fifo.h " + runtime_include(), dir) ==
        std::make_pair(1, "fifo.h:2:10: error: included file 'pipe.h" + not_regular));
  write_text("zero.h", "#include \"prelude.h\"\n#include </dev/zero>\n" + tail);
  CHECK(run_bounded("zero.h " + runtime_include(), dir) ==
        std::make_pair(1, "zero.h:2:10: error: included file '/dev/zero" + not_regular));
  write_text("huge_include.h", "#include \"prelude.h\"\n#include \"huge.h\"\n" + tail);
  CHECK(run_bounded("huge_include.h " + runtime_include(), dir) ==
        std::make_pair(1, std::string("huge_include.h:2:10: error: included file 'huge.h' is 4096 "
                                      "MiB, more than tcgen lets libclang read (16 MiB)\n")));
  // Every spelling clang reads as an include; one included header deep, found through -I; the
  // directive inside #if 0 is refused too (clang would not open it: stricter than needed).
  write_text("inner.h", "#pragma once\n#include <sub/pipe.h>\n");
  write_text("hidden.h",
             "#include \"prelude.h\"\n"
             "#  /* comment */ include \"pipe.h\"\n"
             "%:include \"pipe.h\"\n"
             "#inc\\\nlude \"pipe.h\"\n"
             "#if 0\n#include \"pipe.h\"\n#endif\n"
             "/* a comment\n   ending here */ #include \"pipe.h\"\n"
             "#include \"inner.h\"\n" +
                 tail);
  CHECK(run_bounded("hidden.h --clang-arg=-Ilib " + runtime_include(), dir) ==
        std::make_pair(1, "hidden.h:2:26: error: included file 'pipe.h" + not_regular +
                              "hidden.h:3:11: error: included file 'pipe.h" + not_regular +
                              "hidden.h:5:6: error: included file 'pipe.h" + not_regular +
                              "hidden.h:7:10: error: included file 'pipe.h" + not_regular +
                              "hidden.h:10:28: error: included file 'pipe.h" + not_regular +
                              "inner.h:2:10: error: included file 'lib/sub/pipe.h" + not_regular));
  // `tcgen import` reads headers the same way.
  CHECK(run_bounded("import fifo.h -o yaml " + runtime_include(), dir) ==
        std::make_pair(1, "fifo.h:2:10: error: included file 'pipe.h" + not_regular));
  CHECK_FALSE(fs::exists("yaml"));
  // A forced include (-include) and a compilation database that is a FIFO.
  write_text("good.h", "#include \"prelude.h\"\n" + tail);
  CHECK(run_bounded("good.h --clang-arg=-include --clang-arg=pipe.h " + runtime_include(), dir) ==
        std::make_pair(1, "good.h: error: included file 'pipe.h" + not_regular));
  fs::create_directories("db");
  REQUIRE(::mkfifo("db/compile_commands.json", 0600) == 0);
  CHECK(run_bounded("good.h -p db " + runtime_include(), dir) ==
        std::make_pair(1, std::string("db/compile_commands.json: error: the compilation database "
                                      "is not a regular file\n")));
  fs::remove("huge.h");
}

namespace {

// `count` annotated structs of one field each, one a line (C<i> on line i + 2 of bad.h).
std::string structs(int count) {
  std::string text;
  for (int i = 0; i < count; ++i)
    text += "struct TC_CLASS() C" + std::to_string(i) + " { at::Tensor x; };\n";
  return text;
}

// A struct C<k> of `fields` int64_t members f0, f1, ..., one a line.
std::string wide_struct(int k, int fields) {
  std::string text = "struct TC_CLASS() C" + std::to_string(k) + " {\n";
  for (int i = 0; i < fields; ++i) text += "  int64_t f" + std::to_string(i) + ";\n";
  return text + "};\n";
}

}  // namespace

TEST_CASE("clang: classes and fields are bounded as in YAML schemas",
          "[generator][clang][needs-libclang]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  // 10,000 annotated structs were accepted, and the generated header failed to compile after 6
  // minutes.
  CHECK(errors_of(compile_snippet(structs(500))).empty());
  tcgen::Compilation c = compile_snippet(structs(10000));
  CHECK(errors_of(c) ==
        "bad.h:502:19: error: class 'C500': a schema file holds at most 500 classes (split it "
        "into files that include each other)\n"
        "bad.h:5002:38: error: field 'x' of class 'C5000': a schema file holds at most 5000 "
        "fields in all (split it into files that include each other)\n");
  CHECK(c.outputs.empty());
  CHECK(errors_of(compile_snippet(wide_struct(0, 1000))).empty());
  CHECK(errors_of(compile_snippet(wide_struct(0, 1001))) ==
        "bad.h:1003:11: error: field 'f1000': class 'C0' has more than 1000 fields, the most a "
        "class may have\n");
  std::string six;
  for (int k = 0; k < 6; ++k) six += wide_struct(k, 900);
  CHECK(errors_of(compile_snippet(six)) ==
        "bad.h:5013:11: error: field 'f500' of class 'C5': a schema file holds at most 5000 fields "
        "in all (split it into files that include each other)\n");
}

TEST_CASE("import: never writes YAML that the YAML front end refuses",
          "[generator][clang][import][needs-libclang]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  const fs::path dir = scratch("import_bounds");
  ScopedCwd cwd(dir);
  auto header = [](const std::string& file, const std::string& field) {
    write_text(file, "#include \"prelude.h\"\nstruct TC_CLASS() A {\n  " + field + "\n};\n");
  };
  auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  auto zeros = [](int count) {
    std::string list = "[0";
    for (int i = 1; i < count; ++i) list += ",0";
    return list + "]";
  };
  // A default is at level 5 of a schema file: 60 nested lists put the innermost at YAML's 64.
  header("deep60.h", "TC_FIELD(\"default=" + nested(60) + "\") tensordict::Json j;");
  REQUIRE(run("import deep60.h -o yaml " + runtime_include()) == 0);
  CHECK(run("yaml/deep60.yaml --dump-model") == 0);
  header("deep61.h", "TC_FIELD(\"default=" + nested(61) + "\") tensordict::Json j;");
  CHECK(run_bounded("import deep61.h -o yaml " + runtime_include(), dir) ==
        std::make_pair(1, std::string("deep61.h:3:163: error: default of field 'j' nests too "
                                      "deep for a schema file: its innermost value would be at "
                                      "level 65 of the YAML (the most is 64)\n")));
  CHECK_FALSE(fs::exists("yaml/deep61.yaml"));
  // 15 nodes around the default's items: 99,985 of them make YAML's 100,000 nodes.
  header("nodes_edge.h", "TC_FIELD(\"default=" + zeros(99985) + "\") std::vector<int64_t> v;");
  REQUIRE(run("import nodes_edge.h -o yaml " + runtime_include()) == 0);
  CHECK(run("yaml/nodes_edge.yaml --dump-model") == 0);
  header("nodes_over.h", "TC_FIELD(\"default=" + zeros(99986) + "\") std::vector<int64_t> v;");
  CHECK(run_bounded("import nodes_over.h -o yaml " + runtime_include(), dir) ==
        std::make_pair(1, std::string("nodes_over.h:1:1: error: the schema would be more than "
                                      "100000 YAML nodes, more than a schema file may have\n")));
  CHECK_FALSE(fs::exists("yaml/nodes_over.yaml"));
}

TEST_CASE("clang: the include scan stays linear in the header's size",
          "[generator][clang][cli][needs-libclang]") {
  if (!tcgen::have_libclang()) TC_SKIP("tcgen was built without libclang");
  const fs::path dir = scratch("scan_linear");
  ScopedCwd cwd(dir);
  // Each a megabyte or two that libclang reads in well under a second. The scan's first version
  // searched from every line to a comment's far end (over 120 s each here), looked a splice's
  // position up in a list, or a raw string's '(' through the rest of the file.
  const std::string tail = "struct TC_CLASS() A {\n  at::Tensor x;\n};\n";
  auto lines = [](const std::string& line, int count) {
    std::string text;
    for (int i = 0; i < count; ++i) text += line;
    return text;
  };
  write_text("comments.h", "#include \"prelude.h\"\n" + lines("/* x\n", 200000) + "*/\n" + tail);
  write_text("directive_comments.h",
             "#include \"prelude.h\"\n" + lines("# /* x\n", 200000) + "*/\n" + tail);
  write_text("raw.h", "#include \"prelude.h\"\n" + lines("R\"", 4000000) + "\n" + tail);
  write_text("splices.h",
             "#include \"prelude.h\"\n" + lines("#include \"prelude.h\"\\\n\n", 100000) + tail);
  for (const char* header : {"comments.h", "directive_comments.h", "splices.h"}) {
    INFO(header);
    CHECK(run_bounded(std::string(header) + " --dump-model " + runtime_include(), dir).first == 0);
  }
  // Not C++ (clang's errors, exit 1), but read in linear time: not ended by the timeout (124).
  CHECK(run_bounded("raw.h --dump-model " + runtime_include(), dir).first == 1);
}
