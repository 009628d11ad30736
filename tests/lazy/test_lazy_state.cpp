// TensorDict::state_dict / load_state_dict: Python's flat dotted keys and per-level metadata.
#include <ATen/ATen.h>

#include "catch2_compat.h"

#include "tensordict/lazy_stack.h"
#include "tensordict/state_dict.h"

using namespace tensordict;

namespace {

std::vector<std::string> keys_of(const StateDict& s) {
  std::vector<std::string> out;
  for (const auto& [k, t] : s.tensors) out.push_back(k);
  return out;
}

TensorDict nested3() {
  return TensorDict({{"top", at::arange(2)},
                     {{"a", "x"}, at::ones({2, 3})},
                     {{"a", "b", "y"}, at::zeros({2}, at::kLong)}},
                    {2});
}

}  // namespace

TEST_CASE("lazy-branch TensorDict state_dict has flat dotted keys and metadata", "[lazy][state]") {
  StateDict s = nested3().state_dict();
  CHECK(keys_of(s) == std::vector<std::string>{"top", "a.x", "a.b.y"});
  CHECK(s.metadata.dump() ==
        R"({"":{"batch_size":[2],"device":null},"a":{"batch_size":[2],"device":null},)"
        R"("a.b":{"batch_size":[2],"device":null}})");
  CHECK(at::equal(s.at("a.x"), at::ones({2, 3})));

  // Spec §6.1 example: TensorDict({"a": 1, "b": {"c": 2}}, []).
  TensorDict ex({{"a", 1}, {{"b", "c"}, 2}}, {});
  StateDict e = ex.state_dict();
  CHECK(keys_of(e) == std::vector<std::string>{"a", "b.c"});
  CHECK(e.metadata == Json::parse(R"({"": {"batch_size": [], "device": null},
                                      "b": {"batch_size": [], "device": null}})"));

  // NonTensorData: no tensor key, a metadata entry of its own.
  TensorDict with_text({{"x", at::zeros({2})}, {"note", "hello"}}, {2});
  StateDict t = with_text.state_dict();
  CHECK(keys_of(t) == std::vector<std::string>{"x"});
  CHECK(t.metadata["note"]["_non_tensor"]["data"] == "hello");
  CHECK(t.metadata["note"]["_type"] == "NonTensorData");

  // A NonTensorStack is a lazy stack to Python: its batch size and device, no strings.
  TensorDict with_texts({{"x", at::zeros({2})}, {"notes", NonTensorStack({2}, {"a", "b"})}}, {2});
  CHECK(with_texts.state_dict().metadata["notes"] ==
        Json::parse(R"({"batch_size": [2], "device": null})"));
}

TEST_CASE("lazy-branch TensorDict load_state_dict: in place, assign, strict", "[lazy][state]") {
  TensorDict src = nested3();
  src.get({"a", "x"}).fill_(5);
  TensorDict dst = nested3();
  at::Tensor before = dst.get({"a", "x"});
  dst.load_state_dict(src.state_dict());
  CHECK(before.eq(5).all().item<bool>());  // copied in place
  CHECK(dst.get({"a", "x"}).is_same(before));

  TensorDict fresh = nested3();
  fresh.load_state_dict(src.state_dict(), true, true);
  CHECK(fresh.get({"a", "x"}).data_ptr() == src.get({"a", "x"}).data_ptr());  // assigned
  CHECK(before.data_ptr() != fresh.get({"a", "x"}).data_ptr());

  TensorDict fewer({{"top", at::arange(2)}}, {2});
  CHECK_THROWS_WITH(fewer.load_state_dict(src.state_dict()),
                    Catch::Matchers::ContainsSubstring("unexpected keys ['a.b.y', 'a.x']"));
  TensorDict more = nested3();
  more.set("extra", at::zeros({2}));
  CHECK_THROWS_WITH(more.load_state_dict(src.state_dict()),
                    Catch::Matchers::ContainsSubstring("missing keys ['extra']"));

  // Non-strict into an empty TensorDict: the structure, batch sizes and non-tensor data come back.
  TensorDict with_text({{"x", at::zeros({2})}, {"note", "hello"}}, {2});
  TensorDict empty;
  empty.load_state_dict(with_text.state_dict(), false);
  CHECK(empty.batch_size() == BatchSize{2});
  CHECK(empty.get_non_tensor("note") == "hello");
  TensorDict rebuilt;
  rebuilt.load_state_dict(src.state_dict(), false);
  CHECK(rebuilt.get_tensordict({"a", "b"}).batch_size() == BatchSize{2});
  CHECK(at::equal(rebuilt.get({"a", "x"}), src.get({"a", "x"})));
}

TEST_CASE("lazy stacks: state_dict of shared keys, loaded into the elements", "[lazy][state]") {
  TensorDict a({{"x", at::zeros({3})}}, {3}), b({{"x", at::ones({3})}}, {3});
  TensorDict ls = lazy_stack({a, b});
  StateDict s = ls.state_dict();
  CHECK(keys_of(s) == std::vector<std::string>{"x"});
  CHECK(at::equal(s.at("x"), at::stack({at::zeros({3}), at::ones({3})})));
  StateDict twice;
  twice.tensors = {{"x", at::full({2, 3}, 2.f)}};
  ls.load_state_dict(twice);
  CHECK(at::equal(a.get("x"), at::full({3}, 2.f)));

  TensorDict c({{"x", at::zeros({3})}, {"only_c", at::zeros({3})}}, {3});
  CHECK_THROWS_WITH(lazy_stack({a, c}).state_dict(),
                    Catch::Matchers::ContainsSubstring("element 1"));
}

