// Dim names follow batch ops as in Python tensordict 0.14: every expected value below was printed
// by the real library (v0.14.0 through shared/python-peer/tdpy) for the same TensorDict; the
// comments spell the Python calls.
#include "catch2_compat.h"

#include "ops_test_util.h"

using namespace ops_test;
using Catch::Matchers::Message;

namespace {

const std::optional<std::string> none = std::nullopt;

// Python's spelling of a names list: "['a', None]".
std::string py(const DimNames& names) {
  std::string out = "[";
  for (const auto& name : names) {
    out += (out.size() > 1 ? ", " : "") + (name ? "'" + *name + "'" : std::string("None"));
  }
  return out + "]";
}

// batch [2, 1, 3] named a, b, c; a nested TensorDict of batch [2, 1, 3, 4] (its own dim unnamed).
TensorDict named() {
  TensorDict nested({{"y", at::zeros({2, 1, 3, 4})}}, {2, 1, 3, 4});
  return TensorDict({{"x", at::zeros({2, 1, 3, 5})}, {"n", nested}}, {2, 1, 3}, std::nullopt,
                    DimNames{"a", "b", "c"});
}

DimNames nested_names(const TensorDict& td) { return td.get_tensordict("n").names(); }

}  // namespace

TEST_CASE("names: unset dims read as None, all-None clears, duplicates are refused", "[names]") {
  TensorDict td({}, {2, 3});
  CHECK(py(td.names()) == "[None, None]");
  td.set_names(DimNames{none, "t"});
  CHECK(py(td.names()) == "[None, 't']");
  td.set_names(DimNames{none, none});
  CHECK(py(td.names()) == "[None, None]");
  CHECK_THROWS_MATCHES(td.set_names(DimNames{"t", "t"}), Error,
                       Message("names: dim name 't' is given to more than one dim"));
}

TEST_CASE("names: nested TensorDicts take the parent's names for their leading dims", "[names]") {
  TensorDict td = named();
  CHECK(py(nested_names(td)) == "['a', 'b', 'c', None]");
  td.set_names(DimNames{"p", none, "r"});
  CHECK(py(nested_names(td)) == "['p', None, 'r', None]");
  td.set_names(std::nullopt);
  CHECK(py(nested_names(td)) == "[None, None, None, None]");
}

TEST_CASE("names: a TensorDict set into a TensorDict exchanges names as Python", "[names]") {
  // p = TensorDict({}, [2, 3], names=["a", "b"]); p["c"] = TensorDict({}, [2, 3, 4]):
  // p["c"].names == ['a', 'b', None], the given child keeps [None, None, None]
  TensorDict p({}, {2, 3}, std::nullopt, DimNames{"a", "b"});
  const TensorDict c({}, {2, 3, 4});
  p.set("c", c);
  CHECK(py(p.get_tensordict("c").names()) == "['a', 'b', None]");
  CHECK(py(c.names()) == "[None, None, None]");
  // a child that already has the names is stored as is; a disagreeing name is an error
  const TensorDict same({}, {2, 3, 4}, std::nullopt, DimNames{"a", "b", "z"});
  p.set("same", same);
  CHECK(p.get_tensordict("same").is_same(same));
  CHECK_THROWS_AS(p.set("bad", TensorDict({}, {2, 3}, std::nullopt, DimNames{"x", none})), Error);
  // q = TensorDict({"n": TensorDict({}, [2, 3])}, [2]); q["m"] = TensorDict({}, [2, 5],
  // names=["t", "u"]): q.names == ['t'], q["n"].names == ['t', None]
  TensorDict q({{"n", TensorDict({}, {2, 3})}}, {2});
  q.set("m", TensorDict({}, {2, 5}, std::nullopt, DimNames{"t", "u"}));
  CHECK(py(q.names()) == "['t']");
  CHECK(py(q.get_tensordict("n").names()) == "['t', None]");
  CHECK(py(q.get_tensordict("m").names()) == "['t', 'u']");
}

TEST_CASE("names: refine_names names unnamed dims and keeps named ones", "[names]") {
  TensorDict td({}, {2, 3}, std::nullopt, DimNames{"a", none});
  td.refine_names(DimNames{"a", "b"});
  CHECK(py(td.names()) == "['a', 'b']");
  CHECK_THROWS_MATCHES(td.refine_names(DimNames{"z", "b"}), Error,
                       Message("refine_names: cannot refine dim 0 named 'a' to 'z'"));
}

