// Hostile user text through both emitters: every control character (NUL and DEL included), the
// Unicode line separators, bidirectional controls, quotes, backslashes and triple quotes in docs,
// deprecation reasons and defaults, and names Python cannot declare. A Python module must be
// exactly the definitions the schema means, as Python's own parser reads it
// (python_module_shape.py), or tcgen must refuse the schema with exact diagnostics; a header must
// hold the text escaped in its comments and exactly in its literals (tests/goldens/hostile_text.h,
// compiled into this test).
#include "catch2_compat.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "driver/driver.h"
#include "hostile_text.h"
#include "test_support.h"
#include "version.h"

namespace fs = std::filesystem;
using namespace tcgen_test;
using Json = nlohmann::json;

namespace {

std::string utf8(char32_t c) {
  std::string out;
  if (c < 0x80) return std::string(1, static_cast<char>(c));
  if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
  } else {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
  }
  return out + static_cast<char>(0x80 | (c & 0x3F));
}

std::string utf8(const std::u32string& text) {
  std::string out;
  for (const char32_t c : text) out += utf8(c);
  return out;
}

// Characters that must never reach generated source as themselves (docs/schema.md): C0 controls,
// DEL, C1 controls, line and paragraph separators, a byte order mark.
std::vector<char32_t> hostile_chars() {
  std::vector<char32_t> chars;
  for (char32_t c = 0; c < 0x20; ++c) chars.push_back(c);
  for (const char32_t c : {0x7F, 0x80, 0x85, 0x9F, 0x2028, 0x2029, 0xFEFF}) chars.push_back(c);
  return chars;
}

// Bidirectional controls: escaped in defaults and deprecation reasons, refused in docs.
std::vector<char32_t> bidi_chars() {
  return {0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C,
          0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069};
}

bool is_bidi(char32_t c) {
  const auto all = bidi_chars();
  return std::find(all.begin(), all.end(), c) != all.end();
}

// How comments of both languages spell a hostile character: \t \n \r, \xNN below 0x80, else
// \uNNNN.
std::string escaped(char32_t c) {
  if (c == '\t') return "\\t";
  if (c == '\n') return "\\n";
  if (c == '\r') return "\\r";
  char text[16];
  std::snprintf(text, sizeof text, c < 0x80 ? "\\x%02x" : "\\u%04x", static_cast<unsigned>(c));
  return text;
}

std::string hex(char32_t c) {
  char text[16];
  std::snprintf(text, sizeof text, "%04X", static_cast<unsigned>(c));
  return text;
}

// `text` as a YAML double-quoted scalar, every character but printable ASCII as \uXXXX.
std::string yaml_quoted(const std::u32string& text) {
  std::string out = "\"";
  for (const char32_t c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      out += "\\u" + hex(c);
    }
  }
  return out + "\"";
}

// C++ octal escapes of the UTF-8 bytes of `c`.
std::string octal(char32_t c) {
  std::string out;
  for (const char byte : utf8(c)) {
    char text[8];
    std::snprintf(text, sizeof text, "\\%03o", static_cast<unsigned char>(byte));
    out += text;
  }
  return out;
}

// The first character of `text` that must not stand for itself in generated source (a control
// character other than the line feed, DEL, a C1 control, U+2028, U+2029, a bidirectional control,
// U+FEFF), found byte by byte, independently of tcgen's own rule; "" when there is none.
std::string raw_hostile(const std::string& text) {
  const auto byte = [&](size_t i) {
    return i < text.size() ? static_cast<unsigned char>(text[i]) : 0;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned b = byte(i), b1 = byte(i + 1), b2 = byte(i + 2);
    const bool found =
        (b < 0x20 && b != '\n') || b == 0x7F || (b == 0xC2 && b1 >= 0x80 && b1 <= 0x9F) ||
        (b == 0xE2 && b1 == 0x80 &&
         (b2 == 0xA8 || b2 == 0xA9 || b2 == 0x8E || b2 == 0x8F || (b2 >= 0xAA && b2 <= 0xAE))) ||
        (b == 0xE2 && b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9) || (b == 0xD8 && b1 == 0x9C) ||
        (b == 0xEF && b1 == 0xBB && b2 == 0xBF);
    if (found) return "byte " + std::to_string(b) + " at offset " + std::to_string(i);
  }
  return "";
}

