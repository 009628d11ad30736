#pragma once
// C++ spelling of schema names, types and values, in one place: dtypes, value types, runtime calls,
// FieldSpec builders, default values. The C++ emitter never pastes type strings together. (Which
// names are taken is model/name_rules.h; the names every output shares, model/output_names.h.)

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "model/model.h"
#include "model/name_rules.h"
#include "model/output_names.h"
#include "model/source_text.h"

namespace tcgen {

/// "float32" -> "at::kFloat".
std::string aten_dtype(const std::string& dtype);

/// Value type of a field in C++ (what the Args struct holds and accessors return).
std::string cpp_type(const Type& type, const std::string& current_namespace);
/// Qualified C++ name of a class as seen from `current_namespace`.
std::string qualified_class_name(const Class& cls, const std::string& current_namespace);
// Spellings inside generated code: types built from types, runtime calls, default values.

/// `::std::optional<type>`.
std::string optional_of(const std::string& type);
/// `::tensordict::Autocast<type>`: the type, or a tensor to cast to it (autocast classes).
std::string autocast_of(const std::string& type);
/// `const type&`.
std::string const_ref(const std::string& type);
/// `::std::move(expr)`.
std::string moved(const std::string& expr);
/// `as_field(expr)`: a setter's value as the FieldValue it stores (a nested class's TensorDict).
std::string as_field(const std::string& expr);

/// The TensorClass member a getter reads a field of `type` with (`tensor_field`,
/// `optional_value_field<double>`, ...); `element` is the C++ type of the field's element.
std::string field_reader(const Type& type, const std::string& element);
/// `Field("obs", Kind::Tensor)`: a field's FieldSpec, before its builder calls (class_spec()
/// aliases `Field` and `Kind`).
std::string field_spec_head(const Field& field);
/// The FieldSpec builder calls of `field` (`.nullable()`, `.with_dtype(::at::kFloat)`, its
/// default, old names, ...); `nested` is the C++ name of a Class field's class.
std::vector<std::string> field_spec_calls(const Field& field, const std::string& nested);

/// `::std::nullopt`: an unset Args member held as std::optional or Autocast.
std::string nullopt_literal();
/// `nullptr`: an Any (JSON) null.
std::string json_null_literal();
/// C++ spelling of a schema default `value` for an Args member of type `type`.
std::string default_literal(const nlohmann::ordered_json& value, const Type& type);

}  // namespace tcgen
