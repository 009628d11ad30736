// libFuzzer harness of the `.tdz` reader: the input becomes an archive, which is then listed,
// verified, loaded (CPU and meta device) and unpacked. A tensordict::Error is a correct refusal;
// anything else escaping, a crash, a hang, a sanitizer report or running out of memory is a
// finding.
//
// Byte mutations of a zip rarely reach the shapes that break readers (a 64 KB name, 20,000
// entries over one payload), so an input is either raw archive bytes (it starts with "RAW\n") or
// a short plan of the archive, one line per step, which a few mutations turn into those shapes:
//
//   f NAME DATA    a file entry NAME holding DATA
//   d NAME         a directory entry NAME/
//   a K NAME       a central record named NAME pointing at entry K's local header
//   c K N          entry K's central record N more times
//   s K DELTA      entry K's central record points DELTA bytes further (negative: back)
//
// NAME and DATA are parts joined by '+', each "text" or "text*N" (text N times), so that
// `b/+a/*30000+x` is a name of 60,002 bytes. Entries are STORED with right CRCs; the end records
// are zip64 when there are more than 65,534 records. docs/reliability.md has the commands.
#include <ATen/ATen.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tensordict/archive.h"
#include "tensordict/errors.h"

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxExpanded = 16u << 20;  // bytes of one NAME or DATA
constexpr size_t kMaxRecords = 200000;
// Bytes of an archive a plan may describe: the harness's own memory, not the reader's, is bounded
// here (70,000 records of a 60 KB name would be 4 GB of central directory).
constexpr size_t kMaxArchiveBytes = 64u << 20;

