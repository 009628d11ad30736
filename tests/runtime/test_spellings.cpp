// The spellings a user brings from Python tensordict and from libtorch: td["key"], typed get<T>,
// iterating rows, fromkeys with a number, ATen's index types and int32 index tensors; and the
// ones that must not compile because they would silently do nothing (assigning to td[i]).
#include <ATen/ATen.h>
#include <ATen/TensorIndexing.h>
#include <torch/types.h>  // torch::indexing, as libtorch users spell it

#include "catch2_compat.h"

#include "tensordict/tensordict.h"

using namespace tensordict;
using Catch::Matchers::ContainsSubstring;

namespace {

TensorDict sample() {
  TensorDict td({{"obs", at::arange(12, at::kFloat).reshape({4, 3})}, {"step", at::arange(4)}},
                {4});
  td.set({"next", "reward"}, at::ones({4, 1}));
  td.set_non_tensor("task", "cartpole");
  td.set_non_tensor("sizes", Json::array({1, 2}));
  return td;
}

}  // namespace

// td[i] = other would rebind a temporary handle: it must not compile. Handles still assign.
static_assert(!std::is_assignable_v<TensorDict&&, const TensorDict&>);
static_assert(!std::is_assignable_v<TensorDict&&, TensorDict&&>);
static_assert(std::is_copy_assignable_v<TensorDict> &&
              std::is_nothrow_move_assignable_v<TensorDict>);

TEST_CASE("td[\"key\"] and td[{...}] read tensors as Python's td[key] does", "[spellings]") {
  TensorDict td = sample();
  CHECK(td["obs"].equal(td.get("obs")));
  CHECK(td[{"next", "reward"}].is_same(td.get({"next", "reward"})));
  CHECK(td[1].batch_size().empty());  // an integer still indexes rows
  CHECK_THROWS_AS(td["missing"], KeyError);
  CHECK_THROWS_WITH(td["task"], "key 'task' holds a NonTensorData, not a Tensor");
}

TEST_CASE("get<T> returns every kind of entry", "[spellings]") {
  TensorDict td = sample();
  CHECK(td.get<std::string>("task") == "cartpole");
  CHECK(td.get<std::vector<int64_t>>("sizes") == std::vector<int64_t>{1, 2});
  CHECK(td.get<Json>("sizes") == Json::array({1, 2}));
  CHECK(td.get<at::Tensor>("obs").is_same(td.get("obs")));
  CHECK(td.get<TensorDict>("next").is_same(td.get_tensordict("next")));
  CHECK(td.get<Value>("task").is_non_tensor_data());
  TensorDict scalars({{"lr", 0.5}, {"epoch", 3}}, {});
  CHECK(scalars.get<double>("lr") == 0.5);
  CHECK(scalars.get<int64_t>("epoch") == 3);
  CHECK_THROWS_AS(td.get<std::string>("sizes"), TypeError);
  CHECK_THROWS_WITH(td.get<std::string>("sizes"),
                    "get<T>: key 'sizes' holds NonTensorData [1,2], not the requested type");
  CHECK_THROWS_WITH(td.get<double>("obs"),
                    "get<T>: key 'obs' holds Tensor of shape [4, 3], not a number");
  CHECK_THROWS_WITH(td.get<std::string>("obs"),
                    "get<T>: key 'obs' holds Tensor of shape [4, 3], not non-tensor data");
}

TEST_CASE("range-for iterates rows along batch dim 0, as Python's iteration", "[spellings]") {
  TensorDict td = sample();
  int64_t i = 0;
  for (TensorDict row : td) {
    CHECK(row.batch_size().empty());
    CHECK(row.get("step").item<int64_t>() == i);
    CHECK(row.get_non_tensor("task") == "cartpole");
    ++i;
  }
  CHECK(i == 4);
  TensorDict scalar({{"x", at::ones({})}}, {});
  CHECK_THROWS_WITH(scalar.begin(),
                    "iteration over a TensorDict needs a batch dim (batch_size [])");
}

TEST_CASE("fromkeys takes a number, a tensor or non-tensor data", "[spellings]") {
  TensorDict zeros = TensorDict::fromkeys({"a", {"b", "c"}}, 0);
  CHECK(zeros.get("a").dim() == 0);
  CHECK(zeros.get("a").scalar_type() == at::kLong);
  CHECK(zeros.get({"b", "c"}).item<int64_t>() == 0);
  const at::Tensor ones = at::ones({2, 3});
  TensorDict rows = TensorDict::fromkeys({"x", "y"}, ones, {2});
  CHECK(rows.get("x").equal(ones));
  CHECK_FALSE(rows.get("x").is_same(ones));  // copies, as Python's
  rows.get("x").zero_();
  CHECK(rows.get("y").equal(ones));
  CHECK(TensorDict::fromkeys({"t"}, "text").get_non_tensor("t") == "text");
}

TEST_CASE("ATen's index types index a TensorDict", "[spellings]") {
  namespace ti = torch::indexing;
  TensorDict td = sample();
  TensorDict head = td.index({ti::Slice(0, 2)});
  CHECK(head.batch_size() == BatchSize{2});
  CHECK(head.get("obs").equal(td.get("obs").slice(0, 0, 2)));
  CHECK(td.index({ti::Slice(ti::None, ti::None, 2)}).get("step").equal(at::tensor({0, 2})));
  CHECK(td.index({ti::Slice()}).batch_size() == BatchSize{4});
  CHECK(td.index({ti::None, ti::Ellipsis}).batch_size() == BatchSize{1, 4});
  CHECK(td.index({ti::TensorIndex(1)}).get("step").item<int64_t>() == 1);
  CHECK(td.index({ti::TensorIndex(at::tensor({3, 1}))}).get("step").equal(at::tensor({3, 1})));
}

TEST_CASE("int32 and int16 index tensors index like long ones", "[spellings]") {
  TensorDict td = sample();
  const TensorDict by_long = td.index({at::tensor({2, 0}, at::kLong)});
  for (auto dtype : {at::kInt, at::kShort}) {
    const TensorDict rows = td.index({at::tensor({2, 0}, dtype)});
    CHECK(rows.get("obs").equal(by_long.get("obs")));
    CHECK(rows.get({"next", "reward"}).equal(by_long.get({"next", "reward"})));
  }
}

TEST_CASE("stack and cat name the key two TensorDicts do not share", "[spellings]") {
  TensorDict a({{"obs", at::ones({2})}, {"act", at::ones({2})}}, {2});
  TensorDict b({{"obs", at::ones({2})}}, {2});
  CHECK_THROWS_AS(stack({a, b}), KeyError);
  CHECK_THROWS_WITH(stack({a, b}),
                    "stack: TensorDict 1 lacks key 'act' of TensorDict 0 (2 keys "
                    "vs 1)");
  CHECK_THROWS_WITH(cat({b, a}),
                    "cat: TensorDict 1 has key 'act' that TensorDict 0 lacks (1 keys "
                    "vs 2)");
  TensorDict na({{"n", a}}, {2});
  TensorDict nb({{"n", b}}, {2});
  CHECK_THROWS_WITH(stack({na, nb}), ContainsSubstring("TensorDict 1 lacks key 'act' of TensorDict 0 at "
                                              "key 'n'"));
}
