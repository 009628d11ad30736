// LazyStackedTensorDict: construction, entries, indexing, repr.
#include <ATen/ATen.h>

#include <sstream>
#include "catch2_compat.h"

#include "lazy_test_util.h"
#include "tensordict/lazy_stack.h"

using namespace tensordict;
using tensordict::Slice;

using lazy_test::conv;

TEST_CASE("lazy_stack: batch size with -1 for ragged dims, elements aliased", "[lazy]") {
  TensorDict a = conv(3, 0), b = conv(5, 10);
  TensorDict ls = lazy_stack({a, b});
  CHECK(ls.is_lazy_stack());
  CHECK_FALSE(a.is_lazy_stack());
  CHECK(ls.batch_size() == BatchSize{2, -1});
  CHECK(ls.stack_dim() == 0);
  REQUIRE(ls.tensordicts().size() == 2);
  CHECK(ls.tensordicts()[1].is_same(b));

  TensorDict even = lazy_stack({conv(3, 0), conv(3, 1)}, 1);
  CHECK(even.batch_size() == BatchSize{3, 2});
  CHECK(even.stack_dim() == 1);
  CHECK(lazy_stack({conv(3, 0), conv(3, 1)}, -1).stack_dim() == 1);

  CHECK_THROWS_AS(lazy_stack({}), ShapeError);
  TensorDict flat({{"y", at::zeros({2, 2})}}, {2, 2});
  CHECK_THROWS_WITH(lazy_stack({a, flat}),
                    Catch::Matchers::ContainsSubstring("batch_size [2, 2]") &&
                        Catch::Matchers::ContainsSubstring("TensorDict 1"));
  CHECK_THROWS_AS(a.tensordicts(), TypeError);
  CHECK_THROWS_AS(a.stack_dim(), TypeError);
}

TEST_CASE("lazy get: equal shapes stack, ragged ones throw naming key and shapes", "[lazy]") {
  TensorDict even = lazy_stack({conv(3, 0), conv(3, 1)});
  at::Tensor x = even.get("x");
  CHECK(at::equal(x, at::stack({at::arange(3, at::kFloat), at::arange(3, at::kFloat) + 1})));
  // Equal data stacks too, one value per element of the batch (tensordict 0.14).
  CHECK(even.get_value("s").is_non_tensor_stack());
  CHECK(even.get_non_tensor("s") == Json::array({Json::array({"text", "text", "text"}),
                                                 Json::array({"text", "text", "text"})}));

  TensorDict ragged = lazy_stack({conv(3, 0), conv(5, 10)});
  CHECK(ragged.contains("x"));
  CHECK_FALSE(ragged.contains("nope"));
  CHECK_THROWS_AS(ragged.get("x"), ShapeError);
  CHECK_THROWS_WITH(ragged.get("x"), Catch::Matchers::ContainsSubstring("'x'") &&
                                         Catch::Matchers::ContainsSubstring("[3]") &&
                                         Catch::Matchers::ContainsSubstring("[5]") &&
                                         Catch::Matchers::ContainsSubstring("element 1"));
  at::Tensor padded = ragged.get_padded("x", -1);
  CHECK(padded.sizes().vec() == std::vector<int64_t>{2, 5});
  CHECK(at::equal(padded[0], at::tensor({0.f, 1.f, 2.f, -1.f, -1.f})));
  CHECK(at::equal(padded[1], at::arange(5, at::kFloat) + 10));
  CHECK_THROWS_AS(ragged.get("nope"), KeyError);
}

TEST_CASE("lazy keys are the keys every element has", "[lazy]") {
  TensorDict a({{"x", at::zeros({2})}, {"only_a", at::ones({2})}}, {2});
  TensorDict b({{"x", at::ones({2})}, {"only_b", at::ones({2})}}, {2});
  TensorDict ls = lazy_stack({a, b});
  CHECK(ls.keys() == std::vector<NestedKey>{"x"});
  CHECK(ls.size() == 1);
  CHECK_FALSE(ls.contains("only_a"));
  CHECK(ls.items().size() == 1);
  CHECK(at::equal(ls.values()[0].tensor(), at::stack({at::zeros({2}), at::ones({2})})));
}

