#pragma once
// The zip reader (memmap/zip_reader.cpp; not installed): archives mapped in memory, indexed and
// bounds-checked. Torch-free: .tdz archives are read with it, and AOTInductor packages by
// TensorClass::nn and tcgen (through tensordict/zip_files.h).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tensordict/archive_entry.h"

namespace tensordict::archive::detail {

/// A read-only file mapped MAP_PRIVATE with PROT_WRITE: tensors viewing it are writable, their
/// writes stay in memory (copy-on-write) and never reach the archive.
struct Mapping {
  unsigned char* addr = nullptr;
  size_t size = 0;
  Mapping() = default;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping();
};

/// The index of an archive: every structure is bounds-checked against the file size before it is
/// read, so a corrupt archive is a FormatError, never a read past the mapping. Its work and memory
/// are linear in the archive's size: names are bounded as a directory's are (tensordict/limits.h),
/// each directory is stored once (its name a view into the mapping), and entries may not overlap
/// (each local header and payload lies before the next entry's and before the central directory,
/// as safe zip readers require), so that checking every payload reads each byte once.
class ZipReader {
 public:
  /// Maps and indexes `path`; FormatError naming the archive (and entry) on any problem, whatever
  /// failed (running out of memory included).
  explicit ZipReader(const std::string& path);

  const std::string& path() const { return path_; }
  /// File entries in central-directory order.
  const std::vector<Entry>& entries() const { return entries_; }
  /// The file entry `name`, or null.
  const Entry* find(std::string_view name) const;
  /// True for "" (the root) and every directory that holds an entry (or is a directory entry).
  bool is_dir(std::string_view name) const { return dir_id(name) != kNone; }
  /// The names directly inside the directory `name` (files and directories), sorted; empty when
  /// `name` is no directory.
  std::vector<std::string> children(std::string_view name) const;
  /// Every directory but the root, each after its parent (views into the mapping).
  std::vector<std::string_view> directories() const;
  /// The payload of `e` (inside the mapping).
  std::string_view bytes(const Entry& e) const;
  /// FormatError unless the payload's CRC-32 is the one recorded.
  void check_crc(const Entry& e) const;
  const std::shared_ptr<Mapping>& mapping() const { return mapping_; }
  /// "'<archive>'" or "'<archive>' entry '<name>'", the prefix of error messages.
  std::string where(std::string_view entry = {}) const;

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  // A directory: its parent's id, its own name in it and its path from the root (views into the
  // mapping; the root is id 0, path ""), and the names directly inside it.
  struct Dir {
    uint32_t parent;
    std::string_view name;
    std::string_view path;
    std::vector<std::string_view> children;
  };
  struct DirKey {
    uint32_t parent;
    std::string_view name;
    bool operator==(const DirKey& o) const { return parent == o.parent && name == o.name; }
  };
  struct DirKeyHash {
    size_t operator()(const DirKey& k) const {
      return std::hash<std::string_view>()(k.name) ^ (static_cast<size_t>(k.parent) * 0x9E3779B9u);
    }
  };

  // Where an entry lies in the file: its local header through the end of its payload.
  struct Span {
    uint64_t begin;
    uint64_t end;
    size_t record;  // its central directory record, for messages
  };

  void parse();
  // FormatError when two entries share bytes; sorts `spans` (one per entry) by offset.
  void check_layout(std::vector<Span>& spans) const;
  // The directory `name` ("" the root), kNone when there is none.
  uint32_t dir_id(std::string_view name) const;
  // The directory `name` and its parents, each made once; FormatError past the bounds on names
  // and depth.
  uint32_t add_dir(std::string_view name);

  std::string path_;
  std::shared_ptr<Mapping> mapping_;
  std::vector<Entry> entries_;
  std::unordered_map<std::string_view, size_t> by_name_;  // views into the mapping
  std::vector<Dir> dirs_;
  std::unordered_map<DirKey, uint32_t, DirKeyHash> dir_ids_;
};

}  // namespace tensordict::archive::detail
