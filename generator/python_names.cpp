#include "python_names.h"

#include <cmath>
#include <cstdio>
#include <set>

namespace tcgen {

std::string python_dotted_name(const Class& cls) {
  if (!cls.python_name.empty()) return cls.python_name;
  std::string dotted = cls.cpp_namespace;
  for (size_t at = dotted.find("::"); at != std::string::npos; at = dotted.find("::"))
    dotted.replace(at, 2, ".");
  return (dotted.empty() ? "" : dotted + ".") + cls.name;
}

std::string python_module(const Class& cls) {
  const std::string dotted = python_dotted_name(cls);
  const size_t dot = dotted.rfind('.');
  return dot == std::string::npos ? "" : dotted.substr(0, dot);
}

std::string python_class_name(const Class& cls) {
  const std::string dotted = python_dotted_name(cls);
  return dotted.substr(dotted.rfind('.') + 1);  // npos + 1 == 0
}

std::string python_module_file(const std::string& module) {
  std::string path = module;
  for (char& c : path)
    if (c == '.') c = '/';
  return path + ".py";
}

bool is_python_keyword(const std::string& name) {
  static const std::set<std::string> kKeywords = {
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
  return kKeywords.count(name) > 0;
}

std::string python_annotation(const Type& type, const ClassIndex& classes) {
  switch (type.kind) {
    case TypeKind::Tensor:
      return "torch.Tensor";
    case TypeKind::Str:
      return "str";
    case TypeKind::Int:
      return "int";
    case TypeKind::Float:
      return "float";
    case TypeKind::Bool:
      return "bool";
    case TypeKind::Any:
      return "Any";
    case TypeKind::List:
      return "list[" + python_annotation(type.args.at(0), classes) + "]";
    case TypeKind::Class:
      return python_class_name(*classes.at(type.class_name));
    case TypeKind::Optional:
      return "Optional[" + python_annotation(type.args.at(0), classes) + "]";
  }
  return "Any";
}

std::string python_string_literal(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
          out += escaped;
        } else {
          out += c;  // UTF-8 passes through: Python source is UTF-8
        }
    }
  }
  return out + "\"";
}

namespace {

// Shortest text that reads back as `value`, always with a '.' or an exponent (a float, not an
// int, as the C++ side stores it).
std::string python_float(double value) {
  if (std::isnan(value)) return "float(\"nan\")";
  if (std::isinf(value)) return value < 0 ? "float(\"-inf\")" : "float(\"inf\")";
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  std::string out = text;
  if (out.find_first_of(".en") == std::string::npos) out += ".0";
  return out;
}

std::string python_literal(const nlohmann::ordered_json& value, bool as_float) {
  if (value.is_null()) return "None";
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";
  if (value.is_number_integer() && !as_float) return value.dump();
  if (value.is_number()) return python_float(value.get<double>());
  if (value.is_string()) return python_string_literal(value.get<std::string>());
  std::string out = value.is_array() ? "[" : "{";
  bool first = true;
  for (const auto& [key, item] : value.items()) {
    if (!first) out += ", ";
    first = false;
    if (value.is_object()) out += python_string_literal(key) + ": ";
    out += python_literal(item, as_float);
  }
  return out + (value.is_array() ? "]" : "}");
}

// Whether numbers of a value of `type` are floats (a float field, or a list of them).
bool holds_floats(const Type& type) {
  const Type& element = element_type(type);
  if (element.kind == TypeKind::List) return holds_floats(element.args.at(0));
  return element.kind == TypeKind::Float;
}

}  // namespace

std::string python_default(const nlohmann::ordered_json& value, const Type& type,
                           bool& per_instance) {
  per_instance = value.is_array() || value.is_object();
  const std::string literal = python_literal(value, holds_floats(type));
  if (element_type(type).kind == TypeKind::Tensor && !value.is_null()) {
    per_instance = true;
    return "torch.tensor(" + literal + ")";
  }
  return literal;
}

}  // namespace tcgen
