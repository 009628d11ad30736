#pragma once
// Per-field view models, one builder per field kind (tensor, nested class, non-tensor value).

#include <kainjow/mustache.hpp>

#include <string>

#include "model/model.h"

namespace tcgen {

/// The column limit of generated headers (clang-format's, which the goldens are checked against).
inline constexpr size_t kColumnLimit = 100;

struct FieldView {
  kainjow::mustache::data accessor;  ///< context of field.mustache
  kainjow::mustache::data arg;       ///< the Args member: arg_type, name, arg_init, doc
  std::string spec;                  ///< FieldSpec initializer
};

struct FieldContext {
  const Class& cls;
  const ClassIndex& classes;
  size_t index;
  size_t spec_indent = 12;  ///< column of the FieldSpec initializers (10 when defined out of class)
};

FieldView tensor_field(const Field& field, const FieldContext& ctx);
FieldView nested_field(const Field& field, const FieldContext& ctx);
FieldView value_field(const Field& field, const FieldContext& ctx);

/// `text` as a list of {line} for `/// {{line}}` doc comments: a paragraph per line of the text,
/// its space-separated words wrapped so that a comment indented by `indent` stays within 100
/// columns, each escaped by cpp_text (a tab, CR or NUL is spelled out).
kainjow::mustache::data doc_lines(const std::string& text, size_t indent);

}  // namespace tcgen
