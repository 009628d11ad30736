#pragma once
// Python spelling of schema names, types and values, in one place (names.h is C++'s): the module
// a class lives in, annotations, default values, keywords.

#include <nlohmann/json.hpp>

#include <string>

#include "model/model.h"
#include "model/name_rules.h"

namespace tcgen {

/// The class's dotted Python name: the schema's `python` name, else `<namespace dotted>.<Name>`.
std::string python_dotted_name(const Class& cls);
/// The module part of python_dotted_name, and the class name part.
std::string python_module(const Class& cls);
std::string python_class_name(const Class& cls);
/// The file of a module, relative to an output directory: `a/b/c.py` for `a.b.c`.
std::string python_module_file(const std::string& module);

/// Why Python cannot declare `name` as a module or class name ("" when it can): not an identifier
/// (`<locals>`, which Python writes for the scope of a function), or a keyword (`__debug__`
/// included, which cannot be assigned either).
std::string python_name_problem(const std::string& name);
/// Names a generated module spells outside its classes' own names: what it imports (`torch`,
/// `TensorClass`, `field`, `KW_ONLY`, `Any`, `Optional`) and the builtins of annotations and
/// defaults (`list`, `str`, `int`, `float`, `bool`). A class named so would hide them.
bool is_spelled_by_python_module(const std::string& name);
/// Modules every generated module imports (`torch`, `tensordict`, `dataclasses`, `typing`): a
/// generated module of that name (its first part) would hide them on the path.
bool is_imported_python_module(const std::string& name);

/// The annotation of a field of `type` (`torch.Tensor`, `Optional[list[int]]`, a class's Python
/// name).
std::string python_annotation(const Type& type, const ClassIndex& classes);
/// A schema default as a Python expression. `per_instance` is set when the value must be built
/// for each instance (a list, a dict, a tensor: a dataclass `field(default_factory=...)`).
std::string python_default(const nlohmann::ordered_json& value, const Type& type,
                           bool& per_instance);
/// Where python_text puts user text in a module.
enum class PythonText {
  Comment,    ///< the text of one `#` comment line (a line feed in it is escaped too)
  Literal,    ///< a "..." str literal whose value is the text
  Docstring,  ///< a class docstring: """...""" (continuation lines indented) where that reads
              ///< back as the text, else the Literal
};
/// `text` as Python source of `form`; every place that writes user text into a module (docs,
/// deprecation reasons, string defaults, the schema's file name) goes through it. Characters that
/// needs_escape (source_text.h) are escaped (`\r`, `\x00`, `\u2028`), so that nothing but the
/// intended comment, literal or docstring can come out of any text; in a literal also `"` and `\`
/// (a byte that is not UTF-8 as `\udcNN`, as Python's surrogateescape decodes it).
std::string python_text(const std::string& text, PythonText form);

}  // namespace tcgen
