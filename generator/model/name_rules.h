#pragma once
// Which names a schema may use: identifiers, C++ and Python keywords, macros in scope where a
// generated header compiles, names TensorDict and the generated code reserve, dtypes. Every front
// end, the checker and the emitters ask here; the spellings themselves are in emit/.

#include <string>
#include <vector>

#include "tensordict/class_contract.h"

namespace tcgen {

bool is_identifier(const std::string& name);
bool is_cpp_keyword(const std::string& name);
/// A macro defined where a generated header is compiled (the C library's, glog's and libtorch's,
/// the runtime's ABI macro): a member or class with that name would be macro-expanded.
bool is_macro_in_scope(const std::string& name);
/// A dotted Python path (pkg.mod.Name); `<locals>` parts are allowed, as Python writes them.
bool is_python_dotted_name(const std::string& name);
/// Names Python tensorclasses reserve (TensorDict's public and private attributes, and names
/// starting with `__`), except the two Python allows (`data`, `_is_non_tensor`). Fields may only
/// use them with `shadow`; other private names (`_c`) are fields like any.
bool is_reserved_name(const std::string& name);
/// Why no field may be named `name`, shadow or not ("" when it may): an attribute Python's
/// TensorClass keeps for itself (`_tensordict`, `_frozen`, ...) or a meta.json entry of saves.
std::string internal_name_problem(const std::string& name);

/// Names the generated class declares itself (tensordict::kGeneratedMembers); no field may take
/// them, shadow or not.
bool is_generated_member_name(const std::string& name);
/// Members the runtime's TensorClass base declares itself (tensordict::kTensorClassMembers); the
/// generated code calls some of them unqualified.
bool is_tensorclass_member_name(const std::string& name);
/// Members of TensorDict, which every generated class inherits (tensordict::detail::
/// kTensorDictMembers, read from tensordict.h at configure time).
bool is_tensordict_member_name(const std::string& name);

/// Namespaces the generated code spells (`std::`, `at::`, `tensordict::`, ...): a class or a
/// namespace part of that name would hide them (or reopen them).
bool is_library_namespace(const std::string& name);
/// Why `name` (`a::b`) cannot be the namespace of a schema's classes, as the end of a message
/// ("is not a C++ namespace name (like a::b)"); "" when it can.
std::string namespace_problem(const std::string& name);
/// A name that the headers a generated header includes declare at global scope: the libraries'
/// namespaces and <cstdint>'s int64_t (a class without a namespace cannot take it).
bool is_global_name(const std::string& name);
/// Names the generated code spells unqualified inside a class (the base class `TensorClass`; all
/// else is named from the root, `::std::int64_t`): no class or field may take them.
bool is_used_unqualified(const std::string& name);

/// The dtype a schema names `name` ("float32", ...), else null.
const tensordict::DtypeSpelling* schema_dtype(const std::string& name);
bool is_dtype(const std::string& name);
/// The dtypes a schema names, in the contract's order.
std::vector<std::string> dtype_names();
/// "bool, uint8, ..." for messages.
std::string dtype_list();
/// A Python keyword (`lambda`, `None`, ...): a class or field of that name cannot be declared in
/// Python.
bool is_python_keyword(const std::string& name);

}  // namespace tcgen
