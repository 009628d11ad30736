#pragma once
/// \file
/// The bounds of a memmap tree, one table for every reader and every writer of the format: the
/// loader of directories and of `.tdz` archives (memmap/tree_loader.h, the zip index), the saves
/// (directories and archives) and `tcgen import`. A writer checks each bound before it writes, so
/// that nothing it writes is refused when read back; a reader refuses what passes a bound with a
/// FormatError naming the path. Torch-free and header-only, so tcgen includes it too.
///
/// Sizes and counts that are not in the table are bounded by the input itself: every reader's
/// work and memory are linear in the bytes it reads (an archive's entries may not overlap, its
/// directory index holds each directory once).

#include <cstddef>

namespace tensordict::limits {

/// Levels of directories in one tree, its root the first: a TensorDict, lazy stack, stack
/// element, tensorclass, `_tensordict/` and non-tensor directory each make one (the loader
/// recurses once per level). A tree 256 levels deep loads; one directory deeper is refused.
inline constexpr int kMaxTreeDepth = 256;

/// Bytes of one name inside a tree: a file or directory name of a directory on disk (NAME_MAX of
/// Linux file systems), one `/`-separated component of an archive's entry name. A key's encoded
/// name plus ".memmap" must fit.
inline constexpr std::size_t kMaxNameBytes = 255;

/// Nesting of arrays and objects in a meta.json, the object itself the first level, which the
/// JSON reader (tensordict/json.h) enforces for any JSON text. A save checks its meta.json files
/// against it (a NonTensorData's value nested deeper could be written, but not read back).
inline constexpr int kMaxJsonDepth = 1000;

}  // namespace tensordict::limits
