// LazyStackedTensorDict ops: stack / cat / unbind / index / apply / to / clone / update_ /
// densify, and the clear error of the ops a lazy stack does not support.
#include <ATen/ATen.h>

#include "catch2_compat.h"

#include "lazy_test_util.h"
#include "tensordict/lazy_stack.h"

using namespace tensordict;

using lazy_test::conv;

TEST_CASE("lazy unbind: along the stack dim the elements, else lazy stacks", "[lazy]") {
  TensorDict a = conv(3, 0), b = conv(5, 10);
  TensorDict ls = lazy_stack({a, b});
  auto rows = ls.unbind(0);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].is_same(a));
  CHECK(rows[1].is_same(b));
  CHECK_THROWS_WITH(ls.unbind(1), Catch::Matchers::ContainsSubstring("ragged"));

  TensorDict t = lazy_stack({conv(3, 0), conv(3, 1)}, 1);
  auto cols = t.unbind(0);
  REQUIRE(cols.size() == 3);
  CHECK(cols[2].is_lazy_stack());
  CHECK(at::equal(cols[2].get("x"), at::tensor({2.f, 3.f})));
}

TEST_CASE("lazy stack and cat keep stacks lazy", "[lazy]") {
  TensorDict l1 = lazy_stack({conv(3, 0), conv(5, 0)});
  TensorDict l2 = lazy_stack({conv(2, 0)});
  TensorDict joined = cat({l1, l2}, 0);
  REQUIRE(joined.is_lazy_stack());
  CHECK(joined.batch_size() == BatchSize{3, -1});
  CHECK(joined.tensordicts()[2].is_same(l2.tensordicts()[0]));

  TensorDict nested = stack({l1, l1}, 0);
  REQUIRE(nested.is_lazy_stack());
  CHECK(nested.batch_size() == BatchSize{2, 2, -1});
  CHECK(nested[1].is_same(l1));

  // A dense TensorDict holding lazy children stacks them lazily.
  TensorDict p1({{"h", lazy_stack({conv(3, 0), conv(4, 0)})}}, {2});
  TensorDict p2({{"h", lazy_stack({conv(1, 0), conv(2, 0)})}}, {2});
  TensorDict both = stack({p1, p2}, 0);
  CHECK_FALSE(both.is_lazy_stack());
  CHECK(both.get_tensordict("h").is_lazy_stack());
  CHECK(both.get_tensordict("h").batch_size() == BatchSize{2, 2, -1});

  TensorDict even1 = lazy_stack({conv(3, 0), conv(3, 1)});
  TensorDict even2 = lazy_stack({conv(2, 0), conv(2, 1)});
  TensorDict wider = cat({even1, even2}, 1);  // element-wise cat
  CHECK(wider.batch_size() == BatchSize{2, 5});
  CHECK(at::equal(wider[1].get("x"), at::tensor({1.f, 2.f, 3.f, 1.f, 2.f})));
  CHECK_THROWS_AS(cat({even1, conv(3, 0).unsqueeze(0)}, 0), TypeError);
}

TEST_CASE("indexing a TensorDict indexes its nested lazy stacks lazily", "[lazy]") {
  // Python indexes each entry; a ragged nested stack (rows of 3 and 4) cannot be densified.
  const TensorDict parent({{"h", lazy_stack({conv(3, 0), conv(4, 10)})}, {"y", at::arange(2)}},
                          {2});
  for (const TensorDict& row : {parent[1], parent.index({1}), parent.index({Ellipsis, 1})}) {
    CHECK(at::equal(row.get({"h", "x"}), at::arange(4, at::kFloat) + 10));
    CHECK(row.get("y").item<int64_t>() == 1);
  }
  CHECK(parent[1].get_tensordict("h").is_same(parent.get_tensordict("h").tensordicts()[1]));
  const TensorDict flipped = parent.index({at::tensor(std::vector<int64_t>{1, 0})});
  REQUIRE(flipped.get_tensordict("h").is_lazy_stack());
  CHECK(flipped.get_tensordict("h").batch_size() == BatchSize{2, -1});
  CHECK(at::equal(flipped.get_tensordict("h").tensordicts()[0].get("x"),
                  at::arange(4, at::kFloat) + 10));
}

TEST_CASE("lazy apply, to, clone and update_ work element-wise", "[lazy]") {
  TensorDict a = conv(3, 0), b = conv(5, 10);
  TensorDict ls = lazy_stack({a, b});

  TensorDict doubled = ls.apply([](const at::Tensor& t) { return t * 2; });
  REQUIRE(doubled.is_lazy_stack());
  CHECK(at::equal(doubled[1].get("x"), (at::arange(5, at::kFloat) + 10) * 2));
  CHECK(doubled[0].get_non_tensor("s") == "text");

  TensorDict as_long = ls.to(at::kLong);
  CHECK(as_long[0].get("x").scalar_type() == at::kLong);

  TensorDict copy = ls.clone();
  REQUIRE(copy.is_lazy_stack());
  copy[0].set_("x", at::full({3}, 9.f));
  CHECK(a.get("x")[0].item<float>() == 0.f);  // deep copy

  ls.update_(doubled);
  CHECK(at::equal(b.get("x"), (at::arange(5, at::kFloat) + 10) * 2));
  ls.apply_([](const at::Tensor& t) { return t + 1; });
  CHECK(a.get("x")[0].item<float>() == 1.f);

  ls.lock_();
  CHECK(a.is_locked());
  CHECK_THROWS_AS(ls.set("new", at::zeros({2, 3})), ShapeError);  // ragged
  ls.unlock_();
  CHECK_FALSE(b.is_locked());
}

