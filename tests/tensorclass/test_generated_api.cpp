// The generated API at its edges: construction from {}, required values, reading values without a
// JSON detour, typed errors on stacked data, member-named fields, tensor_only strings.
#include <ATen/ATen.h>

#include <type_traits>
#include "catch2_compat.h"

#include "contract.h"
#include "tensor_only.h"

using namespace golden;
using tensordict::Json;

// `obj[i] = other` would assign to a temporary and write nothing: it does not compile; instances
// still copy and move.
static_assert(!std::is_assignable_v<Config&&, const Config&>);
static_assert(!std::is_assignable_v<Config&&, Config&&>);
static_assert(std::is_copy_assignable_v<Config> && std::is_move_assignable_v<Config>);

TEST_CASE("a class whose fields all have defaults constructs from {}", "[tensorclass][api]") {
  Config c({});
  CHECK(c.lr() == 0.1);
  CHECK(c.tag() == "run");
  Config d({0.5});
  CHECK(d.lr() == 0.5);
  CHECK(d.tag() == "run");
}

TEST_CASE("required fields of every kind must be given", "[tensorclass][api]") {
  CHECK_THROWS_WITH(Required({}), "Required: missing required field 'integer'");
  CHECK_THROWS_WITH(Required({5}), "Required: missing required field 'text'");
  CHECK_THROWS_WITH(Required({5, "t"}), "Required: missing required field 'ids'");
  Required r({5, "t", std::vector<int64_t>{1, 2}});
  CHECK(r.integer() == 5);
  CHECK(r.text() == "t");
  CHECK(r.ids() == std::vector<int64_t>{1, 2});
  CHECK(r.field_index() == 0);
  CHECK(r.field_from_tensordict() == "x");
  CHECK(r.field_field());
}

TEST_CASE("an `any` field that is None reads as null, as Python returns None",
          "[tensorclass][api]") {
  Required r({5, "t", std::vector<int64_t>{}});
  CHECK(r.extra().is_null());
  r.set_extra(Json{{"k", 1}});
  CHECK(r.extra() == Json{{"k", 1}});
  r.set_extra(nullptr);
  CHECK(r.extra().is_null());
  CHECK_FALSE(r._tensordict().contains("extra"));
}

TEST_CASE("fields named like TensorClass members keep the members reachable",
          "[tensorclass][api]") {
  static_assert(std::is_same_v<decltype(&Required::field_index), int64_t (Required::*)() const>);
  static_assert(
      std::is_same_v<decltype(&Required::set_field_field), Required& (Required::*)(bool)>);
  Required r({5, "t", std::vector<int64_t>{1, 2}}, {2});
  r.set_field_index(3);
  CHECK(r.field_index() == 3);
  static_assert(std::is_member_function_pointer_v<decltype(&Required::index)>);
  CHECK(r[0].batch_size().empty());
  CHECK(Required::from_tensordict(r._tensordict()).integer() == 5);
}

TEST_CASE("typed accessors on stacked data throw TypeError naming the field",
          "[tensorclass][api]") {
  Required a({1, "a", std::vector<int64_t>{}}), b({2, "b", std::vector<int64_t>{}});
  Required both = Required::stack({a, b});
  CHECK_THROWS_AS(both.text(), tensordict::TypeError);
  CHECK_THROWS_WITH(both.text(),
                    "Required.text expects str, got list [\"a\",\"b\"] (one value per "
                    "batch element after stacking? read it with get(\"text\"))");
  CHECK_THROWS_WITH(both.integer(),
                    "Required.integer expects int, got list [1,2] (one value per "
                    "batch element after stacking? read it with get(\"integer\"))");
  CHECK(both.get("text")->non_tensor_stack().tolist() == Json{"a", "b"});
}

TEST_CASE("numbers stored as tensors read back directly", "[tensorclass][api]") {
  Counts c({});
  REQUIRE(c._tensordict().get_value("n").is_tensor());
  REQUIRE(c._tensordict().get_value("ids").is_tensor());
  CHECK(c.n() == 7);
  CHECK(c.ids() == std::vector<int64_t>{1, 2, 3});
  c.set_ids(std::vector<int64_t>{4});
  CHECK(c.ids() == std::vector<int64_t>{4});
  c.set("n", at::ones({2}));
  CHECK_THROWS_WITH(c.n(),
                    "Counts.n expects int, got list [1.0,1.0] (one value per batch element "
                    "after stacking? read it with get(\"n\"))");
}

TEST_CASE("setters take values and rvalues", "[tensorclass][api]") {
  Required r({5, "t", std::vector<int64_t>{}});
  std::string text = "a long enough string to live on the heap, not in the small buffer";
  r.set_text(text);
  CHECK(r.text() == text);
  const size_t length = text.size();
  r.set_text(std::move(text));
  CHECK(r.text().size() == length);
}

TEST_CASE("tensor_only rejects a string given to a tensor field", "[tensorclass][api]") {
  TensorOnly t({at::ones({2})}, {2});
  CHECK_THROWS_WITH(t.set("a", "text"),
                    "field TensorOnly.a of tensor_only class expects a tensor, got str \"text\"");
  CHECK_THROWS_AS(t.set("b", Json::array({"x"})), tensordict::TypeError);
  CHECK(t.a().sum().item<float>() == 2.0f);
}
