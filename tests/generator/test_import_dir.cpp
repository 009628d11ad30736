// `tcgen import DIR`: schemas inferred from tensorclass directories (Python's fixture, History,
// PairwiseDataset, a lazy stack, hand-written meta.json files), compared with the goldens under
// tests/schemas/imported/; the classes generated from those goldens (tensorclass_generate) load
// the directories they were imported from. Packages: test_import_package.cpp.
#include <ATen/ATen.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include "catch2_compat.h"

#include "driver/driver.h"
#include "history.h"
#include "import_support.h"
#include "imported_chats.h"
#include "imported_fixture.h"
#include "imported_history.h"
#include "imported_lazy.h"
#include "imported_nested_lazy.h"
#include "imported_pairwise.h"
#include "model/kinds.h"
#include "python_peer.h"
#include "reward.h"
#include "skip.h"
#include "tensordict/memmap.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace tcgen_test;
using tensordict::Json;

namespace {

void write_json(const fs::path& dir, const std::string& text) {
  fs::create_directories(dir);
  write_text(dir / "meta.json", text);
}

const char* kTensor = R"({"device": "cpu", "shape": [2, 3], "dtype": "torch.float32", )"
                      R"("is_nested": false})";

// A tensorclass directory `dir` of class mod.C, batch [2], with `entries` (meta.json text of
// the _tensordict entries, before "shape") and `none` (top meta.json entries after `_type`).
void write_class(const fs::path& dir, const std::string& entries, const std::string& none = "") {
  write_json(dir, R"({"_type": "<class 'mod.C'>")" + none + "}");
  write_json(dir / "_tensordict", "{" + entries + R"(, "shape": [2], "device": "cpu", )" +
                                      R"("_type": "<class 'tensordict._td.TensorDict'>"})");
}

}  // namespace

TEST_CASE("tcgen import DIR: Python's tensorclass fixture", "[generator][import][needs-fixtures]") {
  const fs::path fixture = fs::path(TC_FIXTURES_DIR) / "python-tensordict" / "tensorclass";
  if (!fs::exists(fixture / "td")) TC_SKIP("fixture " << fixture << " is absent");
  check_golden("td", fixture, "imported_fixture", "imported_fixture.yaml");

  // The class generated from the golden loads the directory.
  const auto loaded = imported_fixture::RefTC::load_memmap((fixture / "td").string());
  CHECK(loaded.batch_size() == tensordict::BatchSize{2});
  CHECK(loaded.obs().equal(at::tensor({0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f}).reshape({2, 3})));
  CHECK(loaded.label() == "my-label");
  CHECK_FALSE(loaded.extra().has_value());
}

TEST_CASE("tcgen import DIR refuses every Python fixture that is no tensorclass",
          "[generator][import][needs-fixtures]") {
  const fs::path fixtures = fs::path(TC_FIXTURES_DIR) / "python-tensordict";
  if (!fs::exists(fixtures)) TC_SKIP("fixtures " << fixtures << " are absent");
  for (const char* name :
       {"flat_dtypes", "mmap_example", "nested_3_levels", "non_tensor_string", "zero_dim"}) {
    CHECK(tcgen_import(std::string(name) + "/td -o " + scratch("plain").string(), fixtures) ==
          std::make_pair(1, std::string(name) +
                                "/td: error: holds a TensorDict (_type <class "
                                "'tensordict._td.TensorDict'>), not a tensorclass: tcgen import "
                                "reads tensorclass directories\n"));
  }
}

TEST_CASE("tcgen import DIR: a History written by the shipped class", "[generator][import]") {
  const fs::path dir = scratch("history");
  torchrl::llm::History h(
      {Json::array({"system", "user"}), Json::array({"You are a bot.", "Hello"})}, {2});
  h.memmap((dir / "history").string());
  check_golden("history", dir, "imported_history", "imported_history.yaml");

  const auto loaded = imported_history::History::load_memmap((dir / "history").string());
  CHECK(loaded.batch_size() == tensordict::BatchSize{2});
  CHECK(loaded.role() == std::vector<std::string>{"system", "user"});
  CHECK(loaded.content() == std::vector<std::string>{"You are a bot.", "Hello"});
  CHECK(loaded.is_complete() == Json(true));
  CHECK_FALSE(loaded.tool_calls().has_value());
  CHECK_FALSE(loaded.tool_responses().has_value());
  fs::remove_all(dir);
}

