#pragma once
// The zip records the archive reader and writer share (not installed): signatures, record sizes,
// zipfile's zip64 thresholds, extra-block ids and little-endian field access. Torch-free.

#include <cstddef>
#include <cstdint>
#include <string>

namespace tensordict::archive::detail {

inline constexpr uint32_t kLocalSig = 0x04034b50;
inline constexpr uint32_t kCentralSig = 0x02014b50;
inline constexpr uint32_t kEndSig = 0x06054b50;
inline constexpr uint32_t kEnd64Sig = 0x06064b50;
inline constexpr uint32_t kEnd64LocatorSig = 0x07064b50;
inline constexpr size_t kLocalSize = 30;
inline constexpr size_t kCentralSize = 46;
inline constexpr size_t kEndSize = 22;
inline constexpr size_t kEnd64Size = 56;
inline constexpr size_t kEnd64LocatorSize = 20;
// zipfile's thresholds: sizes and offsets above ZIP64_LIMIT go to zip64 fields, and more entries
// than ZIP_FILECOUNT_LIMIT need the zip64 end record.
inline constexpr uint64_t kZip64Limit = (uint64_t{1} << 31) - 1;
inline constexpr uint64_t kFileCountLimit = (uint64_t{1} << 16) - 1;
inline constexpr uint16_t kPadExtraId = 0x6474;  // "td"
inline constexpr uint16_t kZip64ExtraId = 0x0001;
inline constexpr uint16_t kUtf8Flag = 0x800;

inline uint16_t rd16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t rd32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
inline uint64_t rd64(const unsigned char* p) {
  return static_cast<uint64_t>(rd32(p)) | (static_cast<uint64_t>(rd32(p + 4)) << 32);
}

inline void put16(std::string& s, uint16_t v) {
  s.push_back(static_cast<char>(v & 0xFF));
  s.push_back(static_cast<char>(v >> 8));
}
inline void put32(std::string& s, uint32_t v) {
  put16(s, static_cast<uint16_t>(v & 0xFFFF));
  put16(s, static_cast<uint16_t>(v >> 16));
}
inline void put64(std::string& s, uint64_t v) {
  put32(s, static_cast<uint32_t>(v & 0xFFFFFFFFu));
  put32(s, static_cast<uint32_t>(v >> 32));
}

}  // namespace tensordict::archive::detail
