// The call spec of exported models: the in/out treespecs AOTInductor packages record (the texts
// below are those of ../shared/fixtures/aoti's packages, made by torch 2.14.1), mapped onto keys.
#include <string>
#include <vector>

#include "catch2_compat.h"
#include "tensordict/errors.h"
#include "tensordict/nn/call_spec.h"

using tensordict::NestedKey;
using tensordict::nn::CallSpec;
using tensordict::nn::TreeSpec;

namespace {

const std::string kLeaf = R"({"type": null, "context": null, "children_spec": []})";
const std::string kNoKwargs = R"({"type": "builtins.dict", "context": "[]", "children_spec": []})";

std::string tuple_of(const std::string& items) {
  return R"({"type": "builtins.tuple", "context": "null", "children_spec": [)" + items + "]}";
}
std::string args_spec(const std::string& args, const std::string& kwargs = kNoKwargs) {
  return "[1, " + tuple_of(tuple_of(args) + ", " + kwargs) + "]";
}

// forward(td: dict) -> dict: {"observation", "goal": {"bias"}} -> {"logits", "action", "value"}
const std::string kDictIn =
    R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.dict", "context": "[\"observation\", \"goal\"]", "children_spec": [{"type": null, "context": null, "children_spec": []}, {"type": "builtins.dict", "context": "[\"bias\"]", "children_spec": [{"type": null, "context": null, "children_spec": []}]}]}]}, {"type": "builtins.dict", "context": "[]", "children_spec": []}]}])";
const std::string kDictOut =
    R"([1, {"type": "builtins.dict", "context": "[\"logits\", \"action\", \"value\"]", "children_spec": [{"type": null, "context": null, "children_spec": []}, {"type": null, "context": null, "children_spec": []}, {"type": null, "context": null, "children_spec": []}]}])";
// forward(x, scale) -> (y, y_sum)
const std::string kTupleIn =
    R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.tuple", "context": "null", "children_spec": [{"type": null, "context": null, "children_spec": []}, {"type": null, "context": null, "children_spec": []}]}, {"type": "builtins.dict", "context": "[]", "children_spec": []}]}])";
const std::string kTupleOut =
    R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": null, "context": null, "children_spec": []}, {"type": null, "context": null, "children_spec": []}]}])";

}  // namespace

TEST_CASE("a dict forward's leaves are named by its nested keys", "[nn][call_spec]") {
  const CallSpec spec = CallSpec::parse(kDictIn, kDictOut);
  CHECK(spec.inputs().leaves() == 2);
  CHECK(spec.outputs().leaves() == 3);
  CHECK(spec.input_keys({}) == std::vector<NestedKey>{"observation", NestedKey{"goal", "bias"}});
  CHECK(spec.output_keys({}) == std::vector<NestedKey>{"logits", "action", "value"});
  // out_keys rename the outputs in order.
  CHECK(spec.output_keys({"a", NestedKey{"b", "c"}, "d"}) ==
        std::vector<NestedKey>{"a", NestedKey{"b", "c"}, "d"});
  CHECK_THROWS_MATCHES(spec.output_keys({"a"}), tensordict::ValueError,
                       Catch::Matchers::Message("1 out_keys given for the model's 3 outputs"));
  CHECK_THROWS_MATCHES(
      spec.input_keys({"x"}), tensordict::ValueError,
      Catch::Matchers::Message("1 in_keys given for the model's 0 positional tensors"));
}

TEST_CASE("positional tensors and tuple results take in_keys and out_keys", "[nn][call_spec]") {
  const CallSpec spec = CallSpec::parse(kTupleIn, kTupleOut);
  const std::vector<NestedKey> in{"x", NestedKey{"params", "scale"}};
  CHECK(spec.input_keys(in) == in);
  CHECK(spec.output_keys({"y", "y_sum"}) == std::vector<NestedKey>{"y", "y_sum"});
  CHECK_THROWS_MATCHES(spec.input_keys({"x"}), tensordict::ValueError,
                       Catch::Matchers::Message("the model takes more positional tensors than "
                                                "the 1 in_keys given"));
  CHECK_THROWS_MATCHES(
      spec.output_keys({}), tensordict::ValueError,
      Catch::Matchers::Message("the model returns 2 tensors without names: give out_keys"));
}

