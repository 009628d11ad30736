// The block forms of the shape and key ops (tensordict/scoped.h), Python's `with td.view(-1) as
// v:`: what the block writes reaches the source through the op's inverse when it returns, on
// TensorDicts and on generated classes (tensordict's test_view_cm), and nothing when it throws.
#include <ATen/ATen.h>

#include <stdexcept>

#include "catch2_compat.h"
#include "fixture.h"
#include "tensordict/scoped.h"

using golden::RefTC;
using tensordict::TensorDict;
namespace scoped = tensordict::scoped;

TEST_CASE("a view used as a block writes back into the class", "[tensorclass][scoped]") {
  // tensordict's test_view_cm: in place through the view, and a field set in the block.
  RefTC data({at::ones({3, 4, 5}), "z", std::nullopt}, {3, 4});
  tensordict::with(data, scoped::view({-1}), [](RefTC& flat) {
    CHECK(flat.batch_size() == tensordict::BatchSize{12});
    flat.obs().mul_(0);
  });
  CHECK(data.obs().eq(0).all().item<bool>());
  tensordict::with(data, scoped::view({-1}), [](RefTC& flat) {
    flat.set_extra(at::arange(60, at::kFloat).reshape({12, 5}));
  });
  REQUIRE(data.extra().has_value());
  CHECK(data.extra()->sizes() == at::IntArrayRef{3, 4, 5});
  CHECK(data.extra()->equal(at::arange(60, at::kFloat).reshape({3, 4, 5})));
  CHECK(data.label() == "z");
  // A block that throws writes nothing back, as Python's __exit__ with an exception.
  CHECK_THROWS_AS(tensordict::with(data, scoped::view({-1}),
                                   [](RefTC& flat) {
                                     flat.set_extra(at::zeros({12, 5}));
                                     throw std::runtime_error("stop");
                                   }),
                  std::runtime_error);
  CHECK(data.extra()->equal(at::arange(60, at::kFloat).reshape({3, 4, 5})));
}

TEST_CASE("each shape and key op's block writes back through its inverse",
          "[tensorclass][scoped]") {
  const at::Tensor x = at::arange(24, at::kFloat).reshape({2, 3, 4});
  const auto check = [&](const tensordict::ScopedOp& op, tensordict::BatchSize seen) {
    TensorDict td({{"x", x.clone()}}, {2, 3, 4});
    tensordict::with(td, op, [&](TensorDict& result) {
      CHECK(result.batch_size() == seen);
      result.set("y", result.get("x") * 2);  // a new key, in the result's layout
    });
    CHECK(td.get("y").equal(x * 2));  // back in the source's layout
  };
  check(scoped::permute({2, 0, 1}), {4, 2, 3});
  check(scoped::transpose(0, 2), {4, 3, 2});
  check(scoped::unsqueeze(-1), {2, 3, 4, 1});
  check(scoped::flatten(1, 2), {2, 12});
  check(scoped::flatten(), {24});
  check(scoped::unflatten(2, {2, 2}), {2, 3, 2, 2});
  check(scoped::movedim({0}, {2}), {3, 4, 2});
  TensorDict one({{"x", at::zeros({2, 1})}}, {2, 1});
  tensordict::with(one, scoped::squeeze(1),
                   [](TensorDict& squeezed) { squeezed.set("y", at::ones({2})); });
  CHECK(one.get("y").sizes() == at::IntArrayRef{2, 1});

  TensorDict nested({{"a", TensorDict({{"b", at::zeros({2})}}, {2})}}, {2});
  tensordict::with(nested, scoped::flatten_keys("."), [](TensorDict& flat) {
    CHECK(flat.contains("a.b"));
    flat.set("a.c", at::ones({2}));
  });
  CHECK(nested.get({"a", "c"}).equal(at::ones({2})));
}

TEST_CASE("a locked source takes the block's values in place; lock and unlock as blocks",
          "[tensorclass][scoped]") {
  TensorDict td({{"x", at::zeros({2, 3})}}, {2, 3});
  const at::Tensor storage = td.get("x");
  td.lock_();
  tensordict::with(td, scoped::view({6}), [](TensorDict& flat) { flat.set_("x", at::ones({6})); });
  CHECK(td.get("x").equal(at::ones({2, 3})));
  CHECK(td.get("x").data_ptr() == storage.data_ptr());  // update_: in place
  tensordict::with(td, scoped::unlock(), [](TensorDict& open) {
    CHECK_FALSE(open.is_locked());
    open.set("y", at::zeros({2, 3}));
  });
  CHECK(td.is_locked());
  CHECK(td.contains("y"));
  td.unlock_();
  tensordict::with(td, scoped::lock(), [](TensorDict& locked) { CHECK(locked.is_locked()); });
  CHECK_FALSE(td.is_locked());
}
