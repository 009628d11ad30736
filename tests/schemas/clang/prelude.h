// What the C++ schema tests share: the annotations, and stand-ins for at::Tensor and
// tensordict::Json (nlohmann::basic_json), so the tests parse quickly (the real torch and
// nlohmann headers are read by one test).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tensordict/annotate.h"

namespace at {
class Tensor {};
}  // namespace at
namespace torch {
using at::Tensor;
}  // namespace torch
namespace nlohmann {
template <typename T = void>
class basic_json {};
using ordered_json = basic_json<>;
}  // namespace nlohmann
namespace tensordict {
using Json = nlohmann::ordered_json;
}  // namespace tensordict
