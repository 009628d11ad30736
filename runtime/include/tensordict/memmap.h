#pragma once
/// \file
/// Memory-mapped IO in Python tensordict's on-disk layout (see docs/format.md).
///
/// Two levels:
///  - MemoryMappedTensor: tensors whose storage is a MAP_SHARED mapping of a file;
///  - tensordict::memmap: the directory format (key encoding, meta.json in Python's JSON style,
///    the TensorDict / tensorclass writers and the reader), used by TensorDict::memmap /
///    load_memmap and by the tensorclass layer.

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensordict/class_contract.h"
#include "tensordict/class_info.h"
#include "tensordict/tensordict.h"

namespace tensordict {

/// Factories for file-backed tensors. The returned at::Tensor maps `filename` (MAP_SHARED):
/// in-place writes reach the file and every process mapping it. The mapping is released when the
/// last tensor using the storage goes away. A file holds raw elements only (no header), row-major.
class MemoryMappedTensor {
 public:
  /// Copies `src` (any layout, device, view) into a new file of exactly numel × itemsize bytes.
  /// existsok=false: FormatError when the file exists already.
  static at::Tensor from_tensor(const at::Tensor& src, const std::string& filename,
                                bool existsok = true);
  /// A file sized for `shape` × `dtype`; an existing file keeps its bytes (and any longer tail).
  static at::Tensor empty(at::IntArrayRef shape, at::ScalarType dtype, const std::string& filename,
                          bool existsok = true);
  /// empty(), then every element set to 0, 1 or `value` (Python's MemoryMappedTensor.zeros,
  /// ones, full).
  ///@{
  static at::Tensor zeros(at::IntArrayRef shape, at::ScalarType dtype, const std::string& filename,
                          bool existsok = true);
  static at::Tensor ones(at::IntArrayRef shape, at::ScalarType dtype, const std::string& filename,
                         bool existsok = true);
  static at::Tensor full(at::IntArrayRef shape, const at::Scalar& value, at::ScalarType dtype,
                         const std::string& filename, bool existsok = true);
  ///@}
  /// Maps an existing file (only its first numel × itemsize bytes). FormatError when the file is
  /// missing, not a regular file, or too short. A read-only file is mapped copy-on-write.
  static at::Tensor from_filename(const std::string& filename, at::ScalarType dtype,
                                  at::IntArrayRef shape);

