#pragma once
/// \file
/// Single-file `.tdz` archives, as Python tensordict 0.14 writes them (tensordict/_archive.py): a
/// zip file whose entries are the files of a memmap directory (same relative paths, same bytes),
/// all STORED (uncompressed), the payload of every `*.memmap` entry starting at a 64-byte aligned
/// offset so that a reader maps the archive once and views each leaf in place. See docs/format.md,
/// "Single-file archives (.tdz)".
///
/// Loading maps the archive read-only and copy-on-write (Python's mode="r"): in-place writes to the
/// leaves stay in memory. Every malformed archive (truncated, compressed or encrypted entries,
/// offsets past the end, bad signatures, unsafe entry names) is a FormatError naming the archive
/// and the entry.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensordict/archive_entry.h"
#include "tensordict/memmap.h"

namespace tensordict::archive {

/// The suffix that makes TensorDict::save / memmap / load_memmap use an archive.
inline constexpr std::string_view kSuffix = ".tdz";
/// Payload alignment of `*.memmap` entries (a multiple of every itemsize).
inline constexpr uint64_t kAlignment = 64;

/// True when `path` ends with ".tdz" (Python: Path(path).suffix == ".tdz").
bool has_archive_suffix(std::string_view path);
/// True when `path` is a regular file holding a zip archive with a top-level meta.json entry
/// (Python's is_memmap_archive). Never throws.
bool is_memmap_archive(const std::string& path);

/// A zip entry's local-header time stamp (DOS resolution: even seconds, years 1980..2107).
struct Timestamp {
  /// Calendar date and time of day, as written (no time zone: zip stamps are local times).
  ///@{
  int year = 1980, month = 1, day = 1, hour = 0, minute = 0, second = 0;
  ///@}
};

/// How pack_memmap, write_with and save write an archive.
struct PackOptions {
  /// Time stamp of every entry. Python stamps entries with the local time of the write; set this
  /// for reproducible archives (they are then byte-identical to Python's with the same stamp).
  std::optional<Timestamp> timestamp;
  /// fsync the archive before it is renamed into place (and the directory after).
  bool durable = true;
};

/// Packs the memmap directory `dir` (it must hold a meta.json) into the archive `archive`, with
/// Python's entry order and layout. The archive is written beside the target and renamed over
/// it; an existing `archive` is replaced only when a save wrote it (a memmap archive holding only
/// the files its meta.json files name).
void pack_memmap(const std::string& dir, const std::string& archive,
                 const PackOptions& options = {});

/// Extracts `archive` into the directory `dir` (every entry's CRC-32 checked). Like a memmap save,
/// `dir` is published atomically, replaces only a previous memmap directory and keeps what a user
/// put in it.
void unpack_memmap(const std::string& archive, const std::string& dir, bool durable = true);

/// Writes an archive through a staging directory: `write_dir(staging)` writes a memmap directory
/// at `staging` (which does not exist yet), which is then packed into `archive`. The staging
/// directory lies beside `archive` and is removed afterwards, whatever happens.
void write_with(const std::string& archive,
                const std::function<void(const std::string&)>& write_dir,
                const PackOptions& options = {});

/// Saves `td` as an archive (what TensorDict::memmap / save do for a ".tdz" prefix) and returns
/// it loaded back from the archive. options.memmap.existsok = false refuses an existing file.
TensorDict save(const TensorDict& td, const std::string& archive,
                const memmap::WriteOptions& options = {}, const PackOptions& pack = {});

/// Loads the collection at `subpath` of the archive ("" for the root; "/"-separated keys, each
/// encoded as in a directory). Leaves are views into one copy-on-write mapping of the archive,
/// kept alive by the tensors; with device "meta" no payload is touched.
memmap::Loaded load(const std::string& archive, const std::string& subpath = {},
                    std::optional<at::Device> device = std::nullopt);
/// What TensorDict::load_memmap and tensorclasses' load_memmap read at `path`: a memmap
/// directory, or a single-file archive when `path` is a regular file, whatever its suffix (as
/// Python).
memmap::Loaded load_any(const std::string& path, std::optional<at::Device> device = std::nullopt);
/// load() of the sub-collection at a nested key (its parts may hold "/", unlike a subpath).
memmap::Loaded load_key(const std::string& archive, const NestedKey& key,
                        std::optional<at::Device> device = std::nullopt);
/// load() of a TensorDict (FormatError when the subpath holds something else).
TensorDict load_memmap(const std::string& archive, const std::string& subpath = {},
                       std::optional<at::Device> device = std::nullopt);

/// The file entries of `archive`, in central-directory order (directory entries left out), after
/// the same checks a load makes.
std::vector<Entry> list(const std::string& archive);
/// Checks an archive: its zip structure, every entry's CRC-32, then the memmap tree it holds (as
/// memmap::verify). One message per problem; empty when the archive is sound.
std::vector<std::string> verify(const std::string& archive);

}  // namespace tensordict::archive
