// tdtool verify --schema: a directory against a class of a schema, every mismatch named on a line
// of its own (exact output), exit 1 on any; 2 when the schema or the class is wrong. It judges by
// the loader's rules: data of an older schema version that the class loads verifies clean.
#include <ATen/ATen.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include "catch2_compat.h"

#include "io_test_util.h"
#include "python_peer.h"
#include "skip.h"
#include "tensordict/memmap.h"

using tensordict::Json;
using tensordict::NonTensorData;
using tensordict::NonTensorStack;
using tensordict::TensorDict;
namespace fs = std::filesystem;
namespace memmap = tensordict::memmap;

namespace {

using Run = tc_test::CommandResult;

Run tdtool(const std::string& args) {
  return tc_test::run_command(std::string(TDTOOL_PATH) + " " + args + " 2>&1");
}

const char* kSchema = R"(namespace: t
classes:
  - name: Obs
    python: mod.Obs
    batch_dims: [N]
    fields:
      - {name: x, type: "tensor[float32, (N, 3)]"}
      - {name: y, type: "tensor[int64, (N, T)]"}
      - {name: z, type: "tensor[float32, (N, T, 2)]"}
      - {name: s, type: str}
      - {name: tags, type: "list[str]"}
      - {name: child, type: "optional[Inner]"}
      - {name: need, type: tensor}
      - {name: gone, type: "optional[tensor]", default: null}
  - name: Inner
    python: mod.Inner
    batch_dims: [N]
    fields:
      - {name: v, type: "tensor[float32, (N)]"}
)";

// Saves `inner` as a mod.Obs directory at `dir` with None fields `none`, its "child" entry (if
// any) as a tensorclass of type `child_type`.
void save(const TensorDict& inner, const std::string& dir, const Json& none,
          const std::string& child_type = "<class 'mod.Inner'>") {
  memmap::WriteOptions options;
  options.class_of = [&](const TensorDict& td) -> std::optional<memmap::ClassInfo> {
    if (inner.contains("child") && td.is_same(inner.get_tensordict("child"))) {
      return memmap::ClassInfo{child_type, Json::object()};
    }
    return std::nullopt;
  };
  memmap::save_tensorclass(inner, memmap::ClassInfo{"<class 'mod.Obs'>", none}, dir, options);
}

}  // namespace

TEST_CASE("tdtool verify --schema: a matching directory", "[tdtool][schema]") {
  tc_test::TempDir tmp;
  tc_test::write_file(tmp / "s.yaml", kSchema);
  TensorDict inner({{"x", at::zeros({2, 3})},
                    {"y", at::zeros({2, 5}, at::kLong)},
                    {"z", at::zeros({2, 5, 2})},
                    {"s", NonTensorData{"text"}},
                    {"tags", NonTensorStack({2}, {"a", "b"})},
                    {"child", TensorDict({{"v", at::zeros({2})}}, {2})},
                    {"need", at::zeros({2, 7})}},
                   {2});
  save(inner, tmp / "ok", Json{{"gone", nullptr}});
  const std::string args = "--schema " + (tmp / "s.yaml") + " " + (tmp / "ok");
  CHECK(tdtool("verify " + args).output ==
        tmp / "ok" + ": OK, matches class Obs of " + (tmp / "s.yaml") + "\n");
  CHECK(tdtool("verify " + args).code == 0);
  // A None child is fine: the field is optional.
  inner.del_("child");
  save(inner, tmp / "none", Json{{"gone", nullptr}, {"child", nullptr}});
  CHECK(tdtool("verify --schema " + (tmp / "s.yaml") + " " + (tmp / "none")).code == 0);
}