// A directory of its own for one test case, removed after it.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("tc-hostile-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
};

tcgen::Compilation compile_file(const fs::path& dir, const std::string& name,
                                const std::string& text, const std::string& language) {
  write_text(dir / name, text);
  ScopedCwd cwd(dir);
  tcgen::CompileOptions options;
  options.language = &tcgen::output_language(language);
  return tcgen::compile({name}, tcgen::builtin_templates(), options);
}

// python3 is a build requirement of the tests (tests/docs), so it is asserted, not skipped.
void require_python() {
  REQUIRE(std::system("python3 -c 'import ast, tokenize' > /dev/null 2>&1") == 0);
}

// What Python's parser finds in `module` (tests/generator/python_module_shape.py).
Json module_shape(const fs::path& module) {
  const fs::path out =
      fs::temp_directory_path() / ("tc-hostile-shape-" + std::to_string(::getpid()) + ".json");
  const std::string command = "python3 '" +
                              (source_dir() / "tests/generator/python_module_shape.py").string() +
                              "' '" + module.string() + "' > '" + out.string() + "'";
  const int status = std::system(command.c_str());
  const std::string text = read_text(out);
  fs::remove(out);
  REQUIRE(status == 0);
  return Json::parse(text);
}

Json field(const std::string& name, const std::string& annotation, const Json& value) {
  return {{"name", name}, {"annotation", annotation}, {"default", value}};
}

Json python_class(const std::string& name, const Json& doc, const Json& fields,
                  const Json& decorators = Json::array()) {
  return {{"name", name},
          {"bases", Json::array({"_TensorClass"})},
          {"keywords", Json::object()},
          {"decorators", decorators},
          {"doc", doc},
          {"fields", fields},
          {"other", Json::array()}};
}

}  // namespace