TEST_CASE("lazy indexing: a row along the stack dim is the element itself", "[lazy]") {
  TensorDict a = conv(3, 0), b = conv(5, 10), c = conv(2, 20);
  TensorDict ls = lazy_stack({a, b, c});
  CHECK(ls[1].is_same(b));
  CHECK(ls[-1].is_same(c));
  CHECK(ls.index({1}).is_same(b));
  // Writes through the row reach the element.
  ls[0].set("x", at::full({3}, 7.f));
  CHECK(at::equal(a.get("x"), at::full({3}, 7.f)));

  TensorDict sub = ls.index({Slice(1, 3)});
  REQUIRE(sub.is_lazy_stack());
  CHECK(sub.batch_size() == BatchSize{2, -1});
  CHECK(sub.tensordicts()[0].is_same(b));
  TensorDict picked = ls.index({at::tensor({2, 0}, at::kLong)});
  REQUIRE(picked.is_lazy_stack());
  CHECK(picked.tensordicts()[0].is_same(c));
  CHECK(picked.tensordicts()[1].is_same(a));

  // Both dims: the element, then its own index.
  TensorDict cell = ls.index({1, 4});
  CHECK(cell.get("x").item<float>() == 14.f);
  CHECK_THROWS_AS(ls[3], ShapeError);

  // Stack dim 1: an int on dim 0 indexes every element.
  TensorDict t = lazy_stack({conv(3, 0), conv(3, 1)}, 1);
  TensorDict row = t[2];
  REQUIRE(row.is_lazy_stack());
  CHECK(row.batch_size() == BatchSize{2});
  CHECK(at::equal(row.get("x"), at::tensor({2.f, 3.f})));
  CHECK(t.index({Slice(), 1}).get("x").equal(at::arange(3, at::kFloat) + 1));
}

TEST_CASE("lazy set, set_ and del_ write into the elements", "[lazy]") {
  TensorDict a = conv(3, 0), b = conv(3, 1);
  TensorDict ls = lazy_stack({a, b});
  ls.set("y", at::stack({at::zeros({3}), at::ones({3})}));
  CHECK(at::equal(b.get("y"), at::ones({3})));
  ls.set("tag", "shared");
  CHECK(a.get_non_tensor("tag") == "shared");
  ls.set_("x", at::full({2, 3}, 5.f));
  CHECK(at::equal(a.get("x"), at::full({3}, 5.f)));
  ls.del_("y");
  CHECK_FALSE(b.contains("y"));
  TensorDict ragged = lazy_stack({conv(3, 0), conv(4, 0)});
  CHECK_THROWS_WITH(
      ragged.set("z", at::zeros({2, 3})),
      Catch::Matchers::ContainsSubstring("'z'") && Catch::Matchers::ContainsSubstring("[2, -1]"));
  // A nested key through a lazy child.
  TensorDict parent({{"inner", lazy_stack({conv(3, 0), conv(3, 1)})}}, {2});
  CHECK(at::equal(parent.get({"inner", "x"}),
                  at::stack({at::arange(3, at::kFloat), at::arange(3, at::kFloat) + 1})));
  CHECK(parent.get_tensordict("inner").is_lazy_stack());
  CHECK(parent.contains({"inner", "x"}));
}

TEST_CASE("lazy repr follows Python's LazyStackedTensorDict repr", "[lazy]") {
  TensorDict a({{"x", at::zeros({2, 3})}, {"a_only", at::zeros({2}, at::kLong)}}, {2});
  TensorDict b({{"x", at::zeros({2, 4})}}, {2});
  std::ostringstream os;
  os << lazy_stack({a, b});
  CHECK(os.str() ==
        "LazyStackedTensorDict(\n"
        "    fields={\n"
        "        x: Tensor(shape=torch.Size([2, 2, -1]), device=cpu, dtype=torch.float32, "
        "is_shared=False)},\n"
        "    exclusive_fields={\n"
        "        0 ->\n"
        "            a_only: Tensor(shape=torch.Size([2]), device=cpu, dtype=torch.int64, "
        "is_shared=False)},\n"
        "    batch_size=torch.Size([2, 2]),\n"
        "    device=None,\n"
        "    is_shared=False,\n"
        "    stack_dim=0)");
  std::ostringstream even;
  even << lazy_stack({TensorDict({{"x", at::zeros({1})}}, {1})});
  CHECK(even.str() ==
        "LazyStackedTensorDict(\n"
        "    fields={\n"
        "        x: Tensor(shape=torch.Size([1, 1]), device=cpu, dtype=torch.float32, "
        "is_shared=False)},\n"
        "    exclusive_fields={\n"
        "    },\n"
        "    batch_size=torch.Size([1, 1]),\n"
        "    device=None,\n"
        "    is_shared=False,\n"
        "    stack_dim=0)");
}

