// The reading half of the zip layer (.tdz archives, and the AOTInductor packages tcgen and
// TensorClass::nn read): CRC-32 and a reader that indexes (and bounds-checks) an archive mapped
// in memory. Torch-free, so tcgen compiles it too.
#include "memmap/zip_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "memmap/fd.h"
#include "memmap/zip_format.h"
#include "tensordict/errors.h"
#include "tensordict/limits.h"
#include "tensordict/zip_files.h"

namespace tensordict::archive {
namespace {

// Slicing-by-8 tables of the reflected polynomial 0xEDB88320 (zlib's crc32).
struct CrcTables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  CrcTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    }
  }
};

const CrcTables& crc_tables() {
  static const CrcTables tables;
  return tables;
}

}  // namespace

uint32_t crc32(const void* data, size_t n, uint32_t crc) {
  const auto& t = crc_tables().t;
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
  while (n >= 8) {
    uint32_t lo;
    uint32_t hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= c;  // the tables assume little-endian loads, as on every platform libtorch ships for
    c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
        t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = t[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
  return ~c;
}

namespace detail {
namespace {

const char* method_name(uint16_t method) {
  switch (method) {
    case 8:
      return "deflate";
    case 12:
      return "bzip2";
    case 14:
      return "lzma";
    case 93:
      return "zstd";
    default:
      return "unknown";
  }
}

// Entry names are relative paths: no absolute path, no "." / ".." / empty component (a trailing
// "/" marks a directory entry), no NUL or backslash. This is what keeps unpack inside its target.
bool safe_name(std::string_view name) {
  if (name.empty() || name.front() == '/') return false;
  if (name.find('\0') != std::string_view::npos || name.find('\\') != std::string_view::npos)
    return false;
  const std::string_view body = name.back() == '/' ? name.substr(0, name.size() - 1) : name;
  if (body.empty()) return false;
  for (size_t start = 0;;) {
    const size_t end = body.find('/', start);
    const std::string_view part =
        body.substr(start, end == std::string_view::npos ? end : end - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (end == std::string_view::npos) return true;
    start = end + 1;
  }
}

}  // namespace

Mapping::~Mapping() {
  if (addr) ::munmap(addr, size);
}

std::string ZipReader::where(std::string_view entry) const {
  std::string out = "archive '" + path_ + "'";
  if (!entry.empty()) out += " entry '" + std::string(entry) + "'";
  return out;
}

ZipReader::ZipReader(const std::string& path) : path_(path), mapping_(std::make_shared<Mapping>()) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is then refused as not regular).
  memmap::detail::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) memmap::detail::throw_errno("cannot open archive", path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) memmap::detail::throw_errno("cannot stat archive", path);
  if (!S_ISREG(st.st_mode)) {
    throw FormatError(where() + " is not a regular file (" +
                      (S_ISDIR(st.st_mode) ? "a directory" : "a FIFO, socket or device") + ")");
  }
  const auto size = static_cast<size_t>(st.st_size);
  if (size < kEndSize) {
    throw FormatError(where() + " is not a zip archive (" + std::to_string(size) +
                      " bytes, shorter than an end record)");
  }
  void* addr = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.get(), 0);
  if (addr == MAP_FAILED) memmap::detail::throw_errno("cannot map archive", path);
  mapping_->addr = static_cast<unsigned char*>(addr);
  mapping_->size = size;
  try {
    parse();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw FormatError(where() + ": not enough memory to index it");
  } catch (const std::exception& e) {  // the library's errors only, whatever a container throws
    throw FormatError(where() + ": cannot be indexed: " + e.what());
  }
}

uint32_t ZipReader::dir_id(std::string_view name) const {
  uint32_t id = 0;
  for (size_t start = 0; start < name.size();) {
    const size_t end = std::min(name.find('/', start), name.size());
    const auto it = dir_ids_.find(DirKey{id, name.substr(start, end - start)});
    if (it == dir_ids_.end()) return kNone;
    id = it->second;
    start = end + 1;
  }
  return id;
}

