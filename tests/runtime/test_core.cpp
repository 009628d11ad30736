// TensorDict core: construction, entries, nested keys, handles, device, lock, structure.
#include <ATen/ATen.h>

#include "catch2_compat.h"
#include "io_test_util.h"

#include "tensordict/tensordict.h"

using namespace tensordict;
using Catch::Matchers::Equals;

namespace {

at::Tensor arange(int64_t n) { return at::arange(n, at::kFloat); }

std::vector<std::string> key_strings(const std::vector<NestedKey>& keys) {
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(k.join("."));
  return out;
}

at::Tensor bools(std::vector<int64_t> v) { return at::tensor(v).to(at::kBool); }

}  // namespace

TEST_CASE("construction checks every entry's leading dims against batch_size", "[core]") {
  TensorDict td({{"obs", at::zeros({3, 4})}, {"reward", at::zeros({3})}}, {3});
  CHECK(td.batch_size() == BatchSize{3});
  CHECK(td.ndim() == 1);
  CHECK(td.numel() == 3);
  CHECK(td.size() == 2);
  CHECK_FALSE(td.is_empty());
  CHECK_FALSE(td.device().has_value());

  CHECK_THROWS_MATCHES(
      TensorDict({{"obs", at::zeros({4, 2})}}, {3}), ShapeError,
      Catch::Matchers::Message("batch dimension mismatch for key 'obs': expected leading dims [3] "
                               "(the batch_size), got shape [4, 2]"));
  CHECK_THROWS_AS(TensorDict({{"x", at::zeros({3})}}, {3, 1}), ShapeError);
  CHECK_THROWS_MATCHES(TensorDict({}, {-1}), ShapeError,
                       Catch::Matchers::Message("batch_size [-1] has a negative dim"));
}

TEST_CASE("dim names have one entry per batch dim", "[core]") {
  TensorDict td({{"x", at::zeros({2, 3})}}, {2, 3}, std::nullopt, DimNames{"time", std::nullopt});
  const DimNames names = td.names();
  REQUIRE(names.size() == 2);
  CHECK(names[0] == "time");
  CHECK_FALSE(names[1].has_value());
  CHECK_THROWS_MATCHES(
      td.set_names(DimNames{"a"}), ShapeError,
      Catch::Matchers::Message("names: expected 2 dim names for batch_size [2, 3], got 1"));
}

TEST_CASE("C++ scalars become 0-dim tensors with Python's dtypes", "[core]") {
  TensorDict td;
  td.set("i", 3).set("f", 2.5).set("b", true);
  CHECK(td.get("i").scalar_type() == at::kLong);
  CHECK(td.get("i").item<int64_t>() == 3);
  CHECK(td.get("f").scalar_type() == at::kFloat);
  CHECK(td.get("f").item<float>() == 2.5f);
  CHECK(td.get("b").scalar_type() == at::kBool);
  CHECK(td.get("b").dim() == 0);
}

TEST_CASE("strings and JSON values are stored as NonTensorData", "[core][non_tensor]") {
  TensorDict td({{"obs", at::zeros({2})}}, {2});
  td.set("note", "a string!");
  td.set_non_tensor("meta", Json{{"lr", 0.1}, {"tags", {"a", "b"}}});
  CHECK(td.get_value("note").is_non_tensor_data());
  CHECK(td.get_non_tensor("note") == "a string!");
  CHECK(td.get_non_tensor("meta")["tags"][1] == "b");
  CHECK_THROWS_MATCHES(td.get("note"), TypeError,
                       Catch::Matchers::Message("key 'note' holds a NonTensorData, not a Tensor"));
  CHECK_THROWS_MATCHES(td.get_non_tensor("obs"), TypeError,
                       Catch::Matchers::Message("key 'obs' holds a Tensor, not non-tensor data"));
  // Python's is_non_tensor: the stored kind, nested keys too; KeyError when missing.
  td.set({"sub", "tag"}, "t");
  CHECK(td.is_non_tensor("note"));
  CHECK(td.is_non_tensor({"sub", "tag"}));
  CHECK_FALSE(td.is_non_tensor("obs"));
  CHECK_FALSE(td.is_non_tensor("sub"));
  CHECK_THROWS_AS(td.is_non_tensor("missing"), KeyError);
}

