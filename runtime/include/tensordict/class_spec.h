#pragma once
/// \file
/// The static description of a generated class (ClassSpec, FieldSpec) and the values its fields
/// take (FieldValue, Autocast): what tcgen emits and the runtime's tensorclass code reads.

#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "tensordict/class_contract.h"
#include "tensordict/class_info.h"
#include "tensordict/tensordict.h"

namespace tensordict {

struct ClassSpec;

/// One field of a class. Generated code builds it by name:
/// `FieldSpec("obs", FieldKind::Tensor).with_dtype(at::ScalarType::Float).with_shape({-1, 3})`.
struct FieldSpec {
  const char* name;       ///< the field's name in the schema, in Python and on disk
  FieldKind kind;         ///< what the field holds (tensor, str, nested class...)
  bool optional = false;  ///< whether the field may be None
  /// Class fields: the nested class's spec.
  const ClassSpec& (*nested)() = nullptr;
  /// Tensor fields: the required dtype, when the schema gives one; TensorDict fields with
  /// tensor_values: every entry's.
  std::optional<at::ScalarType> dtype = std::nullopt;
  /// TensorDict fields typed `TensorDict[str, tensor]`: every entry is a tensor.
  bool tensor_values = false;
  /// Value fields typed `NonTensorData[T]` or `MetaData[T]`: always stored as NonTensorData (a
  /// number too, whatever the class options), flagged as Python's MetaData for the latter.
  bool non_tensor_data = false;
  /// `MetaData[T]`: stored as Python's MetaData (non_tensor_data is set too).
  bool metadata = false;
  /// Tensor fields: the required shape (-1 = any size), when the schema gives one.
  std::optional<std::vector<int64_t>> shape = std::nullopt;
  /// The schema's default as JSON text, when it gives one other than None: the value of the field
  /// in a directory written before the field was added, and of a deprecated field.
  const char* default_json = nullptr;
  /// Names the field had in earlier schema versions (`renamed_from:`), newest first.
  std::vector<const char*> old_names;
  /// Deprecated: kept in the data, no accessor; new instances take its default.
  bool deprecated = false;

  /// A required field of `field_kind`, no dtype or shape constraint.
  FieldSpec(const char* field_name, FieldKind field_kind) : name(field_name), kind(field_kind) {}
  /// The field may be None (`optional[...]` in the schema).
  FieldSpec& nullable() { return optional = true, *this; }
  /// A class field: `spec` gives the nested class's spec.
  FieldSpec& with_class(const ClassSpec& (*spec)()) { return nested = spec, *this; }
  /// A value field stored as NonTensorData (`NonTensorData[T]`).
  FieldSpec& as_non_tensor_data() { return non_tensor_data = true, *this; }
  /// A value field stored as Python's MetaData (`MetaData[T]`).
  FieldSpec& as_metadata() { return non_tensor_data = metadata = true, *this; }
  /// A TensorDict field whose entries must be tensors (`TensorDict[str, tensor]`).
  FieldSpec& with_tensor_values() { return tensor_values = true, *this; }
  /// A tensor field that must hold `required`.
  FieldSpec& with_dtype(at::ScalarType required) { return dtype = required, *this; }
  /// A tensor field whose shape must match `required` (-1: any size).
  FieldSpec& with_shape(std::vector<int64_t> required) {
    return shape = std::move(required), *this;
  }
  /// The schema's default, as JSON text (`R"(3)"`).
  FieldSpec& with_default(const char* json) { return default_json = json, *this; }
  /// The field's names in earlier versions of the schema.
  FieldSpec& renamed_from(std::vector<const char*> names) {
    return old_names = std::move(names), *this;
  }
  /// A deprecated field.
  FieldSpec& as_deprecated() { return deprecated = true, *this; }
};

namespace detail::tc {
/// ClassSpec::identity's value (runtime/src/tensorclass/registry.cpp).
std::shared_ptr<const memmap::ClassInfo> identity_of(const char* python_type,
                                                     const std::vector<FieldSpec>& fields,
                                                     int64_t version);
}  // namespace detail::tc

/// A generated class: its names, options and fields in schema order (the order of its entries).
struct ClassSpec {
  const char* name;               ///< C++ / Python class name, e.g. "RewardData"
  const char* python_type;        ///< `_type` on disk, e.g. "<class 'torchrl...RewardData'>"
  ClassOptions options;           ///< as kClassOptions names them (class_contract.h)
  std::vector<FieldSpec> fields;  ///< in schema order
  /// The schema's version (0: the schema gives none). Saved beside each instance (schema.json),
  /// so that loading a directory of another version can name both.
  int64_t version = 0;
  /// The class as the TensorDict of an instance remembers it (its `_type`, every field None until
  /// set, the version), so that an instance stored in a TensorDict is saved as its class.
  std::shared_ptr<const memmap::ClassInfo> identity =
      detail::tc::identity_of(python_type, fields, version);

