// Corrupted directories: each is a FormatError whose message names the path and the problem —
// never a crash, never wrong values.
#include <ATen/ATen.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <random>
#include "catch2_compat.h"

#include "io_test_util.h"
#include "skip.h"
#include "tensordict/json.h"
#include "tensordict/memmap.h"

using tensordict::TensorDict;
namespace fs = std::filesystem;

namespace {

// A valid directory: float32 x [4], child TensorDict n with int64 y [4], a string s.
void write_valid(const std::string& dir) {
  TensorDict td({{"x", at::arange(4, at::kFloat)},
                 {"n", TensorDict({{"y", at::arange(4)}}, {4})},
                 {"s", "text"}},
                {4});
  td.memmap(dir);
}

std::string root_meta(const std::string& x_entry) {
  return R"({"x": )" + x_entry +
         R"(, "shape": [4], "device": "cpu", "_type": "<class 'tensordict._td.TensorDict'>"})";
}

struct Corruption {
  const char* name;
  std::function<void(const std::string& dir)> apply;
  std::string message;  // the message, with {dir} standing for the directory
};

std::string expand(const std::string& text, const std::string& dir) {
  return tc_test::expand(text, "{dir}", dir);
}

const std::string kX =
    R"({"device": "cpu", "shape": [4], "dtype": "torch.float32", "is_nested": false})";

// Moves `path` outside the directory and leaves a symlink to it in its place.
void symlink_away(const std::string& path) {
  const std::string outside = fs::path(path).parent_path().parent_path() / "outside";
  fs::rename(path, outside);
  fs::create_directory_symlink(outside, path);
}

// Turns the directory into a tensorclass directory around it (`_tensordict/`).
void make_tensorclass(const std::string& d) {
  fs::rename(d, d + "_inner");
  fs::create_directory(d);
  fs::rename(d + "_inner", d + "/_tensordict");
  tc_test::write_file(d + "/meta.json", R"({"_type": "<class 'm.TC'>"})");
}

// Turns the directory into a lazy stack of one element (`0/`).
void make_lazy_stack(const std::string& d) {
  fs::rename(d, d + "_inner");
  fs::create_directory(d);
  fs::rename(d + "_inner", d + "/0");
  tc_test::write_file(
      d + "/meta.json",
      std::string(R"({"_type": ")") + tensordict::memmap::kLazyStackType + R"(", "stack_dim": 0})");
}

// Turns the directory into a _SubTensorDict of it (`_source/`) with the index JSON `index`.
void as_sub_tensordict(const std::string& d, const std::string& index) {
  fs::rename(d, d + "_source");
  fs::create_directory(d);
  fs::rename(d + "_source", d + "/_source");
  tc_test::write_file(d + "/meta.json", std::string(R"({"_type": ")") +
                                            tensordict::memmap::kSubTensorDictType +
                                            R"(", "index": )" + index + "}");
}

// A NonTensorData meta.json whose "data" is a list nested 100,000 deep (600 KB).
std::string deep_non_tensor() {
  return std::string(R"({"_type": ")") + tensordict::memmap::kNonTensorDataType + R"(", "data": )" +
         std::string(100000, '[') + std::string(100000, ']') + "}";
}

std::vector<Corruption> corruptions() {
  return {
      {"missing data file", [](const std::string& d) { fs::remove(d + "/x.memmap"); },
       "missing data file '{dir}/x.memmap' for key 'x'"},
      {"truncated data file", [](const std::string& d) { fs::resize_file(d + "/x.memmap", 10); },
       "'{dir}/x.memmap' is truncated: 10 bytes, shape [4] of float32 needs 16"},
      {"empty data file", [](const std::string& d) { fs::resize_file(d + "/n/y.memmap", 0); },
       "'{dir}/n/y.memmap' is truncated: 0 bytes, shape [4] of int64 needs 32"},
      {"data file is a directory",
       [](const std::string& d) {
         fs::remove(d + "/x.memmap");
         fs::create_directory(d + "/x.memmap");
       },
       "'{dir}/x.memmap' is not a regular file"},
      {"missing meta.json", [](const std::string& d) { fs::remove(d + "/meta.json"); },
       "missing '{dir}/meta.json'"},
      {"truncated meta.json",
       [](const std::string& d) {
         tc_test::write_file(d + "/meta.json", root_meta(kX).substr(0, 40));
       },
       "'{dir}/meta.json': malformed JSON"},
      {"meta.json not an object",
       [](const std::string& d) { tc_test::write_file(d + "/meta.json", "[1, 2]"); },
       "'{dir}/meta.json' is not a JSON object"},
      {"missing _type",
       [](const std::string& d) { tc_test::write_file(d + "/meta.json", R"({"shape": [4]})"); },
       "'{dir}/meta.json': missing \"_type\" string"},
      {"unknown _type",
       [](const std::string& d) {
         tc_test::write_file(d + "/meta.json", R"({"_type": "<class 'x.Y'>"})");
       },
       "'{dir}/meta.json': unknown _type '<class 'x.Y'>' (not a TensorDict, and no '_tensordict/' "
       "directory of a tensorclass)"},
      {"unknown dtype",
       [](const std::string& d) {
         tc_test::write_file(d + "/meta.json",
                             root_meta(R"({"shape": [4], "dtype": "torch.float8_e4m3fn"})"));
       },
       "'{dir}/meta.json': entry 'x' has unknown dtype 'torch.float8_e4m3fn'"},
      {"entry without dtype",
       [](const std::string& d) {
         tc_test::write_file(d + "/meta.json", root_meta(R"({"shape": [4]})"));
       },
       "'{dir}/meta.json': entry 'x' has no \"dtype\""},
      {"negative dim",
       [](const std::string& d) {
         tc_test::write_file(d + "/meta.json",
                             root_meta(R"({"shape": [-4], "dtype": "torch.float32"})"));
       },
       "'{dir}/meta.json': entry 'x': \"shape\" -4 is not a non-negative integer"},
      {"shape not a list",
       [](const std::string& d) {
         tc_test::write_file(d + "/meta.json",
                             root_meta(R"({"shape": "4", "dtype": "torch.float32"})"));
       },
       "'{dir}/meta.json': entry 'x': \"shape\" is not a list of integers"},
      {"entry not an object",
       [](const std::string& d) { tc_test::write_file(d + "/meta.json", root_meta("5")); },
       "'{dir}/meta.json': entry 'x' is not an object"},
      {"leaf does not fit the batch",
       [](const std::string& d) {
         tc_test::write_file(d + "/meta.json",
                             root_meta(R"({"shape": [2, 2], "dtype": "torch.float32"})"));
       },
       "'{dir}/meta.json': entry 'x' does not fit the batch size"},
      {"is_nested of the wrong type",
       [](const std::string& d) {
         tc_test::write_file(
             d + "/meta.json",
             root_meta(R"({"shape": [4], "dtype": "torch.float32", "is_nested": "no"})"));
       },
       "'{dir}/meta.json': entry 'x': \"is_nested\" has the wrong type: \"no\""},
      {"pickled tensorclass fields",
       [](const std::string& d) {
         fs::rename(d, d + "_inner");
         fs::create_directory(d);
         fs::rename(d + "_inner", d + "/_tensordict");
         tc_test::write_file(d + "/meta.json", R"({"_type": "<class 'm.TC'>"})");
         tc_test::write_file(d + "/other.pickle", "\x80\x04.");
       },
       "'{dir}/other.pickle': pickled tensorclass fields are not supported"},
      {"missing child directory", [](const std::string& d) { fs::remove_all(d + "/n"); },
       "missing directory '{dir}/n' for key 'n'"},
      {"nested tensor",
       [](const std::string& d) {
         tc_test::write_file(
             d + "/meta.json",
             root_meta(R"({"shape": [4], "dtype": "torch.float32", "is_nested": true})"));
       },
       "'{dir}/meta.json': entry 'x' is a nested (jagged) tensor, which is not supported"},
      {"pickled non-tensor stack",
       [](const std::string& d) {
         tc_test::write_file(
             d + "/s/meta.json",
             R"({"_type":"<class 'tensordict.tensorclass.NonTensorStack'>","data":"pickle.pkl"})");
       },
       "'{dir}/s/meta.json': NonTensorStack data in 'pickle.pkl' (a Python pickle) is not "
       "supported"},
      {"symlinked data file leaving the prefix",
       [](const std::string& d) {
         tc_test::write_file(d + "/../secret.bin", std::string(64, 'x'));
         fs::remove(d + "/x.memmap");
         fs::create_symlink(d + "/../secret.bin", d + "/x.memmap");
       },
       "refusing to follow symlink '{dir}/x.memmap' for key 'x'"},
      {"key escaping the prefix",
       [](const std::string& d) {
         tc_test::write_file(d + "/../evil.memmap", std::string(16, '\0'));
         tc_test::write_file(
             d + "/meta.json",
             R"({"../evil": {"shape": [4], "dtype": "torch.float32"}, "shape": [4], "_type": "<class 'tensordict._td.TensorDict'>"})");
       },
       "missing data file '{dir}/..%2Fevil.memmap' for key '../evil'"},
      {"absolute key",
       [](const std::string& d) {
         tc_test::write_file(
             d + "/meta.json",
             R"({"/etc/passwd": {"type": "TensorDict"}, "shape": [4], "_type": "<class 'tensordict._td.TensorDict'>"})");
       },
       "missing directory '{dir}/%2Fetc%2Fpasswd' for key '/etc/passwd'"},
      {"meta.json is a FIFO (must not hang)",
       [](const std::string& d) {
         fs::remove(d + "/meta.json");
         REQUIRE(::mkfifo((d + "/meta.json").c_str(), 0600) == 0);
       },
       "'{dir}/meta.json' is not a regular file"},
      {"data file is a FIFO (must not hang)",
       [](const std::string& d) {
         fs::remove(d + "/x.memmap");
         REQUIRE(::mkfifo((d + "/x.memmap").c_str(), 0600) == 0);
       },
       "'{dir}/x.memmap' is not a regular file"},
      {"symlinked child directory", [](const std::string& d) { symlink_away(d + "/n"); },
       "refusing to follow symlink '{dir}/n' for key 'n'"},
      {"symlinked _tensordict of a tensorclass",
       [](const std::string& d) {
         make_tensorclass(d);
         symlink_away(d + "/_tensordict");
       },
       "refusing to follow symlink '{dir}/_tensordict'"},
      {"symlinked lazy stack element",
       [](const std::string& d) {
         make_lazy_stack(d);
         symlink_away(d + "/0");
       },
       "refusing to follow symlink '{dir}/0'"},
      {"data file twice as long (float64 values, float32 in meta.json)",
       [](const std::string& d) { tc_test::write_file(d + "/x.memmap", std::string(32, '\0')); },
       "'{dir}/x.memmap' is too long: 32 bytes, shape [4] of float32 needs 16"},
      {"duplicate key",
       [](const std::string& d) {
         tc_test::write_file(d + "/meta.json", R"({"x": )" + kX + ", " + root_meta(kX).substr(1));
       },
       "'{dir}/meta.json': duplicate key \"x\""},
      {"shape whose byte size overflows",
       [](const std::string& d) {
         tc_test::write_file(
             d + "/meta.json",
             root_meta(R"({"shape": [4, 4611686018427387904], "dtype": "torch.float32"})"));
       },
       "'{dir}/x.memmap': shape [4, 4611686018427387904] of float32 is too large (more than 2^63 "
       "bytes)"},
      {"NonTensorData nested 100,000 deep",
       [](const std::string& d) { tc_test::write_file(d + "/s/meta.json", deep_non_tensor()); },
       "'{dir}/s/meta.json': JSON nested deeper than 1000 levels"},
      {"a _SubTensorDict whose _source is a symlink out of the tree",
       [](const std::string& d) {
         as_sub_tensordict(d, R"(["tuple", [0]])");
         symlink_away(d + "/_source");
       },
       "refusing to follow symlink '{dir}/_source'"},
  };
}

// _SubTensorDict indices (memmap/sub_index.cpp) over a source of batch size [4]: each refused
// before any tensor is made from it, on every device.
struct BadIndex {
  std::string name, index, message;
};

std::vector<BadIndex> bad_indices() {
  std::string many_nones = "[\"tuple\", [null";
  for (int i = 1; i < 20000; ++i) many_nones += ",null";
  many_nones += "]]";
  return {
      {"an int past its source", R"(["tuple", [99]])",
       "index 99 is out of range for dim 0 of its _source, of size 4"},
      {"an entry Python does not write", R"(["tuple", [["bogus", 1]]])",
       "an index entry Python does not write: [\"bogus\",1]"},
      {"a mask that is not rectangular",
       R"(["tuple", [["tensor", [[true], [true, false]], "cpu"]]])",
       "the index tensor's lists are not rectangular"},
      {"a range of 400 million positions (100 bytes of JSON, 3.2 GB as positions)",
       R"(["tuple", [["range", {"start": 0, "stop": 400000000, "step": 1}]]])",
       "a range index of 400000000 positions, more than the 4 rows of dim 0 of its _source"},
      {"a range of step 0", R"(["tuple", [["range", {"start": 0, "stop": 4, "step": 0}]]])",
       "the range index [\"range\",{\"start\":0,\"stop\":4,\"step\":0}] has step 0"},
      {"a range past its source", R"(["tuple", [["range", {"start": 2, "stop": 5}]]])",
       "index 4 is out of range for dim 0 of its _source, of size 4"},
      {"an index of 2^64 - 1 (read as -1, the last row)", R"(["tuple", [18446744073709551615]])",
       "an index entry is not an int64: 18446744073709551615"},
      {"positions past its source", R"(["tuple", [["tensor", [0, 7], "cpu"]]])",
       "index 7 is out of range for dim 0 of its _source, of size 4"},
      {"more positions than its dim has rows", R"(["tuple", [["tensor", [0, 1, 0, 1, 0], "cpu"]]])",
       "the index selects 5 positions of dim 0, which has 4 rows"},
      {"a mask shorter than its dim", R"(["tuple", [["tensor", [true, false, true], "cpu"]]])",
       "a mask of shape [3] over dims of its _source of sizes [4]"},
      {"a mask longer than its dim", R"(["tensor", [true, false, true, true, true], "cpu"])",
       "a mask of shape [5] over dims of its _source of sizes [4]"},
      {"more dims than its source has", R"(["tuple", [0, 0]])",
       "the index takes 2 dims, its _source has 1"},
      {"two ellipses", R"(["tuple", [["ellipsis"], ["ellipsis"]]])",
       "the index has more than one ellipsis"},
      {"20,000 Nones", many_nones, "an index of 20000 entries for a _source of 1 dims"},
  };
}

}  // namespace

TEST_CASE("_SubTensorDict indices that do not fit their source are refused on every device",
          "[io][corrupt]") {
  for (const auto& bad : bad_indices()) {
    SECTION(bad.name) {
      tc_test::TempDir tmp;
      const std::string dir = tmp / "td";
      write_valid(dir);
      as_sub_tensordict(dir, bad.index);
      const std::string want = "'" + dir + "/meta.json': " + bad.message;
      for (const char* device : {"cpu", "meta"}) {
        INFO(device);
        CHECK_THROWS_WITH(TensorDict::load_memmap(dir, at::Device(device)),
                          Catch::Matchers::StartsWith(want));
      }
      // verify lists the problem (it threw ATen's errors for some of these).
      const std::vector<std::string> problems = tensordict::memmap::verify(dir);
      REQUIRE(problems.size() == 1);
      CHECK_THAT(problems[0], Catch::Matchers::StartsWith(want));
    }
  }
  // A _SubTensorDict level of a format version this reader does not know.
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  write_valid(dir);
  as_sub_tensordict(dir, R"(["tuple", [0]])");
  std::string meta = tc_test::read_file(dir + "/meta.json");
  meta.insert(1, R"("_format_version": 2, )");
  tc_test::write_file(dir + "/meta.json", meta);
  CHECK_THROWS_WITH(TensorDict::load_memmap(dir),
                    Catch::Matchers::StartsWith("'" + dir +
                                                "/meta.json': format version 2 is "
                                                "newer than the newest this library reads"));
}

TEST_CASE("corrupted directories give a FormatError naming the path and the problem",
          "[io][corrupt]") {
  for (const auto& c : corruptions()) {
    SECTION(c.name) {
      tc_test::TempDir tmp;
      const std::string dir = tmp / "td";
      write_valid(dir);
      c.apply(dir);
      const std::string want = expand(c.message, dir);
      try {
        TensorDict::load_memmap(dir);
        FAIL("loaded without error; expected: " << want);
      } catch (const tensordict::FormatError& e) {
        CHECK_THAT(e.what(), Catch::Matchers::StartsWith(want));
      }
    }
  }
}

TEST_CASE("random byte changes in meta.json never crash", "[io][corrupt]") {
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  write_valid(dir);
  const std::string root = tc_test::read_file(dir + "/meta.json");
  const std::string nested = tc_test::read_file(dir + "/n/meta.json");
  std::mt19937 rng(7);
  const std::string alphabet = "{}[]\":,. -0123456789eE+aNIfnty\\\x01\xff";
  int loaded = 0;
  int refused = 0;
  for (int i = 0; i < 300; ++i) {
    std::string a = root;
    std::string b = nested;
    std::string& target = i % 2 ? a : b;
    for (int k = 0; k < 1 + i % 3; ++k) {
      target[rng() % target.size()] = alphabet[rng() % alphabet.size()];
    }
    tc_test::write_file(dir + "/meta.json", a);
    tc_test::write_file(dir + "/n/meta.json", b);
    try {
      TensorDict::load_memmap(dir);
      ++loaded;
    } catch (const tensordict::FormatError&) {
      ++refused;
    }
  }
  CHECK(loaded + refused == 300);
  CHECK(refused > 150);
}

TEST_CASE("data files with a tail shorter than the data load", "[io][corrupt]") {
  // Python's in-place rewrites leave stale tails; the mmap_example artifact has junk bytes. Twice
  // the size or more is refused (the corruption table above).
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  write_valid(dir);
  for (int size : {17, 31}) {
    fs::resize_file(dir + "/x.memmap", size);
    CHECK(at::equal(TensorDict::load_memmap(dir).get("x"), at::arange(4, at::kFloat)));
  }
  fs::resize_file(dir + "/x.memmap", 32);
  CHECK_THROWS_AS(TensorDict::load_memmap(dir), tensordict::FormatError);
}

TEST_CASE("a bool data file holding bytes other than 0 and 1 is refused", "[io][corrupt]") {
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  const at::Tensor mask = at::tensor({1, 0, 1}, at::kLong).to(at::kBool);
  TensorDict({{"mask", mask}}, {3}).memmap(dir);
  CHECK(at::equal(TensorDict::load_memmap(dir).get("mask"), mask));
  tc_test::write_file(dir + "/mask.memmap", std::string("\x01\x02\x00", 3));
  CHECK_THROWS_AS(TensorDict::load_memmap(dir), tensordict::FormatError);
  CHECK_THROWS_WITH(
      TensorDict::load_memmap(dir),
      Catch::Matchers::ContainsSubstring("mask.memmap' holds bytes other than 0 and 1"));
}

TEST_CASE("a leaf without data beside a data file holding bytes is refused", "[io][corrupt]") {
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  TensorDict({{"none", at::zeros({0, 3})}}, {0}).memmap(dir);
  CHECK(TensorDict::load_memmap(dir).get("none").sizes() == at::IntArrayRef({0, 3}));
  tc_test::write_file(dir + "/none.memmap", "");  // an empty file is no data either
  CHECK(TensorDict::load_memmap(dir).get("none").numel() == 0);
  tc_test::write_file(dir + "/none.memmap", std::string(48, '\0'));
  CHECK_THROWS_WITH(TensorDict::load_memmap(dir),
                    Catch::Matchers::ContainsSubstring(
                        "none.memmap' is too long: 48 bytes, shape [0, 3] of float32 "
                        "needs 0"));
}

TEST_CASE("a deep but allowed NonTensorData loads", "[io][corrupt]") {
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  write_valid(dir);
  const int depth = tensordict::kMaxJsonDepth - 1;  // the meta.json object is one level
  tc_test::write_file(dir + "/s/meta.json", std::string(R"({"_type": ")") +
                                                tensordict::memmap::kNonTensorDataType +
                                                R"(", "data": )" + std::string(depth, '[') +
                                                std::string(depth, ']') + "}");
  tensordict::Json data = TensorDict::load_memmap(dir).get_non_tensor("s");
  int levels = 0;
  for (const tensordict::Json* j = &data; j->is_array(); j = &j->front()) {
    ++levels;
    if (j->empty()) break;
  }
  CHECK(levels == depth);
}

TEST_CASE("a read-only data file is mapped copy-on-write", "[io][corrupt][needs-non-root]") {
  if (::geteuid() == 0) {
    TC_SKIP("running as root, permissions are not enforced");
  }
  tc_test::TempDir tmp;
  const std::string dir = tmp / "td";
  write_valid(dir);
  fs::permissions(dir + "/x.memmap", fs::perms::owner_read);
  TensorDict td = TensorDict::load_memmap(dir);
  td.get("x").fill_(9);
  CHECK(at::equal(TensorDict::load_memmap(dir).get("x"), at::arange(4, at::kFloat)));
}