TEST_CASE("keyword arguments are named by their keywords, after the positional ones",
          "[nn][call_spec]") {
  const std::string kwargs =
      R"({"type": "builtins.dict", "context": "[\"mask\"]", "children_spec": [)" + kLeaf + "]}";
  const CallSpec spec = CallSpec::parse(args_spec(kLeaf, kwargs), "[1, " + kLeaf + "]");
  CHECK(spec.input_keys({"obs"}) == std::vector<NestedKey>{"obs", "mask"});
  CHECK(spec.output_keys({"out"}) == std::vector<NestedKey>{"out"});
}

TEST_CASE("tensors without a key, and specs it cannot read, are refused", "[nn][call_spec]") {
  const CallSpec tuple_arg = CallSpec::parse(args_spec(tuple_of(kLeaf + ", " + kLeaf)), kDictOut);
  CHECK_THROWS_MATCHES(tuple_arg.input_keys({"a", "b"}), tensordict::ValueError,
                       Catch::Matchers::Message(
                           "argument 0 of the model is a tuple or list of tensors, which have no "
                           "keys: export the model with a dict or with tensors as arguments"));
  const std::string dict_of_list =
      R"({"type": "builtins.dict", "context": "[\"seq\"]", "children_spec": [{"type": "builtins.list", "context": "null", "children_spec": [)" +
      kLeaf + "]}]}";
  CHECK_THROWS_MATCHES(
      CallSpec::parse(args_spec(dict_of_list), kDictOut).input_keys({}), tensordict::ValueError,
      Catch::Matchers::Message("the tensors in the list at 'seq' have no keys: export the model "
                               "with a dict there"));
  CHECK_THROWS_MATCHES(CallSpec::parse("[2, " + kLeaf + "]", kDictOut), tensordict::FormatError,
                       Catch::Matchers::Message("the package's in_spec is not a treespec of "
                                                "protocol 1 ([1, {...}])"));
  const std::string dataclass =
      R"([1, {"type": "mypkg.Obs", "context": "null", "children_spec": []}])";
  CHECK_THROWS_MATCHES(CallSpec::parse(kDictIn, dataclass), tensordict::FormatError,
                       Catch::Matchers::Message("the package's out_spec: nodes of type "
                                                "'mypkg.Obs' are not supported (tensors in "
                                                "dicts, tuples, lists and generated classes "
                                                "are)"));
  const std::string int_keys =
      R"([1, {"type": "builtins.dict", "context": "[0]", "children_spec": [)" + kLeaf + "]}]";
  CHECK_THROWS_MATCHES(CallSpec::parse(kDictIn, int_keys), tensordict::FormatError,
                       Catch::Matchers::Message("the package's out_spec: a dict key 0 is not a "
                                                "str"));
  CHECK_THROWS_MATCHES(CallSpec::parse(kDictOut, kDictOut), tensordict::FormatError,
                       Catch::Matchers::Message("the package's in_spec is not (args, kwargs)"));
  CHECK_THROWS_AS(CallSpec::parse("not json", kDictOut), tensordict::FormatError);
}

TEST_CASE("input checks are read from a wrapper's check_input functions", "[nn][call_spec]") {
  using tensordict::nn::parse_input_checks;
  // As torch 2.14.1's AOTInductor writes them (abridged: the messages and strides left out).
  const std::string source = R"(
AOTI_NOINLINE static void check_input_0(
    AtenTensorHandle* input_handles
) {
    int32_t arg6_1_expected_dtype = aoti_torch_dtype_float32();
    if (arg6_1_size[0] < 2) {
    }
    if (arg6_1_size[0] > 1024) {
    }
    if (5 != arg6_1_size[1]) {
    }
}

AOTI_NOINLINE static void check_input_1(
    AtenTensorHandle* input_handles
) {
    int32_t arg7_1_expected_dtype = aoti_torch_dtype_int64();
}

static bool _check_aoti_runtime_check_inputs_env() {
    if (5 != unrelated_size[7]) {
    }
}
)";
  const auto inputs = parse_input_checks(source);
  REQUIRE(inputs.size() == 2);
  CHECK(inputs[0].dtype == "float32");
  REQUIRE(inputs[0].dims.size() == 2);
  CHECK(inputs[0].dims[0].min == 2);
  CHECK(inputs[0].dims[0].max == 1024);
  CHECK_FALSE(inputs[0].dims[0].is_static());
  CHECK(inputs[0].dims[1].is_static());
  CHECK(inputs[0].dims[1].min == 5);
  CHECK(inputs[1].dtype == "int64");
  CHECK(inputs[1].dims.empty());  // a 0-dim tensor: no size checks

  CHECK(parse_input_checks("int main() {}").empty());  // torch 2.6 writes no checks
  std::string skipped = source;
  skipped.replace(skipped.find("check_input_0"), 13, "check_input_3");
  CHECK_THROWS_MATCHES(parse_input_checks(skipped), tensordict::FormatError,
                       Catch::Matchers::Message("the package's input checks are out of order: "
                                                "check_input_3 where check_input_0 was expected"));
}

TEST_CASE("a wrapper source's call spec is read raw or escaped, and bad sources are refused",
          "[nn][call_spec]") {
  using tensordict::nn::parse_wrapper_source;
  const std::string leaf = R"({"type": null, "context": null, "children_spec": []})";
  const std::string in = R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": )"
                         R"([{"type": "builtins.tuple", "context": "null", "children_spec": [)" +
                         leaf +
                         R"(]}, {"type": "builtins.dict", "context": "[]", )"
                         R"("children_spec": []}]}])";
  const std::string out = "[1, " + leaf + "]";
  // torch 2.14 writes raw string literals, torch 2.6 escaped ones: the same spec.
  const auto raw = parse_wrapper_source(
      "    in_spec_ = R\"(" + in + ")\";\n    out_spec_ = R\"(" + out + ")\";\n", "raw");
  std::string escaped_in;
  for (const char c : in) escaped_in += c == '"' ? std::string("\\\"") : std::string(1, c);
  std::string escaped_out;
  for (const char c : out) escaped_out += c == '"' ? std::string("\\\"") : std::string(1, c);
  const auto escaped = parse_wrapper_source(
      "in_spec_ = \"" + escaped_in + "\";\nout_spec_ = \"" + escaped_out + "\";\n", "escaped");
  for (const auto* sig : {&raw, &escaped}) {
    CHECK(sig->call_spec.input_keys({"x"}) == std::vector<NestedKey>{"x"});
    CHECK(sig->call_spec.output_keys({"y"}) == std::vector<NestedKey>{"y"});
    CHECK(sig->inputs.empty());
  }
  CHECK_THROWS_MATCHES(parse_wrapper_source("int main() {}", "'m.pt2'"), tensordict::FormatError,
                       Catch::Matchers::Message("'m.pt2': the wrapper source assigns no in_spec_"));
  CHECK_THROWS_MATCHES(parse_wrapper_source("in_spec_ = R\"([1, ", "'m.pt2'"),
                       tensordict::FormatError,
                       Catch::Matchers::Message("'m.pt2': unterminated in_spec_ = "));
  CHECK_THROWS_MATCHES(parse_wrapper_source("in_spec_ = \"\\x41\";", "'m.pt2'"),
                       tensordict::FormatError,
                       Catch::Matchers::Message("'m.pt2': an unexpected escape '\\x' in in_spec_"));
  // Checks of another count than the spec's inputs, and a size past int64.
  const std::string spec = "in_spec_ = R\"(" + in + ")\";\nout_spec_ = R\"(" + out + ")\";\n";
  const std::string two_checks =
      "static void check_input_0(A* h) {}\nstatic void check_input_1(A* h) {}\nstatic bool x;";
  CHECK_THROWS_MATCHES(
      parse_wrapper_source(spec + two_checks, "'m.pt2'"), tensordict::FormatError,
      Catch::Matchers::Message("the package has a check_input_1, more input checks than its 1 "
                               "inputs"));
  CHECK_THROWS_MATCHES(
      parse_wrapper_source(spec + "static void check_input_0(A* h) {\n  if (a_size[0] > "
                                  "99999999999999999999999) {}\n}\nstatic bool x;",
                           "'m.pt2'"),
      tensordict::FormatError,
      Catch::Matchers::Message("the package's check_input_0 has a size past int64"));
}

TEST_CASE("input checks are read in time linear in the source, however hostile",
          "[nn][call_spec]") {
  using tensordict::nn::parse_input_checks;
  // One check whose identifier is a megabyte long (a regex took seconds on 16 KB of it), the
  // statement after it still read.
  const std::string name(1 << 20, 'a');
  const std::string check = "static void check_input_0(A* h) {\n  int32_t " + name +
                            "_expected_dtype = aoti_torch_dtype_float32();\n  if (" + name +
                            "_size[0] > 7) {}\n  if (" + name + "_size[1" +
                            std::string(1 << 16, ' ') + "] < 2) {}\n}\nstatic bool x;";
  const auto inputs = parse_input_checks(check);
  REQUIRE(inputs.size() == 1);
  CHECK(inputs[0].dtype == "float32");
  REQUIRE(inputs[0].dims.size() == 1);  // the statement cut by spaces is not a check
  CHECK(inputs[0].dims[0].max == 7);
  // 100,000 checks where the call spec has 2 inputs: refused at the third.
  std::string many;
  for (int i = 0; i < 100000; ++i)
    many += "static void check_input_" + std::to_string(i) + "() {}\n";
  CHECK_THROWS_MATCHES(parse_input_checks(many, 2), tensordict::FormatError,
                       Catch::Matchers::Message("the package has a check_input_2, more input "
                                                "checks than its 2 inputs"));
  CHECK(parse_input_checks(many).size() == 100000);
}

TEST_CASE("a generated class's node names its leaves by its fields", "[nn][call_spec]") {
  // forward(sensed: Sensed) -> Decision, as tcgen's Python module registers the classes: the
  // context is JSON text (the fields that are children, batch dims, other fields, device).
  const std::string goal =
      R"({"type": "nntest.Goal", "context": "{\"fields\": [\"bias\"], \"batch_dims\": 1, \"non_tensor\": {}, \"device\": null}", "children_spec": [)" +
      kLeaf + "]}";
  const std::string sensed =
      R"({"type": "nntest.Sensed", "context": "{\"fields\": [\"observation\", \"goal\"], \"batch_dims\": 1, \"non_tensor\": {\"mode\": \"greedy\"}, \"device\": \"cpu\"}", "children_spec": [)" +
      kLeaf + ", " + goal + "]}";
  const std::string empty =
      R"([1, {"type": "nntest.Empty", "context": "{\"fields\": [], \"batch_dims\": 1, \"non_tensor\": {}, \"device\": null, \"batch_size\": [3]}", "children_spec": []}])";
  const CallSpec spec = CallSpec::parse(args_spec(sensed), "[1, " + goal + "]");
  const TreeSpec& arg = spec.inputs().children[0].children.at(0);
  CHECK(arg.kind == TreeSpec::Kind::Class);
  CHECK(arg.type == "nntest.Sensed");
  CHECK(arg.keys == std::vector<std::string>{"observation", "goal"});
  CHECK(arg.batch_dims == 1);
  CHECK(arg.non_tensor == R"({"mode":"greedy"})");
  CHECK(arg.device == "cpu");
  CHECK_FALSE(arg.batch_size.has_value());
  CHECK(spec.input_keys({}) == std::vector<NestedKey>{"observation", NestedKey{"goal", "bias"}});
  CHECK(spec.output_keys({}) == std::vector<NestedKey>{"bias"});
  // An instance without children records its batch size.
  const CallSpec no_leaves = CallSpec::parse(args_spec(sensed), empty);
  CHECK(no_leaves.outputs().batch_size == std::vector<int64_t>{3});
  CHECK(no_leaves.output_keys({}).empty());

  const auto bad = [&](const std::string& context) {
    return "[1, {\"type\": \"nntest.Goal\", \"context\": \"" + context +
           "\", \"children_spec\": [" + kLeaf + "]}]";
  };
  CHECK_THROWS_MATCHES(
      CallSpec::parse(kDictIn, bad(R"({\"fields\": [\"a\", \"b\"], \"batch_dims\": 1})")),
      tensordict::FormatError,
      Catch::Matchers::Message("the package's out_spec: the context of class 'nntest.Goal' is not "
                               "{\"fields\", \"batch_dims\", \"non_tensor\", \"device\"} with a "
                               "field per child"));
  CHECK_THROWS_MATCHES(
      CallSpec::parse(kDictIn, bad(R"({\"fields\": [1], \"batch_dims\": 1})")),
      tensordict::FormatError,
      Catch::Matchers::Message("the package's out_spec: the context of class 'nntest.Goal''s "
                               "fields holds 1"));
  CHECK_THROWS_AS(CallSpec::parse(kDictIn, bad(R"({\"fields\": [\"a\"], \"batch_dims\": -1})")),
                  tensordict::FormatError);
  CHECK_THROWS_MATCHES(
      CallSpec::parse(kDictIn,
                      bad(R"({\"fields\": [\"a\"], \"batch_dims\": 1, \"batch_size\": 3})")),
      tensordict::FormatError,
      Catch::Matchers::Message("the package's out_spec: the context of class 'nntest.Goal' has a "
                               "batch size of 3"));
}
