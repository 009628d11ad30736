#include "emit/python/names.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>

#include "model/kinds.h"
#include "model/output_names.h"
#include "model/source_text.h"
#include "tensordict/tensor_default.h"

namespace tcgen {

std::string python_module_file(const std::string& module) {
  std::string path = module;
  for (char& c : path)
    if (c == '.') c = '/';
  return path + ".py";
}

std::string python_name_problem(const std::string& name) {
  if (name == "<locals>") {
    return "'<locals>' is Python's name for the scope of a function, which a module cannot "
           "declare";
  }
  if (!is_identifier(name)) return "'" + name + "' is not a Python identifier";
  if (is_python_keyword(name) || name == "__debug__") return "'" + name + "' is a Python keyword";
  return "";
}

namespace {

// Every name a generated module may import: module and name ("" for the module itself). Their
// aliases are the names the module binds besides its classes.
struct PythonImport {
  const char* module;
  const char* name;
};
constexpr PythonImport kPythonImports[] = {{"torch", ""},
                                           {"tensordict", "TensorClass"},
                                           {"tensordict", "TensorDict"},
                                           {"tensordict", "TypedTensorDict"},
                                           {"tensordict", "is_tensor_collection"},
                                           {"tensordict", "MetaData"},
                                           {"tensordict", "NonTensorData"},
                                           {"json", ""},
                                           {"dataclasses", "field"},
                                           {"dataclasses", "KW_ONLY"},
                                           {"typing", "Any"},
                                           {"typing", "Optional"},
                                           {"typing", "NotRequired"},
                                           {"builtins", "list"},
                                           {"builtins", "str"},
                                           {"builtins", "int"},
                                           {"builtins", "float"},
                                           {"builtins", "bool"},
                                           {"builtins", "staticmethod"},
                                           {"builtins", "classmethod"},
                                           {"dataclasses", ""}};

std::string alias_of(const std::string& module, const std::string& name) {
  return "_" + (name.empty() ? module : name);
}

// sys.stdlib_module_names of Python 3.11, with the modules 3.14 adds (annotationlib,
// compression): a generated module of such a name is never imported as itself.
const std::set<std::string>& python_stdlib_modules() {
  static const std::set<std::string> names = [] {
    std::istringstream words(
        "__future__ _abc _aix_support _ast _asyncio _bisect _blake2 _bootsubprocess _bz2 _codecs "
        "_codecs_cn _codecs_hk _codecs_iso2022 _codecs_jp _codecs_kr _codecs_tw _collections "
        "_collections_abc _compat_pickle _compression _contextvars _crypt _csv _ctypes _curses "
        "_curses_panel _datetime _dbm _decimal _elementtree _frozen_importlib "
        "_frozen_importlib_external _functools _gdbm _hashlib _heapq _imp _io _json _locale "
        "_lsprof "
        "_lzma _markupbase _md5 _msi _multibytecodec _multiprocessing _opcode _operator "
        "_osx_support "
        "_overlapped _pickle _posixshmem _posixsubprocess _py_abc _pydecimal _pyio _queue _random "
        "_scproxy _sha1 _sha256 _sha3 _sha512 _signal _sitebuiltins _socket _sqlite3 _sre _ssl "
        "_stat "
        "_statistics _string _strptime _struct _symtable _thread _threading_local _tkinter "
        "_tokenize "
        "_tracemalloc _typing _uuid _warnings _weakref _weakrefset _winapi _zoneinfo abc aifc "
        "annotationlib antigravity argparse array ast asynchat asyncio asyncore atexit audioop "
        "base64 "
        "bdb binascii bisect builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs "
        "codeop collections colorsys compileall compression concurrent configparser contextlib "
        "contextvars copy copyreg crypt csv ctypes curses dataclasses datetime dbm decimal difflib "
        "dis distutils doctest email encodings ensurepip enum errno faulthandler fcntl filecmp "
        "fileinput fnmatch fractions ftplib functools gc genericpath getopt getpass gettext glob "
        "graphlib grp gzip hashlib heapq hmac html http idlelib imaplib imghdr imp importlib "
        "inspect "
        "io ipaddress itertools json keyword lib2to3 linecache locale logging lzma mailbox mailcap "
        "marshal math mimetypes mmap modulefinder msilib msvcrt multiprocessing netrc nis nntplib "
        "nt "
        "ntpath nturl2path numbers opcode operator optparse os ossaudiodev pathlib pdb pickle "
        "pickletools pipes pkgutil platform plistlib poplib posix posixpath pprint profile pstats "
        "pty "
        "pwd py_compile pyclbr pydoc pydoc_data pyexpat queue quopri random re readline reprlib "
        "resource rlcompleter runpy sched secrets select selectors shelve shlex shutil signal site "
        "smtpd smtplib sndhdr socket socketserver spwd sqlite3 sre_compile sre_constants sre_parse "
        "ssl stat statistics string stringprep struct subprocess sunau symtable sys sysconfig "
        "syslog "
        "tabnanny tarfile telnetlib tempfile termios textwrap this threading time timeit tkinter "
        "token tokenize tomllib trace traceback tracemalloc tty turtle turtledemo types typing "
        "unicodedata unittest urllib uu uuid venv warnings wave weakref webbrowser winreg winsound "
        "wsgiref xdrlib xml xmlrpc zipapp zipfile zipimport zlib zoneinfo");
    return std::set<std::string>(std::istream_iterator<std::string>(words),
                                 std::istream_iterator<std::string>());
  }();
  return names;
}

// The module a spelling of KindTraits::python_annotation comes from: `torch.Tensor` names it,
// `Any` is typing's, `TensorDict` tensordict's, the others are builtins.
std::string annotation_of_kind(TypeKind kind, PythonImports& imports) {
  const std::string spelled(traits(kind).python_annotation);
  const size_t dot = spelled.find('.');
  if (dot != std::string::npos) {
    return imports.use_module(spelled.substr(0, dot)) + spelled.substr(dot);
  }
  const char* module = spelled == "Any"          ? "typing"
                       : spelled == "TensorDict" ? "tensordict"
                                                 : "builtins";
  return imports.use(module, spelled);
}

}  // namespace

std::string PythonImports::use(const std::string& module, const std::string& name) {
  const bool known =
      std::any_of(std::begin(kPythonImports), std::end(kPythonImports),
                  [&](const PythonImport& i) { return module == i.module && name == i.name; });
  // Only what kPythonImports lists may be bound, so that no class can be named like an alias.
  if (!known) throw std::logic_error("not a listed Python import: " + module + "." + name);
  names_[module].insert(name);
  return alias_of(module, name);
}

std::string PythonImports::use_module(const std::string& module) { return use(module, ""); }

std::string PythonImports::lines() const {
  std::string standard, others;
  for (const auto& [module, names] : names_) {
    std::string& group = python_stdlib_modules().count(module) ? standard : others;
    if (names.count("")) group += "import " + module + " as " + alias_of(module, "") + "\n";
  }
  for (const auto& [module, names] : names_) {
    std::string& group = python_stdlib_modules().count(module) ? standard : others;
    std::string listed;
    for (const auto& name : names) {
      if (!name.empty())
        listed += (listed.empty() ? "" : ", ") + name + " as " + alias_of(module, name);
    }
    if (!listed.empty()) group += "from " + module + " import " + listed + "\n";
  }
  std::string out = standard + (standard.empty() || others.empty() ? "" : "\n") + others;
  if (!out.empty()) out.pop_back();
  return out;
}

bool is_bound_by_python_module(const std::string& name) {
  return name == kPythonRenameHelper || name == kPythonDefaultsHelper ||
         name == kPythonPytreeHelper ||
         std::any_of(std::begin(kPythonImports), std::end(kPythonImports),
                     [&](const PythonImport& i) { return name == alias_of(i.module, i.name); });
}

std::string python_top_module_problem(const std::string& top) {
  if (top == "torch" || top == "tensordict" || top == "dataclasses" || top == "typing" ||
      top == "builtins") {
    return "a module '" + top + "' would hide the '" + top + "' that generated modules import";
  }
  if (python_stdlib_modules().count(top)) {
    return "'" + top +
           "' is a module of Python's standard library, and a process holds one module of a name";
  }
  return "";
}

bool is_tensorclass_base_attribute(const std::string& name) {
  return name == "extend" || name == "from_tensordict";
}

std::string python_annotation(const Type& type, const ClassIndex& classes, PythonImports& imports) {
  if (type.wrapper == Wrapper::NonTensorData) return imports.use("tensordict", "NonTensorData");
  if (type.wrapper == Wrapper::MetaData) {
    // MetaData[T] checks isinstance(data, T): only a plain value type can be its T.
    const std::string metadata = imports.use("tensordict", "MetaData");
    const bool plain = form_of(type) == KindForm::Value && type.kind != TypeKind::Any;
    return plain ? metadata + "[" + annotation_of_kind(type.kind, imports) + "]" : metadata;
  }
  switch (form_of(type)) {
    case KindForm::Tensor:
      return annotation_of_kind(type.kind, imports);
    case KindForm::Value:  // TensorDict[str, V]: Python's generic alias of the same types
      return type.args.size() == 2 ? annotation_of_kind(type.kind, imports) + "[" +
                                         python_annotation(type.args[0], classes, imports) + ", " +
                                         python_annotation(type.args[1], classes, imports) + "]"
                                   : annotation_of_kind(type.kind, imports);
    case KindForm::List:
      return imports.use("builtins", "list") + "[" +
             python_annotation(type.args.at(0), classes, imports) + "]";
    case KindForm::Class:
      return python_class_name(*classes.at(type.class_name));
    case KindForm::Optional:
      return imports.use("typing", "Optional") + "[" +
             python_annotation(type.args.at(0), classes, imports) + "]";
  }
  return imports.use("typing", "Any");
}

namespace {

// Whether `text` reads back as itself between """ and """ with its continuation lines indented:
// no character to escape but the line feeds, no backslash, no """ inside nor a " at the end. (Only
// spaces indent the lines: a tab would be re-indented by inspect.cleandoc.)
bool reads_as_docstring(const std::string& text) {
  if (text.empty() || text.back() == '"' || text.find('\\') != std::string::npos ||
      text.find("\"\"\"") != std::string::npos) {
    return false;
  }
  for (size_t i = 0; i < text.size();) {
    const TextChar c = text_char_at(text, i);
    if (c.value != '\n' && needs_escape(c)) return false;
    i += c.size;
  }
  return true;
}

}  // namespace

std::string python_text(const std::string& text, PythonText form) {
  if (form == PythonText::Docstring && reads_as_docstring(text)) {
    std::string indented;  // continuation lines at the docstring's indentation (PEP 257)
    for (const char c : text) indented += c == '\n' ? std::string("\n    ") : std::string(1, c);
    return "\"\"\"" + indented + "\"\"\"";
  }
  const bool literal = form != PythonText::Comment;
  std::string out = literal ? "\"" : "";
  for (size_t i = 0; i < text.size();) {
    const TextChar c = text_char_at(text, i);
    if (literal && (c.value == '"' || c.value == '\\')) {
      out += '\\';
      out += static_cast<char>(c.value);
    } else if (!needs_escape(c)) {
      out.append(text, i, c.size);  // UTF-8 passes through: Python source is UTF-8
    } else if (literal && !c.valid) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\udc%02x", static_cast<unsigned>(c.value));
      out += escaped;
    } else {
      out += escape_sequence(c);
    }
    i += c.size;
  }
  return literal ? out + "\"" : out;
}