void put16(std::string& s, uint64_t v) {
  for (int i = 0; i < 2; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put32(std::string& s, uint64_t v) {
  for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}

// "b/+a/*3+x" -> "b/a/a/a/x"; false when the result would be too large.
bool expand(const std::string& spec, std::string& out) {
  out.clear();
  std::stringstream parts(spec);
  for (std::string part; std::getline(parts, part, '+');) {
    size_t count = 1;
    const size_t star = part.rfind('*');
    if (star != std::string::npos && star + 1 < part.size() &&
        part.find_first_not_of("0123456789", star + 1) == std::string::npos &&
        part.size() - star <= 9) {
      count = std::stoul(part.substr(star + 1));
      part.resize(star);
    }
    if (part.empty()) continue;
    if (count > kMaxExpanded / part.size() || out.size() + count * part.size() > kMaxExpanded) {
      return false;
    }
    for (size_t i = 0; i < count; ++i) out += part;
  }
  return true;
}

struct Record {
  std::string name;
  uint64_t header_offset = 0;
  uint64_t size = 0;
  uint32_t crc = 0;
};

// What local headers and central records share: version needed, flags, method (STORED), time
// and date, CRC, both sizes, name and extra lengths.
void put_fields(std::string& zip, const Record& r) {
  put16(zip, 20);
  put16(zip, 0);
  put16(zip, 0);
  put32(zip, 0);
  put32(zip, r.crc);
  put32(zip, r.size);
  put32(zip, r.size);
  put16(zip, r.name.size());
  put16(zip, 0);
}

// The archive a plan describes; false when the plan is malformed (the input is then skipped).
bool build(const std::string& plan, std::string& zip) {
  std::vector<Record> entries;  // one per f / d line: the local headers written
  std::vector<Record> central;
  size_t central_bytes = 0;
  // Whether `n` more central records of `r` keep the archive within kMaxArchiveBytes.
  auto fits = [&](const Record& r, size_t n) {
    const size_t each = 46 + r.name.size();
    return n <= (kMaxArchiveBytes - central_bytes) / each &&
           zip.size() + central_bytes + n * each <= kMaxArchiveBytes;
  };
  std::stringstream lines(plan);
  for (std::string line; std::getline(lines, line);) {
    std::stringstream in(line);
    std::string op;
    in >> op;
    if (op == "f" || op == "d") {
      std::string name_spec;
      std::string data_spec;
      in >> name_spec;
      std::getline(in >> std::ws, data_spec);
      Record r;
      std::string data;
      if (!expand(name_spec, r.name) || r.name.empty() || !expand(data_spec, data)) return false;
      if (op == "d") {
        r.name += '/';
        data.clear();
      }
      if (r.name.size() > 0xFFFF ||
          zip.size() + 30 + r.name.size() + data.size() > kMaxArchiveBytes || !fits(r, 1)) {
        return false;
      }
      r.header_offset = zip.size();
      r.size = data.size();
      r.crc = tensordict::archive::crc32(data.data(), data.size());
      put32(zip, 0x04034b50);
      put_fields(zip, r);
      zip += r.name;
      zip += data;
      entries.push_back(r);
      central.push_back(r);
      central_bytes += 46 + r.name.size();
    } else if (op == "a" || op == "c" || op == "s") {
      size_t k = 0;
      std::string arg;
      if (!(in >> k >> arg) || k >= entries.size()) return false;
      Record r = entries[k];
      if (op == "a") {
        if (!expand(arg, r.name) || r.name.empty() || r.name.size() > 0xFFFF || !fits(r, 1)) {
          return false;
        }
        central.push_back(r);
        central_bytes += 46 + r.name.size();
      } else if (op == "c") {
        const size_t n = std::strtoul(arg.c_str(), nullptr, 10);
        if (n > kMaxRecords - central.size() || !fits(r, n)) return false;
        central.insert(central.end(), n, r);
        central_bytes += n * (46 + r.name.size());
      } else {
        const int64_t delta = std::strtoll(arg.c_str(), nullptr, 10);
        for (auto& c : central) {
          if (c.header_offset == r.header_offset && c.name == r.name) c.header_offset += delta;
        }
      }
    } else if (!op.empty()) {
      return false;
    }
    if (central.size() > kMaxRecords) return false;
  }
  const uint64_t cd_offset = zip.size();
  for (const auto& r : central) {
    put32(zip, 0x02014b50);
    put16(zip, 20);  // made by
    put_fields(zip, r);
    put16(zip, 0);  // comment
    put16(zip, 0);  // disk
    put16(zip, 0);  // internal attributes
    put32(zip, 0);  // external attributes
    put32(zip, r.header_offset & 0xFFFFFFFFu);
    zip += r.name;
  }
  const uint64_t cd_size = zip.size() - cd_offset;
  const bool zip64 = central.size() >= 0xFFFF;
  if (zip64) {
    const uint64_t end64 = zip.size();
    put32(zip, 0x06064b50);
    put64(zip, 44);  // size of the rest of the record
    put16(zip, 45);
    put16(zip, 45);
    put32(zip, 0);
    put32(zip, 0);
    put64(zip, central.size());
    put64(zip, central.size());
    put64(zip, cd_size);
    put64(zip, cd_offset);
    put32(zip, 0x07064b50);
    put32(zip, 0);
    put64(zip, end64);
    put32(zip, 1);
  }
  put32(zip, 0x06054b50);
  put16(zip, 0);
  put16(zip, 0);
  put16(zip, zip64 ? 0xFFFF : central.size());
  put16(zip, zip64 ? 0xFFFF : central.size());
  put32(zip, zip64 ? 0xFFFFFFFFu : cd_size);
  put32(zip, zip64 ? 0xFFFFFFFFu : cd_offset);
  put16(zip, 0);
  return true;
}

std::string scratch_dir() {
  const fs::path base = fs::is_directory("/dev/shm") ? "/dev/shm" : fs::temp_directory_path();
  const fs::path dir = base / ("tc_fuzz_archive_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir.string();
}

template <class Step>
void refused_or_done(Step step) {
  try {
    step();
  } catch (const tensordict::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string root = scratch_dir();
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::string zip;
  if (input.rfind("RAW\n", 0) == 0) {
    zip = input.substr(4);
  } else if (!build(input, zip)) {
    return -1;  // not a plan: keep it out of the corpus
  }
  const std::string archive = root + "/x.tdz";
  const std::string out = root + "/out";
  std::ofstream(archive, std::ios::binary | std::ios::trunc) << zip;
  refused_or_done([&] { (void)tensordict::archive::list(archive); });
  refused_or_done([&] { (void)tensordict::archive::verify(archive); });
  for (const auto& device : {at::Device(at::kMeta), at::Device(at::kCPU)}) {
    refused_or_done([&] { (void)tensordict::archive::load(archive, {}, device); });
  }
  refused_or_done([&] { tensordict::archive::unpack_memmap(archive, out, /*durable=*/false); });
  std::error_code ec;
  fs::remove_all(out, ec);
  return 0;
}
