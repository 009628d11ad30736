// consolidate(): one flat buffer for every leaf, and the copies that move it whole;
// consolidate(filename) and from_consolidated: Python's single-file form of it.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include "catch2_compat.h"

#include "ops_test_util.h"
#include "tensordict/json.h"
#include "tensordict/memmap.h"

using namespace ops_test;

namespace {

bool shares_storage(const at::Tensor& a, const at::Tensor& b) {
  return a.storage().unsafeGetStorageImpl() == b.storage().unsafeGetStorageImpl();
}

namespace fs = std::filesystem;

// A fresh directory, removed with its content at scope exit.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = (fs::temp_directory_path() /
             ("tc_consolidate_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
                .string();
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename().string());
    return out;
  }

 private:
  std::string path_;
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// The file's parts: buffer, JSON text, and the length its last 8 bytes hold (little-endian).
struct Parts {
  std::string buffer;
  std::string json;
  uint64_t length = 0;
};

Parts split_file(const std::string& bytes) {
  Parts p;
  for (int i = 7; i >= 0; --i) {
    p.length = p.length << 8 | static_cast<unsigned char>(bytes[bytes.size() - 8 + i]);
  }
  p.json = bytes.substr(bytes.size() - 8 - p.length, p.length);
  p.buffer = bytes.substr(0, bytes.size() - 8 - p.length);
  return p;
}

std::string join_file(const std::string& buffer, const std::string& json) {
  std::string out = buffer + json;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(uint64_t{json.size()} >> (8 * i)));
  return out;
}

// batch [3]: bool, int32, bfloat16 and float64 leaves (3, 24, 18 and 24 bytes: padding matters),
// nested TensorDicts two deep, NonTensorData at two levels and a NonTensorStack.
TensorDict mixed_kinds() {
  TensorDict deep({{"x", at::arange(3, at::kInt) * -5}}, {3});
  TensorDict n({{"d", at::arange(3, at::kDouble) / 3}, {"deep", deep}}, {3});
  n.set_non_tensor("note", Json{{"k", 1}});
  return TensorDict({{"flag", at::tensor({1, 0, 1}).to(at::kBool)},
                     {"i", at::arange(6, at::kInt).view({3, 2})},
                     {"h", (at::arange(9, at::kFloat) / 4).view({3, 3}).to(at::kBFloat16)},
                     {"n", n},
                     {"txt", "hello"},
                     {"s", NonTensorStack::from_list(Json::array({"p", 1, nullptr}), 1)}},
                    {3});
}

void check_mixed(const TensorDict& td) {
  const TensorDict ref = mixed_kinds();
  for (const char* key : {"flag", "i", "h"}) CHECK(same(td.get(key), ref.get(key)));
  CHECK(same(td.get({"n", "d"}), ref.get({"n", "d"})));
  CHECK(same(td.get({"n", "deep", "x"}), ref.get({"n", "deep", "x"})));
  CHECK(td.get_non_tensor("txt") == "hello");
  CHECK(td.get_non_tensor({"n", "note"}) == Json{{"k", 1}});
  CHECK(td.get_value("s").non_tensor_stack().tolist() == Json::array({"p", 1, nullptr}));
  CHECK(td.batch_size() == BatchSize{3});
  CHECK(td.get_tensordict({"n", "deep"}).batch_size() == BatchSize{3});
}

std::string format_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const FormatError& e) {
    return e.what();
  }
  return "(no FormatError)";
}

}  // namespace

TEST_CASE("consolidate packs every leaf into one storage, values unchanged", "[consolidate]") {
  TensorDict td = sample();
  CHECK_FALSE(td.is_consolidated());
  TensorDict c = td.consolidate();
  CHECK(c.is_consolidated());
  CHECK(shares_storage(c.get("a"), c.get("b")));
  CHECK(shares_storage(c.get("a"), c.get({"n", "c"})));
  CHECK(same(c.get("a"), td.get("a")));
  CHECK(same(c.get("b"), td.get("b")));
  CHECK(same(c.get({"n", "c"}), td.get({"n", "c"})));
  CHECK(c.get_non_tensor("txt") == "hello");
  CHECK(items_of(c, "s") == items_of(td, "s"));
  CHECK(c.is_locked());  // as Python's
  // Locked: set_ writes an existing key in place, into the buffer.
  c.set_("a", at::zeros({4, 3, 2}));
  CHECK(c.is_consolidated());
  CHECK(same(c.get("a"), at::zeros({4, 3, 2})));
  c.unlock_();  // a plain TensorDict again, as Python's
  CHECK_FALSE(c.is_consolidated());
}

