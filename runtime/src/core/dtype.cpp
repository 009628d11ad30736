#include "tensordict/dtype.h"

#include <array>
#include <utility>

#include "tensordict/class_contract.h"

namespace tensordict {
namespace {

// kDtypes (the contract shared with tcgen) resolved to at::ScalarType once, by enumerator name.
using Resolved = std::array<std::pair<at::ScalarType, std::string_view>, kDtypes.size()>;

const Resolved& resolved() {
  static const Resolved table = [] {
    Resolved out{};
    for (size_t i = 0; i < kDtypes.size(); ++i) {
      out[i] = {at::ScalarType::Undefined, kDtypes[i].name};
      for (int t = 0; t < static_cast<int>(at::ScalarType::NumOptions); ++t) {
        const auto type = static_cast<at::ScalarType>(t);
        if (kDtypes[i].scalar_type == c10::toString(type)) out[i].first = type;
      }
    }
    return out;
  }();
  return table;
}

}  // namespace

std::string dtype_name(at::ScalarType dtype) {
  for (const auto& [type, name] : resolved()) {
    if (type == dtype) return std::string(name);
  }
  return c10::toString(dtype);
}

std::optional<at::ScalarType> dtype_from_name(std::string_view name) {
  constexpr std::string_view kPrefix = "torch.";
  if (name.substr(0, kPrefix.size()) == kPrefix) name.remove_prefix(kPrefix.size());
  for (const auto& [type, known] : resolved()) {
    if (known == name && type != at::ScalarType::Undefined) return type;
  }
  return std::nullopt;
}

}  // namespace tensordict