TEST_CASE("tcgen import DIR: a PairwiseDataset, its nested RewardData merged",
          "[generator][import]") {
  const fs::path dir = scratch("pairwise");
  using torchrl::llm::RewardData;
  RewardData::Args chosen_args;
  chosen_args.input_ids = at::arange(15).reshape({3, 5});
  chosen_args.attention_mask = at::ones({3, 5}, at::kLong);
  chosen_args.rewards = at::full({3, 5}, 0.5f);
  RewardData chosen(std::move(chosen_args), {3});
  RewardData rejected({at::zeros({3, 5}, at::kLong), at::ones({3, 5}, at::kLong)}, {3});
  torchrl::llm::PairwiseDataset({chosen, rejected}, {3}).memmap((dir / "pairs").string());
  check_golden("pairs", dir, "imported_pairwise", "imported_pairwise.yaml");

  const auto loaded = imported_pairwise::PairwiseDataset::load_memmap((dir / "pairs").string());
  CHECK(loaded.batch_size() == tensordict::BatchSize{3});
  CHECK(loaded.chosen_data().input_ids().equal(at::arange(15).reshape({3, 5})));
  CHECK(loaded.chosen_data().rewards()->equal(at::full({3, 5}, 0.5f)));
  CHECK_FALSE(loaded.rejected_data().rewards().has_value());
  CHECK_FALSE(loaded.rejected_data().end_scores().has_value());
  CHECK(loaded.rejected_data().attention_mask().sum().item<int64_t>() == 15);
  fs::remove_all(dir);
}

TEST_CASE("tcgen import DIR: a lazily stacked tensorclass", "[generator][import]") {
  const fs::path dir = scratch("lazy");
  using torchrl::llm::RewardData;
  RewardData one({at::ones({1, 3}, at::kLong), at::ones({1, 3}, at::kLong)}, {1});
  RewardData two({at::zeros({2, 4}, at::kLong), at::ones({2, 4}, at::kLong)}, {2});
  RewardData::lazy_stack({one, two}).memmap((dir / "stacked").string());
  check_golden("stacked", dir, "imported_lazy", "imported_lazy.yaml");

  const auto loaded = imported_lazy::RewardData::load_memmap((dir / "stacked").string());
  CHECK(loaded.batch_size() == tensordict::BatchSize{2, -1});
  CHECK(loaded[1].input_ids().equal(at::zeros({2, 4}, at::kLong)));
  fs::remove_all(dir);
}

TEST_CASE("tcgen import DIR: a batch of conversations, lazy stacks of lazy stacks",
          "[generator][import]") {
  const fs::path dir = scratch("chats");
  // TorchRL's History.from_chats layout: `_tensordict/` a lazy stack of conversations, each a lazy
  // stack of 0-D messages.
  const Json chats = Json::parse(R"([[{"role": "user", "content": "Hi"},
                                      {"role": "assistant", "content": "Hello!"}],
                                     [{"role": "user", "content": "Bye"}]])");
  const torchrl::llm::History history = torchrl::llm::History::from_chats(chats);
  REQUIRE(history.batch_size() == tensordict::BatchSize{2, -1});
  history.memmap((dir / "chats").string());
  const auto type_of = [&](const std::string& at) {
    return tensordict::memmap::read_meta((dir / "chats" / at).string())["_type"];
  };
  REQUIRE(type_of("_tensordict") == "<class 'tensordict._lazy.LazyStackedTensorDict'>");
  REQUIRE(type_of("_tensordict/1") == "<class 'tensordict._lazy.LazyStackedTensorDict'>");
  REQUIRE(type_of("_tensordict/1/0") == "<class 'tensordict._td.TensorDict'>");
  // Two batch dims; one string per message is `any` for the class (nested lists, one per
  // conversation), as the shipped History declares it.
  check_golden("chats", dir, "imported_chats", "imported_chats.yaml");

  const auto loaded = imported_chats::History::load_memmap((dir / "chats").string());
  CHECK(loaded.batch_size() == tensordict::BatchSize{2, -1});
  CHECK(loaded.role() == Json::parse(R"([["user", "assistant"], ["user"]])"));
  CHECK(loaded.content() == Json::parse(R"([["Hi", "Hello!"], ["Bye"]])"));
  CHECK_FALSE(loaded.tool_calls().has_value());
  fs::remove_all(dir);
}