TEST_CASE("NonTensorStack holds one value per batch element", "[core][non_tensor]") {
  const Json nested =
      Json::array({Json::array({"a", "b"}), Json::array({"c", "d"}), Json::array({"e", "f"})});
  auto stack = NonTensorStack::from_list(nested, 2);
  CHECK(stack.shape() == std::vector<int64_t>{3, 2});
  CHECK(stack.items()[3] == "d");
  CHECK(stack.tolist() == nested);
  CHECK_FALSE(stack.all_equal());
  CHECK(NonTensorStack::filled({2}, "x").all_equal());

  TensorDict td({{"names", stack}}, {3});
  CHECK(td.get_non_tensor("names")[2][0] == "e");
  CHECK(td.is_non_tensor("names"));
  CHECK_THROWS_AS(TensorDict({{"names", stack}}, {2}), ShapeError);
  CHECK_THROWS_MATCHES(
      NonTensorStack::from_list(Json::array({Json::array({"a"}), Json::array({"b", "c"})}), 2),
      ShapeError,
      Catch::Matchers::Message("NonTensorStack: ragged nested list, dim 1 has sizes 1 and 2"));
  CHECK_THROWS_AS(NonTensorStack({2}, {Json("a")}), ShapeError);
}

TEST_CASE("nested keys create intermediate TensorDicts that extend the batch", "[core][nested]") {
  TensorDict td({}, {2});
  td.set({"a", "b", "c"}, at::ones({2, 5}));
  REQUIRE(td.contains({"a", "b", "c"}));
  CHECK(td.contains("a"));
  CHECK_FALSE(td.contains({"a", "x"}));
  CHECK_FALSE(td.contains({"a", "b", "c", "d"}));
  CHECK(td.get_tensordict({"a", "b"}).batch_size() == BatchSize{2});
  CHECK(td.get({"a", "b", "c"}).sizes() == at::IntArrayRef({2, 5}));

  // A nested TensorDict may have more batch dims than its parent, never fewer or others.
  td.set("deep", TensorDict({{"x", at::zeros({2, 3})}}, {2, 3}));
  CHECK(td.get_tensordict("deep").batch_size() == BatchSize{2, 3});
  CHECK_THROWS_MATCHES(td.set("bad", TensorDict({}, {3})), ShapeError,
                       Catch::Matchers::Message("batch dimension mismatch for key 'bad': "
                                                "expected leading dims [2] (the batch_size), "
                                                "got shape [3]"));
  CHECK_THROWS_MATCHES(td.get({"a", "zz", "c"}), KeyError,
                       Catch::Matchers::Message("key ('a', 'zz', 'c') not found: no entry 'zz'"));
  CHECK_THROWS_MATCHES(td.set({"a", "b", "c", "d"}, at::ones({2})), TypeError,
                       Catch::Matchers::Message(
                           "key ('a', 'b', 'c', 'd'): entry 'c' is a Tensor, not a TensorDict"));
  CHECK_THROWS_MATCHES(
      td.get_tensordict({"a", "b", "c"}), TypeError,
      Catch::Matchers::Message("key ('a', 'b', 'c') holds a Tensor, not a TensorDict"));
}

TEST_CASE("a plain string key is never split", "[core][nested]") {
  TensorDict td;
  td.set("a.b", at::ones({1}));
  CHECK(td.contains("a.b"));
  CHECK_FALSE(td.contains({"a", "b"}));
  CHECK(td.keys().front().size() == 1);
}

