// tensordict v0.14.0's TypedTensorDict tests (test/tensorclass/test_typedtensordict.py) on the
// classes of tests/goldens/typed.yaml: the Python classes tcgen writes from it run the tests
// themselves (typed_tensordict.py, in the sid chroot), and the C++ classes run the ones that apply
// here, named after them. What C++ checks when it compiles (a missing or an unexpected constructor
// field, an undeclared attribute, spreading `**state` into a call) has no case; docs/parity.md
// counts them.
#include <ATen/ATen.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include "catch2_compat.h"

#include "python_peer.h"
#include "tensordict/errors.h"
#include "tensordict/lazy_stack.h"
#include "typed.h"

using golden::Empty;
using golden::FrozenChild;
using golden::FrozenClass;
using golden::ObservedState;
using golden::PredictorState;
using golden::ShadowChild;
using golden::ShadowClass;
using golden::ShadowFrozenClass;
using golden::SurvivalState;
using tensordict::BatchSize;
using tensordict::TensorDict;

namespace {

// A PredictorState of batch [5] whose leaves are 3, 4 and 1 wide.
PredictorState five_rows() {
  return PredictorState({at::randn({5, 3}), at::randn({5, 4}), at::randn({5, 1})}, {5});
}

// The same leaves as a plain TensorDict.
TensorDict five_rows_td() {
  TensorDict td({}, {5});
  td.set("eta", at::randn({5, 3}));
  td.set("X", at::randn({5, 4}));
  td.set("beta", at::randn({5, 1}));
  return td;
}

std::set<std::string> key_names(const TensorDict& td) {
  std::set<std::string> out;
  for (const auto& k : td.keys()) out.insert(k.front());
  return out;
}

std::set<std::string> field_names(const tensordict::ClassSpec& spec, bool optional) {
  std::set<std::string> out;
  for (const auto& f : spec.fields)
    if (f.optional == optional) out.insert(f.name);
  return out;
}

ObservedState observed(std::optional<at::Tensor> noise = std::nullopt) {
  return ObservedState({at::randn({3}), at::randn({3}), at::randn({3}), at::randn({3}),
                        at::randn({3}), std::move(noise)},
                       {3});
}

}  // namespace

TEST_CASE("typed construction: batch size device and names", "[tensorclass][typed]") {
  // test_basic_construction, test_device, test_names, test_multidim_batch
  const PredictorState state = five_rows();
  const TensorDict& as_td = state;  // a TensorDict, as Python's TypedTensorDict is one
  CHECK(as_td.batch_size() == BatchSize{5});
  const PredictorState on_cpu({at::randn({3}), at::randn({3}), at::randn({3})}, {3}, at::kCPU);
  CHECK(on_cpu.device() == at::Device(at::kCPU));
  const PredictorState named({at::randn({3, 2}), at::randn({3, 2}), at::randn({3, 2})}, {3, 2},
                             std::nullopt, tensordict::DimNames{"batch", "time"});
  CHECK((named.names() == tensordict::DimNames{"batch", "time"}));
  const PredictorState wide({at::randn({4, 6, 1}), at::randn({4, 6, 3}), at::randn({4, 6, 1})},
                            {4, 6});
  CHECK(wide.batch_size() == BatchSize{4, 6});
}

TEST_CASE("typed field access by accessor and by key", "[tensorclass][typed]") {
  // test_attribute_access, test_string_key_access, test_attribute_set, test_string_key_set,
  // test_keys
  PredictorState state({at::randn({3, 2}), at::randn({3, 4}), at::randn({3, 1})}, {3});
  CHECK(state.eta().sizes() == at::IntArrayRef{3, 2});
  CHECK(state.X().sizes() == at::IntArrayRef{3, 4});
  CHECK(state.get<at::Tensor>("beta").sizes() == at::IntArrayRef{3, 1});
  state.set_eta(at::ones({3, 2}));
  CHECK(state.eta().equal(at::ones({3, 2})));
  state.set("eta", at::zeros({3, 2}));
  CHECK(state.get<at::Tensor>("eta").equal(at::zeros({3, 2})));
  CHECK(key_names(state) == std::set<std::string>{"eta", "X", "beta"});
}

TEST_CASE("typed inheritance accumulates fields and options", "[tensorclass][typed]") {
  // test_isinstance, test_field_accumulation, test_required_vs_optional,
  // test_three_level_inheritance, test_spread_to_child (a base built up into a derived class)
  const std::set<std::string> base{"eta", "X", "beta"};
  CHECK(field_names(PredictorState::class_spec(), false) == base);
  CHECK(field_names(PredictorState::class_spec(), true).empty());
  CHECK(field_names(ObservedState::class_spec(), false) ==
        std::set<std::string>{"eta", "X", "beta", "y", "mu"});
  CHECK(field_names(ObservedState::class_spec(), true) == std::set<std::string>{"noise"});
  CHECK(SurvivalState::fields().size() == 9);

  const SurvivalState surv(
      {at::randn({3}), at::randn({3}), at::randn({3}), at::randn({3}), at::randn({3}), std::nullopt,
       at::randn({3}), at::randn({3}), at::randn({3})},
      {3});
  CHECK(surv.keys().size() == 8);       // noise not set
  const PredictorState as_base = surv;  // a derived object is usable as its base
  CHECK(as_base.eta().equal(surv.eta()));
  const ObservedState middle = surv;
  CHECK(middle.mu().equal(surv.mu()));

  TensorDict grown = five_rows();
  grown.set("y", at::randn({5, 3}));
  grown.set("mu", grown.get("eta"));
  const ObservedState obs = ObservedState::from_tensordict(grown);
  CHECK(key_names(obs) == std::set<std::string>{"eta", "X", "beta", "y", "mu"});
  CHECK(obs.mu().equal(obs.eta()));
}