TEST_CASE("consolidate lays leaves out as Python does", "[consolidate]") {
  // Offsets and size printed by Python tensordict 0.14's consolidate() for the same TensorDict:
  // insertion order, depth first, each leaf padded to a multiple of 8 bytes.
  TensorDict td({{"z", at::zeros({3}, at::kInt)},
                 {{"nested", "b"}, at::zeros({3}, at::kLong)},
                 {{"nested", "a2"}, at::zeros({3, 2}, at::kBool)},
                 {"nested-x", at::zeros({3}, at::kDouble)},
                 {"a", at::zeros({3, 4})}},
                {3});
  TensorDict c = td.consolidate();
  const auto base = static_cast<const char*>(c.get("z").data_ptr());
  auto offset = [&](const tensordict::NestedKey& key) {
    return static_cast<const char*>(c.get(key).data_ptr()) - base;
  };
  CHECK(offset({"nested", "b"}) == 16);
  CHECK(offset({"nested", "a2"}) == 40);
  CHECK(offset("nested-x") == 48);
  CHECK(offset("a") == 72);
  CHECK(c.get("z").storage().nbytes() == 120);
}

TEST_CASE("clone, to, zero_ and update_ keep consolidated TensorDicts whole", "[consolidate]") {
  TensorDict c = sample().consolidate();
  TensorDict copy = c.clone();
  CHECK(copy.is_consolidated());
  CHECK_FALSE(shares_storage(copy.get("a"), c.get("a")));
  CHECK(same(copy.get({"n", "c"}), c.get({"n", "c"})));
  CHECK(copy.get("b").scalar_type() == at::kLong);
  TensorDict moved = c.to(at::Device(at::kCPU));
  CHECK(moved.is_consolidated());
  CHECK(same(moved.get("a"), c.get("a")));

  copy.zero_();
  CHECK(copy.get("a").eq(0).all().item<bool>());
  CHECK(copy.get({"n", "c"}).eq(0).all().item<bool>());
  CHECK(c.get("a").ne(0).any().item<bool>());
  copy.update_(c);  // one buffer copy between equal layouts
  CHECK(same(copy.get("a"), c.get("a")));
  CHECK(same(copy.get({"n", "c"}), c.get({"n", "c"})));
  CHECK(copy.detach().is_consolidated());

  TensorDict shared = sample().consolidate();
  shared.share_memory_();
  CHECK(shared.is_consolidated());
  CHECK(same(shared.get("b"), sample().get("b")));
}

TEST_CASE("ops on a consolidated TensorDict give correct, independent results", "[consolidate]") {
  TensorDict c = sample().consolidate();
  TensorDict row = c[1];
  CHECK(same(row.get({"n", "c"}), sample().get({"n", "c"})[1]));
  CHECK_FALSE(c.to(at::kDouble).is_consolidated());
  CHECK(same(c.to(at::kDouble).get("a"), sample().get("a").to(at::kDouble)));
  TensorDict copy = c.clone();
  copy.get("a").fill_(-9);
  CHECK(same(c.get("a"), sample().get("a")));
}

TEST_CASE("to(device) moves plain and consolidated TensorDicts (runs where CUDA exists)",
          "[consolidate][cuda]") {
  if (!at::hasCUDA()) return;  // nothing to check on a CPU-only machine
  const at::Device cuda(at::kCUDA, 0);
  for (bool consolidated : {false, true}) {
    TensorDict td = consolidated ? sample().consolidate() : sample();
    TensorDict moved = td.to(cuda);
    CHECK(moved.device() == cuda);
    CHECK(moved.get({"n", "c"}).device() == cuda);
    CHECK(moved.is_consolidated() == consolidated);
    CHECK(same(moved.get("a").cpu(), td.get("a")));
    CHECK(same(moved.clone().get("b").cpu(), td.get("b")));
  }
}

