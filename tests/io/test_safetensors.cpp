// safetensors files: the reference writer's layout byte for byte, round trips with and without a
// structure entry, saves refused before anything is written, what a save may replace, and hostile
// files (each a typed error naming the file, never a crash or an over-read).
#include <ATen/ATen.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "catch2_compat.h"
#include "io_test_util.h"
#include "tensordict/json.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/memmap.h"
#include "tensordict/safetensors.h"

using namespace tensordict;
using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

// A file of `header` (padded with spaces to 8 bytes unless `pad` is false) and `data`.
std::string file_bytes(const std::string& header, const std::string& data, bool pad = true) {
  std::string h = header;
  if (pad) h.append((8 - h.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((h.size() >> (8 * i)) & 0xff);
  return out + h + data;
}

std::string raw(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return {static_cast<const char*>(c.data_ptr()), c.nbytes()};
}

TensorDict weights() {
  return TensorDict({{{"layer", "weight"}, at::arange(6, at::kFloat).reshape({2, 3})},
                     {{"layer", "bias"}, at::tensor({1.5, -2.0}, at::kFloat)},
                     {"step", at::scalar_tensor(7, at::kLong)},
                     {"mask", at::tensor({1, 0, 1}, at::kByte).to(at::kBool)}});
}

}  // namespace

TEST_CASE("to_safetensors lays a file out as the reference writer does", "[io][safetensors]") {
  tc_test::TempDir tmp;
  weights().to_safetensors(tmp / "w.safetensors");
  // By dtype (I64, F32, BOOL: the format's enum order, highest first), then by name; the JSON
  // compact, padded with spaces to 8 bytes.
  const std::string header =
      R"({"step":{"dtype":"I64","shape":[],"data_offsets":[0,8]},)"
      R"("layer.bias":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
      R"("layer.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[16,40]},)"
      R"("mask":{"dtype":"BOOL","shape":[3],"data_offsets":[40,43]}})";
  const TensorDict w = weights();
  const std::string data = raw(w.get("step")) + raw(w.get({"layer", "bias"})) +
                           raw(w.get({"layer", "weight"})) + raw(w.get("mask"));
  CHECK(tc_test::read_file(tmp / "w.safetensors") == file_bytes(header, data));
  CHECK(safetensors::read_metadata(tmp / "w.safetensors").empty());
}

TEST_CASE("from_safetensors splits names on dots and maps the file", "[io][safetensors]") {
  tc_test::TempDir tmp;
  weights().to_safetensors(tmp / "w.safetensors");
  const TensorDict td = TensorDict::from_safetensors(tmp / "w.safetensors");
  // File order (the writer's layout); empty batch sizes, as from_module gives.
  CHECK(td.keys() == std::vector<NestedKey>{"step", "layer", "mask"});
  CHECK(td.get_tensordict("layer").keys() == std::vector<NestedKey>{"bias", "weight"});
  CHECK(td.batch_size().empty());
  CHECK(td.get_tensordict("layer").batch_size().empty());
  CHECK(td.get({"layer", "weight"}).equal(weights().get({"layer", "weight"})));
  CHECK(td.get("step").dim() == 0);
  CHECK(td.get("step").item<int64_t>() == 7);
  CHECK(td.get("mask").equal(weights().get("mask")));
  CHECK(MemoryMappedTensor::filename(td.get({"layer", "weight"})) ==
        fs::absolute(tmp / "w.safetensors").lexically_normal().string());
  // Copy-on-write: writes stay in memory.
  const std::string before = tc_test::read_file(tmp / "w.safetensors");
  td.get({"layer", "weight"}).fill_(9);
  CHECK(tc_test::read_file(tmp / "w.safetensors") == before);
  CHECK(TensorDict::from_safetensors(tmp / "w.safetensors", at::Device("meta"))
            .get({"layer", "weight"})
            .is_meta());
}