TEST_CASE("tcgen import DIR: the from_chats layout as Python writes it",
          "[generator][import][python][peer][needs-peer]") {
  tc_test::require_python_peer("tensordict");
  const fs::path dir = scratch("chats_python");
  // tests/io/make_class_stacks.py: TorchRL's History (or a stand-in of it) from two chats.
  REQUIRE(std::system(("'" + tc_test::python_peer() + "' '" +
                       (source_dir() / "tests/io/make_class_stacks.py").string() + "' '" +
                       dir.string() + "'")
                          .c_str()) == 0);
  // The golden's schema, but for the order of the None fields (Python lists them in a set's
  // order).
  const fs::path out = dir / "out";
  REQUIRE(tcgen_import("chats -o " + out.string() + " --namespace imported_chats", dir) ==
          std::make_pair(0, std::string()));
  tcgen::Diagnostics template_problems;
  const auto templates = tcgen::load_templates("", template_problems);
  const tcgen::Compilation imported =
      tcgen::compile_text(read_text(out / "chats.yaml"), "chats.yaml", templates);
  const tcgen::Compilation golden = tcgen::compile_text(
      read_text(kImported / "imported_chats.yaml"), "imported_chats.yaml", templates);
  REQUIRE(imported.diagnostics.all().empty());
  REQUIRE(imported.schemas.size() == 1);
  REQUIRE(imported.schemas[0].classes.size() == 1);
  const tcgen::Class& cls = imported.schemas[0].classes[0];
  const tcgen::Class& expected = golden.schemas.at(0).classes.at(0);
  CHECK(cls.python_name == expected.python_name);
  CHECK(cls.batch_dims == expected.batch_dims);
  auto fields = [](const tcgen::Class& c) {
    std::map<std::string, std::string> types;
    for (const auto& f : c.fields) types[f.name] = tcgen::type_to_string(f.type);
    return types;
  };
  CHECK(fields(cls) == fields(expected));
  // The class generated from the golden loads it.
  const auto loaded = imported_chats::History::load_memmap((dir / "chats").string());
  CHECK(loaded.batch_size() == tensordict::BatchSize{2, -1});
  CHECK(loaded.role() == Json::parse(R"([["user", "assistant"], ["user"]])"));
  CHECK(loaded.content() == Json::parse(R"([["Hi", "Hello!"], ["Bye"]])"));
  fs::remove_all(dir);
}

TEST_CASE("tcgen import DIR: tensors of nested lazy stacks get every stacked dim",
          "[generator][import]") {
  const fs::path dir = scratch("nested_lazy");
  using torchrl::llm::RewardData;
  auto data = [](int64_t n) {
    return RewardData({at::arange(n * 5).reshape({n, 5}), at::ones({n, 5}, at::kLong)}, {n});
  };
  // [2, -1, 3]: a stack of two stacks, of two and one RewardData of batch [3].
  const RewardData nested = RewardData::lazy_stack(
      {RewardData::lazy_stack({data(3), data(3)}), RewardData::lazy_stack({data(3)})});
  REQUIRE(nested.batch_size() == tensordict::BatchSize{2, -1, 3});
  nested.memmap((dir / "nested").string());
  check_golden("nested", dir, "imported_nested_lazy", "imported_nested_lazy.yaml");

  const auto loaded = imported_nested_lazy::RewardData::load_memmap((dir / "nested").string());
  CHECK(loaded.batch_size() == tensordict::BatchSize{2, -1, 3});
  CHECK(loaded[1][0].input_ids().equal(at::arange(15).reshape({3, 5})));
  fs::remove_all(dir);
}

