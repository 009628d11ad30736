#include "model/python_names.h"

#include <cmath>
#include <cstdio>
#include <set>

#include "model/kinds.h"
#include "model/names.h"
#include "model/source_text.h"

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

std::string python_name_problem(const std::string& name) {
  if (name == "<locals>") {
    return "'<locals>' is Python's name for the scope of a function, which a module cannot "
           "declare";
  }
  if (!is_identifier(name)) return "'" + name + "' is not a Python identifier";
  if (is_python_keyword(name) || name == "__debug__") return "'" + name + "' is a Python keyword";
  return "";
}

bool is_spelled_by_python_module(const std::string& name) {
  static const std::set<std::string> kSpelled = {"torch", "TensorClass", "field", "KW_ONLY",
                                                 "Any",   "Optional",    "list",  "str",
                                                 "int",   "float",       "bool"};
  return kSpelled.count(name) > 0;
}

bool is_imported_python_module(const std::string& name) {
  return name == "torch" || name == "tensordict" || name == "dataclasses" || name == "typing";
}

std::string python_annotation(const Type& type, const ClassIndex& classes) {
  switch (form_of(type)) {
    case KindForm::Tensor:
    case KindForm::Value:
      return std::string(traits(type.kind).python_annotation);
    case KindForm::List:
      return "list[" + python_annotation(type.args.at(0), classes) + "]";
    case KindForm::Class:
      return python_class_name(*classes.at(type.class_name));
    case KindForm::Optional:
      return "Optional[" + python_annotation(type.args.at(0), classes) + "]";
  }
  return "Any";
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
  if (value.is_string()) return python_text(value.get<std::string>(), PythonText::Literal);
  std::string out = value.is_array() ? "[" : "{";
  bool first = true;
  for (const auto& [key, item] : value.items()) {
    if (!first) out += ", ";
    first = false;
    if (value.is_object()) out += python_text(key, PythonText::Literal) + ": ";
    out += python_literal(item, as_float);
  }
  return out + (value.is_array() ? "]" : "}");
}

// Whether numbers of a value of `type` are floats (a float field, or a list of them).
bool holds_floats(const Type& type) {
  const Type& element = element_type(type);
  if (element.kind == TypeKind::List) return holds_floats(element.args.at(0));
  return traits(element.kind).tensors == TensorHolds::Floating;
}

}  // namespace

std::string python_default(const nlohmann::ordered_json& value, const Type& type,
                           bool& per_instance) {
  per_instance = value.is_array() || value.is_object();
  const std::string literal = python_literal(value, holds_floats(type));
  if (form_of(element_type(type)) == KindForm::Tensor && !value.is_null()) {
    per_instance = true;
    return "torch.tensor(" + literal + ")";
  }
  return literal;
}

}  // namespace tcgen