TEST_CASE("hostile text: a Python module holds exactly the schema's definitions",
          "[generator][python][hostile]") {
  require_python();
  // One class per character: in its doc, a field's doc, a deprecation reason and three defaults.
  std::string yaml = "namespace: hostile\nclasses:\n";
  Json classes = Json::array();
  Json comments = {std::string("# generated by tcgen v") + tcgen::kTcgenVersion +
                   " from hostile.yaml \u2014 do not edit"};
  std::string cpp_expected;  // what the header must spell, checked below
  std::vector<char32_t> chars = hostile_chars();
  for (const char32_t c : bidi_chars()) chars.push_back(c);
  for (const char32_t c : chars) {
    const std::u32string text = U"a" + std::u32string(1, c) + U"b";
    const std::string name = "C" + hex(c), q = yaml_quoted(text), one = utf8(c);
    const bool doc = !is_bidi(c);
    yaml += "  - name: " + name + "\n" + (doc ? "    doc: " + q + "\n" : "") +
            "    fields:\n"
            "      - {name: f, type: str, default: " +
            q + (doc ? ", doc: " + q : "") + "}\n" +
            "      - {name: g, type: 'list[str]', default: [" + yaml_quoted({c}) + "]}\n" +
            "      - {name: h, type: any, default: {" + yaml_quoted({c}) + ": " + q + "}}\n" +
            "      - {name: d, type: 'optional[str]', deprecated: " + q + "}\n";
    // A line feed separates lines: the docstring's next line is indented, a comment line ends.
    const Json docstring = !doc ? Json() : c == '\n' ? Json("a\n    b") : Json(utf8(text));
    classes.push_back(python_class(name, docstring,
                                   {field("f", "_str", {{"value", utf8(text)}}),
                                    field("g", "_list[_str]", {{"factory", Json::array({one})}}),
                                    field("h", "_Any", {{"factory", {{one, utf8(text)}}}}),
                                    field("d", "_Optional[_str]", {{"value", nullptr}})},
                                   // a pytree node; f, g and h load older data with their
                                   // defaults, as in C++
                                   Json::array({"_pytree_node('hostile." + name + "')",
                                                "_fills_added_fields(('f', 'g', 'h'))"})));
    if (c == '\n') {
      for (const char* line : {"#: a", "#: b", "#: Deprecated: a", "#: b"})
        comments.push_back(line);
    } else {
      if (doc) comments.push_back("#: a" + escaped(c) + "b");
      comments.push_back("#: Deprecated: a" + escaped(c) + "b");
    }
  }
  Scratch scratch;
  const tcgen::Compilation python = compile_file(scratch.dir, "hostile.yaml", yaml, "python");
  INFO(diagnostics_text(python.diagnostics));
  REQUIRE_FALSE(python.diagnostics.has_errors());
  REQUIRE(python.outputs.size() == 1);
  CHECK(python.outputs[0].file_name == "hostile.py");
  CHECK(raw_hostile(python.outputs[0].content) == "");
  write_text(scratch.dir / "hostile.py", python.outputs[0].content);
  const Json shape = module_shape(scratch.dir / "hostile.py");
  REQUIRE_FALSE(shape.contains("error"));
  CHECK(shape["imports"] ==
        Json({"import dataclasses as _dataclasses", "import json as _json",
              "from builtins import classmethod as _classmethod, list as _list, str as _str",
              "from dataclasses import field as _field",
              "from typing import Any as _Any, Optional as _Optional", "import torch as _torch",
              "from tensordict import TensorClass as _TensorClass, is_tensor_collection as "
              "_is_tensor_collection"}));
  // Besides the classes, only tcgen's own helpers (no schema text reaches them).
  REQUIRE(shape["other"].size() == 2);
  CHECK(shape["other"][0].get<std::string>().rfind("def _fills_added_fields(names, ", 0) == 0);
  CHECK(shape["other"][1].get<std::string>().rfind("def _pytree_node(type_name, names=None)", 0) == 0);
  CHECK(shape["comments"] == comments);
  REQUIRE(shape["classes"].size() == classes.size());
  for (size_t i = 0; i < classes.size(); ++i) {
    CAPTURE(classes[i]["name"]);
    CHECK(shape["classes"][i] == classes[i]);
  }

  // The same schema as a header: comments escaped as in Python, literals as octal escapes.
  const tcgen::Compilation cpp = compile_file(scratch.dir, "hostile.yaml", yaml, "cpp");
  REQUIRE_FALSE(cpp.diagnostics.has_errors());
  const std::string& header = cpp.outputs.at(0).content;
  CHECK(raw_hostile(header) == "");
  CHECK(header.find("\\\n") == std::string::npos);  // no line continues onto the next
  for (const char32_t c : chars) {
    CAPTURE(hex(c));
    const std::string name = "C" + hex(c);
    if (c == '\n') {
      CHECK_THAT(header, Catch::Matchers::ContainsSubstring("\n/// a\n/// b\nclass " + name + " "));
    } else if (!is_bidi(c)) {
      CHECK_THAT(header, Catch::Matchers::ContainsSubstring("\n/// a" + escaped(c) + "b\nclass " +
                                                            name + " "));
    }
    const std::string literal = "\"a" + (c == '\n' ? std::string("\\n") : octal(c)) + "b\"";
    CHECK_THAT(
        header,
        Catch::Matchers::ContainsSubstring(
            "::std::string f = " + (c == 0 ? "::std::string(" + literal + ", 3)" : literal) + ";"));
  }
}

