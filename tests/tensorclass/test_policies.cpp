// Python tensordict's non-tensor policies on generated classes: capture_non_tensor_stack (a stack
// of equal NonTensorData stays one value) and list_to_stack (a list given to a field becomes a
// tensor or a NonTensorStack, or stays one NonTensorData list), each a process-wide setting with
// a scope that restores it, as Python's set_* context managers.
#include <ATen/ATen.h>

#include "catch2_compat.h"
#include "contract.h"
#include "fixture.h"
#include "tensordict/non_tensor.h"

using namespace golden;
using tensordict::CaptureNonTensorStack;
using tensordict::ListToStack;

namespace {

RefTC labelled(const std::string& label) { return RefTC({at::zeros({2}), label}, {2}); }

}  // namespace

TEST_CASE("capture_non_tensor_stack: equal NonTensorData stack into one value under it",
          "[tensorclass][policies]") {
  CHECK_FALSE(tensordict::capture_non_tensor_stack());  // tensordict 0.14's default
  const RefTC a = labelled("u");
  // Off: a NonTensorStack, whose rows read the value.
  const RefTC stacked = RefTC::stack({a, a});
  CHECK(stacked.get_value("label").is_non_tensor_stack());
  CHECK(stacked[1][0].label() == "u");
  {
    CaptureNonTensorStack capture(true);
    CHECK(tensordict::capture_non_tensor_stack());
    const RefTC captured = RefTC::stack({a, a});
    REQUIRE(captured.get_value("label").is_non_tensor_data());
    CHECK(captured.label() == "u");
    CHECK(captured.batch_size() == tensordict::BatchSize{2, 2});
    // Different values still make a stack.
    const RefTC mixed = RefTC::stack({a, labelled("v")});
    CHECK(mixed.get_value("label").is_non_tensor_stack());
    CHECK(mixed[1][0].label() == "v");
    // The lazy form reads it the same way.
    CHECK(RefTC::lazy_stack({a, a}).get_non_tensor("label") == "u");
  }
  CHECK_FALSE(tensordict::capture_non_tensor_stack());  // restored with the scope
  CHECK(RefTC::stack({a, a}).get_value("label").is_non_tensor_stack());
}

TEST_CASE("list_to_stack: a list given to a field is a tensor or stack, or one list without it",
          "[tensorclass][policies]") {
  CHECK(tensordict::list_to_stack());  // tensordict 0.14's default
  const Counts stacked(Counts::Args{});
  CHECK(stacked.get_value("ids").is_tensor());
  CHECK(stacked.ids() == std::vector<int64_t>{1, 2, 3});
  {
    ListToStack off(false);
    const Counts kept(Counts::Args{});
    REQUIRE(kept.get_value("ids").is_non_tensor_data());
    CHECK(kept.get_non_tensor("ids") == tensordict::Json({1, 2, 3}));
    CHECK(kept.ids() == std::vector<int64_t>{1, 2, 3});
  }
  CHECK(tensordict::list_to_stack());
}
