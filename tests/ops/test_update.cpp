// update / update_ / set_ and key flattening.
#include "catch2_compat.h"

#include "ops_test_util.h"

using namespace ops_test;
using Catch::Matchers::Message;

TEST_CASE("update sets entries and merges nested keys", "[update]") {
  TensorDict td = sample();
  TensorDict nested({{"d", at::ones({4, 3, 5, 1})}}, {4, 3});
  TensorDict other({{"a", at::zeros({4, 3, 7})}, {"n", nested}, {"new", "text"}}, {4, 3});
  td.update(other);
  CHECK(td.get("a").sizes() == at::IntArrayRef({4, 3, 7}));
  CHECK(td.contains({"n", "c"}));  // merged, not replaced
  CHECK(td.contains({"n", "d"}));
  CHECK(td.get_non_tensor("new") == "text");
  TensorDict bad({{"a", at::zeros({2})}}, {2});
  CHECK_THROWS_AS(td.update(bad), ShapeError);
}

TEST_CASE("update_ and set_ copy in place", "[update]") {
  TensorDict td = sample();
  const at::Tensor a = td.get("a");
  TensorDict src = sample().apply([](const at::Tensor& t) { return t + 10; });
  src.set("txt", "changed");
  td.update_(src);
  CHECK(td.get("a").is_same(a));
  CHECK(same(td.get("a"), src.get("a")));
  CHECK(same(td.get({"n", "c"}), src.get({"n", "c"})));
  CHECK(td.get_non_tensor("txt") == "changed");
  TensorDict extra({{"zzz", at::zeros({4, 3})}}, {4, 3});
  CHECK_THROWS_MATCHES(td.update_(extra), KeyError,
                       Message("update_: key 'zzz' is not in the destination TensorDict (update_ "
                               "writes in place; use update to add keys)"));
  TensorDict wrong({{"b", at::zeros({4, 3, 1}, at::kLong)}}, {4, 3});
  CHECK_THROWS_MATCHES(td.update_(wrong), ShapeError,
                       Message("update_: key 'b' has shape [4, 3] but the source has [4, 3, 1]"));
  td.set_("b", at::full({4, 3}, 5, at::kLong));
  CHECK(td.get("b").eq(5).all().item<bool>());
}

TEST_CASE("flatten_keys and unflatten_keys round-trip nested entries", "[update]") {
  TensorDict td = sample();
  TensorDict flat = td.flatten_keys(".");
  CHECK(flat.contains("n.c"));
  CHECK_FALSE(flat.contains("n"));
  CHECK(flat.get("n.c").is_same(td.get({"n", "c"})));
  CHECK(flat.get_non_tensor("txt") == "hello");
  TensorDict back = flat.unflatten_keys(".");
  CHECK(back.get({"n", "c"}).is_same(td.get({"n", "c"})));
  CHECK(back.get_tensordict("n").batch_size() == BatchSize{4, 3});
  TensorDict deep({{"x", at::zeros({2})}}, {2});
  deep.set({"p", "q", "r"}, at::ones({2}));
  CHECK(deep.flatten_keys("/").keys().back() == NestedKey("p/q/r"));
  TensorDict clash({{"p.q", at::zeros({2})}}, {2});
  clash.set({"p", "q"}, at::zeros({2}));
  CHECK_THROWS_MATCHES(clash.flatten_keys("."), KeyError,
                       Message("flatten_keys: flattened key 'p.q' collides with an existing key"));
}

TEST_CASE("unflatten_keys orders as Python: plain names in place, unflattened ones after",
          "[update]") {
  TensorDict td({}, {2});
  td.set("a.x", at::zeros({2}));
  td.set("b", at::ones({2}));
  td.set({"n", "k.j"}, at::ones({2}));  // a nested TensorDict's names are left alone
  td.set("n.y", at::full({2}, 3.0));    // fills the existing "n", on a copy
  td.set("a.z", at::ones({2}));
  TensorDict out = td.unflatten_keys(".");
  CHECK(out.keys() == std::vector<NestedKey>{NestedKey("b"), NestedKey("n"), NestedKey("a")});
  CHECK(out.get_tensordict("a").keys() == std::vector<NestedKey>{NestedKey("x"), NestedKey("z")});
  CHECK(out.get_tensordict("n").keys() == std::vector<NestedKey>{NestedKey("k.j"), NestedKey("y")});
  CHECK(out.get({"n", "y"}).is_same(td.get("n.y")));
  CHECK_FALSE(td.get_tensordict("n").contains("y"));  // the source is untouched
  TensorDict twice({{"a.x", at::zeros({2})}}, {2});
  twice.set({"a", "x"}, at::ones({2}));
  CHECK_THROWS_MATCHES(
      twice.unflatten_keys("."), KeyError,
      Message("unflatten_keys: 'a.x' would overwrite the existing key ('a', 'x')"));
}

TEST_CASE("update_ and unflatten_keys refuse mismatched kinds, naming the key",
          "[update][errors]") {
  TensorDict td = sample();
  TensorDict wrong({{"txt", at::zeros({4, 3})}}, {4, 3});
  CHECK_THROWS_MATCHES(td.update_(wrong), TypeError,
                       Message("update_: key 'txt' holds a NonTensorData, cannot copy a Tensor "
                               "into it"));
  TensorDict nested_wrong({}, {4, 3});
  nested_wrong.set({"n", "zzz"}, at::zeros({4, 3, 5}));
  CHECK_THROWS_WITH(td.update_(nested_wrong), Catch::Matchers::ContainsSubstring("key 'n.zzz'"));
  TensorDict clash({{"p", at::zeros({2})}, {"p.q", at::zeros({2})}}, {2});
  CHECK_THROWS_AS(clash.unflatten_keys("."), KeyError);  // Python: a collision
}
