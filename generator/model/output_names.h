#pragma once
// The names a schema's outputs give its parts, which the checks guard and every emitter writes:
// options in schema spelling, a field's C++ accessor and setter, a schema's header file, a class's
// Python identity (its `_type` in saved data). How each language spells code is under emit/.

#include <string>
#include <vector>

#include "model/model.h"

namespace tcgen {

/// Schema spelling of the options set in `options`, in the runtime's order.
std::vector<std::string> option_names(const tensordict::ClassOptions& options);

/// Accessor of a field: its name, or `field_<name>` when the name is reserved (shadow classes)
/// or the accessor or setter would hide a member of TensorClass.
std::string accessor_name(const Field& field);
std::string setter_name(const Field& field);

/// Output header of a schema file: `<basename without extension>.h`.
std::string header_name(const std::string& schema_path);
/// The class's dotted Python name: the schema's `python` name, else `<namespace dotted>.<Name>`.
std::string python_dotted_name(const Class& cls);
/// The module part of python_dotted_name, and the class name part.
std::string python_module(const Class& cls);
std::string python_class_name(const Class& cls);
/// Python's `str(cls)`: "<class 'pkg.mod.Name'>"; the schema's `python` name, else
/// `<namespace dotted>.<Name>`.
std::string python_type_string(const Class& cls);

}  // namespace tcgen
