#pragma once
// What the .tdz archive tests share (test_tdz.cpp, test_tdz_limits.cpp): Python's fixture
// archives, comparing TensorDicts, zip bytes read and patched by offset, plain zips built as
// other tools write them, and the error a load gives.
#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "catch2_compat.h"
#include "io_test_util.h"
#include "skip.h"
#include "tensordict/archive.h"
#include "tensordict/errors.h"
#include "tensordict/memmap.h"

namespace tdz_test {

using tensordict::FormatError;
using tensordict::TensorDict;
using tensordict::Value;
namespace fs = std::filesystem;
namespace archive = tensordict::archive;

const fs::path kFixtures = fs::path(TC_FIXTURES_DIR) / "tdz";
const char* const kCases[] = {"flat", "nested", "odd_keys"};
// The local time Python stamped the fixture entries with (all entries, all archives).
const archive::Timestamp kFixtureTime{2026, 11, 24, 7, 59, 56};

inline void require_fixtures() {
  if (!fs::exists(kFixtures / "flat.tdz")) {
    TC_SKIP("fixtures folder " << kFixtures.string() << " is absent (set TC_FIXTURES_DIR)");
  }
}

inline std::string fixture(const std::string& name) { return (kFixtures / name).string(); }

inline archive::PackOptions fixture_time() {
  archive::PackOptions o;
  o.timestamp = kFixtureTime;
  o.durable = false;
  return o;
}

inline void check_same(const Value& a, const Value& b, const std::string& key);

inline void check_same(const TensorDict& a, const TensorDict& b) {
  CHECK(a.batch_size() == b.batch_size());
  const auto ia = a.items();
  const auto ib = b.items();
  REQUIRE(ia.size() == ib.size());
  for (size_t i = 0; i < ia.size(); ++i) {
    CHECK(ia[i].first == ib[i].first);  // same keys in the same order
    check_same(ia[i].second, ib[i].second, ia[i].first.front());
  }
}

inline void check_same(const Value& a, const Value& b, const std::string& key) {
  INFO("key " << key);
  REQUIRE(a.kind_name() == b.kind_name());
  if (a.is_tensor()) {
    CHECK(a.tensor().scalar_type() == b.tensor().scalar_type());
    CHECK(a.tensor().sizes().vec() == b.tensor().sizes().vec());
    CHECK(at::equal(a.tensor(), b.tensor()));
  } else if (a.is_tensordict()) {
    check_same(a.tensordict(), b.tensordict());
  } else if (a.is_non_tensor_data()) {
    CHECK(a.non_tensor_data().data == b.non_tensor_data().data);
  }
}

inline uint16_t rd16(const std::string& b, size_t at) {
  return static_cast<uint16_t>(static_cast<unsigned char>(b.at(at)) |
                               (static_cast<unsigned char>(b.at(at + 1)) << 8));
}
inline uint32_t rd32(const std::string& b, size_t at) {
  return rd16(b, at) | (static_cast<uint32_t>(rd16(b, at + 2)) << 16);
}
inline void put16(std::string& b, size_t at, uint16_t v) {
  b.at(at) = static_cast<char>(v & 0xFF);
  b.at(at + 1) = static_cast<char>(v >> 8);
}
inline void put32(std::string& b, size_t at, uint32_t v) {
  put16(b, at, static_cast<uint16_t>(v & 0xFFFF));
  put16(b, at + 2, static_cast<uint16_t>(v >> 16));
}

// Offsets of the central directory records of an archive without comment or zip64 records.
inline std::vector<size_t> central_records(const std::string& b) {
  const size_t end = b.size() - 22;
  REQUIRE(rd32(b, end) == 0x06054b50u);
  std::vector<size_t> out;
  size_t pos = rd32(b, end + 16);
  for (uint16_t i = 0; i < rd16(b, end + 10); ++i) {
    out.push_back(pos);
    pos += 46 + rd16(b, pos + 28) + rd16(b, pos + 30) + rd16(b, pos + 32);
  }
  return out;
}

// The bytes of an archive with the DOS time and date of every local and central header zeroed:
// what stays when two archives were written at different times.
inline std::string without_timestamps(std::string b) {
  for (size_t rec : central_records(b)) {
    put32(b, rec + 12, 0);
    put32(b, rd32(b, rec + 42) + 10, 0);
  }
  return b;
}

// A plain zip as other tools write it: no extra fields, so payloads land where they fall.
struct RawEntry {
  std::string name;
  std::string data;
  uint16_t method = 0;
};

inline std::string build_zip(const std::vector<RawEntry>& entries) {
  std::string out;
  std::string cd;
  auto le = [](std::string& s, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  for (const auto& e : entries) {
    const uint32_t crc = archive::crc32(e.data.data(), e.data.size());
    const size_t offset = out.size();
    le(out, 0x04034b50, 4), le(out, 20, 2), le(out, 0, 2), le(out, e.method, 2), le(out, 0, 4);
    le(out, crc, 4), le(out, e.data.size(), 4), le(out, e.data.size(), 4);
    le(out, e.name.size(), 2), le(out, 0, 2);
    out += e.name + e.data;
    le(cd, 0x02014b50, 4), le(cd, 20, 2), le(cd, 20, 2), le(cd, 0, 2), le(cd, e.method, 2);
    le(cd, 0, 4), le(cd, crc, 4), le(cd, e.data.size(), 4), le(cd, e.data.size(), 4);
    le(cd, e.name.size(), 2), le(cd, 0, 2), le(cd, 0, 2), le(cd, 0, 2), le(cd, 0, 2);
    le(cd, 0, 4), le(cd, offset, 4);
    cd += e.name;
  }
  const size_t cd_offset = out.size();
  out += cd;
  le(out, 0x06054b50, 4), le(out, 0, 4), le(out, entries.size(), 2), le(out, entries.size(), 2);
  le(out, cd.size(), 4), le(out, cd_offset, 4), le(out, 0, 2);
  return out;
}

// The files under `dir` in pack_memmap's order (per level: meta.json, the other files by name,
// then each directory), as entries named relative to `dir`.
inline void add_tree(const std::string& dir, const std::string& rel, std::vector<RawEntry>& out) {
  std::vector<std::string> files;
  std::vector<std::string> dirs;
  for (const auto& e : fs::directory_iterator(dir)) {
    (e.is_directory() ? dirs : files).push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
    return (a == "meta.json") != (b == "meta.json") ? a == "meta.json" : a < b;
  });
  std::sort(dirs.begin(), dirs.end());
  for (const auto& f : files) out.push_back({rel + f, tc_test::read_file(dir + "/" + f)});
  for (const auto& d : dirs) add_tree(dir + "/" + d, rel + d + "/", out);
}

// `dir` as an archive written without a writer's checks, so that a reader meets trees that
// pack_memmap itself refuses (one nested deeper than a load reads).
inline void pack_unchecked(const std::string& dir, const std::string& arc) {
  std::vector<RawEntry> entries;
  add_tree(dir, "", entries);
  tc_test::write_file(arc, build_zip(entries));
}

inline std::vector<RawEntry> flat_entries() {
  std::vector<RawEntry> out;
  for (const char* name : {"meta.json", "a.memmap", "b.memmap", "c.memmap"}) {
    out.push_back({name, tc_test::read_file(fixture(std::string("flat/") + name))});
  }
  return out;
}

// What loading `path` throws: "" when it loads, the FormatError's message otherwise. Any other
// exception fails the test.
inline std::string load_error(const std::string& path) {
  try {
    TensorDict td = TensorDict::load_memmap(path);
    for (const Value& v : td.values(true, true)) {
      if (v.is_tensor()) (void)v.tensor().sum().item<double>();  // touch every payload
    }
    return {};
  } catch (const FormatError& e) {
    return e.what();
  }
}

inline std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tdz_test