TEST_CASE("names: refine_names with '...' keeps the names of the dims it covers", "[names]") {
  const std::optional<std::string> dots = "...";
  // TensorDict({}, [1, 2, 3, 4]).refine_names(..., "d").names == [None, None, None, 'd']
  TensorDict plain({}, {1, 2, 3, 4});
  CHECK(py(plain.refine_names(DimNames{dots, "d"}).names()) == "[None, None, None, 'd']");
  // With names [None, 'b', None, None]: refine_names("a", ..., "d") == ['a', 'b', None, 'd'];
  // ("a", ..., "x", "d") == ['a', 'b', 'x', 'd']; (...) == [None, 'b', None, None];
  // ("a", "b", ..., "c", "d") == ['a', 'b', 'c', 'd'].
  auto b_named = [] {
    return TensorDict({}, {1, 2, 3, 4}, std::nullopt, DimNames{none, "b", none, none});
  };
  CHECK(py(b_named().refine_names(DimNames{"a", dots, "d"}).names()) == "['a', 'b', None, 'd']");
  CHECK(py(b_named().refine_names(DimNames{"a", dots, "x", "d"}).names()) ==
        "['a', 'b', 'x', 'd']");
  CHECK(py(b_named().refine_names(DimNames{dots}).names()) == "[None, 'b', None, None]");
  CHECK(py(b_named().refine_names(DimNames{"a", "b", dots, "c", "d"}).names()) ==
        "['a', 'b', 'c', 'd']");
  CHECK_THROWS_MATCHES(b_named().refine_names(DimNames{"a", dots, dots}), Error,
                       Message("refine_names: '...' may stand in ['a', '...', '...'] once"));
  CHECK_THROWS_AS(b_named().refine_names(DimNames{"a", dots, "x", "y", "z", "d"}), ShapeError);
  // ['a', 'b', None, None].refine_names(None, ..., "d"): Python raises (a named dim to None).
  TensorDict ab({}, {1, 2, 3, 4}, std::nullopt, DimNames{"a", "b", none, none});
  CHECK_THROWS_MATCHES(ab.refine_names(DimNames{none, dots, "d"}), Error,
                       Message("refine_names: cannot refine dim 0 named 'a' to None"));
}

TEST_CASE("names: rename returns a renamed copy, rename_ renames in place", "[names]") {
  TensorDict td({{"n", TensorDict({}, {1, 2, 3, 4, 5})}}, {1, 2, 3, 4}, std::nullopt,
                DimNames{"a", "b", "c", "d"});
  // td.rename(c="g").names == ['a', 'b', 'g', 'd'], its "n": ['a', 'b', 'g', 'd', None]
  const TensorDict g = td.rename(DimRenames{{"c", "g"}});
  CHECK(py(g.names()) == "['a', 'b', 'g', 'd']");
  CHECK(py(nested_names(g)) == "['a', 'b', 'g', 'd', None]");
  CHECK(py(td.names()) == "['a', 'b', 'c', 'd']");  // a copy: td keeps its names
  CHECK(g.get_tensordict("n").is_same(td.get_tensordict("n")) == false);
  // td.rename("w", "x", "y", "z").names == ['w', 'x', 'y', 'z']; td.rename(c=None): c unnamed
  CHECK(py(td.rename(DimNames{"w", "x", "y", "z"}).names()) == "['w', 'x', 'y', 'z']");
  CHECK(py(td.rename(DimRenames{{"c", none}}).names()) == "['a', 'b', None, 'd']");
  CHECK(py(td.rename(std::nullopt).names()) == "[None, None, None, None]");
  // td.rename(q="g"): ValueError (no dim q); td.rename(c="a"): ValueError (a twice)
  CHECK_THROWS_MATCHES(td.rename(DimRenames{{"q", "g"}}), Error,
                       Message("rename: no dim is named 'q' (names: ['a', 'b', 'c', 'd'])"));
  CHECK_THROWS_MATCHES(td.rename(DimRenames{{"c", "a"}}), Error,
                       Message("names: dim name 'a' is given to more than one dim"));
  // r = td.clone(False); r.rename_(a="x"): r.names == ['x', 'b', 'c', 'd'], td unchanged
  TensorDict r = td.clone(false);
  r.rename_(DimRenames{{"a", "x"}});
  CHECK(py(r.names()) == "['x', 'b', 'c', 'd']");
  CHECK(py(td.names()) == "['a', 'b', 'c', 'd']");
  r.rename_(std::nullopt);
  CHECK(py(r.names()) == "[None, None, None, None]");
}

