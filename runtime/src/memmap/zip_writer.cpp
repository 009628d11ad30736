// The writing half of the zip layer of `.tdz` archives: a writer reproducing Python 3.11
// zipfile's bytes for tensordict's entries. Facts of the layout (docs/format.md, "Single-file
// archives"): every entry is STORED; the local header carries the zip64 extra block (zipfile's
// force_zip64) after an optional "td" (0x6474) padding block that puts `*.memmap` payloads on a
// 64-byte boundary.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "memmap/archive_internal.h"
#include "memmap/internal.h"
#include "memmap/zip_format.h"

namespace tensordict::archive {
namespace detail {

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
