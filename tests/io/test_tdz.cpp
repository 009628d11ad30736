// `.tdz` single-file archives (archive.h) against the archives Python tensordict 0.14 wrote
// (fixtures/tdz: <case>.tdz beside the same TensorDict as a memmap directory <case>/): loading,
// byte-identical writing, pack/unpack, round trips, and corrupt archives failing cleanly.
#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

#include "tdz_test_util.h"

namespace memmap = tensordict::memmap;

using namespace tdz_test;

TEST_CASE("every Python archive loads with the values of its directory",
          "[io][tdz][needs-fixtures]") {
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

TEST_CASE("archive leaves are views into one mapping of the file", "[io][tdz][needs-fixtures]") {
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

TEST_CASE("a subpath loads one sub-tensordict of an archive", "[io][tdz][needs-fixtures]") {
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

TEST_CASE("C++ writes Python's archives byte for byte", "[io][tdz][needs-fixtures]") {
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

TEST_CASE("unpacking a Python archive gives its directory", "[io][tdz][needs-fixtures]") {
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

TEST_CASE("archives written by other zip tools load, unaligned payloads copied",
          "[io][tdz][needs-fixtures]") {
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

TEST_CASE("corrupt archives give clean errors", "[io][tdz][needs-fixtures]") {
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
