// `.tdz` single-file archives (archive.h) against the archives Python tensordict 0.14 wrote
// (fixtures/tdz: <case>.tdz beside the same TensorDict as a memmap directory <case>/): loading,
// byte-identical writing, pack/unpack, round trips, and corrupt archives failing cleanly.
#include <ATen/ATen.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include "catch2_compat.h"

#include "io_test_util.h"
#include "skip.h"
#include "tensordict/archive.h"
#include "tensordict/errors.h"
#include "tensordict/json.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/memmap.h"

using tensordict::FormatError;
using tensordict::Json;
using tensordict::TensorDict;
using tensordict::Value;
namespace fs = std::filesystem;
namespace archive = tensordict::archive;
namespace memmap = tensordict::memmap;

namespace {

const fs::path kFixtures = fs::path(TC_FIXTURES_DIR) / "tdz";
const char* const kCases[] = {"flat", "nested", "odd_keys"};
// The local time Python stamped the fixture entries with (all entries, all archives).
const archive::Timestamp kFixtureTime{2026, 11, 24, 7, 59, 56};

void require_fixtures() {
  if (!fs::exists(kFixtures / "flat.tdz")) {
    TC_SKIP("fixtures folder " << kFixtures.string() << " is absent (set TC_FIXTURES_DIR)");
  }
}

std::string fixture(const std::string& name) { return (kFixtures / name).string(); }

archive::PackOptions fixture_time() {
  archive::PackOptions o;
  o.timestamp = kFixtureTime;
  o.durable = false;
  return o;
}

void check_same(const Value& a, const Value& b, const std::string& key);

void check_same(const TensorDict& a, const TensorDict& b) {
  CHECK(a.batch_size() == b.batch_size());
  const auto ia = a.items();
  const auto ib = b.items();
  REQUIRE(ia.size() == ib.size());
  for (size_t i = 0; i < ia.size(); ++i) {
    CHECK(ia[i].first == ib[i].first);  // same keys in the same order
    check_same(ia[i].second, ib[i].second, ia[i].first.front());
  }
}

void check_same(const Value& a, const Value& b, const std::string& key) {
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

uint16_t rd16(const std::string& b, size_t at) {
  return static_cast<uint16_t>(static_cast<unsigned char>(b.at(at)) |
                               (static_cast<unsigned char>(b.at(at + 1)) << 8));
}
uint32_t rd32(const std::string& b, size_t at) {
  return rd16(b, at) | (static_cast<uint32_t>(rd16(b, at + 2)) << 16);
}
void put16(std::string& b, size_t at, uint16_t v) {
  b.at(at) = static_cast<char>(v & 0xFF);
  b.at(at + 1) = static_cast<char>(v >> 8);
}
void put32(std::string& b, size_t at, uint32_t v) {
  put16(b, at, static_cast<uint16_t>(v & 0xFFFF));
  put16(b, at + 2, static_cast<uint16_t>(v >> 16));
}

// Offsets of the central directory records of an archive without comment or zip64 records.
std::vector<size_t> central_records(const std::string& b) {
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
std::string without_timestamps(std::string b) {
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

std::string build_zip(const std::vector<RawEntry>& entries) {
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
void add_tree(const std::string& dir, const std::string& rel, std::vector<RawEntry>& out) {
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
void pack_unchecked(const std::string& dir, const std::string& arc) {
  std::vector<RawEntry> entries;
  add_tree(dir, "", entries);
  tc_test::write_file(arc, build_zip(entries));
}

std::vector<RawEntry> flat_entries() {
  std::vector<RawEntry> out;
  for (const char* name : {"meta.json", "a.memmap", "b.memmap", "c.memmap"}) {
    out.push_back({name, tc_test::read_file(fixture(std::string("flat/") + name))});
  }
  return out;
}

// What loading `path` throws: "" when it loads, the FormatError's message otherwise. Any other
// exception fails the test.
std::string load_error(const std::string& path) {
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

std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("every Python archive loads with the values of its directory", "[io][tdz]") {
  require_fixtures();
  for (const std::string c : {"flat", "nested", "odd_keys", "flat_packed"}) {
    SECTION(c) {
      const std::string dir = fixture(c == "flat_packed" ? "flat" : c);
      TensorDict want = TensorDict::load_memmap(dir);
      TensorDict got = TensorDict::load_memmap(fixture(c + ".tdz"));
      check_same(got, want);
      memmap::Loaded loaded = archive::load(fixture(c + ".tdz"));
      CHECK(loaded.type == memmap::kTensorDictType);
      CHECK_FALSE(loaded.class_info);
    }
  }
}

TEST_CASE("archive leaves are views into one mapping of the file", "[io][tdz]") {
  require_fixtures();
  const std::string path = fixture("flat.tdz");
  TensorDict td = archive::load_memmap(path);
  std::map<std::string, uint64_t> offsets;
  for (const auto& e : archive::list(path)) offsets[e.name] = e.offset;
  for (const char* key : {"a", "b", "c"}) {
    CHECK(offsets.at(std::string(key) + ".memmap") % archive::kAlignment == 0);
    CHECK(reinterpret_cast<uintptr_t>(td.get(key).data_ptr()) % archive::kAlignment == 0);
  }
  const auto* a = static_cast<const char*>(td.get("a").data_ptr());
  const auto* c = static_cast<const char*>(td.get("c").data_ptr());
  CHECK(c - a == static_cast<ptrdiff_t>(offsets["c.memmap"] - offsets["a.memmap"]));
  // Copy-on-write: writes stay in memory, the archive keeps its bytes.
  const std::string before = tc_test::read_file(path);
  TensorDict copy = td.clone();
  td.unlock_();
  td.get("a").add_(1);
  CHECK(at::equal(td.get("a"), copy.get("a") + 1));
  CHECK(tc_test::read_file(path) == before);
}

TEST_CASE("a subpath loads one sub-tensordict of an archive", "[io][tdz]") {
  require_fixtures();
  const std::string path = fixture("nested.tdz");
  check_same(archive::load_memmap(path, "next"), TensorDict::load_memmap(fixture("nested/next")));
  check_same(archive::load_memmap(path, "/next/"), TensorDict::load_memmap(fixture("nested/next")));
  check_same(archive::load_key(path, tensordict::NestedKey("next")).value.tensordict(),
             TensorDict::load_memmap(fixture("nested/next")));
  memmap::Loaded text = archive::load(path, "text");
  REQUIRE(text.value.is_non_tensor_data());
  CHECK(text.value.non_tensor_data().data == "hello");
  CHECK_THROWS_AS(archive::load_memmap(path, "text"), FormatError);
  CHECK_THROWS_WITH(archive::load(path, "missing"),
                    Catch::Matchers::ContainsSubstring("no such sub-tensordict"));
  // Keys are encoded as in directories: "x/y" is the file x%2Fy.memmap, never a path.
  TensorDict odd = archive::load_memmap(fixture("odd_keys.tdz"));
  CHECK(at::equal(odd.get("x/y"), at::ones({2}, at::kInt)));
}

TEST_CASE("C++ writes Python's archives byte for byte", "[io][tdz]") {
  require_fixtures();
  tc_test::TempDir tmp;
  for (const std::string c : kCases) {
    SECTION(c) {
      const std::string want = tc_test::read_file(fixture(c + ".tdz"));
      memmap::Loaded loaded = memmap::load(fixture(c));
      const std::string out = tmp / (c + ".tdz");
      memmap::WriteOptions v0;  // tensordict 0.14's files (format version 0)
      v0.memmap.format_version = 0;
      TensorDict saved = archive::save(loaded.value.tensordict(), out, v0, fixture_time());
      CHECK(tc_test::read_file(out) == want);
      check_same(saved, loaded.value.tensordict());
      CHECK(saved.is_locked());
      // The public entry point stamps the current time: only the time stamps differ.
      const std::string now = tmp / (c + "_now.tdz");
      TensorDict via_save = loaded.value.tensordict().save(now, v0.memmap);
      const std::string got = tc_test::read_file(now);
      REQUIRE(got.size() == want.size());
      CHECK(without_timestamps(got) == without_timestamps(want));
      check_same(via_save, loaded.value.tensordict());
      // Packing the directory gives the same archive (and flat_packed.tdz for flat).
      const std::string packed = tmp / (c + "_packed.tdz");
      archive::pack_memmap(fixture(c), packed, fixture_time());
      CHECK(tc_test::read_file(packed) == want);
      if (c == "flat")
        CHECK(tc_test::read_file(packed) == tc_test::read_file(fixture("flat_packed.tdz")));
    }
  }
}

TEST_CASE("unpacking a Python archive gives its directory", "[io][tdz]") {
  require_fixtures();
  tc_test::TempDir tmp;
  for (const std::string c : kCases) {
    SECTION(c) {
      const fs::path out = tmp / c;
      archive::unpack_memmap(fixture(c + ".tdz"), out.string(), false);
      const auto files = files_under(out);
      CHECK(files == files_under(kFixtures / c));
      for (const auto& f : files) {
        CHECK(tc_test::read_file((out / f).string()) ==
              tc_test::read_file((kFixtures / c / f).string()));
      }
      // And unpacking again replaces that (memmap) directory as a whole.
      archive::unpack_memmap(fixture(c + ".tdz"), out.string(), false);
      CHECK(files_under(out) == files);
    }
  }
}

TEST_CASE("C++ archives round-trip every kind of entry", "[io][tdz]") {
  tc_test::TempDir tmp;
  TensorDict td({{"f32", at::arange(12, at::kFloat).reshape({3, 4})},
                 {"f64", at::randn({3, 2}, at::kDouble)},
                 {"i8", at::arange(3, at::kChar)},
                 {"bf16", at::randn({3, 5}).to(at::kBFloat16)},
                 {"bool", at::tensor({1, 0, 1}).to(at::kBool)},
                 {"empty", at::zeros({3, 0})},
                 {"view", at::arange(30, at::kLong).reshape({3, 10}).slice(1, 0, 10, 3)}},
                {3});
  td.set({"nested", "deeper", "x"}, at::ones({3, 1}, at::kShort));
  td.set("text", "hello");
  td.set({"key with/slash", "%"}, at::zeros({3}));
  const std::string path = tmp / "td.tdz";
  TensorDict saved = td.save(path);
  check_same(saved, td);
  check_same(TensorDict::load_memmap(path), td);
  CHECK(archive::verify(path).empty());
  for (const auto& e : archive::list(path)) {
    if (e.name.size() > 7 && e.name.compare(e.name.size() - 7, 7, ".memmap") == 0) {
      CHECK(e.offset % archive::kAlignment == 0);
    }
  }
  // Meta device: shapes and dtypes, no payload touched.
  TensorDict meta = TensorDict::load_memmap(path, at::Device(at::kMeta));
  CHECK(meta.get("bf16").device().is_meta());
  CHECK(meta.get("bf16").sizes().vec() == std::vector<int64_t>{3, 5});
  // The leaves keep the mapping alive after the archive is gone.
  TensorDict loaded = TensorDict::load_memmap(path);
  fs::remove(path);
  check_same(loaded, td);
  // memmap_like: the same layout, zeros.
  TensorDict like = td.memmap_like(tmp / "like.tdz");
  CHECK(at::equal(like.get("f32"), at::zeros({3, 4})));
  // unpack + pack reproduce the archive.
  td.save(path);
  archive::unpack_memmap(path, tmp / "dir", false);
  archive::pack_memmap(tmp / "dir", tmp / "again.tdz");
  CHECK(without_timestamps(tc_test::read_file(tmp / "again.tdz")) ==
        without_timestamps(tc_test::read_file(path)));
  check_same(TensorDict::load_memmap(tmp / "dir"), td);
}

TEST_CASE("saving an archive never deletes what the library did not write", "[io][tdz]") {
  tc_test::TempDir tmp;
  TensorDict td({{"a", at::ones({2})}}, {2});
  // A directory in the way.
  fs::create_directory(tmp / "dir.tdz");
  tc_test::write_file(tmp / "dir.tdz/keep", "x");
  CHECK_THROWS_AS(td.save(tmp / "dir.tdz"), FormatError);
  CHECK(tc_test::read_file(tmp / "dir.tdz/keep") == "x");
  // A file that is not an archive.
  tc_test::write_file(tmp / "notes.tdz", "my notes");
  CHECK_THROWS_WITH(td.save(tmp / "notes.tdz"),
                    Catch::Matchers::ContainsSubstring("not a memmap archive"));
  CHECK(tc_test::read_file(tmp / "notes.tdz") == "my notes");
  // A previous archive is replaced, unless existsok is false.
  td.save(tmp / "x.tdz");
  TensorDict two({{"b", at::zeros({2})}}, {2});
  tensordict::MemmapOptions no_overwrite;
  no_overwrite.existsok = false;
  CHECK_THROWS_WITH(two.save(tmp / "x.tdz", no_overwrite),
                    Catch::Matchers::ContainsSubstring("already exists"));
  check_same(TensorDict::load_memmap(tmp / "x.tdz"), td);
  two.save(tmp / "x.tdz");
  check_same(TensorDict::load_memmap(tmp / "x.tdz"), two);
  // No temporary is left beside the targets.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(tmp.path())) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"dir.tdz", "notes.tdz", "x.tdz"});
  // Unpacking refuses to replace a directory that is not a memmap directory.
  CHECK_THROWS_AS(archive::unpack_memmap(tmp / "x.tdz", tmp / "dir.tdz"), FormatError);
  CHECK(tc_test::read_file(tmp / "dir.tdz/keep") == "x");
}

TEST_CASE("archives written by other zip tools load, unaligned payloads copied", "[io][tdz]") {
  require_fixtures();
  tc_test::TempDir tmp;
  auto entries = flat_entries();
  entries.insert(entries.begin() + 1, RawEntry{"xy", "1"});  // shifts every payload off alignment
  tc_test::write_file(tmp / "foreign.zip", build_zip(entries));
  TensorDict td = TensorDict::load_memmap(tmp / "foreign.zip");  // a file: an archive, any suffix
  check_same(td, TensorDict::load_memmap(fixture("flat")));
  CHECK(archive::is_memmap_archive(tmp / "foreign.zip"));
  CHECK_FALSE(archive::is_memmap_archive(fixture("flat")));
  CHECK_FALSE(archive::is_memmap_archive(fixture("README.md")));
}

TEST_CASE("corrupt archives give clean errors", "[io][tdz]") {
  require_fixtures();
  tc_test::TempDir tmp;
  const std::string good = tc_test::read_file(fixture("flat.tdz"));
  const std::string path = tmp / "bad.tdz";
  auto with = [&](const std::string& bytes) {
    tc_test::write_file(path, bytes);
    return load_error(path);
  };

  SECTION("every truncation") {
    for (size_t n = 0; n < good.size(); ++n) {
      INFO("truncated to " << n << " bytes");
      const std::string err = with(good.substr(0, n));
      CHECK_THAT(err, Catch::Matchers::ContainsSubstring(path));
    }
  }
  SECTION("every flipped byte loads or fails with a FormatError") {
    for (size_t i = 0; i < good.size(); ++i) {
      std::string b = good;
      b[i] = static_cast<char>(b[i] ^ 0xFF);
      INFO("byte " << i);
      (void)with(b);  // any exception other than FormatError fails the test
    }
  }
  const auto records = central_records(good);
  const size_t meta_rec = records[0];
  const size_t a_rec = records[1];
  const size_t a_local = rd32(good, a_rec + 42);
  SECTION("bad signatures") {
    std::string b = good;
    b[a_local] = 'X';
    CHECK_THAT(with(b), Catch::Matchers::ContainsSubstring("entry 'a.memmap'") &&
                            Catch::Matchers::ContainsSubstring("local header"));
    b = good;
    b[meta_rec] = 'X';
    CHECK_THAT(with(b), Catch::Matchers::ContainsSubstring("central directory record 0"));
    b = good;
    b[b.size() - 22] = 'X';
    CHECK_THAT(with(b), Catch::Matchers::ContainsSubstring("not a zip archive"));
  }
  SECTION("compressed entries") {
    std::string b = good;
    put16(b, a_rec + 10, 8);
    put16(b, a_local + 8, 8);
    CHECK_THAT(with(b), Catch::Matchers::ContainsSubstring("entry 'a.memmap' is compressed") &&
                            Catch::Matchers::ContainsSubstring("deflate"));
    auto entries = flat_entries();
    entries[1].method = 12;
    CHECK_THAT(with(build_zip(entries)), Catch::Matchers::ContainsSubstring("bzip2"));
  }
  SECTION("offsets and sizes beyond the end") {
    std::string b = good;
    put32(b, a_rec + 42, 0xFFFFFF00u);
    CHECK_THAT(with(b), Catch::Matchers::ContainsSubstring("entry 'a.memmap'"));
    b = good;
    put32(b, a_rec + 20, 1u << 30);
    put32(b, a_rec + 24, 1u << 30);
    CHECK_THAT(with(b), Catch::Matchers::ContainsSubstring("entry 'a.memmap'") &&
                            Catch::Matchers::ContainsSubstring("runs past"));
    b = good;
    put32(b, b.size() - 22 + 16, 5);  // central directory offset
    CHECK_THAT(with(b), Catch::Matchers::ContainsSubstring("central directory"));
    b = good;
    put16(b, b.size() - 22 + 10, 0xFFFF);  // entry count
    CHECK_THAT(with(b), Catch::Matchers::ContainsSubstring("entries cannot fit"));
  }
  SECTION("a payload too short for its shape") {
    std::string b = good;
    put32(b, a_rec + 20, 8);
    put32(b, a_rec + 24, 8);
    CHECK_THAT(with(b),
               Catch::Matchers::ContainsSubstring("entry 'a.memmap' holds 8 bytes, 48 expected"));
  }
  SECTION("corrupt meta.json and payload checksums") {
    std::string b = good;
    b[rd32(good, meta_rec + 42) + 30 + 9 + 20 + 2] ^= 1;  // inside meta.json's JSON
    CHECK_THAT(with(b), Catch::Matchers::ContainsSubstring("entry 'meta.json': corrupt payload"));
    b = good;
    b[archive::list(fixture("flat.tdz"))[1].offset] ^= 1;  // a.memmap's first byte
    tc_test::write_file(path, b);
    CHECK(load_error(path).empty());  // payloads are mapped, not checksummed, on load (as Python)
    const auto problems = archive::verify(path);
    REQUIRE(problems.size() == 1);
    CHECK_THAT(problems[0],
               Catch::Matchers::ContainsSubstring("entry 'a.memmap': corrupt payload"));
    CHECK_THROWS_WITH(archive::unpack_memmap(path, tmp / "out"),
                      Catch::Matchers::ContainsSubstring("corrupt payload"));
    CHECK_FALSE(fs::exists(tmp / "out"));
  }
  SECTION("unsafe names and duplicates") {
    auto entries = flat_entries();
    entries.push_back({"../evil.memmap", "x"});
    CHECK_THAT(with(build_zip(entries)), Catch::Matchers::ContainsSubstring("unsafe"));
    entries = flat_entries();
    entries.push_back({"/abs", "x"});
    CHECK_THAT(with(build_zip(entries)), Catch::Matchers::ContainsSubstring("unsafe"));
    entries = flat_entries();
    entries.push_back(entries[1]);
    CHECK_THAT(with(build_zip(entries)), Catch::Matchers::ContainsSubstring("appears twice"));
  }
  SECTION("not a memmap archive") {
    auto entries = flat_entries();
    entries.erase(entries.begin());
    CHECK_THAT(with(build_zip(entries)),
               Catch::Matchers::ContainsSubstring("no top-level meta.json"));
    CHECK_THAT(with(""), Catch::Matchers::ContainsSubstring("not a zip archive"));
    CHECK_THAT(with("hello, not a zip file at all"),
               Catch::Matchers::ContainsSubstring("not a zip archive"));
  }
}

namespace {

using tc_test::expand;

// A tree whose meta.json files nest "n" `depth` levels deep (the root is level 1).
void write_nested(const std::string& dir, int depth) {
  std::string d = dir;
  for (int level = 1; level <= depth; ++level) {
    fs::create_directory(d);
    Json meta = Json::object();
    if (level < depth) meta["n"] = Json{{"type", "TensorDict"}};
    meta["shape"] = Json::array();
    meta["_type"] = memmap::kTensorDictType;
    memmap::write_meta(d, meta);
    d += "/n";
  }
}

struct Malformed {
  const char* name;
  std::function<void(const std::string& dir)> make;
  std::string dir_message;      // {dir}: the directory
  std::string archive_message;  // {arc}: the archive it was packed into
};

const std::string kLeaf = R"("shape": [3], "dtype": "torch.float32")";

// Writes the TensorDict {x: float32 [3]} (or a lazy stack of three of them), then replaces the
// root meta.json with `meta` when given.
void write_td(const std::string& dir, bool stacked, const std::string& meta = {}) {
  TensorDict td({{"x", at::arange(3, at::kFloat)}}, {3});
  if (stacked) {
    tensordict::lazy_stack({td, td.clone(), td.clone()}).memmap(dir);
  } else {
    td.memmap(dir);
  }
  if (!meta.empty()) tc_test::write_file(dir + "/meta.json", meta);
}

std::vector<Malformed> malformed_trees() {
  const std::string td_type = memmap::kTensorDictType;
  const std::string stack_type = memmap::kLazyStackType;
  return {
      {"a file in a lazy stack element's place",
       [](const std::string& d) {
         write_td(d, true);
         fs::remove_all(d + "/1");
         tc_test::write_file(d + "/1", "x");
       },
       "'{dir}/1' is not a directory (an element of the stack)",
       "archive '{arc}' entry '1' is not a directory (an element of the stack)"},
      {"stack_dim of the wrong type",
       [stack_type](const std::string& d) {
         write_td(d, true, R"({"_type": ")" + stack_type + R"(", "stack_dim": "0"})");
       },
       "'{dir}/meta.json': \"stack_dim\" has the wrong type: \"0\"",
       "archive '{arc}' entry 'meta.json': \"stack_dim\" has the wrong type: \"0\""},
      {"is_nested of the wrong type",
       [td_type](const std::string& d) {
         write_td(d, false,
                  R"({"x": {)" + kLeaf + R"(, "is_nested": "no"}, "shape": [3], "_type": ")" +
                      td_type + R"("})");
       },
       "'{dir}/meta.json': entry 'x': \"is_nested\" has the wrong type: \"no\"",
       "archive '{arc}' entry 'meta.json': entry 'x': \"is_nested\" has the wrong type: \"no\""},
      {"a bool leaf holding bytes other than 0 and 1",
       [](const std::string& d) {
         TensorDict({{"m", at::ones({3}, at::kBool)}}, {3}).memmap(d);
         tc_test::write_file(d + "/m.memmap", std::string("\x01\x02\x00", 3));
       },
       "bool data file '{dir}/m.memmap' holds bytes other than 0 and 1",
       "archive '{arc}' entry 'm.memmap' holds bytes other than 0 and 1 (bool data)"},
      {"a leaf without data beside a file holding bytes",
       [](const std::string& d) {
         TensorDict({{"e", at::zeros({0, 3})}}, {0}).memmap(d);
         tc_test::write_file(d + "/e.memmap", std::string(48, '\0'));
       },
       "'{dir}/e.memmap' is too long: 48 bytes, shape [0, 3] of float32 needs 0",
       "archive '{arc}' entry 'e.memmap' holds 48 bytes, 0 expected for shape [0, 3] of float32"},
      {"a missing data file",
       [](const std::string& d) {
         write_td(d, false);
         fs::remove(d + "/x.memmap");
       },
       "missing data file '{dir}/x.memmap' for key 'x'",
       "missing data file archive '{arc}' entry 'x.memmap' for key 'x'"},
      {"a missing child directory",
       [td_type](const std::string& d) {
         write_td(d, false,
                  R"({"x": {)" + kLeaf +
                      R"(}, "n": {"type": "TensorDict"}, "shape": [3], "_type": ")" + td_type +
                      R"("})");
       },
       "missing directory '{dir}/n' for key 'n'",
       "missing directory archive '{arc}' entry 'n' for key 'n'"},
      {"a directory of pickled tensorclass fields",
       [](const std::string& d) {
         fs::create_directory(d);
         write_td(d + "/_tensordict", false);
         tc_test::write_file(d + "/meta.json", R"({"_type": "<class 'm.TC'>"})");
         fs::create_directory(d + "/other.pickle");
         tc_test::write_file(d + "/other.pickle/x", "x");
       },
       "'{dir}/other.pickle': pickled tensorclass fields are not supported",
       "archive '{arc}' entry 'other.pickle': pickled tensorclass fields are not supported"},
      {"directories nested 257 deep", [](const std::string& d) { write_nested(d, 257); },
       "'{dir}" +
           [] {
             std::string n;
             for (int i = 1; i < 257; ++i) n += "/n";
             return n;
           }() +
           "': directories nested too deep",
       "archive '{arc}' entry 'n" +
           [] {
             std::string n;
             for (int i = 2; i < 257; ++i) n += "/n";
             return n;
           }() +
           "': directories nested too deep"},
  };
}

}  // namespace

TEST_CASE("directories and archives refuse the same malformed trees", "[io][tdz]") {
  for (const auto& m : malformed_trees()) {
    SECTION(m.name) {
      tc_test::TempDir tmp;
      const std::string dir = tmp / "td";
      const std::string arc = tmp / "td.tdz";
      m.make(dir);
      pack_unchecked(dir, arc);
      CHECK_THAT(load_error(dir), Catch::Matchers::StartsWith(expand(m.dir_message, "{dir}", dir)));
      CHECK_THAT(load_error(arc),
                 Catch::Matchers::StartsWith(expand(m.archive_message, "{arc}", arc)));
      // verify reports the same problem.
      const auto dir_problems = memmap::verify(dir);
      const auto arc_problems = archive::verify(arc);
      REQUIRE(dir_problems.size() == 1);
      REQUIRE(arc_problems.size() == 1);
      CHECK_THAT(dir_problems[0], Catch::Matchers::StartsWith(expand(m.dir_message, "{dir}", dir)));
      CHECK_THAT(arc_problems[0],
                 Catch::Matchers::StartsWith(expand(m.archive_message, "{arc}", arc)));
    }
  }
}

TEST_CASE("directories and archives nested 256 deep load", "[io][tdz]") {
  tc_test::TempDir tmp;
  write_nested(tmp / "td", 256);
  archive::pack_memmap(tmp / "td", tmp / "td.tdz", fixture_time());
  for (const std::string& path : {tmp / "td", tmp / "td.tdz"}) {
    INFO(path);
    TensorDict td = TensorDict::load_memmap(path);
    for (int level = 1; level < 256; ++level) td = td.get_tensordict("n");
    CHECK(td.keys().empty());
  }
}

TEST_CASE("a FIFO named like an archive is refused, never waited on", "[io][tdz]") {
  tc_test::TempDir tmp;
  const std::string fifo = tmp / "x.tdz";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  // Each of these blocked forever in open() before: the alarm ends the test if one still does.
  ::alarm(60);
  const auto refused =
      Catch::Matchers::ContainsSubstring("archive '" + fifo + "' is not a regular file (a FIFO");
  CHECK_THROWS_WITH(archive::load(fifo), refused);
  CHECK_THROWS_WITH(archive::load_memmap(fifo), refused);
  CHECK_THROWS_WITH(archive::list(fifo), refused);
  CHECK_THROWS_WITH(archive::unpack_memmap(fifo, tmp / "out"), refused);
  CHECK_FALSE(fs::exists(tmp / "out"));
  const auto problems = archive::verify(fifo);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], refused);
  CHECK_FALSE(archive::is_memmap_archive(fifo));
  // Loads of a path that is no directory read it as an archive.
  CHECK_THROWS_WITH(TensorDict::load_memmap(fifo), refused);
  // A save never replaces it.
  const TensorDict td({{"a", at::ones({2})}}, {2});
  CHECK_THROWS_WITH(td.memmap(fifo), Catch::Matchers::StartsWith("refusing to replace '" + fifo +
                                                                 "': it is not a memmap archive") &&
                                         refused);
  CHECK_THROWS_WITH(td.save(fifo), refused);
  ::alarm(0);
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(tmp.path())) names.push_back(e.path().filename());
  CHECK(names == std::vector<std::string>{"x.tdz"});
}

