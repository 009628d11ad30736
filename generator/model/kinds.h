#pragma once
// A field kind, in one place: one row per kind (kinds.cpp) holds how C++ and Python spell its
// values, which JSON values and tensors hold it, and how setters take it. The stages switch on a
// row's form, never on the kind, so a new plain-value kind is its enumerator (class_contract.h,
// model.h), its row here and its reading in the runtime (docs/architecture.md lists the files).

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "model/model.h"

namespace tcgen {

/// What a kind is made of, as the stages that build or check a field see it.
enum class KindForm {
  Value,     ///< a plain value: str, int, float, bool, any
  Tensor,    ///< tensor[...]
  Class,     ///< a nested tensorclass, named by its class
  List,      ///< list[T]: a JSON array
  Optional,  ///< optional[T]: T or None
};

/// Which stored tensors hold a value of a kind (Python keeps numbers as tensors unless `nocast`).
enum class TensorHolds { None, Bool, Integral, Floating, Any };

/// One kind's row. The spellings and predicates are those of its values (form Value and Tensor);
/// the other forms are built from their parts.
struct KindTraits {
  TypeKind kind;
  KindForm form;
  /// The C++ type of a value ("::std::string"); empty where it is built from parts.
  std::string_view cpp_type;
  /// Its Python annotation ("str"); empty where it is built from parts.
  std::string_view python_annotation;
  /// Whether a JSON value (a schema default, stored non-tensor data) is a value of the kind.
  bool (*holds_json)(const nlohmann::ordered_json& value);
  /// Which stored tensors hold a value of the kind.
  TensorHolds tensors;
  /// Python's autocast converts other values to it (`str(x)`, `int(t)`): setters take a tensor too.
  bool autocast;
  /// JSON itself (`any`): None is one of its values, and a default is written as JSON text.
  bool is_json;
  /// Stored as a nested TensorDict (`TensorDict`), not as JSON or a tensor.
  bool is_tensordict;
};

/// The row of `kind`.
const KindTraits& traits(TypeKind kind);

/// Held and passed by value in C++ (int, float, bool).
inline bool is_number(const KindTraits& row) {
  return row.tensors == TensorHolds::Bool || row.tensors == TensorHolds::Integral ||
         row.tensors == TensorHolds::Floating;
}

/// The form of `type`'s kind.
inline KindForm form_of(const Type& type) { return traits(type.kind).form; }

/// How a schema spells `kind` ("str", "optional"; "class" for a class, which is named by its name).
std::string_view schema_spelling(TypeKind kind);

/// `type` as a schema writes it (the inverse of parse_type), in --dump-model and messages:
/// `tensor[float32, (B, 3)]`, `optional[list[str]]`, `Foo`.
std::string type_to_string(const Type& type);

}  // namespace tcgen
