// Python tensordict's consolidated metadata as distributed ops move it: pickled, with transport
// extras (see metadata.h). Describing and rebuilding TensorDicts is the runtime's
// (tensordict/internal.h), shared with consolidate(filename) and from_consolidated.
#include "metadata.h"

#include <ATen/ATen.h>

#include <optional>

#include "pickle.h"
#include "tensordict/distributed.h"
#include "tensordict/internal.h"

namespace tensordict::dist::detail {
namespace {

// Bound of an announced buffer, so that a corrupt size fails instead of allocating.
constexpr int64_t kMaxBufferBytes = int64_t{1} << 40;

}  // namespace

std::string join_key(const std::string& prefix, const std::string& key) {
  return tensordict::detail::join_key(prefix, key);
}

bool is_level_field(const std::string& key) { return tensordict::detail::is_level_field(key); }

Json describe(const TensorDict& td, const at::Tensor& flat) {
  return tensordict::detail::describe(td, flat, "distributed");
}

std::string pickle_metadata(const TensorDict& td, const at::Tensor& flat, const Extras& extras,
                            const std::string& tensorclass_type) {
  Json meta = describe(td, flat);
  if (flat.defined()) meta["_total_bytes"] = flat.numel();
  for (const auto& [key, value] : extras) meta[key] = value;
  if (!tensorclass_type.empty()) meta["_tensorclass_type"] = tensorclass_type;
  return Pickler().json(meta).finish();
}

TensorDict from_metadata(const Json& meta, const at::Tensor& flat, const std::string& op) {
  return tensordict::detail::from_metadata(meta, flat, op);
}

void set_non_tensor(const Json& meta, const TensorDict& here, const std::string& op) {
  tensordict::detail::set_non_tensor(meta, here, op);
}

Announced read_metadata(std::string_view pickle, const std::string& op, bool buffer_expected) {
  Announced out{unpickle(pickle, op + " (metadata)"), -1, -1};
  if (!out.meta.is_object()) {
    throw FormatError(op + ": the metadata is a " + out.meta.type_name() + ", not a dict");
  }
  auto size = [&](const char* key) -> std::optional<int64_t> {
    if (!out.meta.contains(key)) return std::nullopt;
    const Json value = std::move(out.meta[key]);
    out.meta.erase(key);
    if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
        value.get<int64_t>() > kMaxBufferBytes) {
      throw FormatError(op + ": the metadata's " + key + " is " + value.dump());
    }
    return value.get<int64_t>();
  };
  const auto total = size("_total_bytes");
  if (!total && buffer_expected) {
    throw FormatError(op + ": the metadata has no _total_bytes; is the peer tensordict?");
  }
  out.total_bytes = total.value_or(-1);
  out.max_bytes = size("_max_bytes").value_or(out.total_bytes);
  if (out.max_bytes < out.total_bytes) {
    throw FormatError(op + ": the metadata's _max_bytes is below its _total_bytes");
  }
  // Where Python keeps the buffer and which tensorclass to rebuild: C++ receives on the CPU
  // (Gloo) into a TensorDict.
  out.meta.erase("_storage_device");
  out.meta.erase("_tensorclass_type");
  return out;
}

std::string python_class_name(const char* python_type) {
  // "<class 'module.Class'>" as Python's repr of a class writes it.
  std::string_view text = python_type;
  const std::string_view open = "<class '";
  const std::string_view close = "'>";
  if (text.size() > open.size() + close.size() && text.substr(0, open.size()) == open &&
      text.substr(text.size() - close.size()) == close) {
    text = text.substr(open.size(), text.size() - open.size() - close.size());
  }
  return std::string(text);
}

}  // namespace tensordict::dist::detail