namespace {

// A TensorDict whose "n" children nest `levels` directories deep, the root the first.
TensorDict nested_td(int levels) {
  TensorDict td({{"x", at::ones({1})}});
  for (int level = 1; level < levels; ++level) td = TensorDict({{"n", td}});
  return td;
}

std::string n_path(int children) {
  std::string out;
  for (int i = 0; i < children; ++i) out += "/n";
  return out;
}

}  // namespace

TEST_CASE("a save refuses a tree a load would refuse, the old save intact", "[io][tdz][limits]") {
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  const std::string arc = tmp / "td.tdz";
  const TensorDict old({{"a", at::arange(3, at::kFloat)}}, {3});
  old.memmap(dir);
  old.memmap(arc);
  const std::string old_archive = tc_test::read_file(arc);
  auto unchanged = [&] {
    check_same(TensorDict::load_memmap(dir), old);
    CHECK(tc_test::read_file(arc) == old_archive);
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(tmp.path())) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>{"td", "td.tdz"});  // no temporary, no lock left
  };

  SECTION("directories nested one level deeper than a load reads") {
    const TensorDict deep = nested_td(257);
    for (const std::string& target : {dir, arc}) {
      INFO(target);
      CHECK_THROWS_MATCHES(deep.memmap(target), tensordict::ValueError,
                           Catch::Matchers::Message("cannot save '" + target + n_path(256) +
                                                    "': it would nest directories 257 levels "
                                                    "deep, and a load reads at most 256"));
      CHECK_THROWS_AS(deep.memmap_like(target), tensordict::ValueError);
    }
    // As a tensorclass, `_tensordict/` is one level more.
    const memmap::ClassInfo info{"<class 'm.TC'>", Json::object()};
    CHECK_THROWS_WITH(memmap::save_tensorclass(nested_td(256), info, dir),
                      Catch::Matchers::ContainsSubstring("257 levels deep"));
    unchanged();
  }
  SECTION("packing a directory nested one level deeper than a load reads") {
    tc_test::TempDir src;
    write_nested(src / "deep", 257);
    CHECK_THROWS_MATCHES(
        archive::pack_memmap(src / "deep", arc), tensordict::ValueError,
        Catch::Matchers::Message("cannot archive '" + (src / "deep") + n_path(256) +
                                 "': it nests directories 257 levels deep, "
                                 "and a load reads at most 256"));
    unchanged();
  }
  SECTION("the deepest tree a load reads is saved and loads") {
    for (const std::string& target : {dir, arc}) {
      INFO(target);
      nested_td(256).memmap(target);
      TensorDict back = TensorDict::load_memmap(target);
      for (int level = 1; level < 256; ++level) back = back.get_tensordict("n");
      CHECK(at::equal(back.get("x"), at::ones({1})));
    }
  }
  SECTION("a name longer than a tree's names") {
    const std::string key(249, 'k');  // 249 + ".memmap": 256 bytes
    const TensorDict td({{key, at::ones({1})}});
    for (const std::string& target : {dir, arc}) {
      CHECK_THROWS_MATCHES(td.memmap(target), tensordict::ValueError,
                           Catch::Matchers::Message("cannot save '" + target + "/" + key +
                                                    ".memmap': the name '" + key +
                                                    ".memmap' is 256 bytes, and a name in a tree "
                                                    "has at most 255"));
    }
    unchanged();
    TensorDict({{std::string(248, 'k'), at::ones({1})}}).memmap(tmp / "fits");
    CHECK(TensorDict::load_memmap(tmp / "fits").contains(std::string(248, 'k')));
  }
  SECTION("non-tensor data nested deeper than a meta.json may be") {
    // The meta.json object is level 1, "data" level 2: 999 nested lists fit, 1000 do not.
    auto nested_list = [](int depth) {
      Json j = Json::array();
      for (int i = 1; i < depth; ++i) j = Json::array({std::move(j)});
      return j;
    };
    TensorDict td;
    td.set_non_tensor("s", nested_list(1000));
    for (const std::string& target : {dir, arc}) {
      CHECK_THROWS_MATCHES(td.memmap(target), tensordict::ValueError,
                           Catch::Matchers::Message("cannot save '" + target +
                                                    "/s/meta.json': its JSON would nest deeper "
                                                    "than 1000 levels, which no load reads"));
    }
    unchanged();
    TensorDict fits;
    fits.set_non_tensor("s", nested_list(999));
    fits.memmap(tmp / "fits");
    CHECK(TensorDict::load_memmap(tmp / "fits").get_non_tensor("s") == nested_list(999));
  }
}

