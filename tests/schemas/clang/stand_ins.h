// Stand-ins for at::Tensor, tensordict::Json (nlohmann::basic_json) and tensordict::TensorDict,
// spelled as the real ones are qualified, so that the C++ front end maps them without parsing
// libtorch or nlohmann::json.
// Included by prelude.h, and by fuzz/header_prelude/prelude.h.
#pragma once

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
class TensorDict {};
}  // namespace tensordict