TEST_CASE("tdtool verify --schema names every mismatch", "[tdtool][schema]") {
  tc_test::TempDir tmp;
  tc_test::write_file(tmp / "s.yaml", kSchema);
  TensorDict inner({{"x", at::zeros({2, 4}, at::kDouble)},
                    {"y", at::zeros({2, 5}, at::kLong)},
                    {"z", at::zeros({2, 4, 2})},
                    {"s", at::zeros({2})},
                    {"tags", NonTensorStack({2}, {"a", 1})},
                    {"child", TensorDict({{"v", at::zeros({2, 1})}}, {2})},
                    {"w", at::zeros({2})}},
                   {2});
  save(inner, tmp / "bad", Json{{"need", nullptr}}, "<class 'mod.Other'>");
  const Run r = tdtool("verify --schema " + (tmp / "s.yaml") + " " + (tmp / "bad"));
  CHECK(r.code == 1);
  // First what the class's loader refuses (the runtime's messages), then what the declared types
  // say of the data it loads. `gone`, absent and optional, is a field added since: no mismatch.
  CHECK(r.output ==
        "mismatch: child: holds <class 'mod.Other'>, not <class 'mod.Inner'> (Inner)\n"
        "mismatch: 'w' is not a field of Obs; a field removed from a schema stays readable as a "
        "deprecated field\n"
        "mismatch: field 'x' of Obs expects dtype float32, got float64\n"
        "mismatch: child: field 'v' of Inner expects shape [*], got [2, 1]\n"
        "mismatch: z: dim 1 (T) is 4, but T is 5 in y\n"
        "mismatch: s: expected str, found a tensor of dtype float32\n"
        "mismatch: tags: expected list[str], found a NonTensorStack\n"
        "mismatch: need: is None, but its type tensor is not optional\n" +
            tmp / "bad" + ": 8 mismatch(es) with class Obs of " + (tmp / "s.yaml") + "\n");
}

TEST_CASE("tdtool verify --schema: batch dims, _type, bad schemas and classes",
          "[tdtool][schema]") {
  tc_test::TempDir tmp;
  tc_test::write_file(tmp / "s.yaml", kSchema);
  TensorDict inner({{"v", at::zeros({2, 3})}}, {2, 3});
  memmap::save_tensorclass(inner, memmap::ClassInfo{"<class 'mod.Else'>", Json::object()},
                           tmp / "two");
  // The schema has no class of that _type: --class names one.
  const std::string schema = "--schema " + (tmp / "s.yaml") + " ";
  const Run unnamed = tdtool("verify " + schema + (tmp / "two"));
  CHECK(unnamed.code == 2);
  CHECK(unnamed.output == "tdtool: error: no class of " + (tmp / "s.yaml") +
                              " is <class 'mod.Else'> (classes: Obs, Inner); name one with "
                              "--class\n");
  const Run named = tdtool("verify " + schema + "--class Inner " + (tmp / "two"));
  CHECK(named.code == 1);
  CHECK(named.output ==
        "mismatch: holds <class 'mod.Else'>, not <class 'mod.Inner'> (Inner)\n"
        "mismatch: field 'v' of Inner expects shape [*], got [2, 3]\n"
        "mismatch: batch size [2, 3] has 2 dims, class Inner declares 1 (N)\n" +
            tmp / "two" + ": 3 mismatch(es) with class Inner of " + (tmp / "s.yaml") + "\n");
  CHECK(tdtool("verify " + schema + "--class Nope " + (tmp / "two")).output ==
        "tdtool: error: " + (tmp / "s.yaml") + " has no class 'Nope'\n");
  // A plain TensorDict is no tensorclass.
  TensorDict({{"v", at::zeros({2})}}, {2}).memmap(tmp / "plain");
  const Run plain = tdtool("verify " + schema + "--class Inner " + (tmp / "plain"));
  CHECK(plain.code == 1);
  CHECK(plain.output ==
        "mismatch: _type is <class 'tensordict._td.TensorDict'>, not a "
        "tensorclass; expected <class 'mod.Inner'> (class Inner)\n" +
            tmp / "plain" + ": 1 mismatch(es) with class Inner of " + (tmp / "s.yaml") + "\n");
  // A schema with errors: tcgen's diagnostics, exit 2.
  tc_test::write_file(tmp / "bad.yaml",
                      "classes:\n  - name: A\n    fields: [{name: x, type: nope}]\n");
  const Run bad = tdtool("verify --schema " + (tmp / "bad.yaml") + " " + (tmp / "two"));
  CHECK(bad.code == 2);
  CHECK(bad.output == "bad.yaml:3:30: error: unknown type 'nope'\n");
  // A directory that does not load: verify's problems, the schema is not consulted.
  fs::remove(tmp / "two" + "/_tensordict/v.memmap");
  const Run broken = tdtool("verify " + schema + (tmp / "two"));
  CHECK(broken.code == 1);
  CHECK(broken.output == "problem: missing data file '" + tmp / "two" +
                             "/_tensordict/v.memmap' for key 'v'\n" + tmp / "two" +
                             ": 1 problem(s)\n");
}