namespace {

// Shortest text that reads back as `value`, always with a '.' or an exponent (a float, not an
// int, as the C++ side stores it).
std::string python_float(double value, PythonImports& imports) {
  if (std::isnan(value)) return imports.use("builtins", "float") + "(\"nan\")";
  if (std::isinf(value)) {
    return imports.use("builtins", "float") + (value < 0 ? "(\"-inf\")" : "(\"inf\")");
  }
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  std::string out = text;
  if (out.find_first_of(".en") == std::string::npos) out += ".0";
  return out;
}

std::string python_literal(const nlohmann::ordered_json& value, bool as_float,
                           PythonImports& imports) {
  if (value.is_null()) return "None";
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";
  if (value.is_number_integer() && !as_float) return value.dump();
  if (value.is_number()) return python_float(value.get<double>(), imports);
  if (value.is_string()) return python_text(value.get<std::string>(), PythonText::Literal);
  std::string out = value.is_array() ? "[" : "{";
  bool first = true;
  for (const auto& [key, item] : value.items()) {
    if (!first) out += ", ";
    first = false;
    if (value.is_object()) out += python_text(key, PythonText::Literal) + ": ";
    out += python_literal(item, as_float, imports);
  }
  return out + (value.is_array() ? "]" : "}");
}

// Whether numbers of a value of `type` are floats (a float field, or a list of them).
bool holds_floats(const Type& type) {
  const Type& element = element_type(type);
  if (element.kind == TypeKind::List) return holds_floats(element.args.at(0));
  return traits(element.kind).tensors == TensorHolds::Floating;
}

// `torch.zeros(3, 4)`, `torch.full((2,), 0.5)`, `torch.tensor([1, 2])`, with the field's dtype
// when the schema gives one (tensordict/tensor_default.h; checked by then).
std::string python_tensor_default(const nlohmann::ordered_json& value, const Type& type,
                                  PythonImports& imports) {
  using Form = tensordict::TensorDefault::Form;
  std::string error;
  const auto made = tensordict::read_tensor_default(value, error);
  const std::string torch = imports.use_module("torch");
  const std::string dtype = type.dtype ? ", dtype=" + torch + "." + *type.dtype : "";
  std::string sizes;
  for (const int64_t size : made->sizes)
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(size);
  const std::string factory = torch + "." + tensordict::factory_name(made->form) + "(";
  switch (made->form) {
    case Form::Literal:
      return factory + python_literal(value, false, imports) + dtype + ")";
    case Form::Zeros:
    case Form::Ones:
      return factory + (sizes.empty() ? "()" : sizes) + dtype + ")";
    case Form::Full: {
      const std::string fill =
          made->fill_is_bool ? (made->fill == "true" ? "True" : "False") : made->fill;
      return factory + "(" + sizes + (made->sizes.size() == 1 ? ",)" : ")") + ", " + fill + dtype +
             ")";
    }
  }
  return "";
}

}  // namespace

std::string python_default(const nlohmann::ordered_json& value, const Type& type,
                           bool& per_instance, PythonImports& imports) {
  per_instance = value.is_array() || value.is_object();
  const std::string literal = python_literal(value, holds_floats(type), imports);
  if (form_of(element_type(type)) == KindForm::Tensor && !value.is_null()) {
    per_instance = true;
    return python_tensor_default(value, element_type(type), imports);
  }
  return literal;
}

}  // namespace tcgen
