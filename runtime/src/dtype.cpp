#include "tensordict/dtype.h"

#include <array>
#include <utility>

namespace tensordict {
namespace {

constexpr std::array<std::pair<at::ScalarType, std::string_view>, 15> kNames{{
    {at::kBool, "bool"},
    {at::kByte, "uint8"},
    {at::kChar, "int8"},
    {at::kShort, "int16"},
    {at::kInt, "int32"},
    {at::kLong, "int64"},
    {at::kHalf, "float16"},
    {at::kBFloat16, "bfloat16"},
    {at::kFloat, "float32"},
    {at::kDouble, "float64"},
    {at::kComplexHalf, "complex32"},
    {at::kComplexFloat, "complex64"},
    {at::kComplexDouble, "complex128"},
    {at::kQInt8, "qint8"},
    {at::kQUInt8, "quint8"},
}};

}  // namespace

std::string dtype_name(at::ScalarType dtype) {
  for (const auto& [type, name] : kNames) {
    if (type == dtype) return std::string(name);
  }
  return c10::toString(dtype);
}

std::optional<at::ScalarType> dtype_from_name(std::string_view name) {
  constexpr std::string_view kPrefix = "torch.";
  if (name.substr(0, kPrefix.size()) == kPrefix) name.remove_prefix(kPrefix.size());
  for (const auto& [type, known] : kNames) {
    if (known == name) return type;
  }
  return std::nullopt;
}

}  // namespace tensordict