TEST_CASE("a typed optional field is left out or given", "[tensorclass][typed]") {
  // test_optional_omitted, test_optional_provided, test_access_missing_optional
  const ObservedState without = observed();
  CHECK_FALSE(without.contains("noise"));
  CHECK(key_names(without) == std::set<std::string>{"eta", "X", "beta", "y", "mu"});
  CHECK_FALSE(without.noise().has_value());
  const ObservedState with = observed(at::randn({3}));
  CHECK(with.contains("noise"));
  CHECK(with.noise()->sizes() == at::IntArrayRef{3});
}

TEST_CASE("TensorDict operations keep the typed class", "[tensorclass][typed]") {
  // test_clone, test_slice, test_index, test_to_device, test_contiguous, test_stack, test_cat,
  // test_unbind, test_apply, test_update, test_to_dict, test_select, test_exclude
  PredictorState state = five_rows();
  const PredictorState copy = state.clone();
  CHECK(copy.eta().equal(state.eta()));
  CHECK(copy.eta().data_ptr() != state.eta().data_ptr());
  const PredictorState part = state.index({at::indexing::Slice(0, 3)});
  CHECK(part.batch_size() == BatchSize{3});
  const PredictorState row = state.index({0});
  CHECK(row.batch_size() == BatchSize{});
  CHECK(row.eta().sizes() == at::IntArrayRef{3});
  CHECK(state.to(at::kCPU).device() == at::Device(at::kCPU));
  CHECK(key_names(state.contiguous()) == key_names(state));

  std::vector<PredictorState> four;
  for (int i = 0; i < 4; ++i)
    four.push_back(PredictorState({at::randn({3, 2}), at::randn({3, 2}), at::randn({3, 2})}, {3}));
  CHECK(PredictorState::stack(four).batch_size() == BatchSize{4, 3});
  CHECK(PredictorState::cat(four).batch_size() == BatchSize{12});
  CHECK(state.unbind(0).size() == 5);

  const PredictorState doubled = state.apply([](const at::Tensor& t) { return t * 2; });
  CHECK(doubled.eta().equal(state.eta() * 2));
  TensorDict ones({}, {5});
  ones.set("eta", at::ones({5, 3}));
  state.update(ones);
  CHECK(state.eta().equal(at::ones({5, 3})));
  const auto dict = state.to_dict();
  CHECK(dict.size() == 3);
  CHECK(dict.contains("X"));
  CHECK(key_names(state.select({"eta", "X"})) == std::set<std::string>{"eta", "X"});
  CHECK(key_names(state.exclude({"beta"})) == std::set<std::string>{"eta", "X"});
}

TEST_CASE("typed class options: shadow and frozen and their inheritance", "[tensorclass][typed]") {
  // test_shadow_allows_conflicting_names, test_shadow_set_via_attr, test_frozen,
  // test_frozen_prevents_modification, test_combined_options, test_option_propagation,
  // test_option_propagation_shadow
  ShadowClass s({at::randn({3, 2}), at::randn({3, 4})}, {3});
  CHECK(s.data().sizes() == at::IntArrayRef{3, 2});
  CHECK(s.field_clone().sizes() == at::IntArrayRef{3, 4});
  s.set_data(at::ones({3, 2}));
  CHECK(s.data().equal(at::ones({3, 2})));
  CHECK(s.clone().field_clone().equal(s.field_clone()));  // the member is still there

  FrozenClass frozen({at::randn({3})}, {3});
  CHECK(frozen.is_locked());
  CHECK_THROWS_AS(frozen.set("x", at::ones({3})), tensordict::LockedError);
  const ShadowFrozenClass both({at::randn({3, 2})}, {3});
  CHECK(both.data().sizes() == at::IntArrayRef{3, 2});
  CHECK(both.is_locked());
  CHECK(FrozenChild::class_spec().options.frozen);
  CHECK(FrozenChild({at::randn({3}), at::randn({3})}, {3}).is_locked());
  CHECK(ShadowChild::class_spec().options.shadow);
  const ShadowChild child({at::randn({3}), at::randn({3}), at::randn({3})}, {3});
  CHECK(child.data().sizes() == at::IntArrayRef{3});
}