TEST_CASE("names: unsqueeze, squeeze, permute, transpose", "[names]") {
  const TensorDict td = named();
  // td.unsqueeze(1).names == ['a', None, 'b', 'c']
  CHECK(py(td.unsqueeze(1).names()) == "['a', None, 'b', 'c']");
  CHECK(py(td.unsqueeze(-1).names()) == "['a', 'b', 'c', None]");
  CHECK(py(nested_names(td.unsqueeze(0))) == "[None, 'a', 'b', 'c', None]");
  // td.squeeze(1).names == ['a', 'c']; td.squeeze().names == ['a', 'c']; squeeze(0): no change
  // (Python's squeeze() leaves nested levels unnamed; here they keep the parent's names)
  CHECK(py(td.squeeze(1).names()) == "['a', 'c']");
  CHECK(py(td.squeeze().names()) == "['a', 'c']");
  CHECK(py(td.squeeze(0).names()) == "['a', 'b', 'c']");
  CHECK(py(nested_names(td.squeeze(1))) == "['a', 'c', None]");
  // td.permute(2, 0, 1).names == ['c', 'a', 'b']; td.transpose(0, 2).names == ['c', 'b', 'a']
  CHECK(py(td.permute({2, 0, 1}).names()) == "['c', 'a', 'b']");
  CHECK(py(nested_names(td.permute({2, 0, 1}))) == "['c', 'a', 'b', None]");
  CHECK(py(td.transpose(0, 2).names()) == "['c', 'b', 'a']");
}

TEST_CASE("names: view, reshape, flatten, unflatten, expand", "[names]") {
  const TensorDict td = named();
  // view / reshape to another shape drop the names; to the same shape keep them (Python: self)
  CHECK(py(td.view({6}).names()) == "[None]");
  CHECK(py(td.reshape({2, 3}).names()) == "[None, None]");
  CHECK(py(td.view({2, 1, 3}).names()) == "['a', 'b', 'c']");
  // td.flatten(0, 1).names == [None, 'c']; td.flatten(1, 2).names == ['a', None]
  CHECK(py(td.flatten(0, 1).names()) == "[None, 'c']");
  CHECK(py(td.flatten(1, 2).names()) == "['a', None]");
  CHECK(py(nested_names(td.flatten(1, 2))) == "['a', None, None]");
  // td.unflatten(2, (3, 1)).names == ['a', 'b', None, 'c'] (the name goes to the last new dim)
  CHECK(py(td.unflatten(2, {3, 1}).names()) == "['a', 'b', None, 'c']");
  CHECK(py(td.unflatten(0, {2, 1, 1}).names()) == "[None, None, 'a', 'b', 'c']");
  // td.expand(4, 2, 1, 3).names == [None, 'a', 'b', 'c']
  CHECK(py(td.expand({4, 2, 1, 3}).names()) == "[None, 'a', 'b', 'c']");
  CHECK(py(td.expand({2, 5, 3}).names()) == "['a', 'b', 'c']");
}

