#include "model/output_names.h"

#include <filesystem>

#include "model/name_rules.h"

namespace tcgen {

std::vector<std::string> option_names(const tensordict::ClassOptions& options) {
  std::vector<std::string> names;
  for (const auto& row : tensordict::kClassOptions) {
    if (options.has(row.option)) names.emplace_back(row.name);
  }
  return names;
}

std::string accessor_name(const Field& field) {
  const auto is_member = [](const std::string& name) {
    return is_tensorclass_member_name(name) || is_tensordict_member_name(name);
  };
  const bool hides_member =
      is_reserved_name(field.name) || is_member(field.name) || is_member("set_" + field.name);
  return hides_member ? std::string(tensordict::kReservedFieldPrefix) + field.name : field.name;
}

std::string setter_name(const Field& field) { return "set_" + accessor_name(field); }

std::string header_name(const std::string& schema_path) {
  return std::filesystem::path(schema_path).stem().string() + ".h";
}

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

std::string python_type_string(const Class& cls) {
  return "<class '" + python_dotted_name(cls) + "'>";
}

}  // namespace tcgen