TEST_CASE("densify: a dense TensorDict when the shapes allow it", "[lazy]") {
  TensorDict even = lazy_stack({conv(3, 0), conv(3, 1)}, 1);
  TensorDict dense = even.densify();
  CHECK_FALSE(dense.is_lazy_stack());
  CHECK(dense.batch_size() == BatchSize{3, 2});
  CHECK(at::equal(dense.get("x"), even.get("x")));

  TensorDict holder({{"h", lazy_stack({conv(3, 0), conv(3, 1)})}, {"y", at::zeros({2})}}, {2});
  TensorDict flat = holder.densify();
  CHECK_FALSE(flat.get_tensordict("h").is_lazy_stack());
  CHECK(holder.get_tensordict("h").is_lazy_stack());  // the original is untouched
  TensorDict plain({{"y", at::zeros({2})}}, {2});
  CHECK(plain.densify().is_same(plain));

  TensorDict ragged = lazy_stack({conv(3, 0), conv(4, 0)});
  CHECK_THROWS_WITH(ragged.densify(), Catch::Matchers::ContainsSubstring("ragged") &&
                                          Catch::Matchers::ContainsSubstring("[4]"));
}

TEST_CASE("ops a lazy stack does not support throw TypeError naming the op", "[lazy]") {
  TensorDict ls = lazy_stack({conv(3, 0), conv(3, 1)});
  CHECK_THROWS_WITH(ls.consolidate(),
                    Catch::Matchers::ContainsSubstring("consolidate") &&
                        Catch::Matchers::ContainsSubstring("LazyStackedTensorDict"));
  CHECK_THROWS_WITH(ls.set_batch_size({2}), Catch::Matchers::ContainsSubstring("set_batch_size"));
  // A lazy stack nested in a dense TensorDict: as in Python, a dense op that gives a new batch
  // size reads it densified.
  TensorDict holder({{"h", ls}}, {2});
  const TensorDict flat = holder.reshape({2, 1});
  CHECK_FALSE(flat.get_tensordict("h").is_lazy_stack());
  CHECK(flat.get({"h", "x"}).equal(ls.get("x").reshape({2, 1, 3})));
}

TEST_CASE("non-tensor stack rows share the stack's items, copy on write", "[lazy][non_tensor]") {
  NonTensorStack stack({3, 2}, {"a", "b", "c", "d", "e", "f"});
  TensorDict td({{"s", stack}}, {3, 2});
  const NonTensorStack::Items all = td.value_at(0).non_tensor_stack().items();
  // td[i] and unbind(0) take the row's items without copying them (O(1) per row).
  TensorDict row = td[1];
  const NonTensorStack& r = row.value_at(0).non_tensor_stack();
  CHECK(r.shape() == std::vector<int64_t>{2});
  CHECK(r.items().begin() == all.begin() + 2);
  auto rows = td.unbind(0);
  CHECK(rows[2].get_non_tensor("s") == Json::array({"e", "f"}));
  CHECK(rows[2].value_at(0).non_tensor_stack().items().begin() == all.begin() + 4);
  // Along another dim the items are gathered.
  CHECK(td.unbind(1)[1].get_non_tensor("s") == Json::array({"b", "d", "f"}));
  // Writing into a row copies it first: the stack is unchanged.
  NonTensorStack mine = r;
  mine.items()[0] = "changed";
  CHECK(mine.items()[0] == "changed");
  CHECK(td.get_non_tensor("s") == Json::parse(R"([["a", "b"], ["c", "d"], ["e", "f"]])"));
  CHECK(r.items().at(1) == "d");
  CHECK_THROWS_AS(r.items().at(2), IndexError);
}

TEST_CASE("lazy stacks keep the stack dim's name and their elements' names", "[lazy][names]") {
  const std::optional<std::string> none;
  TensorDict a({{"x", at::zeros({3, 2})}}, {3}), b({{"x", at::ones({3, 2})}}, {3});
  a.set_names(DimNames{"time"});
  b.set_names(DimNames{"time"});
  TensorDict ls = lazy_stack({a, b}, 0);
  CHECK((ls.names() == DimNames{none, "time"}));
  ls.set_names(DimNames{"env", "step"});  // the stack dim's name, then every element's
  CHECK((ls.names() == DimNames{"env", "step"}));
  CHECK((a.names() == DimNames{"step"}));
  CHECK((ls.index({Slice(0, 1)}).names() == DimNames{"env", "step"}));
  CHECK((ls.index({Slice(), 0}).names() == DimNames{"env"}));
  CHECK((ls.clone().names() == DimNames{"env", "step"}));
  CHECK((ls.unbind(1)[0].names() == DimNames{"env"}));
  CHECK((cat({ls, ls}, 0).names() == DimNames{"env", "step"}));
  CHECK((ls.rename(DimRenames{{"env", "batch"}}).names() == DimNames{"batch", "step"}));
  CHECK((ls.names() == DimNames{"env", "step"}));  // rename copies
  b.set_names(DimNames{"other"});
  CHECK_THROWS_WITH(ls.names(),
                    "names: element 1 of the lazy stack has dim names ['other'], "
                    "element 0 has ['step']");
}