TEST_CASE("get with a default, missing keys", "[core]") {
  TensorDict td({{"x", arange(3)}}, {3});
  CHECK(td.get("missing", at::full({1}, 7.0)).item<float>() == 7.0f);
  CHECK(td.get("x", at::zeros({1})).equal(arange(3)));
  CHECK_THROWS_MATCHES(td.get("missing"), KeyError,
                       Catch::Matchers::Message("key 'missing' not found in TensorDict"));
}

TEST_CASE("keys that differ in one byte are told apart, whatever their length", "[core][keys]") {
  // Lookups compare names word by word (overlapping loads); each length class and each byte
  // position must still count. Two keys take the scan, a hundred the hashed index.
  std::vector<std::string> names;
  for (size_t n = 0; n <= 24; ++n) {
    std::string base;
    for (size_t i = 0; i < n; ++i) base += static_cast<char>('a' + i % 26);
    names.push_back(base);
    for (size_t pos = 0; pos < n; ++pos) {
      std::string other = base;
      other[pos] = 'Z';
      TensorDict pair({{base, arange(1)}, {other, arange(2)}});
      CHECK(pair.get(base).numel() == 1);
      CHECK(pair.get(NestedKey{other}).numel() == 2);
      CHECK_FALSE(pair.contains(base + "a"));
      if (n >= 4) names.push_back(other);
    }
  }
  TensorDict many;
  for (size_t i = 0; i < names.size(); ++i) many.set(names[i], arange(static_cast<int64_t>(i)));
  REQUIRE(many.keys().size() == names.size());
  for (size_t i = 0; i < names.size(); ++i)
    CHECK(many.get(NestedKey{names[i]}).numel() == static_cast<int64_t>(i));
}

TEST_CASE("keys, values and items follow insertion order, children before their parent",
          "[core][keys]") {
  TensorDict td({}, {2});
  td.set("z", at::zeros({2}));
  td.set({"n", "y"}, at::zeros({2}));
  td.set({"n", "m", "x"}, at::zeros({2}));
  td.set("a", "text");

  CHECK_THAT(key_strings(td.keys()), Equals(std::vector<std::string>{"z", "n", "a"}));
  CHECK_THAT(key_strings(td.keys(true)),
             Equals(std::vector<std::string>{"z", "n.y", "n.m.x", "n.m", "n", "a"}));
  CHECK_THAT(key_strings(td.keys(true, true)),
             Equals(std::vector<std::string>{"z", "n.y", "n.m.x", "a"}));
  CHECK_THAT(key_strings(td.keys(false, true)), Equals(std::vector<std::string>{"z", "a"}));

  const auto values = td.values(true, true);
  REQUIRE(values.size() == 4);
  CHECK(values[3].is_non_tensor_data());
  const auto items = td.items(true);
  CHECK(items[4].second.is_tensordict());
  CHECK(items[2].first == NestedKey({"n", "m", "x"}));
}

TEST_CASE("del_, pop and rename_key_", "[core][keys]") {
  TensorDict td({{"a", arange(2)}, {"b", arange(2)}, {"c", arange(2)}}, {2});
  td.set({"n", "x"}, arange(2));

  td.rename_key_("b", "bb");
  CHECK_THAT(key_strings(td.keys()), Equals(std::vector<std::string>{"a", "bb", "c", "n"}));
  CHECK_THROWS_MATCHES(
      td.rename_key_("a", "c", true), KeyError,
      Catch::Matchers::Message("cannot rename 'a' to 'c': the new key already exists"));
  td.rename_key_("a", "c");  // not safe: overwrites, keeps a's position
  CHECK_THAT(key_strings(td.keys()), Equals(std::vector<std::string>{"c", "bb", "n"}));
  td.rename_key_({"n", "x"}, {"n", "y"});
  CHECK(td.contains({"n", "y"}));
  td.rename_key_({"n", "y"}, "top");  // across levels
  CHECK(td.contains("top"));
  CHECK_FALSE(td.contains({"n", "y"}));
  CHECK_THROWS_MATCHES(
      td.rename_key_("nope", "x"), KeyError,
      Catch::Matchers::Message("cannot rename key 'nope': not found in TensorDict"));

  Value popped = td.pop("bb");
  CHECK(popped.tensor().equal(arange(2)));
  td.del_("c");
  CHECK_THAT(key_strings(td.keys()), Equals(std::vector<std::string>{"n", "top"}));
  CHECK_THROWS_MATCHES(td.del_("c"), KeyError,
                       Catch::Matchers::Message("cannot delete key 'c': not found in TensorDict"));
}

