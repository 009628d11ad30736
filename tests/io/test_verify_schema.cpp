// tdtool verify --schema: a directory against a class of a schema, every mismatch named on a line
// of its own (exact output), exit 1 on any; 2 when the schema or the class is wrong.
#include <ATen/ATen.h>
#include <sys/wait.h>

#include "catch2_compat.h"
#include <cstdio>
#include <filesystem>

#include "io_test_util.h"
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
  CHECK(r.output ==
        "mismatch: x: dtype float64, expected float32\n"
        "mismatch: x: dim 1 is 4, expected 3: shape [2, 4], expected (N, 3)\n"
        "mismatch: z: dim 1 (T) is 4, but T is 5 in y\n"
        "mismatch: s: expected str, found a tensor of dtype float32\n"
        "mismatch: tags: expected list[str], found a NonTensorStack\n"
        "mismatch: child: _type is <class 'mod.Other'>, expected <class 'mod.Inner'> (class "
        "Inner)\n"
        "mismatch: child.v: shape [2, 1] has 2 dims, expected 1: (N)\n"
        "mismatch: w: not a field of class Obs\n"
        "mismatch: need: is None, but its type tensor is not optional\n"
        "mismatch: gone: missing (class Obs declares it, optional[tensor])\n" +
            tmp / "bad" + ": 10 mismatch(es) with class Obs of " + (tmp / "s.yaml") + "\n");
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
        "mismatch: _type is <class 'mod.Else'>, expected <class 'mod.Inner'> (class Inner)\n"
        "mismatch: batch size [2, 3] has 2 dims, class Inner declares 1 (N)\n"
        "mismatch: v: shape [2, 3] has 2 dims, expected 1: (N)\n" +
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
          "[tdtool][schema][fixtures]") {
  const fs::path dir = fs::path(TC_FIXTURES_DIR) / "python-tensordict" / "tensorclass" / "td";
  if (!fs::exists(dir)) TC_SKIP("fixture directory " << dir << " is absent (set TC_FIXTURES_DIR)");
  const std::string schema = std::string(TC_SOURCE_DIR) + "/tests/goldens/fixture.yaml";
  const Run r = tdtool("verify --schema " + schema + " " + dir.string());
  CHECK(r.code == 0);
  CHECK(r.output == dir.string() + ": OK, matches class RefTC of " + schema + "\n");
}
