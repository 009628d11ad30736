// The zip layer of `.tdz` archives: CRC-32, a reader that indexes (and bounds-checks) an archive
// mapped in memory, and a writer reproducing Python 3.11 zipfile's bytes for tensordict's
// entries. Facts of the layout (docs/format.md, "Single-file archives"): every entry is STORED;
// the local header carries the zip64 extra block (zipfile's force_zip64) after an optional "td"
// (0x6474) padding block that puts `*.memmap` payloads on a 64-byte boundary.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "memmap/archive_internal.h"
#include "memmap/internal.h"
#include "tensordict/limits.h"

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

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50;
constexpr uint32_t kEnd64LocatorSig = 0x07064b50;
constexpr size_t kLocalSize = 30;
constexpr size_t kCentralSize = 46;
constexpr size_t kEndSize = 22;
constexpr size_t kEnd64Size = 56;
constexpr size_t kEnd64LocatorSize = 20;
// zipfile's thresholds: sizes and offsets above ZIP64_LIMIT go to zip64 fields, and more entries
// than ZIP_FILECOUNT_LIMIT need the zip64 end record.
constexpr uint64_t kZip64Limit = (uint64_t{1} << 31) - 1;
constexpr uint64_t kFileCountLimit = (uint64_t{1} << 16) - 1;
constexpr uint16_t kPadExtraId = 0x6474;  // "td"
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kUtf8Flag = 0x800;

uint16_t rd16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t rd32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
uint64_t rd64(const unsigned char* p) {
  return static_cast<uint64_t>(rd32(p)) | (static_cast<uint64_t>(rd32(p + 4)) << 32);
}

void put16(std::string& s, uint16_t v) {
  s.push_back(static_cast<char>(v & 0xFF));
  s.push_back(static_cast<char>(v >> 8));
}
void put32(std::string& s, uint32_t v) {
  put16(s, static_cast<uint16_t>(v & 0xFFFF));
  put16(s, static_cast<uint16_t>(v >> 16));
}
void put64(std::string& s, uint64_t v) {
  put32(s, static_cast<uint32_t>(v & 0xFFFFFFFFu));
  put32(s, static_cast<uint32_t>(v >> 32));
}

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

// ---- writer ------------------------------------------------------------------------------------

ZipWriter::ZipWriter(int fd, std::string path, const Timestamp& ts)
    : fd_(fd), path_(std::move(path)) {
  if (ts.year < 1980 || ts.year > 2107 || ts.month < 1 || ts.month > 12 || ts.day < 1 ||
      ts.day > 31 || ts.hour < 0 || ts.hour > 23 || ts.minute < 0 || ts.minute > 59 ||
      ts.second < 0 || ts.second > 59) {
    throw Error("archive timestamp out of the zip (DOS) range 1980-01-01 .. 2107-12-31");
  }
  dos_date_ = static_cast<uint16_t>(((ts.year - 1980) << 9) | (ts.month << 5) | ts.day);
  dos_time_ = static_cast<uint16_t>((ts.hour << 11) | (ts.minute << 5) | (ts.second / 2));
}

void ZipWriter::write(const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) memmap::detail::throw_errno("cannot write", path_);
    p += w;
    n -= static_cast<size_t>(w);
    pos_ += static_cast<uint64_t>(w);
  }
}

void ZipWriter::add_file(const std::string& name, const std::string& source, bool align) {
  memmap::detail::Fd in(::open(source.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!in) memmap::detail::throw_errno("cannot open", source);
  struct stat st {};
  if (::fstat(in.get(), &st) != 0) memmap::detail::throw_errno("cannot stat", source);
  if (!S_ISREG(st.st_mode)) throw FormatError("'" + source + "' is not a regular file");
  if (name.size() > 0xFFFF) throw FormatError("entry name too long: '" + name + "'");
  const auto size = static_cast<uint64_t>(st.st_size);
  const bool large = size > kZip64Limit;
  // zipfile flags names that are not ASCII as UTF-8.
  uint16_t flags = 0;
  for (unsigned char c : name) {
    if (c >= 0x80) flags = kUtf8Flag;
  }

  Record rec{name, flags, 0, size, pos_, {}};
  if (align) {
    // The payload follows the fixed header, the name, this block (4 + pad) and zipfile's 20-byte
    // zip64 block.
    const uint64_t start = pos_ + kLocalSize + name.size() + 4 + 20;
    const auto pad = static_cast<uint16_t>((kAlignment - start % kAlignment) % kAlignment);
    put16(rec.extra, kPadExtraId);
    put16(rec.extra, pad);
    rec.extra.append(pad, '\0');
  }
  std::string extra = rec.extra;
  put16(extra, kZip64ExtraId);
  put16(extra, 16);
  put64(extra, size);
  put64(extra, size);
  const auto size32 = static_cast<uint32_t>(large ? 0xFFFFFFFFu : size);

  std::string header;
  put32(header, kLocalSig);
  put16(header, large ? 45 : 20);  // version needed (the byte after it, "reserved", is 0)
  put16(header, flags);
  put16(header, 0);  // STORED
  put16(header, dos_time_);
  put16(header, dos_date_);
  put32(header, 0);  // CRC-32, patched once the payload is written
  put32(header, size32);
  put32(header, size32);
  put16(header, static_cast<uint16_t>(name.size()));
  put16(header, static_cast<uint16_t>(extra.size()));
  header += name;
  header += extra;
  write(header.data(), header.size());
  if (align && pos_ % kAlignment != 0) {
    throw Error("internal error: archive entry '" + name + "' is not aligned");
  }

  std::vector<char> buf(std::min<uint64_t>(size, uint64_t{4} << 20));
  uint64_t left = size;
  uint32_t crc = 0;
  while (left > 0) {
    const ssize_t r = ::read(in.get(), buf.data(), std::min<uint64_t>(left, buf.size()));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) memmap::detail::throw_errno("cannot read", source);
    if (r == 0) throw FormatError("'" + source + "' shrank while it was being archived");
    crc = crc32(buf.data(), static_cast<size_t>(r), crc);
    write(buf.data(), static_cast<size_t>(r));
    left -= static_cast<uint64_t>(r);
  }
  rec.crc = crc;
  std::string crc_bytes;
  put32(crc_bytes, crc);
  if (::pwrite(fd_, crc_bytes.data(), 4, static_cast<off_t>(rec.header_offset + 14)) != 4) {
    memmap::detail::throw_errno("cannot write", path_);
  }
  records_.push_back(std::move(rec));
}

