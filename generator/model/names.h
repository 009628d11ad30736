#pragma once
// C++ spelling of schema names and types, in one place: identifiers, keywords, reserved tensorclass
// names, accessor names, dtypes, value types, runtime calls, default values. Emitters never paste
// type strings together. (Which names are taken, the is_* checks, is in model/name_rules.h.)

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/name_rules.h"

namespace tcgen {

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
/// What a field's runtime FieldSpec (tensordict/class_spec.h) holds, decided once from the schema:
/// generated headers spell it as builder calls (field_spec_calls), `tdtool verify --schema` builds
/// the same FieldSpec from it at run time, so both load a directory by the same rules.
struct FieldSpecFacts {
  tensordict::FieldKind kind = tensordict::FieldKind::Any;  ///< the type less `optional[...]`
  bool optional = false;                                    ///< `optional[...]`: may be None
  std::string nested_class;                   ///< Class fields: the class's schema name
  std::optional<std::string> dtype;           ///< Tensor fields: "float32", ...; TensorDict[str,
                                              ///< tensor[dtype]]: the entries'
  bool tensor_values = false;                 ///< TensorDict[str, tensor]: every entry a tensor
  Wrapper wrapper = Wrapper::None;            ///< NonTensorData[T], MetaData[T]: stored so
  std::optional<std::vector<int64_t>> shape;  ///< Tensor fields: sizes, -1 for a named dim
  /// The default a directory written before the field was added gets, as JSON text (ASCII); unset
  /// when the schema gives none, gives None, or a value JSON cannot spell (.inf, .nan).
  std::optional<std::string> default_json;
  std::vector<std::string> old_names;  ///< `renamed_from:`, newest first
  bool deprecated = false;
};
/// The FieldSpec facts of `field`.
FieldSpecFacts field_spec_facts(const Field& field);
/// The FieldSpec builder calls of `field` (`.nullable()`, `.with_dtype(::at::kFloat)`, its
/// default, old names, ...); `nested` is the C++ name of a Class field's class.
std::vector<std::string> field_spec_calls(const Field& field, const std::string& nested);

/// Where cpp_text puts user text in a header.
enum class CppText {
  Comment,    ///< the text of one `//` comment line (a line feed in it is escaped too)
  Literal,    ///< a "..." literal holding exactly the text's bytes (up to a NUL: see text_literal)
  InLiteral,  ///< the same between the quotes a template writes (`"{{header}} was ..."`)
};
/// `text` as C++ source of `form`; every place that writes user text into a header (docs, string
/// defaults, names in literals, the schema's file name) goes through it. Characters that
/// needs_escape (source_text.h) are escaped: in a comment as `\r`, `\x00`, `\u2028`; in a literal
/// as octal escapes of their bytes (which never swallow a following digit, as `\x` would), with
/// `"`, `\` and the second '?' of a pair (a trigraph under -trigraphs) escaped too. A comment
/// line ending in a backslash would continue onto the next line: check.cpp refuses doc words
/// that end in one.
std::string cpp_text(const std::string& text, CppText form);

/// `::std::nullopt`: an unset Args member held as std::optional or Autocast.
std::string nullopt_literal();
/// `nullptr`: an Any (JSON) null.
std::string json_null_literal();
/// C++ spelling of a schema default `value` for an Args member of type `type`.
std::string default_literal(const nlohmann::ordered_json& value, const Type& type);

/// Output header of a schema file: `<basename without extension>.h`.
std::string header_name(const std::string& schema_path);
}  // namespace tcgen