namespace {

// An archive whose entries nest: entry k's payload is everything after its local header (entry
// k + 1's local header and payload included), each CRC right. The zip "overlap" bomb, STORED.
std::string overlapping_zip(size_t n, const std::string& data) {
  auto le = [](std::string& s, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  std::vector<std::string> headers(n);
  std::vector<uint32_t> crcs(n);
  std::vector<size_t> sizes(n);
  std::string tail = data;
  for (size_t k = n; k-- > 0;) {
    const std::string name = "p" + std::to_string(k) + ".bin";
    crcs[k] = archive::crc32(tail.data(), tail.size());
    sizes[k] = tail.size();
    std::string& h = headers[k];
    le(h, 0x04034b50, 4), le(h, 20, 2), le(h, 0, 2), le(h, 0, 2), le(h, 0, 4);
    le(h, crcs[k], 4), le(h, sizes[k], 4), le(h, sizes[k], 4), le(h, name.size(), 2), le(h, 0, 2);
    h += name;
    tail = h + tail;
  }
  std::string out = tail;
  std::string cd;
  size_t offset = 0;
  for (size_t k = 0; k < n; ++k) {
    const std::string name = "p" + std::to_string(k) + ".bin";
    le(cd, 0x02014b50, 4), le(cd, 20, 2), le(cd, 20, 2), le(cd, 0, 2), le(cd, 0, 2), le(cd, 0, 4);
    le(cd, crcs[k], 4), le(cd, sizes[k], 4), le(cd, sizes[k], 4), le(cd, name.size(), 2);
    le(cd, 0, 2), le(cd, 0, 2), le(cd, 0, 2), le(cd, 0, 2), le(cd, 0, 4), le(cd, offset, 4);
    cd += name;
    offset += headers[k].size();
  }
  const size_t cd_offset = out.size();
  out += cd;
  le(out, 0x06054b50, 4), le(out, 0, 4), le(out, n, 2), le(out, n, 2), le(out, cd.size(), 4);
  le(out, cd_offset, 4), le(out, 0, 2);
  return out;
}

// What each reader of an archive says of `bytes`: list, verify (its one problem), load, unpack.
// Each must be a FormatError holding `message`.
void check_refused_everywhere(const std::string& bytes, const std::string& message) {
  tc_test::TempDir tmp;
  const std::string path = tmp / "bad.tdz";
  tc_test::write_file(path, bytes);
  const auto said = Catch::Matchers::ContainsSubstring(message);
  CHECK_THROWS_AS(archive::list(path), FormatError);
  CHECK_THROWS_WITH(archive::list(path), said);
  const auto problems = archive::verify(path);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], said);
  CHECK_THAT(load_error(path), said);
  CHECK_THROWS_WITH(archive::unpack_memmap(path, tmp / "out", false), said);
  CHECK_FALSE(fs::exists(tmp / "out"));
}

}  // namespace