  /// Index of the field called `name`, or -1.
  int64_t field_index(std::string_view name) const;
  /// The class's dotted Python name (python_type without `<class '` and `'>`): what its emitted
  /// module registers it as a pytree node under.
  std::string_view python_name() const;
};

struct TensorClassTag;

/// A value given to a field: None, a tensor, a nested collection (a TensorDict or an instance of a
/// generated class) or JSON-like data. Which kind is stored then depends on the class options
/// (spec §7.1).
class FieldValue {
 public:
  /// None.
  FieldValue() = default;
  /// None.
  FieldValue(std::nullopt_t) {}  // NOLINT
  /// An undefined tensor (a default-constructed Args member) means None.
  FieldValue(at::Tensor t) {  // NOLINT
    if (t.defined()) v_ = std::move(t);
  }
  /// A nested collection (a TensorDict; for a class field, the nested instance's).
  FieldValue(TensorDict td) : v_(std::move(td)) {}  // NOLINT
  /// An instance of a generated class: its TensorDict.
  template <class T, class = std::enable_if_t<std::is_base_of_v<TensorClassTag, T>>>
  FieldValue(const T& instance) : v_(instance._tensordict()) {}  // NOLINT
  /// JSON-like data (str, numbers, bools, lists, dicts).
  FieldValue(Json json) : v_(std::move(json)) {}  // NOLINT
  /// A string.
  FieldValue(const char* s) : v_(Json(s)) {}  // NOLINT
  /// A string.
  FieldValue(std::string s) : v_(Json(std::move(s))) {}  // NOLINT
  /// A bool.
  FieldValue(bool b) : v_(Json(b)) {}  // NOLINT
  /// An integer.
  FieldValue(int v) : v_(Json(static_cast<int64_t>(v))) {}  // NOLINT
  /// An integer.
  FieldValue(int64_t v) : v_(Json(v)) {}  // NOLINT
  /// A float.
  FieldValue(double v) : v_(Json(v)) {}  // NOLINT
  /// The value, or None when empty.
  template <class T>
  FieldValue(std::optional<T> v) {  // NOLINT
    if (v) *this = FieldValue(std::move(*v));
  }
  /// A list (JSON; the class options decide whether numbers become a tensor).
  template <class T>
  FieldValue(const std::vector<T>& items) : v_(Json(items)) {}  // NOLINT

  /// True for None.
  bool is_none() const { return std::holds_alternative<std::monostate>(v_); }
  /// The tensor, or nullptr when the value is not one.
  const at::Tensor* tensor() const { return std::get_if<at::Tensor>(&v_); }
  /// The TensorDict, or nullptr when the value is not one.
  const TensorDict* tensordict() const { return std::get_if<TensorDict>(&v_); }
  /// The JSON-like data, or nullptr when the value is not such data.
  const Json* json() const { return std::get_if<Json>(&v_); }

 private:
  std::variant<std::monostate, at::Tensor, TensorDict, Json> v_;
};

/// What an autocast class's constructor and setters take for an int, float, bool or str field: a
/// `T`, None, or a tensor, which the class casts to `T` as Python's autocast does (`int(t)`).
template <class T>
class Autocast : public FieldValue {
 public:
  /// None.
  Autocast() = default;
  /// None.
  Autocast(std::nullopt_t) {}  // NOLINT
  /// The value itself.
  Autocast(T value) : FieldValue(std::move(value)) {}  // NOLINT
  /// The value, or None when empty.
  Autocast(std::optional<T> value) : FieldValue(std::move(value)) {}  // NOLINT
  /// A tensor, cast to `T` when stored.
  Autocast(at::Tensor t) : FieldValue(std::move(t)) {}  // NOLINT
  /// A string literal for a str field (one user-defined conversion, not two).
  template <class U = T, class = std::enable_if_t<std::is_same_v<U, std::string>>>
  Autocast(const char* s) : FieldValue(s) {}  // NOLINT
};

/// Field values by name: Python's `non_tensordict` argument of from_tensordict.
using FieldValues = std::vector<std::pair<std::string, FieldValue>>;

}  // namespace tensordict