TEST_CASE("tcgen import DIR: entry kinds as schema types", "[generator][import]") {
  const fs::path dir = scratch("kinds");
  write_class(dir / "kinds",
              std::string(R"("x": )") + kTensor +
                  R"(, "odd": {"device": "cpu", "shape": [3], "dtype": "torch.int8", )"
                  R"("is_nested": false}, )"
                  R"("jag": {"device": "cpu", "shape": [2, 1], "dtype": "torch.float64", )"
                  R"("is_nested": true}, "s": {"type": "NonTensorData"}, )"
                  R"("n": {"type": "NonTensorData"}, "names": {"type": "NonTensorStack"}, )"
                  R"("mixed": {"type": "NonTensorStack"}, "td": {"type": "TensorDict"}, )"
                  R"("type": {"type": "NonTensorData"})",
              R"(, "gone": null)");
  const fs::path inner = dir / "kinds" / "_tensordict";
  const std::string data = R"({"_type": "<class 'tensordict.tensorclass.NonTensorData'>", )";
  write_json(inner / "s", data + R"("data": "text", "_is_non_tensor": true, "_metadata": null})");
  write_json(inner / "n", data + R"("data": 7, "_is_non_tensor": true, "_metadata": null})");
  write_json(inner / "type", data + R"("data": "a", "_is_non_tensor": true, "_metadata": null})");
  const std::string stack = R"({"_type":"<class 'tensordict.tensorclass.NonTensorStack'>",)"
                            R"("stack_dim":0,"device":null,"data":)";
  write_json(inner / "names", stack + R"(["a","b"]})");
  write_json(inner / "mixed", stack + R"(["a",1]})");
  write_json(inner / "td", R"({"shape": [2], "device": "cpu", )"
                           R"("_type": "<class 'tensordict._td.TensorDict'>"})");
  const fs::path out = scratch("kinds_out");
  REQUIRE(tcgen_import("kinds -o " + out.string(), dir) == std::make_pair(0, std::string()));
  CHECK(read_text(out / "kinds.yaml") == R"(# generated by tcgen import from kinds
namespace: mod
classes:
  - name: C
    python: mod.C
    options: [shadow]
    batch_dims: [N]
    fields:
      - name: x
        type: tensor[float32, (N, 3)]
      - name: odd
        type: tensor[int8]
      - name: jag
        type: tensor[float64]
      - name: s
        type: str
      - name: n
        type: any
      - name: names
        type: list[str]
      - name: mixed
        type: any
      - name: td
        type: TensorDict
      - name: type
        type: str
      - name: gone
        type: optional[any]
        default: null
)");
  fs::remove_all(dir);
  fs::remove_all(out);
}

TEST_CASE("tcgen import DIR: the schema version a save recorded", "[generator][import]") {
  const fs::path dir = scratch("versioned");
  write_class(dir / "v", R"("x": )" + std::string(kTensor));
  write_text(dir / "v" / tensordict::kSchemaVersionFile, R"({"version": 4})");
  const fs::path out = scratch("versioned_out");
  REQUIRE(tcgen_import("v -o " + out.string(), dir) == std::make_pair(0, std::string()));
  CHECK(read_text(out / "v.yaml") == R"(# generated by tcgen import from v
namespace: mod
version: 4
classes:
  - name: C
    python: mod.C
    batch_dims: [N]
    fields:
      - name: x
        type: tensor[float32, (N, 3)]
)");
  write_text(dir / "v" / tensordict::kSchemaVersionFile, R"({"version": "4"})");
  CHECK(tcgen_import("v -o " + out.string(), dir) ==
        std::make_pair(1, std::string("v/schema.json: error: expected {\"version\": <a positive "
                                      "integer>}\n")));
  fs::remove_all(dir);
  fs::remove_all(out);
}