TEST_CASE("hostile text: a docstring reads back as the doc or is an escaped literal",
          "[generator][python][hostile]") {
  require_python();
  // doc -> the docstring's value: triple-quoted (continuation lines indented) only where the text
  // reads back so; a tab, a backslash, a """ or a closing " make it a literal.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plain", "plain"},
      {"two\nlines", "two\n    lines"},
      {"tab\n\tindented", "tab\n\tindented"},
      {"has \"\"\" inside", "has \"\"\" inside"},
      {"ends in a quote \"", "ends in a quote \""},
      {"C:\\dir\\file", "C:\\dir\\file"},
      {"''' and \"quotes\"", "''' and \"quotes\""},
      {"cr\r\nlf", "cr\r\nlf"},
  };
  std::string yaml = "namespace: docs\nclasses:\n";
  for (size_t i = 0; i < cases.size(); ++i) {
    std::u32string doc;
    for (const char c : cases[i].first) doc += static_cast<char32_t>(c);
    yaml += "  - {name: D" + std::to_string(i) + ", doc: " + yaml_quoted(doc) + "}\n";
  }
  Scratch scratch;
  const tcgen::Compilation c = compile_file(scratch.dir, "docs.yaml", yaml, "python");
  INFO(diagnostics_text(c.diagnostics));
  REQUIRE(c.outputs.size() == 1);
  write_text(scratch.dir / "docs.py", c.outputs[0].content);
  const Json shape = module_shape(scratch.dir / "docs.py");
  REQUIRE(shape["classes"].size() == cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(cases[i].first);
    const std::string name = "D" + std::to_string(i);
    CHECK(shape["classes"][i] == python_class(name, cases[i].second, Json::array(),
                                              Json::array({"_pytree_node('docs." + name + "')"})));
  }
  REQUIRE(shape["other"].size() == 1);  // the pytree helper
  CHECK(shape["other"][0].get<std::string>().rfind("def _pytree_node(type_name, names=None)", 0) == 0);
}

TEST_CASE("hostile text: a bidirectional control in a doc is refused in both languages",
          "[generator][hostile]") {
  Scratch scratch;
  for (const char32_t c : bidi_chars()) {
    CAPTURE(hex(c));
    const std::string yaml = "namespace: n\nclasses:\n  - name: A\n    doc: " +
                             yaml_quoted(U"a" + std::u32string(1, c) + U"b") + "\n";
    for (const auto& language : tcgen::output_languages()) {
      const tcgen::Compilation compiled =
          compile_file(scratch.dir, "bidi.yaml", yaml, language.name);
      CHECK(diagnostics_text(compiled.diagnostics) ==
            "bidi.yaml:3:11: error: doc of class 'A' holds a bidirectional control character, "
            "which would make the generated header read differently from what compiles\n");
      CHECK(compiled.outputs.empty());
    }
  }
}

TEST_CASE("hostile text: a schema file name generated code cannot hold is refused",
          "[generator][hostile]") {
  // The name is written into comments of both languages and into #include "..." lines, which
  // have no escapes.
  for (const std::string name : {"a\x7f"
                                 "b.yaml",
                                 "a\xc2\x85"
                                 "b.yaml",
                                 "a\xe2\x80\xa8"
                                 "b.yaml",
                                 "a\xe2\x80\xae"
                                 "b.yaml",
                                 "a\xef\xbb\xbf"
                                 "b.yaml",
                                 "a\xff"
                                 "b.yaml"}) {
    CAPTURE(name);
    const tcgen::Compilation c =
        tcgen::compile_text("classes: []\n", name, tcgen::builtin_templates());
    CHECK(diagnostics_text(c.diagnostics) ==
          name +
              ": error: the schema's file name cannot be written into the generated header (it "
              "has a control character, a line separator, a bidirectional control character "
              "or a byte that is not UTF-8)\n");
  }
}

TEST_CASE("names Python cannot declare are refused under --lang python with exact diagnostics",
          "[generator][python][diagnostics]") {
  // tests/schemas/bad_python/<case>.yaml must fail under --lang python with exactly the
  // diagnostics of <case>.errors, writing nothing; as C++ they are fine.
  const fs::path dir = source_dir() / "tests/schemas/bad_python";
  std::vector<std::string> cases;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") cases.push_back(entry.path().stem().string());
  }
  std::sort(cases.begin(), cases.end());
  REQUIRE(cases.size() >= 8);
  ScopedCwd cwd(dir);
  for (const auto& name : cases) {
    CAPTURE(name);
    tcgen::CompileOptions options;
    options.language = &tcgen::output_language("python");
    const tcgen::Compilation c =
        tcgen::compile({name + ".yaml"}, tcgen::builtin_templates(), options);
    CHECK(c.outputs.empty());
    const std::string actual = diagnostics_text(c.diagnostics);
    if (updating_goldens()) write_text(name + ".errors", actual);
    CHECK(actual == read_text(name + ".errors"));
    const tcgen::Compilation cpp = tcgen::compile({name + ".yaml"}, tcgen::builtin_templates());
    CHECK(diagnostics_text(cpp.diagnostics) == "");
  }
}