TEST_CASE("a TensorDict's structure is kept in the metadata only when it is not the default",
          "[io][safetensors]") {
  tc_test::TempDir tmp;
  TensorDict td({{"obs", at::rand({2, 3})}, {{"next", "reward"}, at::ones({2, 1})}}, {2});
  td.get_tensordict("next").set_batch_size({2, 1});
  td.get_tensordict("next").set_names(DimNames{std::nullopt, "step"});
  td.set("a.b", at::zeros({2}, at::kInt));  // a key holding the separator
  td.set_non_tensor("tag", "text");
  td.set("labels", NonTensorStack({2}, {"x", "y"}));
  td.set("empty", TensorDict({}, {2}));
  td.set("steps", lazy_stack({TensorDict({{"x", at::arange(3)}}, {}),
                              TensorDict({{"x", at::arange(5)}}, {})}));
  td.set_names(DimNames{"batch"});
  memmap::set_class_info(td.get_tensordict("next"),
                         memmap::ClassInfo{"<class 'pkg.Next'>", Json{{"note", nullptr}}, 2});
  safetensors::SaveOptions options;
  options.metadata = {{"format", "pt"}};
  safetensors::save(td, tmp / "s.safetensors", options);

  const safetensors::Loaded loaded = safetensors::load(tmp / "s.safetensors");
  CHECK(loaded.metadata == safetensors::Metadata{{"format", "pt"}});
  const TensorDict& back = loaded.tensordict;
  CHECK(back.keys() == td.keys());
  CHECK(back.batch_size() == BatchSize{2});
  CHECK((back.names() == DimNames{"batch"}));
  CHECK(back.get("obs").equal(td.get("obs")));
  CHECK(back.get("a.b").equal(td.get("a.b")));
  CHECK(back.get_non_tensor("tag") == "text");
  CHECK(back.get_value("labels").non_tensor_stack() == td.get_value("labels").non_tensor_stack());
  CHECK(back.get_tensordict("empty").batch_size() == BatchSize{2});
  CHECK(back.get_tensordict("empty").keys().empty());
  const TensorDict steps = back.get_tensordict("steps");
  REQUIRE(steps.is_lazy_stack());
  CHECK(steps.tensordicts()[1].get("x").equal(at::arange(5)));
  const TensorDict next = back.get_tensordict("next");
  CHECK(next.batch_size() == BatchSize{2, 1});
  CHECK((next.names() == DimNames{"batch", "step"}));  // the first named by the root
  // The class is kept: a memmap save writes "next" as that tensorclass.
  back.memmap(tmp / "dir");
  const Json meta = Json::parse(tc_test::read_file(tmp / "dir/next/meta.json"));
  CHECK(meta.at("_type") == "<class 'pkg.Next'>");
  CHECK(meta.at("note").is_null());

  // The default structure has no entry, and the user's metadata is written as given.
  safetensors::save(weights(), tmp / "w.safetensors", options);
  const std::string bytes = tc_test::read_file(tmp / "w.safetensors");
  CHECK(bytes.find(safetensors::kStructureKey) == std::string::npos);
  CHECK(bytes.find(R"({"__metadata__":{"format":"pt"},"step":)") == 8);
}

