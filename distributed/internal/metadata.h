#pragma once
// Python tensordict's consolidated metadata: the dict that init_remote, broadcast, all_gather
// and scatter pickle next to a consolidated buffer. Per TensorDict level: "cls", "non_tensors"
// (key -> (data, batch_size, device)), "leaves" (key -> (dtype, shape, start, stop, pad), byte
// offsets into the buffer), "cls_metadata" (device, names, batch_size, is_locked), and one
// nested dict per sub-TensorDict or NonTensorStack. Describing and rebuilding are the runtime's
// (runtime/src/consolidated_metadata.h, also behind consolidate(filename)); this adds the pickle,
// the transport extras and the structure checks.
#include <ATen/core/Tensor.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensordict/tensordict.h"

namespace tensordict::dist::detail {

/// Root entries that only travel with the metadata (Python's "_total_bytes", ...).
using Extras = std::vector<std::pair<std::string, Json>>;

/// The dotted path of `key` below `prefix`, as messages name keys ("nest.b").
std::string join_key(const std::string& prefix, const std::string& key);

/// True for the keys a description level uses for itself ("cls", "leaves", ...): its other keys
/// that hold dicts are nested TensorDicts or stacks.
bool is_level_field(const std::string& key);

/// Python's metadata of `td` (JSON: lists where Python has tuples, which Python reads alike).
/// With `flat`, td's consolidated buffer, leaves carry their byte offsets into it; else 0.
Json describe(const TensorDict& td, const at::Tensor& flat = {});

/// The pickled metadata of `td`, consolidated over `flat`, with Python's extras at the root:
/// "_total_bytes" (flat's size; absent without `flat`: the structure check of a send leaf by
/// leaf), `extras`, and "_tensorclass_type" unless `tensorclass_type` is empty.
std::string pickle_metadata(const TensorDict& td, const at::Tensor& flat, const Extras& extras = {},
                            const std::string& tensorclass_type = {});

/// The TensorDict `meta` (unpickled, extras removed) describes, viewing `flat`. FormatError
/// naming `op` and the key on a malformed description or a leaf outside the buffer.
TensorDict from_metadata(const Json& meta, const at::Tensor& flat, const std::string& op);

/// Sets the non-tensor data `meta` describes into `here`, whose structure matches it.
void set_non_tensor(const Json& meta, const TensorDict& here, const std::string& op);

/// Throws KeyError / TypeError / ShapeError naming the first key whose entry in `sent` (rank
/// `peer`'s description) differs from `here`'s in kind, dtype or shape.
void check_matches(const Json& sent, const TensorDict& here, const std::string& op, int peer);
/// True when two descriptions lay their leaves out alike (same keys, dtypes, shapes, offsets).
bool same_layout(const Json& a, const Json& b);

/// What comes before a consolidated buffer: the description and the transport extras.
struct Announced {
  Json meta;                 ///< the TensorDict's description, extras removed
  int64_t total_bytes = -1;  ///< "_total_bytes": the buffer's size; -1 when absent
  int64_t max_bytes = -1;    ///< "_max_bytes" (scatter: every rank's padded size), else total_bytes
};
/// Unpickles metadata; FormatError naming `op` when it is not Python's, or when it announces no
/// buffer and `buffer_expected`.
Announced read_metadata(std::string_view pickle, const std::string& op,
                        bool buffer_expected = true);

}  // namespace tensordict::dist::detail