TEST_CASE("tdtool verify --schema: Python's tensorclass fixture against its schema",
          "[tdtool][schema][fixtures][needs-fixtures]") {
  const fs::path dir = fs::path(TC_FIXTURES_DIR) / "python-tensordict" / "tensorclass" / "td";
  if (!fs::exists(dir)) TC_SKIP("fixture directory " << dir << " is absent (set TC_FIXTURES_DIR)");
  const std::string schema = std::string(TC_SOURCE_DIR) + "/tests/goldens/fixture.yaml";
  const Run r = tdtool("verify --schema " + schema + " " + dir.string());
  CHECK(r.code == 0);
  CHECK(r.output == dir.string() + ": OK, matches class RefTC of " + schema + "\n");
}

namespace {

const std::string kEvolution = std::string(TC_SOURCE_DIR) + "/tests/evolution/";

// A directory as version 1 of tests/evolution's Step (v1.yaml) saves it: obs, act, note.
void save_step_v1(const std::string& dir) {
  TensorDict inner({{"obs", at::zeros({2, 3})},
                    {"act", at::zeros({2}, at::kLong)},
                    {"note", NonTensorData{"hello"}}},
                   {2});
  memmap::save_tensorclass(inner, memmap::ClassInfo{"<class 'evo.Step'>", Json::object(), 1}, dir);
}

}  // namespace

TEST_CASE("tdtool verify --schema: an older version's data verifies as the class loads it",
          "[tdtool][schema][evolution]") {
  tc_test::TempDir tmp;
  save_step_v1(tmp / "one");
  // Version 2 loads it: `act` renamed to `action`, `reward` (optional) and `source` (default)
  // added since, `note` deprecated.
  const Run v2 = tdtool("verify --schema " + kEvolution + "v2.yaml " + (tmp / "one"));
  CHECK(v2.code == 0);
  CHECK(v2.output == tmp / "one" + ": OK, matches class Step of " + kEvolution + "v2.yaml\n");
  // Its own version too.
  CHECK(tdtool("verify --schema " + kEvolution + "v1.yaml " + (tmp / "one")).code == 0);
  // A field added without default, a field removed: the loader's refusals, with both versions.
  const Run required =
      tdtool("verify --schema " + kEvolution + "breaking_required.yaml " + (tmp / "one"));
  CHECK(required.code == 1);
  CHECK(required.output ==
        "mismatch: field 'seed' of Step is missing; a field added to a schema needs a default or "
        "an optional[...] type (written by schema version 1, Step is schema version 3)\n" +
            tmp / "one" + ": 1 mismatch(es) with class Step of " + kEvolution +
            "breaking_required.yaml\n");
  const Run removed =
      tdtool("verify --schema " + kEvolution + "breaking_removed.yaml " + (tmp / "one"));
  CHECK(removed.code == 1);
  CHECK(removed.output ==
        "mismatch: 'note' is not a field of Step; a field removed from a schema stays readable as "
        "a deprecated field (written by schema version 1, Step is schema version 3)\n" +
            tmp / "one" + ": 1 mismatch(es) with class Step of " + kEvolution +
            "breaking_removed.yaml\n");
  const Run dtype =
      tdtool("verify --schema " + kEvolution + "breaking_dtype.yaml " + (tmp / "one"));
  CHECK(dtype.code == 1);
  CHECK(dtype.output ==
        "mismatch: field 'obs' of Step expects dtype float64, got float32 (written by schema "
        "version 1, Step is schema version 3)\n" +
            tmp / "one" + ": 1 mismatch(es) with class Step of " + kEvolution +
            "breaking_dtype.yaml\n");
}

TEST_CASE("tdtool verify --schema: evolved fields are checked under their new names",
          "[tdtool][schema][evolution]") {
  tc_test::TempDir tmp;
  // Version 1's data with `act` of another dtype: the loader finds it under its new name.
  TensorDict inner({{"obs", at::zeros({2, 3})},
                    {"act", at::zeros({2}, at::kInt)},
                    {"note", NonTensorData{"hello"}}},
                   {2});
  memmap::save_tensorclass(inner, memmap::ClassInfo{"<class 'evo.Step'>", Json::object(), 1},
                           tmp / "one");
  const Run r = tdtool("verify --schema " + kEvolution + "v2.yaml " + (tmp / "one"));
  CHECK(r.code == 1);
  CHECK(r.output ==
        "mismatch: field 'action' of Step expects dtype int64, got int32 (written by schema "
        "version 1, Step is schema version 2)\n" +
            tmp / "one" + ": 1 mismatch(es) with class Step of " + kEvolution + "v2.yaml\n");
}