  /// True when `t`'s storage is a mapping made by this class.
  static bool is_memory_mapped(const at::Tensor& t);
  /// The mapped file of `t`'s storage, if any.
  static std::optional<std::string> filename(const at::Tensor& t);
};

namespace memmap {

/// `_type` strings Python writes.
inline constexpr const char* kTensorDictType = "<class 'tensordict._td.TensorDict'>";
/// What Python writes when saving a sub-tensordict (td.get_sub_tensordict(...)); the layout is a
/// TensorDict's, and Python loads it as one.
inline constexpr const char* kSubTensorDictType = "<class 'tensordict._td._SubTensorDict'>";
/// NonTensorData.
inline constexpr const char* kNonTensorDataType = "<class 'tensordict.tensorclass.NonTensorData'>";
/// Python's MetaData, a NonTensorData subclass: NonTensorData with its `metadata` flag.
inline constexpr const char* kMetaDataType = "<class 'tensordict.tensorclass.MetaData'>";
/// Whether `type` is MetaData's: kMetaDataType, or a typed MetaData's
/// (`<class 'tensordict.tensorclass.MetaData[str]'>`).
bool is_metadata_type(std::string_view type);
/// NonTensorStack.
inline constexpr const char* kNonTensorStackType =
    "<class 'tensordict.tensorclass.NonTensorStack'>";
/// A lazy stack (tensordict/lazy_stack.h).
inline constexpr const char* kLazyStackType = "<class 'tensordict._lazy.LazyStackedTensorDict'>";

// ---- keys and paths (memmap/keys.cpp) ----------------------------------------------------------
/// File-system name of a key (spec §1.6): unsafe characters as `%XX`, "" -> `"%"`, "." / ".."
/// encoded.
std::string encode_key(std::string_view key);
/// Inverse of encode_key (a malformed % sequence is kept verbatim).
std::string decode_key(std::string_view name);
/// "<class 'pkg.mod.Name'>" -> "Name" (the `{"type": ...}` entry a parent writes for a child).
std::string class_short_name(std::string_view type);

// ---- meta.json (memmap/json.cpp; the JSON spelling itself is tensordict/json.h) ---------------
/// Reads `dir/meta.json` as a JSON object; FormatError naming the path when missing or malformed.
Json read_meta(const std::string& dir);
/// Writes `dir/meta.json` in Python's stdlib json spelling (compact: NonTensorStack's ","/":").
void write_meta(const std::string& dir, const Json& meta, bool compact = false);

// ---- writing (memmap/write.cpp) ----------------------------------------------------------------
// ClassInfo, a tensorclass's identity on disk: tensordict/class_info.h.

/// Parses the text of a schema.json (`where` names it in the FormatError of a malformed one).
int64_t parse_schema_version(const std::string& text, const std::string& where);

/// How save_tensordict and save_tensorclass write.
struct WriteOptions {
  /// TensorDict::memmap's options (threads, existsok, copy_existing).
  MemmapOptions memmap;
  /// memmap_like: size the files, copy no tensor data.
  bool like = false;
  /// fsync files and directories before the save is published (durability across power loss).
  bool durable = true;
  /// When set and it returns a ClassInfo for a nested TensorDict, that TensorDict is written as a
  /// tensorclass directory (meta.json with `_type` first, the entries under `_tensordict/`).
  std::function<std::optional<ClassInfo>(const TensorDict&)> class_of;
};

/// Writes `td` as a TensorDict directory at `prefix`, atomically: the previous save at `prefix`
/// (if any) is replaced as a whole, a crash leaves either the old or the new directory. Entries of
/// the previous save that it did not write (a user's files) are kept, moved into the new tree;
/// one where the new save writes a file is a FormatError, before anything is touched (see
/// docs/format.md, "What a save keeps"). Saves to one prefix take turns. Returns a locked
/// TensorDict whose leaves map the new files.
TensorDict save_tensordict(const TensorDict& td, const std::string& prefix,
                           const WriteOptions& options = {});
/// Same, as a tensorclass directory: `prefix/meta.json` = {"_type": info.type, fields...} and the
/// entries in `prefix/_tensordict/`. Returns the (locked, mapped) inner TensorDict.
TensorDict save_tensorclass(const TensorDict& inner, const ClassInfo& info,
                            const std::string& prefix, const WriteOptions& options = {});

/// Marks `td` as the inner TensorDict of the tensorclass `info` names, as loading a tensorclass
/// directory marks it: writers then save it as that tensorclass wherever it is stored (in a field
/// typed `any`, in a lazy stack), e.g. a lazy stack of parts as Python's ContentBase.
void set_class_info(const TensorDict& td, ClassInfo info);

// ---- reading (memmap/read.cpp) -----------------------------------------------------------------
/// What load() found in a directory.
struct Loaded {
  /// A TensorDict (a tensorclass directory gives its inner TensorDict; a lazy stack its stack),
  /// NonTensorData or a NonTensorStack.
  Value value;
  /// The directory's own `_type`.
  std::string type;
  /// Set when the directory is a tensorclass: its `_type` and the other fields of its meta.json.
  std::optional<ClassInfo> class_info;
  /// Tensorclass directories found below, by key path relative to this directory.
  std::vector<std::pair<NestedKey, ClassInfo>> nested_classes;
};

/// Loads the collection at `dir` (dispatching on its meta.json `_type`). Files are mapped, not
/// read; with device "meta" no data file is opened. FormatError (naming the path) on any bad input.
Loaded load(const std::string& dir, std::optional<at::Device> device = std::nullopt);

/// Checks a directory tree against its meta.json files (every entry parsed, every data file mapped
/// and long enough) without stopping at the first problem. Returns one message per problem; empty
/// when the tree loads.
std::vector<std::string> verify(const std::string& dir);

}  // namespace memmap
}  // namespace tensordict
