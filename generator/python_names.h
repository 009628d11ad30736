#pragma once
// Python spelling of schema names, types and values, in one place (names.h is C++'s): the module
// a class lives in, annotations, default values, keywords.

#include <nlohmann/json.hpp>

#include <string>

#include "check.h"
#include "model.h"

namespace tcgen {

/// The class's dotted Python name: the schema's `python` name, else `<namespace dotted>.<Name>`.
std::string python_dotted_name(const Class& cls);
/// The module part of python_dotted_name, and the class name part.
std::string python_module(const Class& cls);
std::string python_class_name(const Class& cls);
/// The file of a module, relative to an output directory: `a/b/c.py` for `a.b.c`.
std::string python_module_file(const std::string& module);

/// A Python keyword (`lambda`, `None`, ...): a class or field of that name cannot be declared in
/// Python.
bool is_python_keyword(const std::string& name);

/// The annotation of a field of `type` (`torch.Tensor`, `Optional[list[int]]`, a class's Python
/// name).
std::string python_annotation(const Type& type, const ClassIndex& classes);
/// A schema default as a Python expression. `per_instance` is set when the value must be built
/// for each instance (a list, a dict, a tensor: a dataclass `field(default_factory=...)`).
std::string python_default(const nlohmann::ordered_json& value, const Type& type,
                           bool& per_instance);
/// A Python string literal holding `text` (double-quoted, escaped).
std::string python_string_literal(const std::string& text);

}  // namespace tcgen
