// Which names are taken: C++ keywords, macros in scope where a generated header compiles, names
// TensorDict and the generated code reserve, dtypes. Declared in name_rules.h.
#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <string>
#include <string_view>

#include "model/name_rules.h"

#include <sstream>

#include "tensordict/class_contract.h"
#include "tensordict/detail/tensordict_members.h"

namespace tcgen {
namespace {

const std::set<std::string>& cpp_keywords() {
  static const std::set<std::string> words = {"alignas",       "alignof",     "and",
                                              "and_eq",        "asm",         "auto",
                                              "bitand",        "bitor",       "bool",
                                              "break",         "case",        "catch",
                                              "char",          "char8_t",     "char16_t",
                                              "char32_t",      "class",       "compl",
                                              "concept",       "const",       "consteval",
                                              "constexpr",     "constinit",   "const_cast",
                                              "continue",      "co_await",    "co_return",
                                              "co_yield",      "decltype",    "default",
                                              "delete",        "do",          "double",
                                              "dynamic_cast",  "else",        "enum",
                                              "explicit",      "export",      "extern",
                                              "false",         "float",       "for",
                                              "friend",        "goto",        "if",
                                              "inline",        "int",         "long",
                                              "mutable",       "namespace",   "new",
                                              "noexcept",      "not",         "not_eq",
                                              "nullptr",       "operator",    "or",
                                              "or_eq",         "private",     "protected",
                                              "public",        "register",    "reinterpret_cast",
                                              "requires",      "return",      "short",
                                              "signed",        "sizeof",      "static",
                                              "static_assert", "static_cast", "struct",
                                              "switch",        "template",    "this",
                                              "thread_local",  "throw",       "true",
                                              "try",           "typedef",     "typeid",
                                              "typename",      "union",       "unsigned",
                                              "using",         "virtual",     "void",
                                              "volatile",      "wchar_t",     "while",
                                              "xor",           "xor_eq"};
  return words;
}

template <size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

bool is_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool is_cpp_keyword(const std::string& name) { return cpp_keywords().count(name) > 0; }

bool is_macro_in_scope(const std::string& name) {
  static const std::set<std::string> macros = {
      // C library
      "assert", "errno", "offsetof", "NULL", "EOF", "stdin", "stdout", "stderr", "INT8_MIN",
      "INT8_MAX", "INT16_MIN", "INT16_MAX", "INT32_MIN", "INT32_MAX", "INT64_MIN", "INT64_MAX",
      "UINT8_MAX", "UINT16_MAX", "UINT32_MAX", "UINT64_MAX", "SIZE_MAX", "PTRDIFF_MIN",
      "PTRDIFF_MAX", "INT64_C", "UINT64_C",
      // glog, included by libtorch
      "CHECK", "DCHECK", "LOG", "VLOG", "LOG_IF", "CHECK_EQ", "CHECK_NE", "CHECK_LT", "CHECK_LE",
      "CHECK_GT", "CHECK_GE", "CHECK_NOTNULL",
      // libtorch
      "TORCH_CHECK", "TORCH_INTERNAL_ASSERT", "TORCH_WARN", "AT_ERROR", "AT_ASSERT", "C10_API",
      "TORCH_API", "C10_UNUSED", "C10_LIKELY", "C10_UNLIKELY",
      // the runtime
      "TENSORDICT_ABI_VERSION"};
  return macros.count(name) > 0;
}

bool is_generated_member_name(const std::string& name) {
  return contains(tensordict::kGeneratedMembers, name);
}

bool is_tensorclass_member_name(const std::string& name) {
  return contains(tensordict::kTensorClassMembers, name);
}

bool is_tensordict_member_name(const std::string& name) {
  return contains(tensordict::detail::kTensorDictMembers, name);
}

bool is_library_namespace(const std::string& name) {
  static const std::set<std::string> names = {"std", "at", "c10", "torch", "tensordict"};
  return names.count(name) > 0;
}

std::string namespace_problem(const std::string& name) {
  for (size_t start = 0;;) {
    const size_t end = name.find("::", start);
    const std::string part =
        name.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!is_identifier(part) || is_cpp_keyword(part))
      return "is not a C++ namespace name (like a::b)";
    if (start == 0 && is_library_namespace(part)) {
      return "is inside '" + part + "', a namespace of the libraries the generated code uses";
    }
    if (end == std::string::npos) return "";
    start = end + 2;
  }
}

bool is_global_name(const std::string& name) {
  return is_library_namespace(name) || name == "int64_t";
}

bool is_used_unqualified(const std::string& name) { return name == "TensorClass"; }

const tensordict::DtypeSpelling* schema_dtype(const std::string& name) {
  for (const auto& dtype : tensordict::kDtypes) {
    if (dtype.in_schemas && dtype.name == name) return &dtype;
  }
  return nullptr;
}

bool is_dtype(const std::string& name) { return schema_dtype(name) != nullptr; }

std::vector<std::string> dtype_names() {
  std::vector<std::string> names;
  for (const auto& dtype : tensordict::kDtypes) {
    if (dtype.in_schemas) names.emplace_back(dtype.name);
  }
  return names;
}

std::string dtype_list() {
  std::string list;
  for (const auto& name : dtype_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

bool is_python_dotted_name(const std::string& name) {
  std::istringstream parts(name);
  bool ok = !name.empty() && name.back() != '.';
  for (std::string part; ok && std::getline(parts, part, '.');) {
    ok = is_identifier(part) || part == "<locals>";
  }
  return ok;
}

bool is_python_keyword(const std::string& name) {
  static const std::set<std::string> kKeywords = {
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
  return kKeywords.count(name) > 0;
}

}  // namespace tcgen
