#pragma once
// The zip layer of `.tdz` archives (memmap/zip_reader.cpp, memmap/zip_writer.cpp), shared with
// archive.cpp (not installed). Only what Python tensordict 0.14 writes is supported: STORED
// entries, zip64 where Python's zipfile uses it, no encryption, no multi-disk archives.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "memmap/zip_reader.h"
#include "tensordict/archive.h"

namespace tensordict::archive::detail {

/// Writes a zip file the way Python 3.11's zipfile does under tensordict's _write_entry
/// (force_zip64 local extra, "td" padding extra for aligned entries, 0o644 attributes, Unix
/// creator), so the same files give the same bytes.
class ZipWriter {
 public:
  /// `fd`: an empty file open for writing (not owned); `path` names it in errors.
  ZipWriter(int fd, std::string path, const Timestamp& timestamp);
  /// Appends the regular file `source` as entry `name`; `align` pads the local header so the
  /// payload starts at a multiple of kAlignment.
  void add_file(const std::string& name, const std::string& source, bool align);
  /// Writes the central directory and the end records.
  void finish();

 private:
  struct Record {
    std::string name;
    uint16_t flags;
    uint32_t crc;
    uint64_t size;
    uint64_t header_offset;
    std::string extra;  // the padding block (Python's zinfo.extra)
  };
  void write(const void* data, size_t n);

  int fd_;
  std::string path_;
  uint16_t dos_time_;
  uint16_t dos_date_;
  uint64_t pos_ = 0;
  std::vector<Record> records_;
};

/// Python's pathlib suffix rule: ".memmap" for "x.memmap", "" for ".memmap" itself.
bool has_memmap_suffix(std::string_view name);
/// The local time now, as Python's time.localtime() (clamped to the DOS range).
Timestamp now();

}  // namespace tensordict::archive::detail