namespace {

// Stand-ins for TorchRL's History and ContentBase (tests/io/make_class_stacks.py's `chat`).
const char* kChatSchema = R"(namespace: chat
classes:
  - name: Part
    python: chat.Part
    options: [nocast, shadow]
    batch_dims: [K]
    fields:
      - {name: type, type: PART_TYPE}
      - {name: text, type: "optional[str]", default: null}
      - {name: url, type: "optional[str]", default: null}
  - name: Message
    python: chat.Message
    options: [nocast]
    fields:
      - {name: role, type: str}
      - {name: content, type: Part}
)";

std::string chat_schema(const std::string& part_type) {
  std::string text = kChatSchema;
  text.replace(text.find("PART_TYPE"), 9, part_type);
  return text;
}

}  // namespace

TEST_CASE("tdtool verify --schema: lazily stacked messages and parts, as Python writes them",
          "[tdtool][schema][python][peer][needs-peer]") {
  tc_test::require_python_peer("tensordict");
  tc_test::TempDir tmp;
  REQUIRE(std::system(("'" + tc_test::python_peer() +
                       "' '" TC_SOURCE_DIR "/tests/io/make_class_stacks.py' '" + tmp.path() + "'")
                          .c_str()) == 0);
  tc_test::write_file(tmp / "chat.yaml", chat_schema("str"));
  // A lazy stack of messages whose content is a lazy stack of parts (each its own tensorclass
  // directory, as TorchRL's ContentBase content), and one such message.
  for (const char* name : {"chat", "message"}) {
    INFO(name);
    const Run r = tdtool("verify --schema " + (tmp / "chat.yaml") + " " + (tmp / name));
    CHECK(r.code == 0);
    CHECK(r.output == tmp / name + ": OK, matches class Message of " + (tmp / "chat.yaml") + "\n");
  }
  // TorchRL's History.from_chats layout (a lazy stack of conversations, each a lazy stack of
  // messages) against the shipped History schema.
  const std::string history = std::string(TC_SOURCE_DIR) + "/schemas/history.yaml";
  const Run chats = tdtool("verify --schema " + history + " " + (tmp / "chats"));
  CHECK(chats.code == 0);
  CHECK(chats.output == tmp / "chats" + ": OK, matches class History of " + history + "\n");
  // The parts are still checked against their class, element by element.
  tc_test::write_file(tmp / "int.yaml", chat_schema("int"));
  const Run r = tdtool("verify --schema " + (tmp / "int.yaml") + " " + (tmp / "chat"));
  CHECK(r.code == 1);
  CHECK(r.output ==
        "mismatch: 0.content.0.type: expected int, found NonTensorData (string)\n"
        "mismatch: 0.content.1.type: expected int, found NonTensorData (string)\n"
        "mismatch: 1.content.0.type: expected int, found NonTensorData (string)\n" +
            tmp / "chat" + ": 3 mismatch(es) with class Message of " + (tmp / "int.yaml") + "\n");
}

TEST_CASE("tdtool verify --schema: a TensorDict field holds a TensorDict", "[tdtool][schema]") {
  tc_test::TempDir tmp;
  tc_test::write_file(tmp / "s.yaml", R"(namespace: t
classes:
  - name: Holder
    python: mod.Holder
    fields:
      - {name: entries, type: TensorDict}
)");
  const auto save_holder = [&](const TensorDict& inner, const std::string& dir) {
    memmap::save_tensorclass(inner, memmap::ClassInfo{"<class 'mod.Holder'>", Json::object()}, dir);
  };
  save_holder(TensorDict({{"entries", TensorDict({{"a", at::zeros({2})}}, {})}}, {}), tmp / "ok");
  CHECK(tdtool("verify --schema " + (tmp / "s.yaml") + " " + (tmp / "ok")).code == 0);
  save_holder(TensorDict({{"entries", at::zeros({2})}}, {}), tmp / "bad");
  const Run r = tdtool("verify --schema " + (tmp / "s.yaml") + " " + (tmp / "bad"));
  CHECK(r.code == 1);
  CHECK(r.output == "mismatch: entries: expected TensorDict, found a tensor of dtype float32\n" +
                        tmp / "bad" + ": 1 mismatch(es) with class Holder of " + (tmp / "s.yaml") +
                        "\n");
}