TEST_CASE("consolidate(filename) writes a file from_consolidated reads back", "[consolidate]") {
  TempDir dir;
  const std::string path = dir / "td.bin";
  const TensorDict c = mixed_kinds().consolidate(path);
  check_mixed(c);
  CHECK(c.is_consolidated());
  CHECK(c.is_locked());  // as Python locks its result
  CHECK(c.device() == at::Device(at::kCPU));
  CHECK(MemoryMappedTensor::filename(c.get({"n", "d"})) == fs::absolute(path).string());
  CHECK(shares_storage(c.get("flag"), c.get({"n", "deep", "x"})));
  CHECK(dir.names() == std::vector<std::string>{"td.bin"});  // no temporary left

  const TensorDict back = TensorDict::from_consolidated(path);
  check_mixed(back);
  CHECK(back.is_consolidated());
  CHECK_FALSE(back.is_locked());  // the metadata holds the source's lock state, as in Python
  CHECK_FALSE(back.device().has_value());

  // An already consolidated TensorDict is written too, and a previous file is replaced.
  TensorDict other = mixed_kinds().consolidate();
  other.get("i").fill_(3);
  other.consolidate(path);
  CHECK(TensorDict::from_consolidated(path).get("i").eq(3).all().item<bool>());
  check_mixed(c);  // the first result still maps the file it was written to
  CHECK(dir.names() == std::vector<std::string>{"td.bin"});

  // No leaves at all: an empty buffer, the metadata alone.
  TensorDict text({}, {2});
  text.set("only", "words");
  text.consolidate(dir / "text.bin");
  CHECK(TensorDict::from_consolidated(dir / "text.bin").get_non_tensor("only") == "words");
}

TEST_CASE("consolidate(filename) lays the file out as Python does", "[consolidate]") {
  TempDir dir;
  const std::string path = dir / "td.bin";
  mixed_kinds().consolidate(path);
  const std::string bytes = read_bytes(path);
  const Parts parts = split_file(bytes);
  REQUIRE(parts.length + 8 <= bytes.size());
  CHECK(parts.buffer.size() == 96);
  // json.dumps' spelling: ", " and ": " separators, keys in Python's order.
  CHECK(parts.json.rfind(R"({"cls": "TensorDict", "non_tensors": {"txt": ["hello", [3], null]}, )",
                         0) == 0);
  const Json meta = parse_json(parts.json);
  std::vector<std::string> keys;
  for (const auto& item : meta.items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"cls", "non_tensors", "leaves", "cls_metadata", "n", "s"});
  CHECK(meta.at("leaves") == Json::parse(R"({"flag": ["torch.bool", [3], 0, 8, 5],
      "i": ["torch.int32", [3, 2], 8, 32, 0], "h": ["torch.bfloat16", [3, 3], 32, 56, 6]})"));
  CHECK(meta.at("n").at("leaves") == Json::parse(R"({"d": ["torch.float64", [3], 56, 80, 0]})"));
  CHECK(meta.at("n").at("deep").at("leaves") ==
        Json::parse(R"({"x": ["torch.int32", [3], 80, 96, 4]})"));
  CHECK(meta.at("n").at("non_tensors") == Json::parse(R"({"note": [{"k": 1}, [3], null]})"));
  CHECK(meta.at("cls_metadata") ==
        Json::parse(R"({"device": null, "names": [null], "batch_size": [3], "is_locked": false})"));
  CHECK(meta.at("s").at("cls") == "NonTensorStack");
  // The buffer: each leaf's bytes, then zeros up to the next multiple of 8.
  CHECK(parts.buffer.substr(0, 8) == std::string("\x01\x00\x01\0\0\0\0\0", 8));
  // n.d's second element, 1/3 as a float64: 0x3fd5555555555555.
  CHECK(parts.buffer.substr(64, 8) == std::string("\x55\x55\x55\x55\x55\x55\xd5\x3f", 8));
}

TEST_CASE("writes through consolidate(filename)'s result reach the file, not from_consolidated's",
          "[consolidate]") {
  TempDir dir;
  const std::string path = dir / "td.bin";
  TensorDict c = mixed_kinds().consolidate(path);
  c.get({"n", "deep", "x"}).fill_(41);  // in place: allowed on a locked TensorDict
  CHECK(TensorDict::from_consolidated(path).get({"n", "deep", "x"}).eq(41).all().item<bool>());
  // from_consolidated maps copy-on-write, as Python's torch.from_file(shared=False) does.
  TensorDict back = TensorDict::from_consolidated(path);
  back.get("i").zero_();
  CHECK(back.get("i").eq(0).all().item<bool>());
  CHECK(split_file(read_bytes(path)).buffer.substr(8, 24) ==
        std::string(reinterpret_cast<const char*>(mixed_kinds().get("i").data_ptr()), 24));
  CHECK(same(c.get("i"), mixed_kinds().get("i")));
}