TEST_CASE("load_state_dict refuses malformed state dicts with an error, never a crash", "[state]") {
  const auto fresh = [] { return TensorDict({{"x", at::zeros({2})}}, {2}); };
  // An empty key part names this level again: followed, it recursed until the stack ended.
  for (const std::string key : {".", "..", ".x", "a..b"}) {
    INFO(key);
    StateDict state;
    state.tensors = {{key, at::ones({2})}};
    CHECK_THROWS_WITH(fresh().load_state_dict(state, false),
                      Catch::Matchers::ContainsSubstring("key '" + key + "' has an empty part"));
  }
  StateDictOptions dots;
  dots.prefix = "..";
  CHECK_THROWS_AS(fresh().load_state_dict(fresh().state_dict(dots), false), KeyError);

  // A level's metadata without a batch size takes its parent's; a malformed one is refused.
  StateDict nested;
  nested.tensors = {{"n.y", at::ones({2})}};
  nested.metadata = {{"n", Json::object()}};
  TensorDict loaded = fresh();
  loaded.load_state_dict(nested, false);
  CHECK(loaded.get_tensordict("n").batch_size() == BatchSize{2});
  nested.metadata = {{"n", {{"batch_size", "two"}}}};
  CHECK_THROWS_WITH(
      fresh().load_state_dict(nested, false),
      Catch::Matchers::ContainsSubstring("level 'n' has batch_size \"two\", not a list of sizes"));

  // Keys nested 10,000 deep: refused past the depth a memmap tree may have.
  std::string deep = "k";
  for (int i = 0; i < 10000; ++i) deep += ".k";
  StateDict deep_state;
  deep_state.tensors = {{deep, at::ones({2})}};
  CHECK_THROWS_WITH(fresh().load_state_dict(deep_state, false),
                    Catch::Matchers::ContainsSubstring("keys nested deeper than 256 levels"));

  // A NonTensorData level whose metadata lacks its value.
  StateDict non_tensor;
  non_tensor.metadata = {{"", Json::object()}, {"s", {{"_type", "NonTensorData"}}}};
  CHECK_THROWS_WITH(
      fresh().load_state_dict(non_tensor, false),
      Catch::Matchers::ContainsSubstring("the NonTensorData 's' has no _non_tensor object"));
}

TEST_CASE("load_state_dict changes nothing when the state dict is refused", "[state]") {
  const auto zeros = [] {
    return TensorDict({{"a", at::zeros({2})}, {"b", at::zeros({2})}, {{"n", "c"}, at::zeros({2})}},
                      {2});
  };
  const auto unchanged = [&](const TensorDict& td) {
    CHECK(td.batch_size() == BatchSize{2});
    CHECK(td.keys(true, true).size() == zeros().keys(true, true).size());
    for (const auto& key : zeros().keys(true, true)) {
      INFO(key.join("."));
      if (td.get_value(key).is_tensor()) CHECK(td.get(key).equal(at::zeros({2})));
    }
  };
  // "a" would be copied in place before "b" (a row too many for the batch) is refused.
  StateDict late;
  late.tensors = {{"a", at::ones({2})}, {"n.c", at::ones({2})}, {"b", at::ones({3})}};
  TensorDict td = zeros();
  CHECK_THROWS_AS(td.load_state_dict(late, false), ShapeError);
  unchanged(td);
  // Strict: the missing key is found first, as before.
  late.tensors.pop_back();
  CHECK_THROWS_AS(td.load_state_dict(late, true), KeyError);
  unchanged(td);
  // A batch size in the metadata that the leaves left in place do not have: [99] over [2].
  StateDict batch;
  batch.tensors = {{"a", at::ones({2})}};
  batch.metadata = {{"", {{"batch_size", {99}}, {"device", nullptr}}}};
  CHECK_THROWS_WITH(td.load_state_dict(batch, false), Catch::Matchers::ContainsSubstring("'a'"));
  unchanged(td);
  // Metadata of the wrong JSON types is a ValueError or a KeyError, never the JSON library's.
  for (const Json& meta : {Json{{"_non_tensor", "text"}}, Json{{"_non_tensor", {1, 2}}},
                           Json{{"batch_size", {2}}, {"_non_tensor", {{"", 1}}}}}) {
    INFO(meta.dump());
    StateDict odd;
    odd.tensors = {{"a", at::ones({2})}};
    odd.metadata = {{"", meta}};
    try {
      td.load_state_dict(odd, false);
    } catch (const ValueError&) {
    } catch (const KeyError&) {
    }
    CHECK(td.get("a").equal(at::zeros({2})));
  }
  // A lazy stack's leaf of another shape, after one that fits: neither element changes.
  TensorDict e0({{"x", at::zeros({3})}, {"y", at::zeros({3})}}, {});
  TensorDict e1({{"x", at::zeros({3})}, {"y", at::zeros({3})}}, {});
  TensorDict stacked = lazy_stack({e0, e1});
  StateDict shapes;
  shapes.tensors = {{"x", at::ones({2, 3})}, {"y", at::ones({2, 4})}};
  CHECK_THROWS_AS(stacked.load_state_dict(shapes, false), ShapeError);
  CHECK(e0.get("x").equal(at::zeros({3})));
  CHECK(e1.get("x").equal(at::zeros({3})));
  // A locked TensorDict takes values in place, and refuses a new entry before changing any.
  TensorDict locked = zeros();
  locked.lock_();
  StateDict added;
  added.tensors = {{"a", at::ones({2})}, {"new", at::ones({2})}};
  CHECK_THROWS(locked.load_state_dict(added, false));
  locked.unlock_();
  unchanged(locked);
}
