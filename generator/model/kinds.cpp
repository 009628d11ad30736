#include "model/kinds.h"

#include <array>
#include <cstddef>

namespace tcgen {
namespace {

using Json = nlohmann::ordered_json;

bool is_string(const Json& v) { return v.is_string(); }
bool is_integer(const Json& v) { return v.is_number_integer(); }
bool is_number(const Json& v) { return v.is_number(); }
bool is_boolean(const Json& v) { return v.is_boolean(); }
bool is_anything(const Json&) { return true; }
bool is_nothing(const Json&) { return false; }  // tensors and classes are never JSON values

constexpr std::size_t kKindCount = static_cast<std::size_t>(TypeKind::Optional) + 1;

// One row per TypeKind, in enumerator order (checked below): a missing row fails to compile.
constexpr std::array<KindTraits, kKindCount> kKinds{{
    {TypeKind::Tensor, KindForm::Tensor, "::at::Tensor", "torch.Tensor", is_nothing,
     TensorHolds::Any, false, false, false},
    {TypeKind::Str, KindForm::Value, "::std::string", "str", is_string, TensorHolds::None, true,
     false, false},
    {TypeKind::Int, KindForm::Value, "::std::int64_t", "int", is_integer, TensorHolds::Integral,
     true, false, false},
    {TypeKind::Float, KindForm::Value, "double", "float", is_number, TensorHolds::Floating, true,
     false, false},
    {TypeKind::Bool, KindForm::Value, "bool", "bool", is_boolean, TensorHolds::Bool, true, false,
     false},
    {TypeKind::Any, KindForm::Value, "::tensordict::Json", "Any", is_anything, TensorHolds::Any,
     false, true, false},
    {TypeKind::List, KindForm::List, "", "", is_nothing, TensorHolds::None, false, false, false},
    {TypeKind::Class, KindForm::Class, "", "", is_nothing, TensorHolds::None, false, false, false},
    {TypeKind::TensorDict, KindForm::Value, "::tensordict::TensorDict", "TensorDict", is_nothing,
     TensorHolds::None, false, false, true},
    {TypeKind::Optional, KindForm::Optional, "", "", is_nothing, TensorHolds::None, false, false,
     false},
}};

constexpr bool rows_in_order() {
  for (std::size_t i = 0; i < kKinds.size(); ++i) {
    if (static_cast<std::size_t>(kKinds[i].kind) != i) return false;
  }
  return true;
}
static_assert(rows_in_order(), "kKinds must list TypeKind in enumerator order, one row each");

std::string shape_to_string(const std::vector<Dim>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].name.empty() ? std::to_string(shape[i].size) : shape[i].name;
  }
  return s + ")";
}

}  // namespace

const KindTraits& traits(TypeKind kind) { return kKinds.at(static_cast<std::size_t>(kind)); }

std::string_view schema_spelling(TypeKind kind) {
  return kind == TypeKind::Optional ? "optional" : tensordict::spelling(field_kind(kind)).schema;
}

std::string type_to_string(const Type& type) {
  if (type.wrapper != Wrapper::None) {
    Type inner = type;
    inner.wrapper = Wrapper::None;
    const std::string wrapper = type.wrapper == Wrapper::MetaData ? "MetaData" : "NonTensorData";
    return type.kind == TypeKind::Any ? wrapper : wrapper + "[" + type_to_string(inner) + "]";
  }
  const std::string name(schema_spelling(type.kind));
  switch (form_of(type)) {
    case KindForm::Tensor: {
      std::string params = type.dtype.value_or("");
      if (type.shape) params += (params.empty() ? "" : ", ") + shape_to_string(*type.shape);
      return params.empty() ? name : name + "[" + params + "]";
    }
    case KindForm::Value:  // TensorDict[str, V] has its key and value types
      return type.args.size() == 2 ? name + "[" + type_to_string(type.args[0]) + ", " +
                                         type_to_string(type.args[1]) + "]"
                                   : name;
    case KindForm::List:
    case KindForm::Optional:
      return name + "[" + type_to_string(type.args.at(0)) + "]";
    case KindForm::Class:
      return type.class_name;
  }
  return "?";
}

}  // namespace tcgen