TEST_CASE("entry names are bounded as a directory's, indexed without copies", "[io][tdz][limits]") {
  auto entries_with = [](const std::string& name) {
    std::vector<RawEntry> entries{{"meta.json", R"({"_type": "x"})"}};
    entries.push_back({name, "x"});
    return entries;
  };
  SECTION("one 65,535-byte name of 32,768 components") {
    // Before: every parent of the name was a string in a set, twice (32,767 strings averaging
    // 32 KB, 1.27 GB for this 132 KB archive, std::bad_alloc past a few of them).
    std::string name = "b";
    while (name.size() + 2 <= 0xFFFF) name += "/a";
    REQUIRE(name.size() == 0xFFFF);
    std::string deepest = "b";
    for (int level = 2; level < 256; ++level) deepest += "/a";
    check_refused_everywhere(build_zip(entries_with(name)),
                             "entry '" + deepest +
                                 "/a': directories nested too deep (a tree has "
                                 "256 levels at most)");
  }
  SECTION("a name longer than a name in a directory") {
    const std::string part(256, 'k');
    check_refused_everywhere(build_zip(entries_with("d/" + part + "/x.memmap")),
                             "entry 'd/" + part +
                                 "/x.memmap': a name in it is 256 bytes, more "
                                 "than the 255 a name in a tree may have");
  }
  SECTION("the largest names within the bounds index in linear space") {
    // 16 entries of 256 names of 255 bytes each (a 1 MB archive, 255 directories apiece):
    // each directory is stored once, as a view into the mapping.
    std::vector<RawEntry> entries{{"meta.json", R"({"_type": "x"})"}};
    const std::string part(255, 'a');
    for (int i = 0; i < 16; ++i) {
      std::string name = std::to_string(i) + std::string(252, 'b');
      for (int level = 2; level < 256; ++level) name += "/" + part;
      entries.push_back({name + "/f" + std::to_string(i), "x"});
    }
    tc_test::TempDir tmp;
    tc_test::write_file(tmp / "wide.tdz", build_zip(entries));
    const auto listed = archive::list(tmp / "wide.tdz");
    REQUIRE(listed.size() == 17);
    CHECK(listed[16].name == entries[16].name);
    CHECK(archive::verify(tmp / "wide.tdz").size() == 1);  // the meta.json, no other problem
  }
}

