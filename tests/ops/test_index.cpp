// Indexing over the batch dims: every leaf must equal the same index applied to the raw tensor.
#include <ATen/Parallel.h>
#include "catch2_compat.h"

#include "ops_test_util.h"

using namespace ops_test;
using Catch::Matchers::ContainsSubstring;
using tensordict::Ellipsis;
using tensordict::None;
using tensordict::Slice;
namespace ix = at::indexing;  // the same indices spelled for ATen, applied to the raw leaves
using AtenIndex = std::vector<ix::TensorIndex>;

namespace {

// `idx` on the TensorDict against `raw` (the same index spelled for the leaves' full dims).
void check_against_raw(const TensorDict& td, const Index& idx, const AtenIndex& raw) {
  TensorDict out = td.index(idx);
  CHECK(same(out.get("a"), td.get("a").index(raw)));
  CHECK(same(out.get("b"), td.get("b").index(raw)));
  CHECK(same(out.get({"n", "c"}), td.get({"n", "c"}).index(raw)));
  CHECK(out.batch_size() == td.get("b").index(raw).sizes().vec());
  CHECK(out.get_non_tensor("txt") == "hello");
  CHECK(items_of(out, "s") == expected_items(grid().index(raw)));
}

}  // namespace

TEST_CASE("int, slice with step, None and ellipsis index every entry", "[index]") {
  TensorDict td = sample();
  check_against_raw(td, {1}, {1});
  check_against_raw(td, {-1}, {-1});
  check_against_raw(td, {Slice(1, std::nullopt, 2)}, {ix::Slice(1, ix::None, 2)});
  check_against_raw(td, {Ellipsis, Slice(std::nullopt, 2)}, {ix::Slice(), ix::Slice(ix::None, 2)});
  check_against_raw(td, {None, 2}, {ix::None, 2});
  check_against_raw(td, {Ellipsis, None}, {ix::Slice(), ix::Slice(), ix::None});
  check_against_raw(td, {Slice(), 1}, {ix::Slice(), 1});
  CHECK(td.index({Slice(), 1}).get({"n", "c"}).sizes() == at::IntArrayRef({4, 5}));
  CHECK(td.index({Slice(), 1}).get_tensordict("n").batch_size() == BatchSize{4, 5});
}

TEST_CASE("bool masks and long index tensors gather every entry", "[index]") {
  TensorDict td = sample();
  const at::Tensor mask = at::tensor({1, 0, 1, 1}, at::kLong).to(at::kBool);
  check_against_raw(td, {mask}, {mask});
  const at::Tensor mask2 = td.get("b") % 2 == 0;
  check_against_raw(td, {mask2}, {mask2});
  const at::Tensor idx = at::tensor({3, 0, 0}, at::kLong);
  check_against_raw(td, {idx}, {idx});
  const at::Tensor from_end = at::tensor({-1, 0, -4}, at::kLong);  // as Python's tensor indexing
  check_against_raw(td, {from_end}, {from_end});
  check_against_raw(td, {Ellipsis, idx.remainder(3)}, {ix::Slice(), idx.remainder(3)});
  check_against_raw(td, {idx, Slice(1)}, {idx, ix::Slice(1)});
}

TEST_CASE("operator[] selects along dim 0", "[index]") {
  TensorDict td = sample();
  TensorDict row = td[2];
  CHECK(row.batch_size() == BatchSize{3});
  CHECK(same(row.get("a"), td.get("a")[2]));
  CHECK(items_of(row, "s") == std::vector<std::string>{"2,0", "2,1", "2,2"});
}

TEST_CASE("basic indexing returns views that write through", "[index]") {
  TensorDict td = sample();
  TensorDict view = td.index({Slice(1, 3)});
  view.get("a").fill_(-1);
  CHECK(td.get("a")[1].eq(-1).all().item<bool>());
  CHECK(td.get("a")[0].ne(-1).all().item<bool>());
  td[0].get({"n", "c"}).zero_();
  CHECK(td.get({"n", "c"})[0].eq(0).all().item<bool>());
}

TEST_CASE("indexing errors name the batch size and the offending index", "[index][errors]") {
  TensorDict td = sample();
  CHECK_THROWS_MATCHES(
      td.index({0, 0, 0}), ShapeError,
      Catch::Matchers::Message("index: too many indices for batch_size [4, 3]: the index covers 3 "
                               "dims (indexing past the batch dims is not allowed)"));
  CHECK_THROWS_MATCHES(td.index({Slice(), 5}), ShapeError,
                       Catch::Matchers::Message("index: index 5 is out of range for batch dim 1 "
                                                "of size 3 (batch_size [4, 3])"));
  CHECK_THROWS_MATCHES(td[7], ShapeError,
                       Catch::Matchers::Message("index: index 7 is out of range for batch dim 0 of "
                                                "size 4 (batch_size [4, 3])"));
  const at::Tensor bad_mask = at::ones({3}, at::kBool);
  CHECK_THROWS_MATCHES(
      td.index({bad_mask}), ShapeError,
      Catch::Matchers::Message("index: boolean mask of shape [3] does not match "
                               "the batch dims [4] it covers (batch_size [4, 3])"));
  CHECK_THROWS_AS(td.index({Ellipsis, 0, Ellipsis}), TypeError);
  CHECK_THROWS_AS(td.index({at::ones({2}, at::kFloat)}), TypeError);
  CHECK_THROWS_WITH(td.index({at::tensor({9}, at::kLong)}),
                    ContainsSubstring("key 'a' of shape [4, 3, 2]"));
}

