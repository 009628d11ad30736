// Round trips of every entry kind through memmap / load_memmap, and the state after each call.
#include <ATen/ATen.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include "catch2_compat.h"

#include "io_test_util.h"
#include "tensordict/memmap.h"

using tensordict::Json;
using tensordict::MemoryMappedTensor;
using tensordict::NestedKey;
using tensordict::NonTensorStack;
using tensordict::TensorDict;
namespace fs = std::filesystem;
namespace memmap = tensordict::memmap;

namespace {

TensorDict every_dtype() {
  const std::vector<at::ScalarType> dtypes = {
      at::kBool, at::kByte,     at::kChar,  at::kShort,  at::kInt,          at::kLong,
      at::kHalf, at::kBFloat16, at::kFloat, at::kDouble, at::kComplexFloat, at::kComplexDouble};
  TensorDict td({}, {3});
  for (auto dtype : dtypes) {
    at::Tensor t = at::arange(6, at::kDouble).reshape({3, 2}).sub(2).to(dtype);
    td.set(c10::toString(dtype), t);
  }
  return td;
}

}  // namespace

TEST_CASE("tensors of every dtype round-trip with exact bytes", "[io][roundtrip]") {
  tc_test::TempDir tmp;
  TensorDict td = every_dtype();
  TensorDict saved = td.memmap(tmp / "td");
  TensorDict back = TensorDict::load_memmap(tmp / "td");
  for (const auto& key : td.keys()) {
    INFO(key.front());
    CHECK(at::equal(back.get(key), td.get(key)));
    CHECK(back.get(key).scalar_type() == td.get(key).scalar_type());
    CHECK(MemoryMappedTensor::is_memory_mapped(back.get(key)));
    CHECK(MemoryMappedTensor::is_memory_mapped(saved.get(key)));
  }
  CHECK(fs::file_size(tmp / "td/Float.memmap") == 24);
  CHECK(fs::file_size(tmp / "td/ComplexDouble.memmap") == 96);
}

TEST_CASE("0-dim, empty, transposed and expanded tensors", "[io][roundtrip]") {
  tc_test::TempDir tmp;
  at::Tensor base = at::arange(12, at::kFloat).reshape({3, 4});
  TensorDict td({{"scalar", at::scalar_tensor(2.5)},
                 {"empty", at::zeros({0, 5}, at::kLong)},
                 {"transposed", base.t()},
                 {"expanded", at::tensor({1.f, 2.f, 3.f}).expand({1000, 3})},
                 {"sliced", base.index({at::indexing::Slice(), at::indexing::Slice(1, 3)})}});
  td.memmap(tmp / "td");
  CHECK_FALSE(fs::exists(tmp / "td/empty.memmap"));  // as Python: no file for numel 0
  CHECK(fs::file_size(tmp / "td/expanded.memmap") == 1000 * 3 * 4);
  TensorDict back = TensorDict::load_memmap(tmp / "td");
  CHECK(back.get("scalar").dim() == 0);
  CHECK(back.get("scalar").item<double>() == 2.5);
  CHECK(back.get("empty").sizes().vec() == std::vector<int64_t>{0, 5});
  CHECK(at::equal(back.get("transposed"), base.t()));
  CHECK(at::equal(back.get("expanded"), td.get("expanded")));
  CHECK(at::equal(back.get("sliced"), td.get("sliced")));
}