TEST_CASE("overlapping entries are refused", "[io][tdz]") {
  // Before: 200 entries over one 1 MiB region verified and unpacked into 202 MB; 20,000 over 4 MiB
  // took tdtool verify 38 s. Scaled down: 50 entries over 64 KiB (3.3 MB unpacked).
  const std::string bytes = overlapping_zip(50, std::string(64 << 10, 'z'));
  check_refused_everywhere(bytes,
                           "central directory record 1: its entry (local header at offset "
                           "36) overlaps the bytes of record 0's (offsets 0 to ");
  // Two entries whose payloads cross: one's data runs into the next one's local header.
  std::vector<RawEntry> entries{{"meta.json", R"({"_type": "x"})"}, {"a", "0123"}, {"b", "4567"}};
  std::string zip = build_zip(entries);
  const auto records = central_records(zip);
  put32(zip, records[1] + 20, 6);  // a's sizes: 6 bytes, into b's local header
  put32(zip, records[1] + 24, 6);
  put32(zip, records[1] + 16, archive::crc32("0123PK", 6));
  check_refused_everywhere(zip, "central directory record 2: its entry (local header at offset");
}

TEST_CASE("a name that is a file and a directory is refused at read", "[io][tdz]") {
  // Before: verified OK, and unpack failed with EEXIST.
  const std::string meta = R"({"a": {"dtype": "torch.uint8", "shape": [1]}, "shape": [], )"
                           R"("_type": "<class 'tensordict._td.TensorDict'>"})";
  for (const std::vector<RawEntry>& entries :
       {std::vector<RawEntry>{{"meta.json", meta}, {"a.memmap", "x"}, {"a.memmap/", ""}},
        std::vector<RawEntry>{{"meta.json", meta}, {"a.memmap/", ""}, {"a.memmap", "x"}},
        std::vector<RawEntry>{{"meta.json", meta}, {"a.memmap", "x"}, {"a.memmap/x", "y"}},
        std::vector<RawEntry>{{"meta.json", meta}, {"a.memmap/x/y", "y"}, {"a.memmap", "x"}}}) {
    INFO(entries[2].name);
    check_refused_everywhere(build_zip(entries),
                             "entry 'a.memmap' is a file, and 'a.memmap/' a directory of the "
                             "archive too");
  }
}