TEST_CASE("tcgen import DIR: the namespace of the class's Python module", "[generator][import]") {
  const fs::path dir = scratch("module_namespace");
  const fs::path out = dir / "out";
  int imported = 0;
  // The `namespace:` written for a directory of class `type`, whose `python:` stays `type`.
  const auto namespace_of = [&](const std::string& type, const std::string& options = "") {
    const std::string name = "d" + std::to_string(++imported);
    write_json(dir / name, R"({"_type": "<class ')" + type + R"('>"})");
    write_json(dir / name / "_tensordict",
               std::string(R"({"x": )") + kTensor + R"(, "shape": [2], "device": "cpu", )" +
                   R"("_type": "<class 'tensordict._td.TensorDict'>"})");
    REQUIRE(tcgen_import(name + " -o " + out.string() + options, dir) ==
            std::make_pair(0, std::string()));
    const std::string yaml = read_text(out / (name + ".yaml"));
    CHECK(yaml.find("\n    python: " + type + "\n") != std::string::npos);
    const std::string key = "\nnamespace: ";
    const size_t at = yaml.find(key);
    if (at == std::string::npos) return std::string();
    return yaml.substr(at + key.size(), yaml.find('\n', at + 1) - at - key.size());
  };
  // The inverse of a schema's default `python:` name, its namespace and name.
  CHECK(namespace_of("example.MyData") == "example");
  CHECK(namespace_of("torchrl.data.llm.history.History") == "torchrl::data::llm::history");
  // None for a script's class, or a module no namespace of generated code can spell.
  CHECK(namespace_of("__main__.RefTC") == "");
  CHECK(namespace_of("Bare") == "");
  CHECK(namespace_of("at.util.C") == "");
  CHECK(namespace_of("m.<locals>.C") == "");
  CHECK(namespace_of("example.MyData", " --namespace mine") == "mine");
  fs::remove_all(dir);
}

