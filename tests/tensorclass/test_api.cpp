// The everyday tensorclass API as Python tensordict 0.14 has it: get(key, default) with nested
// keys, set(key, value, inplace), from_tensordict(td, non_tensordict, safe), state_dict(prefix,
// keep_vars, flatten), to_tensordict's default, names, memmap_async, memmap_refresh_ and load_.
// Expected values were printed by the real library (shared/python-peer/tdpy) for the same
// classes; the comments spell the Python calls.
#include <ATen/ATen.h>

#include <filesystem>
#include "catch2_compat.h"

#include <unistd.h>

#include "frozen.h"
#include "nested.h"
#include "plain.h"
#include "tensordict/memmap.h"

using namespace golden;
using tensordict::DimNames;
using tensordict::StateDictOptions;
using tensordict::TensorDict;
using tensordict::Value;
namespace fs = std::filesystem;

namespace {

// Outer(inner=Inner(x=torch.ones(2)), maybe=None, y=torch.zeros(2), batch_size=[2])
Outer make_outer() {
  return Outer({Inner({at::ones({2})}, {2}), std::nullopt, at::zeros({2})}, {2});
}

bool all_equal(const at::Tensor& t, double value) { return (t == value).all().item<bool>(); }

std::string data_of(const std::optional<Value>& v) {
  REQUIRE(v.has_value());
  return v->non_tensor_data().data.get<std::string>();
}

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("tc_api_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

}  // namespace

TEST_CASE("get: nested keys and Python's default", "[tensorclass][api]") {
  const Outer o = make_outer();
  // o.get(("inner", "x")) -> tensor([1., 1.]); o.get("maybe") -> None
  CHECK(all_equal(o.get({"inner", "x"})->tensor(), 1));
  CHECK_FALSE(o.get("maybe").has_value());
  // o.get(("maybe", "x"), "d") -> 'd'; o.get("nope", "d") -> 'd'; o.get(("y", "z"), "d") -> 'd';
  // o.get(("inner", "nope"), "d") -> 'd'; o.get("maybe", "d") -> None (the field is None)
  CHECK(data_of(o.get({"maybe", "x"}, Value("d"))) == "d");
  CHECK(data_of(o.get("nope", Value("d"))) == "d");
  CHECK(data_of(o.get({"y", "z"}, Value("d"))) == "d");
  CHECK(data_of(o.get({"inner", "nope"}, Value("d"))) == "d");
  CHECK_FALSE(o.get("maybe", Value("d")).has_value());
  // o.get(("maybe", "x")) -> None (Python's default default); get(key, std::nullopt) spells it
  CHECK_FALSE(o.get({"maybe", "x"}, std::nullopt).has_value());
  // Without a default, C++ reports the key (as TensorDict::get does).
  CHECK_THROWS_WITH(o.get({"maybe", "x"}), "Outer.get(('maybe', 'x')): field 'maybe' is None");
  CHECK_THROWS_WITH(o.get({"y", "z"}),
                    "Outer.get(('y', 'z')): field 'y' holds a Tensor, which has no entries");
  CHECK_THROWS_WITH(o.get({"inner", "nope"}), "Inner has no field 'nope' (fields: x)");
}

TEST_CASE("get and set through a TensorDict held by an any field", "[tensorclass][api]") {
  Plain p({at::zeros({2, 3})}, {2});
  p.set("meta", TensorDict({{"k", at::arange(2)}}, {2}));
  CHECK(p.get({"meta", "k"})->tensor().equal(at::arange(2)));
  CHECK(data_of(p.get({"meta", "nope"}, Value("d"))) == "d");
  CHECK_THROWS_WITH(p.get({"meta", "nope"}),
                    "Plain.get(('meta', 'nope')): no key 'nope' in "
                    "field 'meta'");
  p.set({"meta", "k"}, at::full({2}, 5));
  CHECK(all_equal(p.get({"meta", "k"})->tensor(), 5));
  p.set({"meta", "note"}, "text");
  CHECK(data_of(p.get({"meta", "note"})) == "text");
}

TEST_CASE("set: nested keys, inplace writes, refused replacements", "[tensorclass][api]") {
  Outer o = make_outer();
  // o.set(("inner", "x"), t): o.inner.x is t
  const at::Tensor t = at::full({2}, 5.0);
  o.set({"inner", "x"}, t);
  CHECK(o.inner().x().is_same(t));
  // y = o.y; o.set("y", torch.ones(2), inplace=True): y is written, o.y is y
  const at::Tensor y = o.y();
  o.set("y", at::ones({2}), true);
  CHECK(o.y().is_same(y));
  CHECK(all_equal(y, 1));
  // o.set("y", torch.ones(3), inplace=True) raises (RuntimeError in Python)
  CHECK_THROWS_WITH(o.set("y", at::ones({3}), true),
                    "Outer.set('y') with inplace: cannot copy a tensor of shape [3] into the "
                    "stored one of shape [2]");
  // without inplace the tensor is replaced
  o.set("y", at::full({2}, 2.0));
  CHECK_FALSE(o.y().is_same(y));
  CHECK(all_equal(y, 1));
  // inplace on a None field simply sets it; on a nested instance it updates the stored one
  o.set("maybe", Inner({at::zeros({2})}, {2}), true);
  REQUIRE(o.maybe().has_value());
  const at::Tensor x = o.inner().x();
  o.set("inner", Inner({at::full({2}, 7.0)}, {2}), true);
  CHECK(o.inner().x().is_same(x));
  CHECK(all_equal(x, 7));
  // inplace forwards through nested keys (Python 0.14 drops it there: see docs/runtime.md)
  o.set({"inner", "x"}, at::full({2}, 9.0), true);
  CHECK(all_equal(x, 9));

  // p.set("label", "b", inplace=True): RuntimeError (an existing non-tensor entry)
  Plain p({at::zeros({2, 3}), "a"}, {2});
  CHECK_THROWS_WITH(p.set("label", "b", true),
                    "Plain.set('label') with inplace: cannot update the stored NonTensorData in "
                    "place with a NonTensorData (tensors are copied into, nested collections "
                    "updated)");
  p.set("count", at::tensor({1, 2}));
  CHECK_THROWS_AS(p.set("count", std::nullopt, true), tensordict::TypeError);
  CHECK_THROWS_AS(p.set("nope", 1, true), tensordict::KeyError);
  // A frozen instance refuses set, inplace or not (Python: RuntimeError).
  Frozen f({at::zeros({2}), "n"}, {2});
  CHECK_THROWS_AS(f.set("x", at::ones({2}), true), tensordict::LockedError);
}

TEST_CASE("from_tensordict with non_tensordict and safe", "[tensorclass][api]") {
  // Plain.from_tensordict(td, {"label": "z"}): label 'z', count None, td gains no key
  TensorDict td({{"obs", at::zeros({2, 3})}}, {2});
  const Plain q = Plain::from_tensordict(td, {{"label", "z"}});
  CHECK(q.label() == "z");
  CHECK_FALSE(q.count().has_value());
  CHECK_FALSE(td.contains("label"));
  CHECK(q.obs().is_same(td.get("obs")));
  // a key in both: KeyError, unless the non-tensor value is None (the tensordict's wins)
  TensorDict both({{"obs", at::zeros({2, 3})}, {"label", "a"}}, {2});
  CHECK_THROWS_WITH(Plain::from_tensordict(both, {{"label", "z"}}),
                    "Plain.from_tensordict: field 'label' is both in the tensordict and in "
                    "non_tensordict");
  CHECK(Plain::from_tensordict(both, {{"label", std::nullopt}}).label() == "a");
  CHECK_THROWS_AS(Plain::from_tensordict(td, {{"nope", 1}}), tensordict::KeyError);
  // safe = false skips the field checks (Python's fast path for trusted TensorDicts)
  TensorDict stray({{"obs", at::zeros({2, 3})}, {"stray", at::ones({2})}}, {2});
  CHECK_THROWS_AS(Plain::from_tensordict(stray), tensordict::KeyError);
  CHECK_NOTHROW(Plain::from_tensordict(stray, {}, false));
  // safe checks the schema's dtype and shape of each tensor field, naming the field
  TensorDict wrong_dtype({{"obs", at::zeros({2, 3}, at::kDouble)}}, {2});
  CHECK_THROWS_WITH(Plain::from_tensordict(wrong_dtype),
                    "field Plain.obs expects dtype float32, got float64");
  TensorDict wrong_shape({{"obs", at::zeros({2, 4})}}, {2});
  CHECK_THROWS_WITH(Plain::from_tensordict(wrong_shape),
                    "field Plain.obs expects shape [*, 3], got [2, 4]");
  // a stacked one holds its fields with more batch dims
  TensorDict stacked({{"obs", at::zeros({5, 2, 3})}}, {5, 2});
  CHECK(Plain::from_tensordict(stacked).obs().sizes() == at::IntArrayRef({5, 2, 3}));
  CHECK_NOTHROW(Plain::from_tensordict(wrong_shape, {}, false));
  // a lazy stack's elements are checked for dtypes (their shapes lack the stacked dim)
  TensorDict row({{"obs", at::zeros({3}, at::kDouble)}}, {});
  CHECK_THROWS_AS(Plain::from_tensordict(tensordict::lazy_stack({row, row})),
                  tensordict::TypeError);
}

TEST_CASE("state_dict: prefix, keep_vars, flatten", "[tensorclass][api]") {
  const Outer o = make_outer();
  // o.state_dict(prefix="m."): keys ['m.inner.x', 'm.y'], _metadata keys ['m.inner', 'm']
  auto sd = o.state_dict({"m."});
  REQUIRE(sd.tensors.size() == 2);
  CHECK(sd.tensors[0].first == "m.inner.x");
  CHECK(sd.tensors[1].first == "m.y");
  CHECK(sd.metadata["m.inner"]["_type"] == "Inner");
  CHECK(sd.metadata["m"]["_type"] == "Outer");
  CHECK(sd.metadata["m"]["_non_tensor"] == tensordict::Json{{"maybe", nullptr}});
  // o.state_dict(prefix="m"): keys ['minner.x', 'my'], _metadata keys ['minner', 'm']
  sd = o.state_dict({"m"});
  CHECK(sd.tensors[0].first == "minner.x");
  CHECK(sd.tensors[1].first == "my");
  CHECK(sd.metadata.contains("minner"));
  CHECK(sd.metadata.contains("m"));
  // o.state_dict(flatten=False): {'inner': {'x': ...}, 'y': ...}, each level with its metadata
  StateDictOptions nested;
  nested.flatten = false;
  sd = o.state_dict(nested);
  REQUIRE(sd.tensors.size() == 1);
  CHECK(sd.tensors[0].first == "y");
  REQUIRE(sd.nested.size() == 1);
  CHECK(sd.nested[0].first == "inner");
  CHECK(sd.nested[0].second.tensors[0].first == "x");
  CHECK(sd.nested[0].second.metadata[""]["_type"] == "Inner");
  CHECK(sd.metadata[""]["_type"] == "Outer");
  // load_state_dict takes the nested form back
  sd.nested[0].second.tensors[0].second = at::full({2}, 3.0);
  Outer loaded = make_outer();
  loaded.load_state_dict(sd);
  CHECK(all_equal(loaded.inner().x(), 3));
  // keep_vars=True keeps the autograd graph; the default detaches
  const at::Tensor w = at::zeros({2}).set_requires_grad(true);
  const Outer g({Inner({w * 1}, {2}), std::nullopt, at::zeros({2})}, {2});
  StateDictOptions keep;
  keep.keep_vars = true;
  CHECK(g.state_dict(keep).at("inner.x").requires_grad());
  CHECK_FALSE(g.state_dict().at("inner.x").requires_grad());
}

TEST_CASE("to_tensordict drops None fields by default, as Python 0.14's code",
          "[tensorclass][api]") {
  // o.to_tensordict().keys() -> ['inner', 'y']; retain_none=True -> ['inner', 'y', 'maybe']
  const Outer o = make_outer();
  const auto keys = o.to_tensordict().keys();
  REQUIRE(keys.size() == 2);
  CHECK(keys[0] == "inner");
  CHECK(keys[1] == "y");
  const auto all = o.to_tensordict(true).keys();
  REQUIRE(all.size() == 3);
  CHECK(all[1] == "y");
  CHECK(all[2] == "maybe");
  CHECK(o.to_tensordict(true).get_non_tensor("maybe").is_null());
}

TEST_CASE("names of a tensorclass follow its ops", "[tensorclass][api]") {
  // o.names -> [None]; o.names = ["b"]: o.inner.names == ['b'], o.unsqueeze(0).names ==
  // [None, 'b'], o[None].names == [None, 'b']
  Outer o = make_outer();
  REQUIRE(o.names().size() == 1);
  CHECK_FALSE(o.names()[0].has_value());
  o.set_names(DimNames{"b"});
  CHECK(o.names()[0] == "b");
  CHECK(o.inner().names()[0] == "b");
  const DimNames unsqueezed = o.unsqueeze(0).names();
  CHECK_FALSE(unsqueezed[0].has_value());
  CHECK(unsqueezed[1] == "b");
  CHECK(o.index({tensordict::None}).names()[1] == "b");
  CHECK(o.refine_names(DimNames{"b"}).names()[0] == "b");
  // o.rename(b="t"): a renamed copy of the same class; o.rename_("u") renames o itself
  const Outer renamed = o.rename(tensordict::DimRenames{{"b", "t"}});
  CHECK(renamed.names()[0] == "t");
  CHECK(renamed.inner().names()[0] == "t");
  CHECK(o.names()[0] == "b");
  CHECK(o.rename_(DimNames{"u"}).names()[0] == "u");
  CHECK(o.rename(std::nullopt).names()[0] == std::nullopt);
  CHECK(o.rename_(tensordict::DimRenames{{"u", "v"}}).names()[0] == "v");
  // Outer(..., batch_size=[2], names=["t"]): the constructor names the dims, nested fields too
  const Outer named({Inner({at::ones({2})}, {2}), std::nullopt, at::zeros({2})}, {2}, std::nullopt,
                    DimNames{"t"});
  CHECK(named.names()[0] == "t");
  CHECK(named.inner().names()[0] == "t");
  CHECK_THROWS_AS(
      Outer({std::nullopt, std::nullopt, at::zeros({2})}, {2}, std::nullopt, DimNames{"t", "u"}),
      tensordict::ShapeError);
}

TEST_CASE("memmap_async gives the typed instance, memmap_refresh_ and load_ reread",
          "[tensorclass][api]") {
  const fs::path dir = scratch("async");
  tensordict::TensorClassFuture<Outer> future = make_outer().memmap_async(dir.string());
  const Outer mapped = future.get();
  CHECK_FALSE(future.valid());
  CHECK(mapped.is_memmap());
  CHECK(mapped == make_outer());
  CHECK(Outer::load_memmap(dir.string()) == make_outer());

  // m.memmap_(d); another writer saves y + 4 there; m.memmap_refresh_(): m.y == [4., 4.]
  const fs::path shared = scratch("refresh");
  Outer m = make_outer();
  m.memmap_(shared.string());
  Outer other = make_outer();
  other.set("y", at::full({2}, 4.0));
  other.memmap(shared.string());
  m.memmap_refresh_();
  CHECK(all_equal(m.y(), 4));
  CHECK(m.is_memmap());  // Python: is_memmap() and is_locked stay True
  CHECK(m.is_locked());
  CHECK(Outer::load_memmap(shared.string()) == m);
  // m3.load_(d): m3.y == [4., 4.]
  Outer m3 = make_outer();
  m3.load_(shared.string());
  CHECK(all_equal(m3.y(), 4));
  CHECK_THROWS_WITH(make_outer().memmap_refresh_(),
                    "Outer.memmap_refresh_: the instance is not memory-mapped (call memmap_ "
                    "first)");
  fs::remove_all(dir);
  fs::remove_all(shared);
}

TEST_CASE(
    "load_state_dict checks a field as its setter does, assign or not, and changes nothing "
    "when it refuses",
    "[tensorclass][api][state]") {
  Plain p({at::zeros({2, 3})}, {2});
  tensordict::StateDict wrong;
  wrong.tensors = {{"obs", at::ones({2, 9}, at::kLong)}};
  // Plain.obs is tensor[float32, (B, 3)]: p.set("obs", <long [2, 9]>) is refused, so is the load.
  for (const bool assign : {true, false}) {
    INFO("assign " << assign);
    CHECK_THROWS_WITH(p.load_state_dict(wrong, false, assign),
                      Catch::Matchers::ContainsSubstring("field Plain.obs expects dtype float32"));
    CHECK(p.obs().scalar_type() == at::kFloat);
    CHECK(p.obs().sizes() == at::IntArrayRef{2, 3});
  }
  tensordict::StateDict right;
  right.tensors = {{"obs", at::ones({2, 3})}};
  p.load_state_dict(right, false, true);
  CHECK(all_equal(p.obs(), 1));
}

TEST_CASE("to_dict lists None fields last and from_dict builds the class back",
          "[tensorclass][api]") {
  // As Python 0.14: C(x=..., s="a").to_dict(convert_tensors=True) -> {'x': [...], 's': 'a',
  // 'o': None}; retain_none=False leaves 'o' out; C.from_dict(d, auto_batch_size=True).
  const Outer outer({Inner({at::arange(2, at::kFloat)}, {2}), std::nullopt, at::ones({2})}, {2});
  const auto dict = outer.to_dict();
  CHECK(dict.dump() == R"({"inner":{"x":[0.0,1.0]},"y":[1.0,1.0],"maybe":null})");
  CHECK_FALSE(outer.to_dict(/*retain_none=*/false).contains("maybe"));

  const Outer back = Outer::from_dict(dict, std::nullopt, std::nullopt, std::nullopt, true);
  CHECK(back.batch_size() == tensordict::BatchSize{2});
  CHECK(back.inner().x().equal(at::arange(2, at::kFloat)));
  CHECK_FALSE(back.maybe().has_value());
  CHECK(tensordict::class_of(back) == &Outer::class_spec());
  CHECK(Outer::from_dict(dict).batch_size().empty());  // no automatic batch size unless asked
  CHECK_THROWS_AS(Outer::from_dict(tensordict::Json::parse(R"({"inner": {"x": [1]}, "z": 1})")),
                  tensordict::KeyError);
}

TEST_CASE("from_list builds the class from rows of dicts", "[tensorclass][api]") {
  // Python's C.from_list: C.from_dict of each row (None fields left out), stacked.
  const auto rows = tensordict::Json::parse(
      R"([{"inner": {"x": [0.0, 1.0]}, "y": [1.0, 1.0], "maybe": null},
          {"inner": {"x": [2.0, 3.0]}, "y": [0.0, 0.0], "maybe": null}])");
  const Outer both = Outer::from_list(rows, tensordict::BatchSize{2, 2});
  CHECK(both.batch_size() == tensordict::BatchSize{2, 2});
  CHECK(both.inner().x().equal(at::arange(4, at::kFloat).reshape({2, 2})));
  CHECK_FALSE(both.maybe().has_value());
  CHECK(tensordict::class_of(both) == &Outer::class_spec());
  CHECK_THROWS_AS(Outer::from_list(tensordict::Json::parse(R"([{"inner": {"x": [1.0]}, "z": 1}])")),
                  tensordict::KeyError);
}