TEST_CASE("select and exclude share tensors, strict and non-strict", "[core][keys]") {
  TensorDict td({{"a", arange(2)}, {"b", arange(2)}}, {2});
  td.set({"n", "x"}, arange(2));
  td.set({"n", "y"}, arange(2));

  TensorDict sel = td.select({"b", {"n", "y"}});
  CHECK_THAT(key_strings(sel.keys(true, true)), Equals(std::vector<std::string>{"b", "n.y"}));
  sel.get("b").fill_(5);
  CHECK(td.get("b").eq(5).all().item<bool>());  // same tensor

  CHECK_THROWS_MATCHES(td.select({"zz"}), KeyError,
                       Catch::Matchers::Message("select: key 'zz' not found in TensorDict"));
  CHECK(td.select({"zz", "a"}, false).keys().size() == 1);

  TensorDict ex = td.exclude({"a", {"n", "x"}});
  CHECK_THAT(key_strings(ex.keys(true, true)), Equals(std::vector<std::string>{"b", "n.y"}));
  CHECK(td.contains({"n", "x"}));  // the original keeps its keys
}

TEST_CASE("copying a handle aliases, nested TensorDicts write through", "[core][handle]") {
  TensorDict td({{"x", arange(3)}}, {3});
  TensorDict alias = td;
  alias.set("y", arange(3));
  CHECK(td.contains("y"));
  CHECK(alias.is_same(td));

  td.set({"sub", "a"}, arange(3));
  TensorDict sub = td.get_tensordict("sub");
  sub.set("b", arange(3) * 2);
  CHECK(td.get({"sub", "b"}).equal(arange(3) * 2));
  sub.get("a").add_(1);
  CHECK(td.get({"sub", "a"}).equal(arange(3) + 1));

  TensorDict copy = td.clone();
  copy.get("x").fill_(-1);
  copy.set("only_in_copy", arange(3));
  CHECK(td.get("x").equal(arange(3)));
  CHECK_FALSE(td.contains("only_in_copy"));
  CHECK(copy.get({"sub", "b"}).equal(arange(3) * 2));

  TensorDict shallow = td.clone(false);
  shallow.get("x").fill_(9);
  CHECK(td.get("x").eq(9).all().item<bool>());
  shallow.set("new", arange(3));
  CHECK_FALSE(td.contains("new"));
}

TEST_CASE("a TensorDict with a device moves tensors there", "[core][device]") {
  TensorDict td({{"x", arange(2)}}, {2}, at::Device("meta"));
  CHECK(td.device() == at::Device("meta"));
  CHECK(td.get("x").device().is_meta());
  td.set({"n", "y"}, at::zeros({2}));
  CHECK(td.get({"n", "y"}).device().is_meta());
  CHECK(td.get_tensordict("n").device() == at::Device("meta"));

  TensorDict nodev({{"x", arange(2)}}, {2});
  CHECK_FALSE(nodev.device().has_value());
  nodev.set_device(at::Device("meta"));
  CHECK(nodev.get("x").device().is_meta());
  nodev.set_device(std::nullopt);
  CHECK_FALSE(nodev.device().has_value());
}

