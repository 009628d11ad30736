#pragma once
// C++ spelling of schema names and types, in one place: identifiers, keywords, reserved tensorclass
// names, accessor names, dtypes, value types. Emitters never paste type strings together.

#include <string>
#include <vector>

#include "model.h"

namespace tcgen {

bool is_identifier(const std::string& name);
bool is_cpp_keyword(const std::string& name);
/// A macro defined where a generated header is compiled (the C library's, glog's and libtorch's,
/// the runtime's ABI macro): a member or class with that name would be macro-expanded.
bool is_macro_in_scope(const std::string& name);
/// A dotted Python path (pkg.mod.Name); `<locals>` parts are allowed, as Python writes them.
bool is_python_dotted_name(const std::string& name);
/// Names Python tensorclasses reserve (TensorDict's attributes, dunders and private names), except
/// the two Python allows (`data`, `_is_non_tensor`). Fields may only use them with `shadow`.
bool is_reserved_name(const std::string& name);

/// Names the generated class declares itself (tensordict::kGeneratedMembers); no field may take
/// them, shadow or not.
bool is_generated_member_name(const std::string& name);
/// Members of the runtime's TensorClass base (tensordict::kTensorClassMembers).
bool is_tensorclass_member_name(const std::string& name);

/// Namespaces the generated code spells (`std::`, `at::`, `tensordict::`, ...): a class or a
/// namespace part of that name would hide them (or reopen them).
bool is_library_namespace(const std::string& name);
/// A name that the headers a generated header includes declare at global scope: the libraries'
/// namespaces and <cstdint>'s int64_t (a class without a namespace cannot take it).
bool is_global_name(const std::string& name);
/// Names the generated code spells unqualified inside a class (the base class `TensorClass`; all
/// else is named from the root, `::std::int64_t`): no class or field may take them.
bool is_used_unqualified(const std::string& name);

bool is_dtype(const std::string& name);
/// "bool, uint8, ..." for messages.
std::string dtype_list();
/// "float32" -> "at::kFloat".
std::string aten_dtype(const std::string& dtype);

/// Schema spelling of the options set in `options`, in the runtime's order.
std::vector<std::string> option_names(const tensordict::ClassOptions& options);

/// Accessor of a field: its name, or `field_<name>` when the name is reserved (shadow classes)
/// or the accessor or setter would hide a member of TensorClass.
std::string accessor_name(const Field& field);
std::string setter_name(const Field& field);

/// Value type of a field in C++ (what the Args struct holds and accessors return).
std::string cpp_type(const Type& type, const std::string& current_namespace);
/// Qualified C++ name of a class as seen from `current_namespace`.
std::string qualified_class_name(const Class& cls, const std::string& current_namespace);
/// Python's `str(cls)`: "<class 'pkg.mod.Name'>"; the schema's `python` name, else
/// `<namespace dotted>.<Name>`.
std::string python_type_string(const Class& cls);

/// Output header of a schema file: `<basename without extension>.h`.
std::string header_name(const std::string& schema_path);
/// Include guard-free, deterministic path spelling used in stamps (relative, '/' separated).
std::string display_path(const std::string& path);

}  // namespace tcgen
