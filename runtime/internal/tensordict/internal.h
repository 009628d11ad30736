#pragma once
// The runtime's internal API for its sibling libraries (distributed/) and its tests: not
// installed, not for users. Python tensordict's consolidated metadata: the dict that goes with a
// consolidated buffer, pickled by distributed ops and stored as JSON at the end of
// consolidate(filename)'s files. Per TensorDict level: "cls", "non_tensors" (key -> (data,
// batch_size, device)), "leaves" (key -> (dtype, shape, start, stop, pad), byte offsets into the
// buffer), "cls_metadata" (device, names, batch_size, is_locked), and one nested dict per
// sub-TensorDict or NonTensorStack. The one writer and reader of that dict. Its functions live
// in runtime/src/memmap/ except the few marked below, and the header belongs to the memmap layer:
// core/, lazy/ and ops/ do not include it (tests/layers/check_layers.cmake).
#include <ATen/core/Tensor.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensordict/tensordict.h"

namespace tensordict::memmap::detail {

/// Fault injection for the crash tests: `hook(step)` runs after each step of a save ("leaf",
/// "meta", "written", "synced", "published", "moved" (each entry of the previous save that it did
/// not write, moved into the new tree), "cleaned"). Null (the default) costs one load.
void set_save_step_hook(void (*hook)(const char* step));

}  // namespace tensordict::memmap::detail

namespace tensordict::detail {

/// True for the keys a description level uses for itself ("cls", "leaves", ...): its other keys
/// that hold dicts are nested TensorDicts or stacks.
bool is_level_field(const std::string& key);

/// Python's metadata of `td` (JSON: lists where Python has tuples, which Python reads alike).
/// With `flat`, td's consolidated buffer, leaves carry their byte offsets into it; else 0.
/// Errors name `op`.
Json describe(const TensorDict& td, const at::Tensor& flat, const char* op);

/// The TensorDict `meta` describes, viewing `flat` (a byte tensor), marked consolidated over it.
/// FormatError naming `op` and the key on a malformed description or a leaf outside the buffer.
TensorDict from_metadata(const Json& meta, const at::Tensor& flat, const std::string& op);

/// Sets the non-tensor data `meta` describes into `here`, whose structure matches it.
void set_non_tensor(const Json& meta, const TensorDict& here, const std::string& op);

// ---- from the ops layer ----------------------------------------------------------------------
// Defined in runtime/src/ops/ and declared for the runtime in ops/util.h, which the sibling
// libraries cannot include: declared again here for them. The two declarations must agree (the
// runtime's memmap/ sources see both).

/// The dotted path of `key` below `prefix`, as messages name keys ("nest.b").
std::string join_key(const std::string& prefix, const std::string& key);

/// The flat buffer of a consolidated TensorDict, or an undefined tensor when any leaf left it.
at::Tensor consolidated_buffer(const TensorDict& td);

/// First line of a torch message (the rest is a C++ backtrace).
std::string first_line(const char* what);

/// Bytes of memory this process may use (physical memory, or its cgroup's limit when lower).
int64_t machine_memory();

}  // namespace tensordict::detail
