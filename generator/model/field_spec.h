#pragma once
// What a field's runtime FieldSpec holds, decided once from the schema (C++'s emitter spells it,
// tdtool builds it at run time).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"

namespace tcgen {

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

}  // namespace tcgen