uint32_t ZipReader::add_dir(std::string_view name) {
  uint32_t id = 0;
  int level = 1;
  for (size_t start = 0; start < name.size();) {
    const size_t end = std::min(name.find('/', start), name.size());
    const std::string_view part = name.substr(start, end - start);
    if (++level > limits::kMaxTreeDepth) {
      throw FormatError(where(name.substr(0, end)) + ": directories nested too deep (a tree has " +
                        std::to_string(limits::kMaxTreeDepth) + " levels at most)");
    }
    const auto [it, fresh] =
        dir_ids_.emplace(DirKey{id, part}, static_cast<uint32_t>(dirs_.size()));
    if (fresh) {
      dirs_[id].children.push_back(part);
      dirs_.push_back(Dir{id, part, name.substr(0, end), {}});
    }
    id = it->second;
    start = end + 1;
  }
  return id;
}

std::vector<std::string> ZipReader::children(std::string_view name) const {
  const uint32_t id = dir_id(name);
  if (id == kNone) return {};
  std::vector<std::string> out(dirs_[id].children.begin(), dirs_[id].children.end());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string_view> ZipReader::directories() const {
  std::vector<std::string_view> out;
  out.reserve(dirs_.size());
  for (size_t i = 1; i < dirs_.size(); ++i) out.push_back(dirs_[i].path);  // parents come first
  return out;
}

void ZipReader::parse() {
  const unsigned char* d = mapping_->addr;
  const uint64_t size = mapping_->size;
  // The end record is the last "PK\5\6" whose comment fits in the file (comments are < 64 KiB).
  uint64_t end = UINT64_MAX;
  const uint64_t lowest = size - kEndSize > 0xFFFF ? size - kEndSize - 0xFFFF : 0;
  for (uint64_t pos = size - kEndSize + 1; pos-- > lowest;) {
    if (rd32(d + pos) == kEndSig && pos + kEndSize + rd16(d + pos + 20) <= size) {
      end = pos;
      break;
    }
  }
  if (end == UINT64_MAX) {
    throw FormatError(where() + " is not a zip archive (no end of central directory record)");
  }
  if (rd16(d + end + 4) != 0 || rd16(d + end + 6) != 0) {
    throw FormatError(where() + ": multi-disk zip archives are not supported");
  }
  uint64_t count = rd16(d + end + 10);
  uint64_t cd_size = rd32(d + end + 12);
  uint64_t cd_offset = rd32(d + end + 16);
  uint64_t cd_end = end;  // the central directory ends where the (zip64) end records begin
  if (end >= kEnd64LocatorSize && rd32(d + end - kEnd64LocatorSize) == kEnd64LocatorSig) {
    const uint64_t locator = end - kEnd64LocatorSize;
    const uint64_t end64 = rd64(d + locator + 8);
    if (end64 > locator || locator - end64 < kEnd64Size || rd32(d + end64) != kEnd64Sig) {
      throw FormatError(where() + ": bad zip64 end of central directory record (offset " +
                        std::to_string(end64) + ")");
    }
    count = rd64(d + end64 + 32);
    cd_size = rd64(d + end64 + 40);
    cd_offset = rd64(d + end64 + 48);
    cd_end = end64;
  }
  if (cd_offset > cd_end || cd_end - cd_offset != cd_size) {
    throw FormatError(where() + ": the central directory (offset " + std::to_string(cd_offset) +
                      ", " + std::to_string(cd_size) +
                      " bytes) does not end at the end record: truncated or corrupt archive");
  }
  if (count > cd_size / kCentralSize) {
    throw FormatError(where() + ": " + std::to_string(count) +
                      " entries cannot fit in a central directory of " + std::to_string(cd_size) +
                      " bytes");
  }
  dirs_.push_back(Dir{kNone, {}, {}, {}});  // the root
  entries_.reserve(static_cast<size_t>(count));
  std::vector<Span> spans;
  spans.reserve(static_cast<size_t>(count));
  std::vector<uint32_t> parents;  // each file entry's directory
  parents.reserve(static_cast<size_t>(count));
  uint64_t pos = cd_offset;
  for (uint64_t i = 0; i < count; ++i) {
    const std::string at = where() + " central directory record " + std::to_string(i);
    if (cd_end - pos < kCentralSize || rd32(d + pos) != kCentralSig) {
      throw FormatError(at + ": bad signature or truncated (offset " + std::to_string(pos) + ")");
    }
    const unsigned char* r = d + pos;
    const uint16_t flags = rd16(r + 8);
    const uint16_t method = rd16(r + 10);
    const uint32_t crc = rd32(r + 16);
    uint64_t csize = rd32(r + 20);
    uint64_t usize = rd32(r + 24);
    const uint16_t name_len = rd16(r + 28);
    const uint16_t extra_len = rd16(r + 30);
    const uint16_t comment_len = rd16(r + 32);
    uint64_t header_offset = rd32(r + 42);
    const uint64_t record_len = kCentralSize + name_len + extra_len + comment_len;
    if (cd_end - pos < record_len) throw FormatError(at + ": truncated name or extra field");
    // A view into the mapping: the index refers to names, it never copies them.
    const std::string_view name(reinterpret_cast<const char*>(r + kCentralSize), name_len);
    const std::string here = where(name);
    // zip64 extra: the 64-bit values of the fields saturated at 0xFFFFFFFF, in this order.
    const unsigned char* extra = r + kCentralSize + name_len;
    for (size_t e = 0; e < extra_len;) {
      if (extra_len - e < 4) throw FormatError(here + ": malformed extra field");
      const uint16_t id = rd16(extra + e);
      const uint16_t len = rd16(extra + e + 2);
      if (extra_len - e - 4 < len) throw FormatError(here + ": malformed extra field");
      if (id == kZip64ExtraId) {
        const unsigned char* z = extra + e + 4;
        size_t left = len;
        for (uint64_t* field : {&usize, &csize, &header_offset}) {
          if (*field != 0xFFFFFFFFu) continue;
          if (left < 8) throw FormatError(here + ": truncated zip64 extra field");
          *field = rd64(z);
          z += 8;
          left -= 8;
        }
      }
      e += 4 + len;
    }
    pos += record_len;

    if (!safe_name(name)) throw FormatError(here + ": unsafe or malformed entry name");
    if (flags & 0x1) throw FormatError(here + " is encrypted, which is not supported");
    if (method != 0) {
      throw FormatError(here + " is compressed (method " + std::to_string(method) + ", " +
                        method_name(method) +
                        "); only STORED (uncompressed) entries can be mapped in place");
    }
    if (csize != usize) {
      throw FormatError(here + ": STORED entry with different sizes (" + std::to_string(csize) +
                        " and " + std::to_string(usize) + ")");
    }
    const bool is_dir_entry = name.back() == '/';
    if (is_dir_entry && usize != 0) throw FormatError(here + ": directory entry with data");
    const std::string_view path = is_dir_entry ? name.substr(0, name.size() - 1) : name;
    for (size_t start = 0; start < path.size();) {  // the bound on names of a directory's entries
      const size_t end = std::min(path.find('/', start), path.size());
      if (end - start > limits::kMaxNameBytes) {
        throw FormatError(here + ": a name in it is " + std::to_string(end - start) +
                          " bytes, more than the " + std::to_string(limits::kMaxNameBytes) +
                          " a name in a tree may have");
      }
      start = end + 1;
    }
    // Every entry, a directory entry too, has a local header before its payload.
    if (header_offset > cd_offset || cd_offset - header_offset < kLocalSize ||
        rd32(d + header_offset) != kLocalSig) {
      throw FormatError(here + ": bad local header (offset " + std::to_string(header_offset) + ")");
    }
    const unsigned char* l = d + header_offset;
    const uint64_t local_name_len = rd16(l + 26);
    const uint64_t local_extra_len = rd16(l + 28);
    if (rd16(l + 8) != 0) throw FormatError(here + ": the local header says compressed");
    const uint64_t payload = header_offset + kLocalSize + local_name_len + local_extra_len;
    if (payload > cd_offset || local_name_len != name_len ||
        std::memcmp(l + kLocalSize, name.data(), name_len) != 0) {
      throw FormatError(here + ": the local header does not match the central directory");
    }
    if (usize > cd_offset - payload) {
      throw FormatError(here + ": payload of " + std::to_string(usize) + " bytes at offset " +
                        std::to_string(payload) +
                        " runs past the entries' end: truncated or corrupt archive");
    }
    spans.push_back(Span{header_offset, payload + usize, static_cast<size_t>(i)});
    if (is_dir_entry) {
      add_dir(path);
      continue;
    }
    if (!by_name_.emplace(name, entries_.size()).second) {
      throw FormatError(here + " appears twice");
    }
    const size_t slash = name.rfind('/');
    const uint32_t parent =
        add_dir(slash == std::string_view::npos ? std::string_view() : name.substr(0, slash));
    dirs_[parent].children.push_back(slash == std::string_view::npos ? name
                                                                     : name.substr(slash + 1));
    parents.push_back(parent);
    entries_.push_back(Entry{std::string(name), header_offset, payload, usize, crc});
  }
  check_layout(spans);
  // A name that is a file and a directory ("a.memmap" beside "a.memmap/" or "a.memmap/x") could
  // not be unpacked.
  for (size_t i = 0; i < entries_.size(); ++i) {
    const std::string& name = entries_[i].name;
    const size_t slash = name.rfind('/');
    const std::string_view base =
        std::string_view(name).substr(slash == std::string::npos ? 0 : slash + 1);
    const auto dir = dir_ids_.find(DirKey{parents[i], base});
    if (dir != dir_ids_.end()) {
      throw FormatError(where(name) + " is a file, and '" + std::string(dirs_[dir->second].path) +
                        "/' a directory of the archive too");
    }
  }
}

// No two entries share bytes: sorted by offset, each local header and payload ends before the
// next entry's local header (and, checked above, before the central directory). Overlapping
// entries made a small archive unpack into hundreds of times its size, and reading each payload
// once (verify, unpack) no longer linear in the archive's size.
void ZipReader::check_layout(std::vector<Span>& spans) const {
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
  for (size_t k = 1; k < spans.size(); ++k) {
    if (spans[k].begin < spans[k - 1].end) {
      throw FormatError(where() + " central directory record " + std::to_string(spans[k].record) +
                        ": its entry (local header at offset " + std::to_string(spans[k].begin) +
                        ") overlaps the bytes of record " + std::to_string(spans[k - 1].record) +
                        "'s (offsets " + std::to_string(spans[k - 1].begin) + " to " +
                        std::to_string(spans[k - 1].end) + ")");
    }
  }
}

const Entry* ZipReader::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &entries_[it->second];
}

std::string_view ZipReader::bytes(const Entry& e) const {
  return {reinterpret_cast<const char*>(mapping_->addr + e.offset), static_cast<size_t>(e.size)};
}

void ZipReader::check_crc(const Entry& e) const {
  const std::string_view b = bytes(e);
  const uint32_t got = crc32(b.data(), b.size());
  if (got != e.crc32) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "CRC-32 %08x, expected %08x", got, e.crc32);
    throw FormatError(where(e.name) + ": corrupt payload (" + buf + ")");
  }
}

std::vector<std::pair<std::string, std::string>> read_files(const std::string& path,
                                                            std::string_view suffix) {
  const ZipReader zip(path);
  std::vector<std::pair<std::string, std::string>> files;
  for (const Entry& e : zip.entries()) {
    if (e.name.size() < suffix.size() ||
        e.name.compare(e.name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    zip.check_crc(e);
    files.emplace_back(e.name, std::string(zip.bytes(e)));
  }
  return files;
}

}  // namespace detail
}  // namespace tensordict::archive