void ZipWriter::finish() {
  const uint64_t cd_offset = pos_;
  std::string cd;
  for (const Record& r : records_) {
    // zipfile's central record: zip64 values only for what overflows, then zinfo.extra.
    std::string zip64;
    const bool large = r.size > kZip64Limit;
    if (large) {
      put64(zip64, r.size);
      put64(zip64, r.size);
    }
    if (r.header_offset > kZip64Limit) put64(zip64, r.header_offset);
    std::string extra;
    if (!zip64.empty()) {
      put16(extra, kZip64ExtraId);
      put16(extra, static_cast<uint16_t>(zip64.size()));
      extra += zip64;
    }
    extra += r.extra;
    const uint16_t version = zip64.empty() ? 20 : 45;
    const auto size32 = static_cast<uint32_t>(large ? 0xFFFFFFFFu : r.size);
    put32(cd, kCentralSig);
    put16(cd, static_cast<uint16_t>(version | (3 << 8)));  // created by: version, Unix
    put16(cd, version);                                    // needed to extract (+ reserved 0)
    put16(cd, r.flags);
    put16(cd, 0);  // STORED
    put16(cd, dos_time_);
    put16(cd, dos_date_);
    put32(cd, r.crc);
    put32(cd, size32);
    put32(cd, size32);
    put16(cd, static_cast<uint16_t>(r.name.size()));
    put16(cd, static_cast<uint16_t>(extra.size()));
    put16(cd, 0);  // comment
    put16(cd, 0);  // disk
    put16(cd, 0);  // internal attributes
    put32(cd, 0644u << 16);
    put32(cd, static_cast<uint32_t>(r.header_offset > kZip64Limit ? 0xFFFFFFFFu : r.header_offset));
    cd += r.name;
    cd += extra;
  }
  write(cd.data(), cd.size());
  const uint64_t count = records_.size();
  const uint64_t cd_size = cd.size();
  std::string tail;
  if (count > kFileCountLimit || cd_offset > kZip64Limit || cd_size > kZip64Limit) {
    const uint64_t end64 = pos_;
    put32(tail, kEnd64Sig);
    put64(tail, 44);
    put16(tail, 45);
    put16(tail, 45);
    put32(tail, 0);
    put32(tail, 0);
    put64(tail, count);
    put64(tail, count);
    put64(tail, cd_size);
    put64(tail, cd_offset);
    put32(tail, kEnd64LocatorSig);
    put32(tail, 0);
    put64(tail, end64);
    put32(tail, 1);
  }
  put32(tail, kEndSig);
  put16(tail, 0);
  put16(tail, 0);
  put16(tail, static_cast<uint16_t>(std::min<uint64_t>(count, 0xFFFF)));
  put16(tail, static_cast<uint16_t>(std::min<uint64_t>(count, 0xFFFF)));
  put32(tail, static_cast<uint32_t>(std::min<uint64_t>(cd_size, 0xFFFFFFFFu)));
  put32(tail, static_cast<uint32_t>(std::min<uint64_t>(cd_offset, 0xFFFFFFFFu)));
  put16(tail, 0);  // comment
  write(tail.data(), tail.size());
}

bool has_memmap_suffix(std::string_view name) {
  const size_t slash = name.rfind('/');
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  const size_t dot = name.rfind('.');
  return dot != std::string_view::npos && dot > 0 && dot + 1 < name.size() &&
         name.substr(dot) == ".memmap";
}

Timestamp now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  Timestamp ts{tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec};
  if (ts.year < 1980) ts = Timestamp{};
  if (ts.year > 2107) ts = Timestamp{2107, 12, 31, 23, 59, 58};
  return ts;
}

}  // namespace detail
}  // namespace tensordict::archive