TEST_CASE("a locked TensorDict refuses structural changes but allows in-place writes",
          "[core][lock]") {
  TensorDict td({{"x", arange(3)}}, {3});
  td.set({"n", "y"}, arange(3));
  td.lock_();
  CHECK(td.is_locked());
  CHECK(td.get_tensordict("n").is_locked());

  const std::string refusal =
      ": the TensorDict is locked (set_() writes into an existing tensor; unlock_() it to replace "
      "or add entries)";
  CHECK_THROWS_MATCHES(td.set("new", arange(3)), LockedError,
                       Catch::Matchers::Message("cannot set key 'new'" + refusal));
  CHECK_THROWS_MATCHES(td.set({"n", "z"}, arange(3)), LockedError,
                       Catch::Matchers::Message("cannot set key ('n', 'z')" + refusal));
  CHECK_THROWS_MATCHES(
      td.set({"m", "z"}, arange(3)), LockedError,
      Catch::Matchers::Message("cannot create 'm' for key ('m', 'z'): the TensorDict is locked"));
  CHECK_THROWS_MATCHES(td.del_("x"), LockedError,
                       Catch::Matchers::Message("cannot delete key 'x': the TensorDict is locked"));
  CHECK_THROWS_MATCHES(td.rename_key_("x", "w"), LockedError,
                       Catch::Matchers::Message("cannot rename key 'x': the TensorDict is locked"));

  // set refuses existing keys too, as Python's set(inplace=False), and changes nothing; set_
  // writes into the stored tensor, which other handles see.
  at::Tensor before = td.get("x");
  CHECK_THROWS_MATCHES(td.set("x", at::full({3}, 4.0)), LockedError,
                       Catch::Matchers::Message("cannot set key 'x'" + refusal));
  CHECK(td.get("x").is_same(before));
  CHECK_THROWS_AS(td.set({"n", "y"}, at::full({3}, 4.0)), LockedError);
  td.set_("x", at::full({3}, 4.0));
  CHECK(before.eq(4).all().item<bool>());
  td.set_({"n", "y"}, at::full({3}, 2.0));
  CHECK(td.get({"n", "y"}).eq(2).all().item<bool>());

  td.unlock_();
  CHECK_FALSE(td.get_tensordict("n").is_locked());
  td.set("new", arange(3));
  CHECK(td.contains("new"));
}

TEST_CASE("unlock_ of a TensorDict nested in a locked one is refused, as Python's",
          "[core][lock]") {
  TensorDict td({{"x", arange(3)}}, {3});
  td.set({"n", "m", "y"}, arange(3));
  td.lock_();
  TensorDict n = td.get_tensordict("n");
  TensorDict m = n.get_tensordict("m");
  CHECK_THROWS_MATCHES(n.unlock_(), LockedError,
                       Catch::Matchers::Message(
                           "unlock_: the TensorDict is nested in a locked TensorDict; unlock_() "
                           "the outermost locked one instead"));
  CHECK_THROWS_AS(m.unlock_(), LockedError);
  // The refused unlock_ leaves the whole tree locked.
  CHECK(n.is_locked());
  CHECK(m.is_locked());
  CHECK(td.is_locked());

  // Locking a part first, then the whole: the part still follows the whole.
  td.unlock_();
  CHECK_FALSE(m.is_locked());
  n.lock_();
  td.lock_();
  CHECK_THROWS_AS(n.unlock_(), LockedError);
  td.unlock_();
  CHECK_FALSE(n.is_locked());
  n.lock_();
  n.unlock_();  // its parent is unlocked now: allowed
  CHECK_FALSE(m.is_locked());

  // A parent that no longer exists does not hold its children.
  TensorDict orphan;
  {
    TensorDict parent({{"c", TensorDict({{"y", arange(2)}}, {2})}}, {2});
    parent.lock_();
    orphan = parent.get_tensordict("c");
  }
  CHECK(orphan.is_locked());
  orphan.unlock_();
  CHECK_FALSE(orphan.is_locked());
}

TEST_CASE("unlock_ of a part of a memory-mapped TensorDict is refused", "[core][lock]") {
  tc_test::TempDir dir;
  TensorDict td({{"x", arange(3)}}, {3});
  td.set({"n", "y"}, arange(3));
  TensorDict mapped = td.memmap(dir / "td");
  CHECK_THROWS_AS(mapped.get_tensordict("n").unlock_(), LockedError);
  mapped.unlock_();
  CHECK_FALSE(mapped.get_tensordict("n").is_locked());
}