TEST_CASE("consolidate(filename) replaces only a previous consolidated file", "[consolidate]") {
  TempDir dir;
  write_bytes(dir / "notes.txt", "keep me");
  CHECK(format_error([&] { mixed_kinds().consolidate(dir / "notes.txt"); }) ==
        "consolidate: refusing to replace '" + dir / "notes.txt" +
            "': it is not a consolidated TensorDict file (no metadata at its end)");
  CHECK(read_bytes(dir / "notes.txt") == "keep me");
  fs::create_directory(dir / "sub");
  CHECK(format_error([&] { mixed_kinds().consolidate(dir / "sub"); }) ==
        "consolidate: '" + dir / "sub" + "' exists and is not a regular file");
  mixed_kinds().consolidate(dir / "td.bin");
  fs::create_symlink(dir / "td.bin", dir / "link");
  CHECK(format_error([&] { mixed_kinds().consolidate(dir / "link"); }) ==
        "consolidate: refusing to write through symlink '" + dir / "link" + "'");
  CHECK_THROWS_AS(mixed_kinds().consolidate(dir / "missing/td.bin"), FormatError);
  std::vector<std::string> names = dir.names();
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"link", "notes.txt", "sub", "td.bin"});
}

TEST_CASE("from_consolidated refuses corrupt files with FormatError", "[consolidate]") {
  TempDir dir;
  const std::string good = dir / "good.bin";
  mixed_kinds().consolidate(good);
  const std::string bytes = read_bytes(good);
  const Parts parts = split_file(bytes);
  const std::string path = dir / "bad.bin";
  auto load = [&](const std::string& content) {
    write_bytes(path, content);
    return format_error([&] { TensorDict::from_consolidated(path); });
  };
  const std::string op = "from_consolidated '" + path + "': ";

  CHECK(load("abc") ==
        op + "the file is 3 bytes, too short for the metadata's length (its last 8 bytes)");
  CHECK(load(bytes.substr(0, bytes.size() - 1)).rfind(op + "the metadata's length (", 0) == 0);
  CHECK(load(join_file(parts.buffer, "{not json")).rfind(op + "the metadata: malformed JSON", 0) ==
        0);
  CHECK(load(join_file(parts.buffer, "[1, 2]")) ==
        op + "the metadata is not a TensorDict's description (a JSON array without \"cls\" and "
             "\"leaves\")");

  Json meta = parse_json(parts.json);
  meta["n"]["leaves"]["d"][3] = 200;
  CHECK(load(join_file(parts.buffer, dumps_python(meta))) ==
        op + "the metadata of key 'n.d' lies outside the 96-byte buffer (bytes 56 to 200 for 3 "
             "float64)");
  meta = parse_json(parts.json);
  meta["n"]["deep"]["leaves"]["x"][0] = "torch.int4";
  CHECK(load(join_file(parts.buffer, dumps_python(meta))) ==
        op + "the metadata of key 'n.deep.x' has the unknown dtype 'torch.int4'");
  meta = parse_json(parts.json);
  meta["leaves"]["i"][1] = Json::array({2, 3});  // a leaf outside its level's batch size
  CHECK(load(join_file(parts.buffer, dumps_python(meta))).rfind(op + "the metadata ", 0) == 0);
  std::string flipped = parts.buffer;
  flipped[1] = 2;  // a bool byte that is neither 0 nor 1
  CHECK(load(join_file(flipped, parts.json)) ==
        op + "bool leaf 'flag' holds bytes other than 0 and 1");
  CHECK(format_error([&] { TensorDict::from_consolidated(dir / "none.bin"); }) ==
        "from_consolidated '" + dir / "none.bin" + "': no such file");

  // Every truncation and every flipped byte of the tail: a FormatError or a TensorDict, never a
  // crash or another exception.
  for (size_t n = 0; n < bytes.size(); ++n) {
    CHECK(load(bytes.substr(0, n)) != "(no FormatError)");
  }
  for (size_t i = parts.buffer.size(); i < bytes.size(); ++i) {
    std::string b = bytes;
    b[i] = static_cast<char>(b[i] ^ 0x5a);
    write_bytes(path, b);
    try {
      TensorDict::from_consolidated(path);
    } catch (const FormatError&) {
    }
  }
}
