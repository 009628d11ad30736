#pragma once
/// \file
/// The zip entries of an archive as a reader finds them, and zip's CRC-32: torch-free, so that
/// tools without libtorch (tcgen reading an AOTInductor package) share the runtime's zip reader.

#include <cstddef>
#include <cstdint>
#include <string>

namespace tensordict::archive {

/// One file entry of an archive, as found by a reader.
struct Entry {
  std::string name;            ///< path inside the archive ("next/obs.memmap")
  uint64_t header_offset = 0;  ///< offset of the local header
  uint64_t offset = 0;         ///< offset of the payload
  uint64_t size = 0;           ///< payload size (STORED: compressed == uncompressed)
  uint32_t crc32 = 0;          ///< as recorded in the central directory
};
/// CRC-32 (zip's, ISO-HDLC) of `n` bytes, continuing from `crc`.
uint32_t crc32(const void* data, size_t n, uint32_t crc = 0);

}  // namespace tensordict::archive
