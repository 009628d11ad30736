#pragma once
/// \file
/// safetensors files (the format model weights travel in) as TensorDicts, both ways; see
/// docs/format.md, "safetensors files".
///
/// A file's tensors become a nested TensorDict whose keys are their names split on "." with
/// empty batch sizes: the layout TensorDict::from_module gives, so that
/// `load(path).tensordict.to_module(model)` loads a model's weights. Leaves are views into one
/// copy-on-write mapping of the file (as `.tdz` archives): nothing is read until it is touched,
/// and in-place writes stay in memory. A TensorDict's structure (batch sizes, dim names, classes,
/// lazy stacks, non-tensor values, keys holding ".") is kept in the file's metadata entry
/// kStructureKey, written only when it is not the default one.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensordict/class_info.h"
#include "tensordict/tensordict.h"

namespace tensordict::safetensors {

/// The suffix `tdtool` and `tcgen import` recognise safetensors files by.
inline constexpr std::string_view kSuffix = ".safetensors";
/// The metadata entry holding a TensorDict's structure (a JSON text; docs/format.md).
inline constexpr std::string_view kStructureKey = "tensorclass.structure";

/// True when `path` ends with ".safetensors".
bool has_suffix(std::string_view path);

/// A file's string map (`__metadata__`), in the order of its header.
using Metadata = std::vector<std::pair<std::string, std::string>>;

/// What load() returns.
struct Loaded {
  /// The tensors, nested by name (or placed by the structure entry).
  TensorDict tensordict;
  /// The file's metadata, without kStructureKey.
  Metadata metadata;
  /// The tensorclass the whole file holds, as the structure entry records it (as
  /// memmap::Loaded::class_info).
  std::optional<memmap::ClassInfo> class_info;
  /// The tensorclasses below it by key, outside lazy stacks (as memmap::Loaded::nested_classes).
  std::vector<std::pair<NestedKey, memmap::ClassInfo>> nested_classes;
};

/// Loads the file at `path`: every tensor mapped (copied only when its bytes are not aligned for
/// its dtype), then moved to `device` when given. FormatError naming the file (and the tensor) for
/// anything the format or the structure entry does not allow; a dtype of the format that this
/// libtorch lacks is a FormatError naming it.
Loaded load(const std::string& path, std::optional<at::Device> device = std::nullopt);

/// The metadata alone, without kStructureKey (the header is read, no tensor is made).
Metadata read_metadata(const std::string& path);

/// How save() writes.
struct SaveOptions {
  /// The file's string map (kStructureKey is the library's: ValueError).
  Metadata metadata;
  /// False: FormatError when `path` exists.
  bool existsok = true;
  /// fsync the file before it is renamed into place (and the directory after).
  bool durable = true;
  /// As memmap::WriteOptions::class_of: the tensorclass a nested TensorDict holds, if any.
  std::function<std::optional<memmap::ClassInfo>(const TensorDict&)> class_of;
};

/// Writes `td` as a safetensors file: tensor names are the keys joined with ".", laid out as the
/// reference writer lays them out, so that the same tensors give the same bytes as Python's
/// `safetensors.torch.save_file` (with at most one metadata entry: Python's order of several is
/// unspecified). Tensors are copied to the CPU and made contiguous. Refused with a ValueError
/// naming the key, before anything is written: nested, sparse and other non-strided tensors,
/// dtypes the format lacks, two keys whose names join to one. Atomic: written beside `path` and
/// renamed over it; an existing file is replaced only when it is a safetensors file.
void save(const TensorDict& td, const std::string& path, const SaveOptions& options = {});

/// Checks a file: its header, each tensor's bytes (bool bytes 0 or 1) and its structure entry.
/// One message per problem; empty when it loads.
std::vector<std::string> verify(const std::string& path);

}  // namespace tensordict::safetensors