TEST_CASE("fromkeys, empty and the batch_size setter", "[core]") {
  TensorDict fk = TensorDict::fromkeys({"a", {"b", "c"}}, at::zeros({4}), {4});
  CHECK(fk.get({"b", "c"}).sizes() == at::IntArrayRef({4}));
  fk.get("a").fill_(1);
  CHECK(fk.get({"b", "c"}).eq(0).all().item<bool>());  // each key its own copy

  TensorDict td({{"x", at::zeros({2, 3})}}, {2}, at::Device("cpu"));
  td.set({"n", "y"}, at::zeros({2, 3}));
  TensorDict e = td.empty();
  CHECK(e.is_empty());
  CHECK(e.batch_size() == BatchSize{2});
  CHECK(e.device() == at::Device("cpu"));
  TensorDict er = td.empty(true);
  CHECK(er.keys().size() == 1);
  CHECK(er.get_tensordict("n").is_empty());
  CHECK(er.is_empty());  // as Python's: only empty nested TensorDicts, no leaf
  er.set({"n", "z"}, at::zeros({2}));
  CHECK_FALSE(er.is_empty());

  td.set_batch_size({2, 3});
  CHECK(td.batch_size() == BatchSize{2, 3});
  CHECK(td.get_tensordict("n").batch_size() == BatchSize{2, 3});
  td.set_batch_size({});
  CHECK(td.ndim() == 0);
  CHECK(td.numel() == 1);
  CHECK_THROWS_MATCHES(td.set_batch_size({5}), ShapeError,
                       Catch::Matchers::Message("batch dimension mismatch for key 'x': expected "
                                                "leading dims [5] (the batch_size), got shape "
                                                "[2, 3]"));
  CHECK(td.batch_size().empty());  // a failed change leaves the batch size as it was
}

TEST_CASE("== gives a TensorDict of bools, all() and any() reduce it", "[core][compare]") {
  TensorDict a({{"x", arange(3)}, {"s", "text"}}, {3});
  a.set({"n", "y"}, at::ones({3, 2}));
  TensorDict b = a.clone();
  TensorDict eq = a == b;
  CHECK(eq.get("x").scalar_type() == at::kBool);
  CHECK(eq.get("s").equal(at::ones({3}, at::kBool)));
  CHECK(eq.all());
  CHECK(eq.any());

  b.get("x")[1] = 10;
  TensorDict eq2 = a == b;
  CHECK_FALSE(eq2.all());
  CHECK(eq2.any());
  CHECK(eq2.get("x").equal(bools({1, 0, 1})));
  CHECK((a != b).get("x").equal(bools({0, 1, 0})));

  b.set("s", "other");
  CHECK((a == b).get("s").equal(at::zeros({3}, at::kBool)));
  CHECK((a == 1).get({"n", "y"}).all().item<bool>());

  TensorDict c({{"x", arange(3)}}, {3});
  CHECK_THROWS_MATCHES(
      a == c, KeyError,
      Catch::Matchers::Message("cannot compare TensorDicts: key 's' missing on the right"));
}

TEST_CASE("NestedKey::split is the inverse of join", "[core][nested]") {
  CHECK(NestedKey::split("a.b.c") == NestedKey({"a", "b", "c"}));
  CHECK(NestedKey::split("obs") == NestedKey("obs"));
  CHECK_FALSE(NestedKey::split("obs").is_nested());
  CHECK(NestedKey::split("a..b") == NestedKey({"a", "", "b"}));  // empty parts kept
  CHECK(NestedKey::split(".a") == NestedKey({"", "a"}));
  CHECK(NestedKey::split("a::b", "::") == NestedKey({"a", "b"}));
  const NestedKey key{"next", "obs", "x"};
  CHECK(NestedKey::split(key.join("/"), "/") == key);
}