TEST_CASE("a TensorDict without top-level tensors learns the new batch size from a stand-in",
          "[index]") {
  TensorDict td = sample().select({"n", "s", "txt"});
  TensorDict out = td.index({at::tensor({2, 0}, at::kLong)});
  CHECK(out.batch_size() == BatchSize{2, 3});
  CHECK(
      same(out.get({"n", "c"}), td.get({"n", "c"}).index_select(0, at::tensor({2, 0}, at::kLong))));
  CHECK(items_of(out, "s")[0] == "2,0");
  TensorDict empty({}, {4, 3});
  CHECK(empty.index({Slice(), None, 1}).batch_size() == BatchSize{4, 1});
}

TEST_CASE("a large batch of rows, gathered in parallel, equals index_select on every leaf",
          "[index]") {
  // Over 1 MiB of rows on two threads: the hand-copied parallel gather (ops/gather.cpp), whose
  // result must be index_select's for every width of row, leaves it skips included.
  const int threads = at::get_num_threads();
  at::set_num_threads(2);
  const int64_t n = 20000;
  const at::Tensor shared = at::rand({n, 4});
  TensorDict td({{"wide", at::rand({n, 64})},
                 {"i64", at::randint(1 << 30, {n}, at::kLong)},
                 {"i32", at::randint(1 << 30, {n}, at::kInt)},
                 {"flags", at::rand({n, 3}) > 0.5},
                 {"f64", at::rand({n, 2, 2}, at::kDouble)},
                 {"strided", at::rand({8, n}).t()},
                 {"grad", at::rand({n, 2}).requires_grad_()},
                 {"alias1", shared},
                 {"alias2", shared},
                 {"nested", TensorDict({{"x", at::rand({n, 8})}}, {n})}},
                {n});
  const at::Tensor index = at::randint(-n, n, {5000}, at::kLong);
  TensorDict out = td.index({index});
  CHECK(out.batch_size() == BatchSize{5000});
  for (const auto& key : td.keys(true, true)) {
    INFO(key.repr());
    CHECK(same(out.get(key), td.get(key).index_select(0, index.remainder(n))));
  }
  CHECK(out.get("grad").grad_fn() != nullptr);  // autograd leaves keep their history
  out.get("alias1").zero_();                    // one result per key, as index_select gives
  CHECK(out.get("alias2").ne(0).any().item<bool>());
  CHECK_THROWS_WITH(td.index({at::full({4096}, n, at::kLong)}), ContainsSubstring("key 'wide'"));
  at::set_num_threads(threads);
}

TEST_CASE("get_at indexes one entry over the batch dims, with a default", "[index][0.14]") {
  TensorDict td = sample();
  CHECK(same(td.get_at("a", {1}), td.get("a")[1]));
  CHECK(same(td.get_at({"n", "c"}, {Slice(), 2}), td.get({"n", "c"}).index({ix::Slice(), 2})));
  const at::Tensor rows = at::tensor({0L, 3L});
  CHECK(same(td.get_at("b", {rows}), td.get("b").index({rows})));
  CHECK_THROWS_AS(td.get_at("missing", {0}), tensordict::KeyError);
  const at::Tensor fallback = at::zeros({2});
  CHECK(td.get_at("missing", {0}, fallback).is_same(fallback));
  CHECK(same(td.get_at("a", {0}, fallback), td.get("a")[0]));
}

TEST_CASE("set_at_ broadcasts its value over the indexed part, as tensor[idx] = value",
          "[index][0.14]") {
  TensorDict td = sample();
  td.set_at_("a", at::tensor({-1.0, -2.0}), {1});  // (2,) over the (3, 2) of row 1
  CHECK(same(td.get("a")[1], at::tensor({-1.0f, -2.0f}).expand({3, 2})));
  CHECK(same(td.get("a")[0], at::arange(6, at::kFloat).view({3, 2})));  // other rows untouched
  td.set_at_("b", at::tensor(7L), {Slice(), 0});                        // a scalar over column 0
  CHECK(same(td.get("b").select(1, 0), at::full({4}, 7L)));
  CHECK_THROWS_MATCHES(
      td.set_at_("a", at::ones({4}), {1}), tensordict::ShapeError,
      Catch::Matchers::Message("set_at_: a value of shape [4] does not broadcast to [3, 2], "
                               "key 'a' indexed"));
}
