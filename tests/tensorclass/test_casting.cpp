// Construction and casting per class option (format spec §7): default, nocast, autocast,
// tensor_only, frozen, shadow.
#include <ATen/ATen.h>

#include <type_traits>
#include "catch2_compat.h"

#include "autocast.h"
#include "defaults.h"
#include "frozen.h"
#include "nested.h"
#include "nocast.h"
#include "plain.h"
#include "shadow.h"
#include "tensor_only.h"

using namespace golden;
using tensordict::Json;
using tensordict::Value;

namespace {

Value stored(const std::optional<Value>& v) {
  REQUIRE(v.has_value());
  return *v;
}

// Detects a setter at compile time (frozen classes have none).
template <class T, class = void>
struct has_set_x : std::false_type {};
template <class T>
struct has_set_x<T, std::void_t<decltype(std::declval<T&>().set_x(at::Tensor()))>>
    : std::true_type {};

}  // namespace

TEST_CASE("construction applies defaults, optional fields and the batch size", "[tensorclass]") {
  Plain p({at::ones({4, 3})}, {4});
  CHECK(p.batch_size() == tensordict::BatchSize{4});
  CHECK(p.label() == "none");
  CHECK_FALSE(p.count().has_value());
  CHECK_FALSE(p.mask().has_value());
  CHECK_FALSE(p.get("meta").has_value());  // default null: None
  CHECK(p.obs().sum().item<float>() == 12.0f);
  CHECK(Plain::fields() ==
        std::vector<std::string>{"obs", "label", "count", "score", "meta", "mask"});
}

TEST_CASE("dtype and shape constraints are checked at set time", "[tensorclass]") {
  CHECK_THROWS_AS(Plain({at::ones({4, 3}, at::kLong)}, {4}), tensordict::TypeError);
  CHECK_THROWS_AS(Plain({at::ones({4, 2})}, {4}), tensordict::ShapeError);
  CHECK_THROWS_AS(Plain({at::ones({5, 3})}, {4}), tensordict::ShapeError);  // batch mismatch
  Plain p({at::ones({4, 3})}, {4});
  CHECK_THROWS_WITH(p.set_mask(at::ones({4})), "field Plain.mask expects dtype bool, got float32");
  CHECK_THROWS_AS(Plain(Plain::Args{}), tensordict::KeyError);  // required tensor missing
}

TEST_CASE("default casting: numbers become tensors, strings NonTensorData", "[tensorclass]") {
  Scalars s({3, 1.5, "text"});
  Value n = stored(s.get("n"));
  REQUIRE(n.is_tensor());
  CHECK(n.tensor().scalar_type() == at::kLong);
  CHECK(n.tensor().dim() == 0);
  CHECK(s.n() == 3);
  CHECK(stored(s.get("x")).tensor().scalar_type() == at::kFloat);
  CHECK(s.x() == 1.5);
  CHECK(stored(s.get("v")).non_tensor_data().data == "text");
  s.set("v", true);
  CHECK(stored(s.get("v")).tensor().scalar_type() == at::kBool);
  s.set("v", Json::array({1, 2}));
  CHECK(stored(s.get("v")).tensor().scalar_type() == at::kLong);
  s.set("v", Json::array({"a", "b"}));
  CHECK(stored(s.get("v")).is_non_tensor_stack());
  s.set("v", Json{{"k", 1}});
  CHECK(stored(s.get("v")).non_tensor_data().data == Json{{"k", 1}});
  s.set("v", std::nullopt);
  CHECK_FALSE(s.get("v").has_value());
  Plain p({at::ones({2, 3})}, {2});
  CHECK(stored(p.get("label")).non_tensor_data().data == "none");
  CHECK_THROWS_AS(p.set("count", 3), tensordict::ShapeError);  // 0-dim vs batch [2], as Python
  // A str field never holds a tensor: refused when set, not when read.
  CHECK_THROWS_MATCHES(
      p.set("label", at::zeros({2})), tensordict::TypeError,
      Catch::Matchers::Message("field Plain.label expects a str, got a Tensor of shape [2]"));
  CHECK(p.label() == "none");
}

TEST_CASE("nocast keeps values as given", "[tensorclass]") {
  NoCast n({3, 1.5, "s", true, Json::array({1, 2})});
  CHECK(stored(n.get("n")).non_tensor_data().data == 3);
  CHECK(stored(n.get("f")).non_tensor_data().data == 1.5);
  CHECK(stored(n.get("s")).non_tensor_data().data == "s");
  CHECK(stored(n.get("flag")).non_tensor_data().data == true);
  CHECK(stored(n.get("xs")).is_tensor());  // lists of numbers still become tensors
  CHECK(n.n() == 3);
  CHECK(n.flag() == true);
  n.set("n", at::tensor({7}));
  CHECK(stored(n.get("n")).is_tensor());  // tensors stay tensors
}

TEST_CASE("autocast converts to the declared type", "[tensorclass]") {
  AutoCast a({at::ones({2}), 0, 0.0, "", false, nullptr});
  a.set("t", 1);
  CHECK(stored(a.get("t")).tensor().item<int64_t>() == 1);
  a.set("n", 2.7);
  CHECK(stored(a.get("n")).non_tensor_data().data == 2);
  a.set("n", "5");
  CHECK(a.n() == 5);
  a.set("n", at::scalar_tensor(4, at::kLong));
  CHECK(stored(a.get("n")).non_tensor_data().data == 4);
  a.set("f", 1);
  CHECK(stored(a.get("f")).non_tensor_data().data.is_number_float());
  a.set("s", 12);
  CHECK(a.s() == "12");
  a.set("b", 0);
  CHECK(stored(a.get("b")).non_tensor_data().data == false);
  a.set("a", 1);
  CHECK(stored(a.get("a")).is_tensor());  // `any` behaves like Python's Any
  a.set("a", "text");
  CHECK(stored(a.get("a")).is_non_tensor_data());
  a.set("o", 1);
  CHECK(stored(a.get("o")).is_tensor());  // optional[...] hints count as Any, as in Python
  CHECK_THROWS_AS(a.set("t", "abc"), tensordict::TypeError);
  CHECK_THROWS_AS(a.set("n", "five"), tensordict::TypeError);
}

