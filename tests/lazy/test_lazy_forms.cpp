// Every op's lazy form (lazy_forms.h): on a lazy stack, what it gives on the dense stack, or a
// refusal naming LazyStackedTensorDict.
#include <ATen/ATen.h>

#include <set>
#include "catch2_compat.h"

#include "lazy_forms.h"
#include "tensordict/lazy_stack.h"

using tensordict::TensorDict;

namespace {

TensorDict forms_element(int64_t k) {
  TensorDict nested({{"y", at::arange(3) + k}}, {3});
  return TensorDict(
      {{"x", at::arange(12, at::kFloat).reshape({3, 4}) + 100 * k}, {"n", nested}, {"s", "text"}},
      {3});
}

}  // namespace

TEST_CASE("every op gives on a lazy stack what it gives on the dense stack, or refuses",
          "[lazy][forms]") {
  size_t checked = 0;
  for (const auto& entry : lazy_forms::entries()) {
    if (entry.form == lazy_forms::Form::NotAnOp) continue;
    INFO("TensorDict::" << entry.member);
    const TensorDict lazy = tensordict::lazy_stack({forms_element(0), forms_element(1)});
    const TensorDict dense = tensordict::stack({forms_element(0), forms_element(1)});
    if (entry.form == lazy_forms::Form::Same) {
      std::string on_lazy;
      CHECK_NOTHROW(on_lazy = entry.run(lazy));
      CHECK(on_lazy == entry.run(dense));
    } else {
      CHECK_THROWS_AS(entry.run(lazy), tensordict::TypeError);
      CHECK_THROWS_WITH(entry.run(lazy),
                        Catch::Matchers::ContainsSubstring("LazyStackedTensorDict"));
    }
    ++checked;
  }
  CHECK(checked > 150);
}

TEST_CASE("the lazy-forms table names each member once", "[lazy][forms]") {
  std::set<std::string> seen;
  for (const auto& entry : lazy_forms::entries()) {
    INFO(entry.member);
    CHECK(seen.insert(entry.member).second);
    CHECK((entry.form == lazy_forms::Form::NotAnOp) == !entry.run);
  }
}