TEST_CASE("names: indexing drops, inserts and keeps names as Python does", "[names]") {
  const TensorDict td = named();
  // td[0].names == ['b', 'c']; td[:, 0].names == ['a', 'c']; td[..., 0].names == ['a', 'b']
  CHECK(py(td[0].names()) == "['b', 'c']");
  CHECK(py(td.index({0}).names()) == "['b', 'c']");
  CHECK(py(td.index({Slice(), 0}).names()) == "['a', 'c']");
  CHECK(py(td.index({Ellipsis, 0}).names()) == "['a', 'b']");
  CHECK(py(nested_names(td.index({Ellipsis, 0}))) == "['a', 'b', None]");
  // td[None].names == [None, 'a', 'b', 'c']; td[:, None].names == ['a', None, 'b', 'c']
  CHECK(py(td.index({None}).names()) == "[None, 'a', 'b', 'c']");
  CHECK(py(td.index({Slice(), None}).names()) == "['a', None, 'b', 'c']");
  // td[0, :, 1:].names == ['b', 'c']; td[1:].names == ['a', 'b', 'c']
  CHECK(py(td.index({0, Slice(), Slice(1)}).names()) == "['b', 'c']");
  CHECK(py(td.index({Slice(1)}).names()) == "['a', 'b', 'c']");
  // td[torch.tensor([0, 1, 1])].names == ['a', 'b', 'c'];
  // td[torch.tensor([[0], [1]])].names == ['a', 'a', 'b', 'c'] (Python repeats the name)
  CHECK(py(td.index({at::tensor({0, 1, 1}, at::kLong)}).names()) == "['a', 'b', 'c']");
  CHECK(py(td.index({at::tensor({0, 1}, at::kLong).view({2, 1})}).names()) ==
        "['a', 'a', 'b', 'c']");
  // td[:, :, torch.tensor([0, 2])].names == ['a', 'b', 'c']
  CHECK(py(td.index({Slice(), Slice(), at::tensor({0, 2}, at::kLong)}).names()) ==
        "['a', 'b', 'c']");
  // td[mask of the two leading dims].names == [None, 'c']
  CHECK(py(td.index({at::ones({2, 1}, at::kBool)}).names()) == "[None, 'c']");
  CHECK(py(td.index({at::ones({2}, at::kBool)}).names()) == "[None, 'b', 'c']");
}

TEST_CASE("names: unbind, split, chunk, gather, stack, cat", "[names]") {
  const TensorDict td = named();
  // td.unbind(2)[0].names == ['a', 'b']; td.split(1, 0)[0].names == ['a', 'b', 'c']
  CHECK(py(td.unbind(2)[0].names()) == "['a', 'b']");
  CHECK(py(nested_names(td.unbind(0)[1])) == "['b', 'c', None]");
  CHECK(py(td.split(1, 0)[1].names()) == "['a', 'b', 'c']");
  CHECK(py(td.chunk(3, 2)[0].names()) == "['a', 'b', 'c']");
  CHECK(py(td.gather(2, at::zeros({2, 1, 2}, at::kLong)).names()) == "['a', 'b', 'c']");
  // torch.stack([td, td], 1).names == ['a', None, 'b', 'c']; names differ: no names
  CHECK(py(stack({td, td}, 1).names()) == "['a', None, 'b', 'c']");
  CHECK(py(nested_names(stack({td, td}, 0))) == "[None, 'a', 'b', 'c', None]");
  TensorDict other = td.clone();
  other.set_names(DimNames{"a", "b", "z"});
  CHECK(py(stack({td, other}).names()) == "[None, None, None, None]");
  // torch.cat([td, other], 0).names == ['a', 'b', 'c'] (the first's)
  CHECK(py(cat({td, other}, 0).names()) == "['a', 'b', 'c']");
}

TEST_CASE("names: per-leaf ops keep them", "[names]") {
  const TensorDict td = named();
  CHECK(py(td.clone().names()) == "['a', 'b', 'c']");
  CHECK(py(td.apply([](const at::Tensor& t) { return t + 1; }).names()) == "['a', 'b', 'c']");
  CHECK(py(nested_names(td.to(at::kDouble))) == "['a', 'b', 'c', None]");
}

TEST_CASE("names: reductions keep the names of the dims they leave", "[names]") {
  // Python 0.14: td.sum(dim=1) on names [a, b, c] gives [a, c]; over every element, none.
  const TensorDict td = named();
  CHECK(py(td.sum(1).names()) == "['a', 'c']");
  CHECK(py(td.mean(1).names()) == "['a', 'c']");
  CHECK(py(td.quantile(0.5, 1).names()) == "['a', 'c']");
  CHECK(py(td.sum({0, 2}).names()) == "['b']");
  CHECK(py(nested_names(td.sum(1))) == "['a', 'c', None]");
  CHECK(py(td.sum(1, /*keepdim=*/true).names()) == "['a', 'b', 'c']");
  CHECK(py(td.sum(ReduceDims::feature()).names()) == "['a', 'b', 'c']");
  CHECK(py(td.sum().names()) == "[]");
}