TEST_CASE("autocast constructors and setters take tensors for plain fields", "[tensorclass]") {
  // Python: AutoCast(n=torch.tensor(3.9), ...) stores int(3.9) == 3.
  AutoCast a({at::ones({2}), at::scalar_tensor(3.9), at::scalar_tensor(2, at::kLong), "x",
              at::scalar_tensor(1), nullptr, at::scalar_tensor(5, at::kLong)});
  CHECK(a.n() == 3);
  CHECK(a.f() == 2.0);
  CHECK(a.b());
  CHECK(stored(a.get("o")).is_tensor());  // optional: Any, kept as given
  a.set_n(at::scalar_tensor(7, at::kLong));
  CHECK(a.n() == 7);
  a.set_n(8);
  CHECK(a.n() == 8);
  CHECK_THROWS_AS(a.set_n(at::ones({2})), tensordict::TypeError);  // int() of 2 elements
  static_assert(std::is_same_v<decltype(AutoCast::Args{}.n), tensordict::Autocast<int64_t>>);
}

TEST_CASE("autocast builds a nested class from a dict", "[tensorclass]") {
  AutoNested a({Inner({at::zeros({2})})});
  a.set("inner", Json{{"x", Json::array({1.0, 2.0})}});
  CHECK(a.inner().x().sum().item<float>() == 3.0f);
  CHECK_THROWS_AS(a.set("inner", Json{{"nope", 1}}), tensordict::KeyError);
}

TEST_CASE("tensor_only stores tensors", "[tensorclass]") {
  TensorOnly t({at::ones({2})}, {2});
  CHECK_FALSE(t.b().has_value());
  t.set_b(at::zeros({2, 5}));
  CHECK(t.b()->size(1) == 5);
  CHECK_THROWS_AS(t.set_a(at::ones({2}, at::kLong)), tensordict::TypeError);
  t.set("b", std::nullopt);
  CHECK_FALSE(t.b().has_value());
}

TEST_CASE("frozen classes have no setters and locked instances", "[tensorclass]") {
  static_assert(!has_set_x<Frozen>::value, "a frozen class must not have setters");
  static_assert(has_set_x<golden::Inner>::value, "detection must see ordinary setters");
  Frozen f({at::zeros({2}), "n"}, {2});
  CHECK(f.is_locked());
  f.x().add_(1);  // in-place updates still work
  CHECK(f.x().sum().item<float>() == 2.0f);
  CHECK_THROWS_AS(f.set("name", std::nullopt), tensordict::LockedError);  // no deletion
  CHECK_THROWS_WITH(f.set("x", at::ones({2})),
                    "cannot set field 'x' of a locked Frozen (frozen or memory-mapped; update its "
                    "tensors in place, or unlock_())");
}

TEST_CASE("shadow fields are reached through explicit accessors", "[tensorclass]") {
  Shadowed s({"text", 12, std::nullopt});
  CHECK(s.field_type() == "text");
  CHECK(s.field_size() == 12);
  CHECK(stored(s.get("type")).non_tensor_data().data == "text");
  s.set_field_size(std::nullopt);
  CHECK_FALSE(s.field_size().has_value());
}

TEST_CASE("every kind of default value", "[tensorclass]") {
  Defaults d(Defaults::Args{});
  CHECK(d.s() == "a \"quoted\" \\ text");
  CHECK(d.i() == 3);
  CHECK(d.f() == 2.0);
  CHECK(d.b() == false);
  CHECK(d.l() == std::vector<std::string>{"a", "b"});
  CHECK(d.a() == Json{{"k", {1, 2}}});
  CHECK_FALSE(d.o().has_value());
}

TEST_CASE("tensor defaults: literals and factories with torch dtypes and a tensor per instance",
          "[tensorclass]") {
  const TensorDefaults d(TensorDefaults::Args{});
  CHECK(d.grid().equal(at::zeros({3, 4})));
  CHECK(d.grid().scalar_type() == at::kFloat);
  CHECK(d.weights().equal(at::ones({2})));
  CHECK(d.sevens().equal(at::full({2, 3}, 7, at::kLong)));
  CHECK(d.halves().equal(at::full({2}, 0.5)));
  CHECK(d.table().equal(at::arange(1, 5, at::kLong).reshape({2, 2})));
  CHECK(d.scale().dim() == 0);
  CHECK(d.scale().scalar_type() == at::kDouble);
  CHECK(d.scale().item<double>() == 1.5);
  CHECK(d.mask().scalar_type() == at::kBool);
  CHECK(d.mask()[0].item<bool>());
  CHECK_FALSE(d.mask()[1].item<bool>());
  // Python's default_factory: each instance has its own tensor.
  const TensorDefaults other(TensorDefaults::Args{});
  CHECK(other.grid().data_ptr() != d.grid().data_ptr());
  // A value given replaces the default.
  TensorDefaults::Args args;
  args.weights = at::full({2}, 5.0);
  CHECK(TensorDefaults(args).weights().equal(at::full({2}, 5.0)));
}