TEST_CASE("a class over a lazy stack reads a ragged field as a list, nested or padded",
          "[tensorclass][api]") {
  // tensordict's test_get_lazystack: get(key, as_list / as_nested_tensor / as_padded_tensor).
  const Inner obj = Inner::from_tensordict(tensordict::lazy_stack(
      {TensorDict({{"x", at::ones({3})}}, {}), TensorDict({{"x", at::full({2}, 2.0)}}, {})}));
  const std::vector<at::Tensor> list = obj.get_list("x");
  REQUIRE(list.size() == 2);
  CHECK(list[1].equal(at::full({2}, 2.0)));
  CHECK(obj.get_nested_tensor("x").is_nested());
  const at::Tensor padded = obj.get_padded("x");
  CHECK(padded.sizes() == at::IntArrayRef{2, 3});
  CHECK(padded[1][2].item<float>() == 0);
}

TEST_CASE("obj[idx] = other takes the class, a class with the same fields, or values",
          "[tensorclass][api]") {
  Inner inner({at::zeros({3})}, {3});
  inner.index_put_({1}, Inner({at::full({1}, 4.0)}, {1})[0]);
  inner.index_put_({2}, 7);
  inner.index_put_({0}, at::scalar_tensor(-1.0));
  CHECK(inner.x().equal(at::tensor({-1.0f, 4.0f, 7.0f})));
  // A TensorDict, or an instance of a class whose fields are Inner's, is written too.
  inner.index_put_({0}, TensorDict({{"x", at::scalar_tensor(2.0)}}, {}));
  TensorDict same_fields({{"x", at::scalar_tensor(3.0)}}, {});
  tensordict::memmap::set_class_info(same_fields, {"<class 'elsewhere.Twin'>", {{"x", nullptr}}});
  inner.index_put_({1}, same_fields);
  CHECK(inner.x().equal(at::tensor({2.0f, 3.0f, 7.0f})));
  // An instance of a class with other fields is refused, as Python's __setitem__ refuses it.
  const Outer outer({Inner({at::zeros({3})}, {3}), std::nullopt, at::ones({3})}, {3});
  CHECK_THROWS_AS(inner.index_put_({0}, outer[0]), tensordict::ValueError);
  CHECK(inner.x().equal(at::tensor({2.0f, 3.0f, 7.0f})));
}

TEST_CASE("maybe_dense_stack of instances gives the class, lazy when ragged",
          "[tensorclass][api]") {
  const Inner a({at::zeros({2})}, {2});
  const Inner b({at::ones({2})}, {2});
  const Inner dense = Inner::maybe_dense_stack({a, b});
  CHECK_FALSE(dense.is_lazy_stack());
  CHECK(dense.batch_size() == tensordict::BatchSize{2, 2});
  const Inner ragged = Inner::maybe_dense_stack({a, Inner({at::ones({3})}, {3})});
  CHECK(ragged.is_lazy_stack());
  CHECK(ragged[1].x().equal(at::ones({3})));
}