TEST_CASE("typed edge cases: empty class rows contains length repr", "[tensorclass][typed]") {
  // test_empty_subclass, test_batch_iter, test_contains, test_len, test_repr
  const Empty empty(Empty::Args{}, {3});
  CHECK(empty.batch_size() == BatchSize{3});
  CHECK(empty.keys().empty());
  const PredictorState state({at::randn({4, 3}), at::randn({4, 3}), at::randn({4, 3})}, {4});
  int64_t rows = 0;
  for (const PredictorState& row : state.unbind(0)) rows += row.batch_size().empty() ? 1 : 0;
  CHECK(rows == 4);
  CHECK(state.contains("eta"));
  CHECK_FALSE(state.contains("nonexistent"));
  CHECK(state.batch_size()[0] == 4);  // Python's len()
  std::ostringstream text;
  text << state;
  CHECK_THAT(text.str(), Catch::Matchers::ContainsSubstring("PredictorState"));
}

TEST_CASE("typed from_tensordict wraps and checks", "[tensorclass][typed]") {
  // test_from_tensordict_basic, test_from_tensordict_live_link, test_from_tensordict_operations,
  // test_from_tensordict_stack, test_from_tensordict_check_false_empty, _partial, _then_fill
  TensorDict td = five_rows_td();
  PredictorState state = PredictorState::from_tensordict(td);
  CHECK(state.batch_size() == BatchSize{5});
  CHECK(state.eta().sizes() == at::IntArrayRef{5, 3});
  state.set_eta(at::ones({5, 3}));  // a live link: the wrapped TensorDict sees it
  CHECK(td.get("eta").equal(at::ones({5, 3})));
  CHECK(PredictorState::from_tensordict(state.clone()).eta().equal(state.eta()));
  const PredictorState row = state.index({0});
  CHECK(row.batch_size() == BatchSize{});
  CHECK(state.expand({2, 5}).batch_size() == BatchSize{2, 5});
  CHECK(PredictorState::stack({state, PredictorState::from_tensordict(five_rows_td())})
            .batch_size() == BatchSize{2, 5});

  // The C++ classes wrap as Python's @tensorclass does: a missing field reads as not set
  // (test_from_tensordict_check_false_partial, _then_fill), and a key that is no field is refused
  // (TypedTensorDict keeps it: test_from_tensordict_extra_keys differs, as do the check=True
  // refusals of missing fields, which C++ makes at construction, when it compiles).
  TensorDict partial({}, {5});
  partial.set("eta", at::randn({5, 3}));
  PredictorState filling = PredictorState::from_tensordict(partial);
  CHECK(filling.eta().sizes() == at::IntArrayRef{5, 3});
  CHECK_THROWS_WITH(filling.X(), Catch::Matchers::ContainsSubstring("PredictorState.X is None"));
  filling.set_X(at::randn({5, 4}));
  filling.set_beta(at::randn({5, 1}));
  CHECK(key_names(filling) == std::set<std::string>{"eta", "X", "beta"});
  CHECK(PredictorState::from_tensordict(TensorDict({}, {5})).keys().empty());

  TensorDict extra = five_rows_td();
  extra.set("extra", at::randn({5}));
  CHECK_THROWS_WITH(PredictorState::from_tensordict(extra),
                    Catch::Matchers::ContainsSubstring("extra"));
}

TEST_CASE("typed from_tensordict of a lazy stack and of a memmap", "[tensorclass][typed]") {
  // test_from_tensordict_lazy_stack, test_from_tensordict_memmap
  std::vector<TensorDict> rows;
  for (int i = 0; i < 2; ++i) {
    TensorDict r({}, {});
    r.set("eta", at::randn({3}));
    r.set("X", at::randn({4}));
    r.set("beta", at::randn({1}));
    rows.push_back(r);
  }
  const PredictorState stacked = PredictorState::from_tensordict(tensordict::lazy_stack(rows));
  CHECK(stacked.batch_size() == BatchSize{2});
  CHECK(stacked.eta().sizes() == at::IntArrayRef{2, 3});

  const std::string dir =
      std::filesystem::temp_directory_path() / ("tc-typed-memmap-" + std::to_string(::getpid()));
  TensorDict td = five_rows_td();
  td.memmap_(dir);
  const PredictorState mapped = PredictorState::from_tensordict(td);
  CHECK(mapped.is_memmap());
  CHECK(mapped.eta().sizes() == at::IntArrayRef{5, 3});
  std::filesystem::remove_all(dir);
}

TEST_CASE("the TypedTensorDict port runs on the emitted Python classes",
          "[tensorclass][typed][python][peer][needs-peer]") {
  tc_test::require_python_peer("tensordict");
  const std::string command = "PYTHONDONTWRITEBYTECODE=1 PYTHONPATH='" TC_SOURCE_DIR
                              "/tests/goldens/python_typed/typed' '" +
                              tc_test::python_peer() +
                              "' '" TC_SOURCE_DIR "/tests/tensorclass/typed_tensordict.py'";
  CHECK(std::system(command.c_str()) == 0);
}