TEST_CASE("maybe_dense_stack of ragged leaves is lazy at the level that holds them",
          "[lazy][stack]") {
  // Python's LazyStackedTensorDict.maybe_dense_stack (checked with tensordict v0.14.0).
  const TensorDict a({{"x", at::zeros({3})}, {{"n", "y"}, at::zeros({2})}});
  const TensorDict b({{"x", at::zeros({4})}, {{"n", "y"}, at::zeros({2})}});
  const TensorDict top = tensordict::maybe_dense_stack({a, b});
  CHECK(top.is_lazy_stack());
  CHECK(top.batch_size() == BatchSize{2});
  const TensorDict c({{"x", at::zeros({3})}, {{"n", "y"}, at::zeros({5})}});
  const TensorDict nested = tensordict::maybe_dense_stack({a, c});
  CHECK_FALSE(nested.is_lazy_stack());
  CHECK(nested.get("x").sizes().vec() == std::vector<int64_t>{2, 3});
  CHECK(nested.get_tensordict("n").is_lazy_stack());
  CHECK_FALSE(tensordict::maybe_dense_stack({a, a}).is_lazy_stack());
}

TEST_CASE("from_list stacks from_dict's rows and get_list reads ragged leaves", "[lazy]") {
  // As tensordict v0.14.0: from_list(rows) is a dense stack of batch [2] when the rows agree, a
  // lazy stack when a leaf is ragged (get(key, as_list=True) gives its tensors), and batch_size /
  // batch_dims count the stacked dim.
  const Json rows = Json::parse(R"([{"a": [1.0, 2.0]}, {"a": [3.0, 4.0]}])");
  const TensorDict dense = TensorDict::from_list(rows);
  CHECK_FALSE(dense.is_lazy_stack());
  CHECK(dense.batch_size() == BatchSize{2});
  CHECK(dense.get("a").equal(at::tensor({1.0f, 2.0f, 3.0f, 4.0f}).reshape({2, 2})));
  CHECK(TensorDict::from_list(rows, BatchSize{2, 2}).batch_size() == BatchSize{2, 2});
  CHECK(TensorDict::from_list(rows, std::nullopt, std::nullopt, 2).batch_size() == BatchSize{2, 2});
  const TensorDict lazy = TensorDict::from_list(rows, std::nullopt, std::nullopt, std::nullopt,
                                                std::nullopt, /*lazy=*/true);
  CHECK(lazy.is_lazy_stack());
  CHECK(lazy.batch_size() == BatchSize{2});

  const TensorDict ragged =
      TensorDict::from_list(Json::parse(R"([{"a": [1.0]}, {"a": [1.0, 2.0]}])"));
  CHECK(ragged.is_lazy_stack());
  const auto leaves = ragged.get_list("a");
  REQUIRE(leaves.size() == 2);
  CHECK(leaves[0].sizes() == at::IntArrayRef{1});
  CHECK(leaves[1].equal(at::tensor({1.0f, 2.0f})));
  TensorDict outer({}, {2});
  outer.set("nested", ragged);
  CHECK(outer.get_list({"nested", "a"}).size() == 2);
  // as_nested_tensor: one nested tensor of those leaves; as_padded_tensor: padded with 0.
  const at::Tensor nested = ragged.get_nested_tensor("a");
  CHECK(nested.is_nested());
  CHECK(at::nested_to_padded_tensor(nested, 0).equal(ragged.get_padded("a")));
  CHECK(ragged.get_padded("a").equal(at::tensor({1.0f, 0.0f, 1.0f, 2.0f}).reshape({2, 2})));
  // A dense TensorDict's rows, as iterating Python's tensor gives them.
  CHECK(dense.get_list("a").at(1).equal(at::tensor({3.0f, 4.0f})));
  CHECK_THROWS_AS(TensorDict({{"a", at::ones({2})}}, {}).get_list("a"), IndexError);

  CHECK_THROWS_WITH(
      TensorDict::from_list(Json::parse(R"([{"a": [1.0]}])"), BatchSize{3}),
      Catch::Matchers::ContainsSubstring("does not start with the length of the list (1)"));
  CHECK_THROWS_AS(TensorDict::from_list(Json::parse(R"({"a": 1})")), TypeError);
  CHECK_THROWS_AS(TensorDict::from_list(Json::parse(R"([1, 2])")), TypeError);
  CHECK_THROWS_AS(TensorDict::from_list(Json::parse(R"([{"a": [1.0]}, {"a": [1.0, 2.0]}])"),
                                        std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                                        /*lazy=*/false),
                  ShapeError);
}