TEST_CASE("nested TensorDicts and non-tensor data round-trip", "[io][roundtrip]") {
  tc_test::TempDir tmp;
  TensorDict td({{"obs", at::ones({2, 3})}}, {2});
  td.set({"a", "b", "c"}, at::arange(4).reshape({2, 2}));
  td.set("text", "h\u00e9llo \u2713 \"q\" \U0001F600");
  td.set_non_tensor("number", 7);
  td.set_non_tensor("float", 0.1);
  td.set_non_tensor("list", Json::array({1, "two", 3.0, nullptr, true}));
  td.set_non_tensor("dict", Json{{"k", Json::array({1e-05, 1e16})}});
  td.set("names", NonTensorStack({2}, {"x", "y"}));
  td.set("grid", NonTensorStack({2, 2}, {1, 2, 3, 4}));
  td.memmap(tmp / "td");
  CHECK(
      tc_test::read_file(tmp / "td/names/meta.json") ==
      R"({"_type":"<class 'tensordict.tensorclass.NonTensorStack'>","stack_dim":0,"device":null,"data":["x","y"]})");
  CHECK(
      tc_test::read_file(tmp / "td/dict/meta.json") ==
      R"({"_type": "<class 'tensordict.tensorclass.NonTensorData'>", "data": {"k": [1e-05, 1e+16]}, "_is_non_tensor": true, "_metadata": null})");
  CHECK(tc_test::read_file(tmp / "td/text/meta.json")
            .find(R"("h\u00e9llo \u2713 \"q\" \ud83d\ude00")") != std::string::npos);
  TensorDict back = TensorDict::load_memmap(tmp / "td");
  CHECK(at::equal(back.get({"a", "b", "c"}), td.get({"a", "b", "c"})));
  CHECK(back.get_tensordict({"a", "b"}).batch_size() == std::vector<int64_t>{2});
  for (const char* key : {"text", "number", "float", "list", "dict", "names", "grid"}) {
    INFO(key);
    CHECK(back.get_non_tensor(key) == td.get_non_tensor(key));
    CHECK(back.get_value(key).kind() == td.get_value(key).kind());
  }
  CHECK(back.get_value("grid").non_tensor_stack().shape() == std::vector<int64_t>{2, 2});
  // A nested directory loads on its own.
  TensorDict b = TensorDict::load_memmap(tmp / "td/a/b");
  CHECK(at::equal(b.get("c"), td.get({"a", "b", "c"})));
}

TEST_CASE("keys are encoded into safe file names", "[io][roundtrip][keys]") {
  CHECK(memmap::encode_key("a/b% c") == "a%2Fb%25%20c");
  CHECK(memmap::encode_key("../outside") == "..%2Foutside");
  CHECK(memmap::encode_key("") == "%");
  CHECK(memmap::encode_key(".") == "%2E");
  CHECK(memmap::encode_key("..") == "%2E%2E");
  CHECK(memmap::encode_key("C:x") == "C%3Ax");
  CHECK(memmap::encode_key("x.y") == "x.y");
  CHECK(memmap::encode_key("tab\there") == "tab%09here");
  CHECK(memmap::decode_key("a%2Fb%25%20c") == "a/b% c");
  CHECK(memmap::decode_key("%") == "");
  CHECK(memmap::decode_key("50%") == "50%");

  tc_test::TempDir tmp;
  TensorDict td;
  for (const char* key : {"a/b/c", "../outside", "", ".", "..", "sp ace", "caf\u00e9"}) {
    td.set(key, at::full({2}, static_cast<double>(std::strlen(key))));
  }
  td.set(NestedKey({"../dir", "x"}), at::ones({1}));
  td.memmap(tmp / "td");
  CHECK(fs::exists(tmp / "td/a%2Fb%2Fc.memmap"));
  CHECK(fs::exists(tmp / "td/..%2Foutside.memmap"));
  CHECK(fs::exists(tmp / "td/%.memmap"));
  CHECK(fs::exists(tmp / "td/%2E%2E.memmap"));
  CHECK(fs::exists(tmp / "td/..%2Fdir/x.memmap"));
  CHECK_FALSE(fs::exists(tmp / "outside.memmap"));
  size_t outside = 0;
  for (const auto& e : fs::directory_iterator(tmp.path())) outside += e.path().filename() != "td";
  CHECK(outside == 0);
  TensorDict back = TensorDict::load_memmap(tmp / "td");
  for (const auto& key : td.keys(true, true)) CHECK(at::equal(back.get(key), td.get(key)));

  // Directories written without key encoding (Python's robust_key=False): raw names are found
  // when the key cannot leave the directory.
  fs::create_directories(tmp / "raw");
  tc_test::write_file(tmp / "raw/a b.memmap", std::string(4, '\0'));
  memmap::write_meta(tmp / "raw", Json{{"a b", {{"shape", {1}}, {"dtype", "torch.float32"}}},
                                       {"shape", Json::array()},
                                       {"_type", memmap::kTensorDictType}});
  CHECK(TensorDict::load_memmap(tmp / "raw").get("a b").item<float>() == 0);
}

TEST_CASE("a memmapped TensorDict is locked, file-backed and shares writes", "[io][roundtrip]") {
  tc_test::TempDir tmp;
  TensorDict td({{"x", at::zeros({4})}, {"n", TensorDict({{"y", at::zeros({4, 2})}}, {4})}}, {4});
  TensorDict mm = td.memmap(tmp / "td");
  CHECK(mm.is_locked());
  CHECK(mm.is_memmap());
  CHECK(mm.saved_path() == tmp / "td");
  CHECK(mm.get_tensordict("n").saved_path() == tmp / "td/n");
  CHECK_FALSE(td.is_memmap());
  CHECK(MemoryMappedTensor::filename(mm.get("x")) == fs::absolute(tmp / "td/x.memmap").string());
  CHECK_THROWS_AS(mm.set("new", at::zeros({4})), tensordict::LockedError);

  // Another process mapping the same file sees this one's in-place writes, and the reverse.
  TensorDict other = TensorDict::load_memmap(tmp / "td");
  mm.get("x").fill_(3);
  CHECK(other.get("x").sum().item<double>() == 12);
  const pid_t child = ::fork();
  if (child == 0) {
    TensorDict in_child = TensorDict::load_memmap(tmp / "td");
    in_child.get({"n", "y"}).fill_(5);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(mm.get({"n", "y"}).sum().item<double>() == 40);
}

TEST_CASE("memmap_ replaces the leaves in place, re-saving reuses the files", "[io][roundtrip]") {
  tc_test::TempDir tmp;
  TensorDict td({{"x", at::arange(3)}, {"n", TensorDict({{"y", at::ones({3})}}, {3})}}, {3});
  TensorDict nested = td.get_tensordict("n");
  td.memmap_(tmp / "td");
  CHECK(td.is_memmap());
  CHECK(td.is_locked());
  CHECK(MemoryMappedTensor::is_memory_mapped(td.get("x")));
  CHECK(MemoryMappedTensor::is_memory_mapped(nested.get("y")));  // handles see the new leaves
  struct stat before {};
  ::stat((tmp / "td/x.memmap").c_str(), &before);
  td.memmap_(tmp / "td");  // same prefix: hard links, no copy
  struct stat after {};
  ::stat((tmp / "td/x.memmap").c_str(), &after);
  CHECK(before.st_ino == after.st_ino);
  // Leaves mapped from elsewhere need copy_existing.
  CHECK_THROWS_AS(td.memmap(tmp / "other"), tensordict::Error);
  tensordict::MemmapOptions copy;
  copy.copy_existing = true;
  TensorDict copied = td.memmap(tmp / "other", copy);
  CHECK(at::equal(copied.get("x"), at::arange(3)));
}

TEST_CASE("memmap_like allocates files without copying, also for expanded TensorDicts",
          "[io][roundtrip]") {
  tc_test::TempDir tmp;
  // An expanded leaf (stride 0, 4 KB of storage for 16 MB of logical data), as TensorDict::expand
  // makes them.
  TensorDict big({{"x", at::ones({1, 1024}).expand({4096, 1024})}, {"s", "shared"}}, {4096});
  TensorDict like = big.memmap_like(tmp / "td");
  CHECK(like.batch_size() == std::vector<int64_t>{4096});
  CHECK(fs::file_size(tmp / "td/x.memmap") == 4096u * 1024u * 4u);
  struct stat st {};
  ::stat((tmp / "td/x.memmap").c_str(), &st);
  CHECK(static_cast<uint64_t>(st.st_blocks) * 512 < 4096u * 1024u * 4u);  // sparse: nothing written
  CHECK(like.get("x").sum().item<double>() == 0);
  CHECK(like.get_non_tensor("s") == "shared");
}

TEST_CASE("options: num_threads, existsok, memmap_async", "[io][roundtrip]") {
  tc_test::TempDir tmp;
  TensorDict td = every_dtype();
  tensordict::MemmapOptions threads;
  threads.num_threads = 4;
  TensorDict a = td.memmap(tmp / "a", threads);
  for (const auto& key : td.keys()) CHECK(at::equal(a.get(key), td.get(key)));

  tensordict::MemmapOptions strict;
  strict.existsok = false;
  CHECK_THROWS_WITH(td.memmap(tmp / "a", strict),
                    Catch::Matchers::ContainsSubstring("already exists"));
  CHECK(at::equal(TensorDict::load_memmap(tmp / "a").get("Long"), td.get("Long")));

  tensordict::TensorDictFuture later = td.memmap_async(tmp / "b");
  later.wait();
  CHECK(later.valid());
  CHECK(at::equal(later.get().get("Double"), td.get("Double")));
  CHECK_FALSE(later.valid());
}

TEST_CASE("load_memmap_ and memmap_refresh_ pick up a new save", "[io][roundtrip]") {
  tc_test::TempDir tmp;
  TensorDict td({{"x", at::zeros({2})}}, {2});
  td.memmap_(tmp / "td");
  TensorDict({{"x", at::ones({2})}, {"added", at::full({2}, 7)}}, {2}).memmap(tmp / "td");
  td.memmap_refresh_();
  CHECK(td.is_memmap());
  CHECK(td.get("added").sum().item<double>() == 14);
  CHECK(td.get("x").sum().item<double>() == 2);

  TensorDict plain({{"x", at::zeros({2})}}, {2});
  plain.load_(tmp / "td");
  CHECK(plain.contains("added"));
  CHECK_FALSE(plain.is_memmap());
  CHECK_THROWS_AS(TensorDict().memmap_refresh_(), tensordict::Error);
}

TEST_CASE("tensorclass directories: save, load, nested, and the class hook",
          "[io][roundtrip][tensorclass]") {
  tc_test::TempDir tmp;
  TensorDict inner({{"obs", at::ones({2, 3})}, {"label", "lbl"}}, {2});
  memmap::ClassInfo info{"<class 'my.mod.RefTC'>", Json{{"extra", nullptr}}};
  memmap::save_tensorclass(inner, info, tmp / "tc");
  CHECK(tc_test::read_file(tmp / "tc/meta.json") ==
        R"({"_type": "<class 'my.mod.RefTC'>", "extra": null})");
  memmap::Loaded loaded = memmap::load(tmp / "tc");
  REQUIRE(loaded.class_info);
  CHECK(loaded.class_info->type == info.type);
  CHECK(loaded.class_info->fields == info.fields);
  CHECK(at::equal(loaded.value.tensordict().get("obs"), at::ones({2, 3})));

  // A TensorDict holding a tensorclass: the hook marks which nested TensorDict is one.
  TensorDict outer({{"data", inner}, {"plain", TensorDict({}, {2})}}, {2});
  memmap::WriteOptions options;
  const at::Tensor marked = outer.get_tensordict("data").get("obs");  // shared by the handle
  options.class_of = [&](const TensorDict& td) -> std::optional<memmap::ClassInfo> {
    if (td.contains("obs") && td.get("obs").is_same(marked)) return info;
    return std::nullopt;
  };
  memmap::save_tensordict(outer, tmp / "outer", options);
  CHECK(tc_test::read_file(tmp / "outer/meta.json").find(R"("data": {"type": "RefTC"})") !=
        std::string::npos);
  CHECK(fs::exists(tmp / "outer/data/_tensordict/obs.memmap"));
  memmap::Loaded back = memmap::load(tmp / "outer");
  REQUIRE(back.nested_classes.size() == 1);
  CHECK(back.nested_classes[0].first == NestedKey("data"));
  CHECK(back.nested_classes[0].second.type == info.type);
  TensorDict plain = TensorDict::load_memmap(tmp / "outer");
  CHECK(plain.get_non_tensor({"data", "label"}) == "lbl");
}

TEST_CASE("lazy stack directories load as a lazy stack, up to the first missing index",
          "[io][roundtrip][lazy]") {
  tc_test::TempDir tmp;
  fs::create_directories(tmp / "ls");
  for (int i : {0, 1, 2, 4}) {  // 4/ comes after a gap: not an element (spec §4)
    TensorDict({{"x", at::full({2}, i)}, {"tag", "same"}}, {2})
        .memmap(tmp / ("ls/" + std::to_string(i)));
  }
  memmap::write_meta(tmp / "ls", Json{{"_type", memmap::kLazyStackType}, {"stack_dim", 0}});
  TensorDict td = TensorDict::load_memmap(tmp / "ls");
  CHECK(td.is_lazy_stack());
  CHECK(td.tensordicts().size() == 3);
  CHECK(td.batch_size() == std::vector<int64_t>{3, 2});
  CHECK(at::equal(td.densify().get("x"), at::arange(3).unsqueeze(1).expand({3, 2})));
  CHECK(at::equal(td.get("x"), at::arange(3).unsqueeze(1).expand({3, 2})));
  // Read through the lazy stack, equal data still stack per element (tensordict 0.14).
  CHECK(td.get_non_tensor("tag") ==
        Json::parse(R"([["same", "same"], ["same", "same"], ["same", "same"]])"));
  CHECK(td[0].get_non_tensor("tag") == "same");
}

TEST_CASE("reserved meta.json names are refused, nothing is written", "[io][roundtrip]") {
  tc_test::TempDir tmp;
  TensorDict td({{"shape", at::zeros({1})}});
  CHECK_THROWS_WITH(td.memmap(tmp / "td"), Catch::Matchers::ContainsSubstring("reserved"));
  CHECK_FALSE(fs::exists(tmp / "td"));
}

namespace {

bool is_mapped_in_process(const std::string& path) {
  const std::string maps = tc_test::read_file("/proc/self/maps");
  return maps.find(fs::absolute(path).string()) != std::string::npos;
}

}  // namespace

TEST_CASE("MemoryMappedTensor factories and the lifetime of a mapping", "[io][mmt]") {
  tc_test::TempDir tmp;
  at::Tensor src = at::arange(6, at::kInt).reshape({2, 3});
  {
    at::Tensor t = MemoryMappedTensor::from_tensor(src.t(), tmp / "t.bin");
    CHECK(at::equal(t, src.t()));
    CHECK(t.is_contiguous());
    CHECK(fs::file_size(tmp / "t.bin") == 24);
    CHECK(is_mapped_in_process(tmp / "t.bin"));
    at::Tensor view = t[1];  // a view keeps the mapping alive
    t = at::Tensor();
    CHECK(is_mapped_in_process(tmp / "t.bin"));
    CHECK(view[0].item<int>() == 1);
  }
  CHECK_FALSE(is_mapped_in_process(tmp / "t.bin"));  // unmapped with its last tensor

  CHECK(at::equal(MemoryMappedTensor::zeros({3}, at::kFloat, tmp / "z"), at::zeros({3})));
  CHECK(at::equal(MemoryMappedTensor::ones({3}, at::kLong, tmp / "o"), at::ones({3}, at::kLong)));
  CHECK(at::equal(MemoryMappedTensor::full({2}, 2.5, at::kDouble, tmp / "f"),
                  at::full({2}, 2.5, at::kDouble)));
  at::Tensor e = MemoryMappedTensor::empty({4}, at::kShort, tmp / "e");
  CHECK(e.scalar_type() == at::kShort);
  CHECK(fs::file_size(tmp / "e") == 8);
  CHECK_THROWS_WITH(MemoryMappedTensor::empty({4}, at::kShort, tmp / "e", false),
                    Catch::Matchers::ContainsSubstring("already exists"));

  at::Tensor again = MemoryMappedTensor::from_filename(tmp / "f", at::kDouble, {2});
  CHECK(at::equal(again, at::full({2}, 2.5, at::kDouble)));
  again.fill_(4);  // shared with the file
  CHECK(MemoryMappedTensor::from_filename(tmp / "f", at::kDouble, {2}).sum().item<double>() == 8);
  CHECK(MemoryMappedTensor::filename(again) == fs::absolute(tmp / "f").string());
  CHECK_FALSE(MemoryMappedTensor::is_memory_mapped(at::ones({2})));
  CHECK_THROWS_AS(MemoryMappedTensor::from_filename(tmp / "f", at::kDouble, {3}),
                  tensordict::FormatError);
}

TEST_CASE("aliases: save, dumps, load, load_ and an explicit device", "[io][roundtrip]") {
  tc_test::TempDir tmp;
  TensorDict td({{"x", at::arange(4)}}, {4});
  TensorDict a = td.save(tmp / "a");
  TensorDict b = td.dumps(tmp / "b");
  CHECK((a.is_memmap() && b.is_memmap()));
  TensorDict back = TensorDict::load(tmp / "b", at::Device(at::kCPU));
  CHECK(back.device() == at::Device(at::kCPU));
  CHECK(at::equal(back.get("x"), at::arange(4)));
  CHECK(back.saved_path() == tmp / "b");
  CHECK_FALSE(back.is_memmap());  // as Python: a loaded TensorDict is not locked nor flagged
  CHECK_FALSE(back.is_locked());
}

TEST_CASE("re-saving after someone else replaced the prefix writes our values", "[io][roundtrip]") {
  tc_test::TempDir tmp;
  TensorDict mine = TensorDict({{"x", at::full({3}, 1.0)}}, {3}).memmap(tmp / "td");
  TensorDict({{"x", at::full({3}, 2.0)}}, {3}).memmap(tmp / "td");  // new files at the same paths
  mine.get("x").fill_(5);                                           // still our (now unlinked) file
  mine.memmap_(tmp / "td");
  CHECK(at::equal(TensorDict::load_memmap(tmp / "td").get("x"), at::full({3}, 5.0)));
}

TEST_CASE("a save never replaces a directory that is not a previous save", "[io][roundtrip]") {
  tc_test::TempDir tmp;
  fs::create_directories(tmp / "home");
  tc_test::write_file(tmp / "home/precious.txt", "keep me");
  TensorDict td({{"x", at::ones({1})}});
  CHECK_THROWS_WITH(td.memmap(tmp / "home"),
                    Catch::Matchers::ContainsSubstring("refusing to replace"));
  CHECK(tc_test::read_file(tmp / "home/precious.txt") == "keep me");
  fs::create_directories(tmp / "empty");
  td.memmap(tmp / "empty");  // an empty directory is fine
  CHECK(fs::exists(tmp / "empty/x.memmap"));
}

TEST_CASE("a save never replaces someone else's meta.json", "[io][roundtrip]") {
  tc_test::TempDir tmp;
  TensorDict td({{"x", at::ones({1})}, {"n", TensorDict({{"y", at::ones({1})}})}});
  const std::string project = tmp / "project";
  fs::create_directories(project);
  tc_test::write_file(project + "/meta.json", R"({"name": "my project"})");
  CHECK_THROWS_WITH(td.memmap(project),
                    "refusing to replace '" + project +
                        "': it is not a directory that Python tensordict or this library saved ('" +
                        project +
                        "/meta.json': no \"_type\" string); move it away or save elsewhere");
  CHECK(tc_test::read_file(project + "/meta.json") == R"({"name": "my project"})");
}
