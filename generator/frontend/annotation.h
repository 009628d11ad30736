#pragma once
// The text of TC_CLASS / TC_FIELD annotations (runtime/include/tensordict/annotate.h) applied to
// the model. Torch- and libclang-free: the C++ front end hands over the annotation strings.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// One annotation: its kind ("class" or "field") and its `key=value` entries, in order.
struct Annotation {
  std::string kind;
  std::vector<std::pair<std::string, std::string>> entries;
  std::vector<std::string> malformed;  ///< entries without '='
};

/// Parses `tensorclass:<kind>` followed by entries separated by TC_DETAIL_SEP (annotate.h); nullopt
/// for annotations that are not tcgen's.
std::optional<Annotation> parse_annotation(const std::string& text);

/// TC_CLASS: the schema and class keys of schema_keys() that annotations take; problems are
/// reported at `cls.loc`.
void apply_class_annotation(const Annotation& annotation, Class& cls, Diagnostics& diagnostics);
/// TC_FIELD: the field keys of schema_keys() that annotations take, applied to `field` whose type
/// is already mapped; problems are reported at `field.loc`.
void apply_field_annotation(const Annotation& annotation, Field& field, Diagnostics& diagnostics);

}  // namespace tcgen
