#pragma once
// Python spelling of schema names, types and values, in one place (emit/cpp/names.h is C++'s):
// module files, annotations, default values, keywords, imports. (A class's dotted Python name is
// model/output_names.h.)

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>

#include "model/model.h"
#include "model/name_rules.h"
#include "model/output_names.h"

namespace tcgen {

/// The file of a module, relative to an output directory: `a/b/c.py` for `a.b.c`.
std::string python_module_file(const std::string& module);

/// Why Python cannot declare `name` as a module or class name ("" when it can): not an identifier
/// (`<locals>`, which Python writes for the scope of a function), or a keyword (`__debug__`
/// included, which cannot be assigned either).
std::string python_name_problem(const std::string& name);
/// What a generated module imports, each name bound to its private alias (`import torch as
/// _torch`, `from typing import Optional as _Optional`, `from builtins import list as _list`), so
/// that a class or field may take any public name without hiding what the module's code reads.
class PythonImports {
 public:
  /// The alias of `name` of `module` (`_Optional`), noted as imported.
  std::string use(const std::string& module, const std::string& name);
  /// The alias of the whole `module` (`_torch`), noted as imported.
  std::string use_module(const std::string& module);
  /// The import lines: the standard library's (`builtins`, `dataclasses`, `typing`), then the
  /// others', each group sorted, as isort groups them; one line each, no final line feed.
  std::string lines() const;

 private:
  std::map<std::string, std::set<std::string>> names_;  // module -> names ("" for the module)
};

/// The helper a module declares when one of its classes loads fields under their old names
/// (python_module.mustache).
inline constexpr const char* kPythonRenameHelper = "_loads_old_names";
/// The helper a module declares when one of its classes has fields with a default that loading
/// older data fills in, as the C++ class does (python_module.mustache).
inline constexpr const char* kPythonDefaultsHelper = "_fills_added_fields";
/// The decorator that makes a TensorClass a pytree node with a serialized name and a JSON context,
/// so that torch.export and AOTInductor packages take and return it (python_module.mustache).
inline constexpr const char* kPythonPytreeHelper = "_pytree_node";

/// Names a generated module binds besides its classes: the aliases PythonImports may give and the
/// helpers. A class named so would replace one of them for the classes after it.
bool is_bound_by_python_module(const std::string& name);
/// Why a generated module whose dotted name starts with `top` could not be imported as itself
/// ("" when it can): `top` is a module of Python's standard library (3.11 to 3.14), or `torch` or
/// `tensordict`, which a process then has already, or would take from the generated module.
std::string python_top_module_problem(const std::string& top);
/// Methods Python's TensorClass gives every class beyond TensorDict's names (`extend`,
/// `from_tensordict`), shadow or not: a field so named reads back as the method, its default too.
bool is_tensorclass_base_attribute(const std::string& name);

/// The annotation of a field of `type` (`_torch.Tensor`, `_Optional[_list[_int]]`, a class's
/// Python name), noting in `imports` what it spells.
std::string python_annotation(const Type& type, const ClassIndex& classes, PythonImports& imports);
/// A schema default as a Python expression. `per_instance` is set when the value must be built
/// for each instance (a list, a dict, a tensor: a dataclass `field(default_factory=...)`).
/// What it spells (`_torch.tensor`, `_float("nan")`) is noted in `imports`.
std::string python_default(const nlohmann::ordered_json& value, const Type& type,
                           bool& per_instance, PythonImports& imports);
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
