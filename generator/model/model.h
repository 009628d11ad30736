#pragma once
// The schema model: a plain IR that the front ends (YAML reader) fill and the checker and emitters
// read. No parser types leak in here; every node carries the location it was declared at.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tensordict/class_contract.h"

namespace tcgen {

/// 1-based position in a schema file (0 = unknown).
struct SourceLoc {
  std::string file;
  int line = 0;
  int column = 0;
};

/// A type's kind: a field kind of the contract (the same enumerators, in the same order, so that
/// tensordict::kFieldKinds spells them) or `optional[...]`.
enum class TypeKind { Tensor, Str, Int, Float, Bool, Any, List, Class, TensorDict, Optional };

namespace detail {
template <class... Pairs>
constexpr bool same_values(Pairs... pairs) {
  return ((static_cast<int>(pairs.first) == static_cast<int>(pairs.second)) && ...);
}
}  // namespace detail
static_assert(detail::same_values(std::pair{TypeKind::Tensor, tensordict::FieldKind::Tensor},
                                  std::pair{TypeKind::Str, tensordict::FieldKind::Str},
                                  std::pair{TypeKind::Int, tensordict::FieldKind::Int},
                                  std::pair{TypeKind::Float, tensordict::FieldKind::Float},
                                  std::pair{TypeKind::Bool, tensordict::FieldKind::Bool},
                                  std::pair{TypeKind::Any, tensordict::FieldKind::Any},
                                  std::pair{TypeKind::List, tensordict::FieldKind::List},
                                  std::pair{TypeKind::Class, tensordict::FieldKind::Class},
                                  std::pair{TypeKind::TensorDict,
                                            tensordict::FieldKind::TensorDict}) &&
                  static_cast<std::size_t>(TypeKind::Optional) == tensordict::kFieldKinds.size(),
              "TypeKind must be FieldKind's enumerators, in order, then Optional");

/// The field kind of a type that is not `optional[...]`.
constexpr tensordict::FieldKind field_kind(TypeKind kind) {
  return static_cast<tensordict::FieldKind>(kind);
}

/// One dim of a tensor shape: a fixed size, or a name (a batch dim of the class or a free symbol).
struct Dim {
  std::string name;   ///< empty for a fixed size
  int64_t size = -1;  ///< -1 for a named dim
};
inline bool operator==(const Dim& a, const Dim& b) { return a.name == b.name && a.size == b.size; }
inline bool operator!=(const Dim& a, const Dim& b) { return !(a == b); }

/// A value type stored as Python's NonTensorData or MetaData (a tensor collection, so that a
/// `tensor_only` class may hold it): `NonTensorData[str]`, `MetaData[str]`.
enum class Wrapper { None, NonTensorData, MetaData };

struct Type {
  TypeKind kind = TypeKind::Any;
  Wrapper wrapper = Wrapper::None;        ///< a value kind written NonTensorData[T] or MetaData[T]
  std::optional<std::string> dtype;       ///< Tensor: "float32", ...
  std::optional<std::vector<Dim>> shape;  ///< Tensor: full shape, batch dims first
  std::vector<Type> args;                 ///< List / Optional: the element type
  std::string class_name;                 ///< Class: the referenced class
  SourceLoc loc;
};

inline bool is_optional(const Type& type) { return type.kind == TypeKind::Optional; }
/// The type inside `optional[...]`, else the type itself.
inline const Type& element_type(const Type& type) {
  return is_optional(type) ? type.args.at(0) : type;
}
/// The class a field of this type nests (itself or inside `optional[...]`), else "".
inline std::string nested_class_name(const Type& type) {
  if (is_optional(type)) return type.args.empty() ? "" : nested_class_name(type.args[0]);
  return type.kind == TypeKind::Class ? type.class_name : "";
}

/// Class options, with Python's meaning (format spec §7), as the runtime spells them.
struct Options : tensordict::ClassOptions {
  SourceLoc loc;
};

struct Field {
  std::string name;
  Type type;
  std::optional<nlohmann::ordered_json> default_value;  ///< set when the schema gives a default
  std::string doc;
  /// Names the field had in earlier versions of the schema (`renamed_from:`), newest first: a
  /// directory written then stores it under one of them.
  std::vector<std::string> renamed_from;
  /// Set when the field is deprecated (`deprecated:`): kept in the data, hidden from the API.
  /// Holds the reason, possibly empty.
  std::optional<std::string> deprecated;
  SourceLoc loc;          ///< of the field's name
  SourceLoc default_loc;  ///< of the default value
};

struct Class {
  std::string name;
  std::string doc;
  std::string python_name;                ///< e.g. torchrl.data.llm.reward.RewardData
  SourceLoc python_loc;                   ///< of the python name; line 0 when none is given
  std::vector<std::string> batch_dims;    ///< names usable in tensor shapes
  std::vector<std::string> methods;       ///< hand-written member declarations, injected verbatim
  std::vector<std::string> cpp_includes;  ///< headers those declarations need
  Options options;
  /// Its fields: once bases are resolved (resolve_bases), the base's fields first.
  std::vector<Field> fields;
  /// The class it extends (`extends:`, or an annotated struct's base), as written; empty: none.
  /// Its fields, options and batch dims are the base's plus its own, and an instance converts to
  /// each of its bases, as a Python subclass is an instance of its bases.
  std::string base;
  SourceLoc base_loc;
  /// How many of `fields` come from its bases (set by resolve_bases).
  size_t inherited_fields = 0;
  std::string cpp_namespace;  ///< "a::b"; copied from the schema
  int64_t version = 0;        ///< the schema's `version:`, copied from it (0: none given)
  std::string schema_path;    ///< display path of the declaring schema file
  SourceLoc loc;
};

/// An `include:` entry: another schema file whose classes this one may name.
struct Include {
  std::string path;  ///< resolved relative to the including file
  std::string name;  ///< as written; also looked up in the include directories (tcgen -I)
  SourceLoc loc;
};

struct Schema {
  std::string path;          ///< as opened
  std::string display_path;  ///< as stamped into output (relative, no absolute paths)
  std::string cpp_namespace;
  SourceLoc namespace_loc;  ///< where the namespace is written (checked by check.cpp)
  /// Version of the schema (`version:`, a positive integer; 0: none given). Written beside every
  /// saved instance, so a newer class names the version that wrote a directory it cannot load.
  int64_t version = 0;
  SourceLoc version_loc;
  std::vector<Include> includes;
  std::vector<Class> classes;
  SourceLoc loc;
};

/// Classes by name, across every loaded schema file.
using ClassIndex = std::map<std::string, const Class*>;

}  // namespace tcgen
