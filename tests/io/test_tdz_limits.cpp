// `.tdz` archives against hostile input: trees a load refuses (malformed, nested too deep), the
// same trees refused by directory and archive loads alike, FIFOs, saves a load would refuse,
// bounded entry names, overlapping entries ("zip bombs"), and a name that is both a file and a
// directory.
#include <ATen/ATen.h>
#include <sys/stat.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "tdz_test_util.h"
#include "tensordict/json.h"
#include "tensordict/lazy_stack.h"

using tensordict::Json;
namespace memmap = tensordict::memmap;

using namespace tdz_test;
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
