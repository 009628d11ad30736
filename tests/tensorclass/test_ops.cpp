// TensorDict operations on generated classes return the typed class.
#include <ATen/ATen.h>

#include <type_traits>
#include "catch2_compat.h"

#include "nested.h"
#include "plain.h"
#include "plain_rows.h"

using namespace golden;

namespace {

template <class T>
constexpr bool is_plain = std::is_same_v<std::decay_t<T>, Plain>;

}  // namespace

TEST_CASE("indexing returns the typed class", "[tensorclass][ops]") {
  Plain p = plain_rows(4);
  auto row = p[1];
  static_assert(is_plain<decltype(row)>);
  CHECK(row.batch_size().empty());
  CHECK(row.obs().equal(at::tensor({3.0f, 4.0f, 5.0f})));
  CHECK(row.label() == "none");
  CHECK_FALSE(row.count().has_value());  // None stays None
  auto slice = p.index({tensordict::Slice(1, 3)});
  static_assert(is_plain<decltype(slice)>);
  CHECK(slice.batch_size() == tensordict::BatchSize{2});
}

TEST_CASE("stack, cat, unbind and split", "[tensorclass][ops]") {
  Plain a = plain_rows(2), b = plain_rows(2);
  b.set("label", std::string("second"));
  Plain stacked = Plain::stack({a, b});
  CHECK(stacked.batch_size() == tensordict::BatchSize{2, 2});
  // A str field of a stack holds one value per element (Python 0.14 reads the nested list).
  CHECK_THROWS_AS(stacked.label(), tensordict::TypeError);
  CHECK(stacked._tensordict().get_non_tensor("label") ==
        tensordict::Json::array({tensordict::Json::array({"none", "none"}),
                                 tensordict::Json::array({"second", "second"})}));
  // A row of it reads its string, as Python's stacked[1][0].label.
  CHECK(stacked[1][0].label() == "second");
  CHECK(stacked[0][1].label() == "none");
  Plain joined = Plain::cat({a, a});
  CHECK(joined.batch_size() == tensordict::BatchSize{4});
  CHECK(joined.label() == "none");
  std::vector<Plain> rows = joined.unbind(0);
  REQUIRE(rows.size() == 4);
  CHECK(rows[3].obs().equal(at::tensor({3.0f, 4.0f, 5.0f})));
  std::vector<Plain> parts = joined.split(3);
  REQUIRE(parts.size() == 2);
  CHECK(parts[1].batch_size() == tensordict::BatchSize{1});
}

TEST_CASE("shape ops, to, clone, apply, update", "[tensorclass][ops]") {
  Plain p = plain_rows(4);
  CHECK(p.unsqueeze(0).batch_size() == tensordict::BatchSize{1, 4});
  CHECK(p.reshape({2, 2}).obs().sizes().vec() == std::vector<int64_t>{2, 2, 3});
  Plain doubled = p.apply([](const at::Tensor& t) { return t.is_floating_point() ? t * 2 : t; });
  CHECK(doubled.obs().sum().item<float>() == 2 * p.obs().sum().item<float>());
  Plain copy = p.clone();
  CHECK(copy.obs().data_ptr() != p.obs().data_ptr());
  Plain as_double = p.to(at::kDouble);
  CHECK(as_double.obs().scalar_type() == at::kDouble);
  copy.obs().zero_();
  p.update(copy);
  CHECK(p.obs().sum().item<float>() == 0.0f);
}

TEST_CASE("nested classes survive ops", "[tensorclass][ops]") {
  Outer o({Inner({at::arange(3, at::kFloat)}, {3}), std::nullopt, at::zeros({3})}, {3});
  Outer second = o[1];
  CHECK(second.inner().x().item<float>() == 1.0f);
  Outer both = Outer::stack({o, o});
  CHECK(both.inner().batch_size() == tensordict::BatchSize{2, 3});
}

TEST_CASE("arith: tensorclass operators return the typed class", "[tensorclass][arith]") {
  Plain p({at::ones({2, 3})}, {2});
  Plain q = p * 3 + p;
  CHECK(q.obs().sum().item<float>() == 24.0f);
  CHECK(q.label() == p.label());                // non-tensor fields carried over
  Plain r = -(q / at::tensor({1.f, 2.f})) - 1;  // a tensor broadcast over batch dim B
  CHECK(at::equal(r.obs()[1], at::full({3}, -3.f)));
  Plain big = q > 3;
  CHECK(big.obs().scalar_type() == at::kBool);
  q -= p;
  q *= 0.5;
  CHECK(q.obs().sum().item<float>() == 9.0f);
  CHECK(q._tensordict().sum(tensordict::reduce_all).item<float>() == 9.0f);
  q.set_mask(at::zeros({2}, at::kBool));
  CHECK_THROWS_AS(q -= p, tensordict::KeyError);  // p has no mask
  p.set_mask(at::ones({2}, at::kBool));
  CHECK_THROWS_WITH(q -= p,
                    Catch::Matchers::StartsWith("sub_: key 'mask' (bool [2]): Subtraction"));
}

TEST_CASE("arith: & | ^ and requires_grad on the class", "[tensorclass][arith]") {
  const Inner bits({at::tensor({12, 10, 6})}, {3});
  const Inner both = bits & 10;
  static_assert(std::is_same_v<decltype(bits | bits), Inner>);
  CHECK(at::equal(both.x(), at::tensor({8, 10, 2})));
  CHECK(at::equal((bits | 1).x(), at::tensor({13, 11, 7})));
  CHECK(at::equal((bits ^ bits).x(), at::zeros({3}, at::kLong)));
  Inner grad({at::ones({3})}, {3});
  CHECK_FALSE(grad.requires_grad());
  CHECK(grad.requires_grad_().requires_grad());
}