TEST_CASE("tcgen import DIR: bad directories, one error each, nothing written",
          "[generator][import]") {
  const fs::path dir = scratch("bad");
  const fs::path out = dir / "out";
  const auto run = [&](const std::string& name) {
    return tcgen_import(name + " -o " + out.string(), dir);
  };
  fs::create_directories(dir / "empty");
  CHECK(run("empty") ==
        std::make_pair(1, std::string("empty/meta.json: error: missing (a memmap directory "
                                      "holds a meta.json)\n")));
  // A FIFO with no writer would block an open() forever.
  fs::create_directories(dir / "fifo");
  REQUIRE(::mkfifo((dir / "fifo" / "meta.json").c_str(), 0600) == 0);
  CHECK(run("fifo") ==
        std::make_pair(1, std::string("fifo/meta.json: error: is not a regular file\n")));
  {  // a sparse 4 GiB meta.json: no disk used, and never read
    fs::create_directories(dir / "huge");
    std::ofstream huge(dir / "huge" / "meta.json");
    huge.seekp((std::streamoff{1} << 32) - 1);
    huge.put('\n');
  }
  CHECK(run("huge") == std::make_pair(1, std::string("huge/meta.json: error: is 4096 MiB, more "
                                                     "than tcgen import reads (16 MiB)\n")));
  fs::remove_all(dir / "huge");
  write_json(dir / "deep", R"({"_type": "<class 'mod.C'>", "x": )" + std::string(65, '[') +
                               std::string(65, ']') + "}");
  CHECK(run("deep") ==
        std::make_pair(1, std::string("deep/meta.json: error: JSON nested deeper than 64 "
                                      "levels\n")));
  write_json(dir / "untyped", R"({"x": 1})");
  CHECK(run("untyped") ==
        std::make_pair(1, std::string("untyped/meta.json: error: has no \"_type\" string\n")));
  write_json(dir / "noinner", R"({"_type": "<class 'mod.C'>"})");
  CHECK(run("noinner") ==
        std::make_pair(1, std::string("noinner/_tensordict/meta.json: error: missing (a memmap "
                                      "directory holds a meta.json)\n")));
  write_class(dir / "badkey", std::string(R"("a b": )") + kTensor);
  CHECK(run("badkey") == std::make_pair(1, std::string("badkey/_tensordict/meta.json: error: key "
                                                       "\"a b\" is not a field name a schema can "
                                                       "declare\n")));
  // What tcgen's checks refuse is not written either.
  write_class(dir / "keyword", std::string(R"("lambda": )") + kTensor);
  CHECK(run("keyword") ==
        std::make_pair(1, std::string("keyword.yaml (imported from keyword):8:15: error: field "
                                      "name 'lambda' is a Python keyword: the Python class could "
                                      "not declare it\n")));
  write_class(dir / "a" / "same", std::string(R"("x": )") + kTensor);
  write_class(dir / "b" / "same", std::string(R"("x": )") + kTensor);
  CHECK(run("a/same b/same") ==
        std::make_pair(1, std::string("b/same: error: its YAML schema 'same.yaml' would overwrite "
                                      "the one of a/same\n")));
  CHECK_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

TEST_CASE("tcgen import DIR: walked as the runtime loads a tree, never through a symlink",
          "[generator][import]") {
  const fs::path dir = scratch("links");
  const fs::path out = dir / "out";
  // Each run is bounded by `timeout`: before, two symlinks to ".." made a walk of 2^64 steps.
  const auto run = [&](const std::string& name) {
    return tcgen_import(name + " -o " + out.string(), dir, 60);
  };
  const std::string child = R"({"type": "C"})";
  write_class(dir / "loop", R"("a": )" + child + R"(, "b": )" + child);
  fs::create_directory_symlink("..", dir / "loop" / "_tensordict" / "a");
  fs::create_directory_symlink("..", dir / "loop" / "_tensordict" / "b");
  const std::string link =
      ": error: refusing to follow a symlink (a memmap tree's directories lie "
      "inside it)\n";
  CHECK(run("loop") ==
        std::make_pair(1, "loop/_tensordict/a" + link + "loop/_tensordict/b" + link));
  // A child linked to a class outside the directory: the runtime refuses to load it.
  write_class(dir / "elsewhere" / "c", std::string(R"("x": )") + kTensor);
  write_class(dir / "outside", R"("c": )" + child);
  fs::create_directory_symlink(dir / "elsewhere" / "c", dir / "outside" / "_tensordict" / "c");
  CHECK(run("outside") == std::make_pair(1, "outside/_tensordict/c" + link));
  // `_tensordict/` and meta.json themselves.
  fs::create_directories(dir / "inner");
  write_text(dir / "inner" / "meta.json", R"({"_type": "<class 'mod.C'>"})");
  fs::create_directory_symlink(dir / "elsewhere" / "c" / "_tensordict",
                               dir / "inner" / "_tensordict");
  CHECK(run("inner") == std::make_pair(1, "inner/_tensordict" + link));
  write_class(dir / "file", std::string(R"("x": )") + kTensor);
  fs::remove(dir / "file" / "_tensordict" / "meta.json");
  fs::create_symlink(dir / "elsewhere" / "c" / "_tensordict" / "meta.json",
                     dir / "file" / "_tensordict" / "meta.json");
  CHECK(run("file") == std::make_pair(1, std::string("file/_tensordict/meta.json: error: "
                                                     "refusing to read a file through a symlink "
                                                     "(a memmap tree's files lie inside it)\n")));
  // A lazy stack's element.
  write_json(dir / "stack", R"({"_type": "<class 'mod.C'>"})");
  write_json(dir / "stack" / "_tensordict",
             R"({"stack_dim": 0, "_type": "<class 'tensordict._lazy.LazyStackedTensorDict'>"})");
  fs::create_directory_symlink(dir / "elsewhere" / "c" / "_tensordict",
                               dir / "stack" / "_tensordict" / "0");
  CHECK(run("stack") == std::make_pair(1, "stack/_tensordict/0" + link));
  CHECK_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

TEST_CASE("tcgen import DIR: as deep as the runtime loads, and no deeper", "[generator][import]") {
  const fs::path dir = scratch("deep");
  const fs::path out = dir / "out";
  // Class Ck holds a C<k+1> in `c`: each nesting is two directory levels (c/ and _tensordict/).
  const auto nest = [&](const std::string& name, int classes) {
    fs::path d = dir / name;
    for (int k = 1; k <= classes; ++k) {
      write_json(d, R"({"_type": "<class 'mod.C)" + std::to_string(k) + R"('>"})");
      const std::string entry = k < classes ? R"("c": {"type": "C)" + std::to_string(k + 1) + "\"}"
                                            : std::string(R"("x": )") + kTensor;
      write_json(d / "_tensordict", "{" + entry + R"(, "shape": [2], "device": "cpu", )" +
                                        R"("_type": "<class 'tensordict._td.TensorDict'>"})");
      d = d / "_tensordict" / "c";
    }
  };
  nest("fits", 128);  // the innermost _tensordict/ is level 256
  REQUIRE(tcgen_import("fits -o " + out.string(), dir, 60) == std::make_pair(0, std::string()));
  CHECK(read_text(out / "fits.yaml").find("type: C128") != std::string::npos);
  nest("over", 129);
  std::string at = "over";
  for (int k = 1; k < 129; ++k) at += "/_tensordict/c";
  CHECK(tcgen_import("over -o " + out.string(), dir, 60) ==
        std::make_pair(1, at + ": error: directories nested deeper than 256 levels, which the "
                               "runtime does not load\n"));
  fs::remove_all(dir);
}

TEST_CASE("tcgen import DIR: many keys, read in time linear in them", "[generator][import]") {
  // Before: 50,000 None keys took 4 s, 200,000 54 s, 100,000 _tensordict keys 20 s (each key
  // searched among the fields, each meta.json key among the object's). Bounded by `timeout`.
  const fs::path dir = scratch("keys");
  const fs::path out = dir / "out";
  std::string none;
  for (int i = 0; i < 200000; ++i) none += ", \"k" + std::to_string(i) + "\": null";
  write_class(dir / "nones", std::string(R"("x": )") + kTensor, none);
  CHECK(tcgen_import("nones -o " + out.string(), dir, 60) ==
        std::make_pair(1, std::string("nones: error: class 'C' has 200001 fields, more than the "
                                      "1000 a class may have\n")));
  std::string entries = std::string(R"("x": )") + kTensor;
  for (int i = 0; i < 100000; ++i) entries += ", \"t" + std::to_string(i) + "\": " + kTensor;
  write_class(dir / "leaves", entries);
  CHECK(tcgen_import("leaves -o " + out.string(), dir, 60) ==
        std::make_pair(1, std::string("leaves: error: class 'C' has 100001 fields, more than the "
                                      "1000 a class may have\n")));
  CHECK_FALSE(fs::exists(out));
  // The most a class may have is imported, every field in order.
  none.clear();
  for (int i = 0; i < 999; ++i) none += ", \"k" + std::to_string(i) + "\": null";
  write_class(dir / "most", std::string(R"("x": )") + kTensor, none);
  REQUIRE(tcgen_import("most -o " + out.string(), dir, 60) == std::make_pair(0, std::string()));
  const std::string yaml = read_text(out / "most.yaml");
  size_t fields = 0;
  for (size_t at = yaml.find("- name: "); at != std::string::npos;
       at = yaml.find("- name: ", at + 1))
    ++fields;
  CHECK(fields == 1001);  // the class and its 1,000 fields
  CHECK(yaml.find("- name: k998") > yaml.find("- name: k997"));
  // A key given twice is refused (it was the last one silently).
  write_class(dir / "twice", std::string(R"("x": )") + kTensor + R"(, "x": )" + kTensor);
  CHECK(
      tcgen_import("twice -o " + out.string(), dir, 60) ==
      std::make_pair(1, std::string("twice/_tensordict/meta.json: error: duplicate key \"x\"\n")));
  fs::remove_all(dir);
}