TEST_CASE("hostile text: the golden header holds it exactly as the Python module does",
          "[generator][golden][hostile]") {
  // tests/goldens/hostile_text.yaml, generated at build time and compiled into this test.
  const hostile::HostileText t({});
  CHECK(t.payload() == 0);
  CHECK(t.crlf() == std::string("cr\rlf\nnul\0tab\tdel\x7f", 18));
  CHECK(t.quotes() == "q\" b\\ ?\?= ?\?/ ''' \"\"\"");
  CHECK(t.unicode() ==
        "\xc2\x85 \xe2\x80\xa8 \xe2\x80\xa9 rlo\xe2\x80\xae bom\xef\xbb\xbf \xc3\xa9");
  CHECK(t.c0() == std::string("\0\1\2\3\4\5\6\7", 8));
  CHECK(t.c1() == "\10\11\12\13\14\15\16\17");
  CHECK(t.c2() == "\20\21\22\23\24\25\26\27");
  CHECK(t.c3() == "\30\31\32\33\34\35\36\37\177");
  CHECK(t.ls() == std::vector<std::string>{"\r", "\xe2\x80\xa8"});
  CHECK(t.nl() == std::vector<std::string>{std::string(1, '\0')});
  CHECK(t.json() == tensordict::Json{{"k\r\xe2\x80\xa8", std::string("v\0\xe2\x80\xae", 5)}});

  // The Python module of the same schema: the doc and the same values, nothing else.
  require_python();
  const fs::path goldens = source_dir() / "tests/goldens";
  ScopedCwd cwd(goldens);
  const tcgen::Compilation schema =
      tcgen::compile({"hostile_text.yaml"}, tcgen::builtin_templates());
  REQUIRE(schema.schemas.size() == 1);
  const Json shape = module_shape(goldens / "python/hostile_text/hostile.py");
  REQUIRE(shape["classes"].size() == 1);
  const Json& cls = shape["classes"][0];
  CHECK(cls["doc"] == schema.schemas[0].classes[0].doc);
  CHECK(cls["other"] == Json::array());
  // Besides the class, only tcgen's helpers: filling defaults into older data, the pytree node.
  REQUIRE(shape["other"].size() == 2);
  CHECK(shape["other"][0].get<std::string>().rfind("def _fills_added_fields(names, ", 0) == 0);
  CHECK(shape["other"][1].get<std::string>().rfind("def _pytree_node(type_name, names=None)", 0) == 0);
  std::map<std::string, Json> values;
  for (const auto& f : cls["fields"]) values[f["name"].get<std::string>()] = f["default"];
  CHECK(values.size() == 12);
  CHECK(values["crlf"] == Json{{"value", t.crlf()}});
  CHECK(values["quotes"] == Json{{"value", t.quotes()}});
  CHECK(values["unicode"] == Json{{"value", t.unicode()}});
  CHECK(values["c0"] == Json{{"value", t.c0()}});
  CHECK(values["c1"] == Json{{"value", t.c1()}});
  CHECK(values["c2"] == Json{{"value", t.c2()}});
  CHECK(values["c3"] == Json{{"value", t.c3()}});
  CHECK(values["ls"] == Json{{"factory", t.ls()}});
  CHECK(values["nl"] == Json{{"factory", t.nl()}});
  CHECK(values["json"] == Json{{"factory", Json::parse(t.json().dump())}});
  CHECK(shape["comments"].size() == 5);  // the stamp and four doc lines (golden: hostile.py)
}