TEST_CASE("to_safetensors refuses what the format cannot hold before writing",
          "[io][safetensors]") {
  tc_test::TempDir tmp;
  const std::string path = tmp / "x.safetensors";
  struct Case {
    const char* what;
    TensorDict td;
    const char* message;
  };
  TensorDict joined({{"a.b", at::zeros(2)}});
  joined.set({"a", "b"}, at::ones(2));
  const std::vector<Case> cases{
      {"complex128", TensorDict({{"z", at::zeros(2, at::kComplexDouble)}}),
       "key 'z': dtype complex128 has no safetensors dtype"},
      {"sparse", TensorDict({{"s", at::eye(3).to_sparse()}}), "key 's': a Sparse tensor"},
      {"joined", joined, "keys 'a.b' and ('a', 'b') join to one tensor name 'a.b'"},
      {"reserved", TensorDict({{"__metadata__", at::zeros(1)}}), "the name is the format's own"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    CHECK_THROWS_WITH(c.td.to_safetensors(path), ContainsSubstring(c.message));
    CHECK_FALSE(fs::exists(path));
  }
  safetensors::SaveOptions reserved;
  reserved.metadata = {{std::string(safetensors::kStructureKey), "{}"}};
  CHECK_THROWS_AS(safetensors::save(weights(), path, reserved), ValueError);
  CHECK(fs::is_empty(tmp.path()));  // no temporary left either
}

TEST_CASE("to_safetensors replaces only safetensors files", "[io][safetensors]") {
  tc_test::TempDir tmp;
  const std::string path = tmp / "x.safetensors";
  tc_test::write_file(path, "a user's notes");
  CHECK_THROWS_WITH(
      weights().to_safetensors(path),
      ContainsSubstring("refusing to replace '" + path + "': it is not a safetensors"));
  CHECK(tc_test::read_file(path) == "a user's notes");
  fs::remove(path);
  TensorDict({{"old", at::zeros(1)}}).to_safetensors(path);
  weights().to_safetensors(path);
  CHECK(TensorDict::from_safetensors(path).contains("step"));
  safetensors::SaveOptions once;
  once.existsok = false;
  CHECK_THROWS_WITH(safetensors::save(weights(), path, once), ContainsSubstring("already exists"));
  fs::create_symlink(path, tmp / "link.safetensors");
  CHECK_THROWS_WITH(weights().to_safetensors(tmp / "link.safetensors"),
                    ContainsSubstring("through symlink"));
  // Reading follows links (model caches link to their blobs).
  CHECK(TensorDict::from_safetensors(tmp / "link.safetensors").contains("step"));
  fs::create_directory(tmp / "dir.safetensors");
  CHECK_THROWS_WITH(weights().to_safetensors(tmp / "dir.safetensors"),
                    ContainsSubstring("is not a regular file"));
}

TEST_CASE("a file whose data is not aligned for its dtype loads as a copy", "[io][safetensors]") {
  tc_test::TempDir tmp;
  const at::Tensor values = at::tensor({1.25, -3.5}, at::kDouble);
  // An unpadded header of 57 bytes: the data starts at 65, aligned for no dtype but bytes.
  const std::string header = R"({"v":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}}  )";
  REQUIRE(header.size() == 57);
  tc_test::write_file(tmp / "u.safetensors", file_bytes(header, raw(values), false));
  const TensorDict td = TensorDict::from_safetensors(tmp / "u.safetensors");
  CHECK(td.get("v").equal(values));
  CHECK_FALSE(MemoryMappedTensor::is_memory_mapped(td.get("v")));
}

TEST_CASE("hostile safetensors files are typed errors", "[io][safetensors]") {
  tc_test::TempDir tmp;
  const std::string f32 = R"({"dtype":"F32","shape":[2],"data_offsets":)";
  const std::string eight(8, '\1');
  struct Hostile {
    const char* what;
    std::string bytes;
    const char* message;
  };
  std::string too_long(8, '\0');
  too_long[0] = static_cast<char>(0x40);  // 64 bytes of header in a 12-byte file
  std::string huge(8, '\0');
  huge[3] = 0x10;  // 2^28 bytes: past the 100 MB bound
  const std::vector<Hostile> cases{
      {"empty", "", "is too short (0 bytes) to hold a header length"},
      {"length past the file", too_long + "{}  ", "runs past the end of the file (12 bytes)"},
      {"100 MB header", huge, "past the format's bound of 100000000"},
      {"not JSON", file_bytes("{\"a\":", ""), "header"},
      {"not an object", file_bytes("[1, 2]", ""), "the header is not a JSON object"},
      {"duplicate names",
       file_bytes(R"({"a":)" + f32 + R"([0,8]},"a":)" + f32 + "[8,16]}}", eight + eight),
       "duplicate key \"a\""},
      {"overlap",
       file_bytes(R"({"a":)" + f32 + R"([0,8]},"b":)" + f32 + "[4,12]}}", eight + "1234"),
       "tensor 'b': its data starts at 4, inside the previous tensor's (expected 8)"},
      {"gap", file_bytes(R"({"a":)" + f32 + R"([4,12]}})", eight + "1234"),
       "tensor 'a': its data starts at 4, after a gap (expected 0)"},
      {"out of range", file_bytes(R"({"a":)" + f32 + "[0,8]}}", "1234"),
       "the tensors' data takes 8 bytes, the file holds 4 after the header"},
      {"bytes left over", file_bytes(R"({"a":)" + f32 + "[0,8]}}", eight + "xx"),
       "the tensors' data takes 8 bytes, the file holds 10"},
      {"shape against size",
       file_bytes(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight),
       "tensor 'a': 8 bytes of data, its F32 shape needs 12"},
      {"shape overflow",
       file_bytes(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})",
                  eight),
       "its shape is too large to address"},
      {"negative dim",
       file_bytes(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight),
       "shape [-2] holds -2, not a dimension"},
      {"unknown dtype",
       file_bytes(R"({"a":{"dtype":"F31","shape":[2],"data_offsets":[0,8]}})", eight),
       "unknown dtype 'F31'"},
      {"no torch dtype",
       file_bytes(R"({"a":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[0,3]}})", "123"),
       "dtype F6_E2M3 has no torch dtype"},
      {"metadata not strings", file_bytes(R"({"__metadata__":{"n":1}})", ""),
       "__metadata__ entry 'n' is not a string"},
      {"bool bytes",
       file_bytes(R"({"m":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", "\x01\x07"),
       "tensor 'm': bool data holds bytes other than 0 and 1"},
      {"leaf and prefix",
       file_bytes(R"({"a":)" + f32 + R"([0,8]},"a.b":)" + f32 + "[8,16]}}", eight + eight),
       "the tensors 'a.b' and 'a' cannot both be keys of a TensorDict"},
      {"structure not JSON", file_bytes(R"({"__metadata__":{"tensorclass.structure":"{"}})", ""),
       "structure entry"},
      {"structure missing a tensor",
       file_bytes(
           R"({"__metadata__":{"tensorclass.structure":"{\"version\":1,\"tree\":{\"batch_size\":[],\"entries\":{\"x\":\"y\"}}}"}})",
           ""),
       "key 'x': tensor 'y' is not in the file"},
      {"structure leaving a tensor out",
       file_bytes(
           R"({"__metadata__":{"tensorclass.structure":"{\"version\":1,\"tree\":{\"batch_size\":[],\"entries\":{}}}"},"a":)" +
               f32 + "[0,8]}}",
           eight),
       "does not place tensor 'a'"},
      {"structure of wrong types",
       file_bytes(
           R"({"__metadata__":{"tensorclass.structure":"{\"version\":1,\"tree\":{\"batch_size\":\"x\",\"entries\":{}}}"}})",
           ""),
       "structure entry"},
      {"structure batch size against a tensor",
       file_bytes(
           R"({"__metadata__":{"tensorclass.structure":"{\"version\":1,\"tree\":{\"batch_size\":[5],\"entries\":{\"a\":\"a\"}}}"},"a":)" +
               f32 + "[0,8]}}",
           eight),
       "safetensors file"},
  };
  for (const Hostile& c : cases) {
    INFO(c.what);
    const std::string path = tmp / "h.safetensors";
    tc_test::write_file(path, c.bytes);
    CHECK_THROWS_AS(TensorDict::from_safetensors(path), FormatError);
    CHECK_THROWS_WITH(TensorDict::from_safetensors(path), ContainsSubstring(c.message));
    const std::vector<std::string> problems = safetensors::verify(path);
    REQUIRE(problems.size() == 1);
    CHECK_THAT(problems[0], ContainsSubstring(c.message));
  }
  CHECK_THROWS_WITH(TensorDict::from_safetensors(tmp / "missing.safetensors"),
                    ContainsSubstring("does not exist"));
  CHECK(safetensors::verify(tmp / "missing.safetensors").size() == 1);
}
