// TensorDictModule and TensorDictSequential: callables, torch::nn holders and AnyModule; nested
// keys, tuples, errors naming the module and the key; chains and select_out_keys; tensorclasses.
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>
#include "catch2_compat.h"
#include "nn_test_util.h"

#include "tensordict/nn/module.h"
#ifdef TC_NN_TENSORCLASS_TESTS
#include "policy.h"
#endif

using namespace tensordict;
using nn_test::same;
using namespace tensordict::nn;
using Catch::Matchers::ContainsSubstring;

namespace {

TensorDict batch_of(int64_t n) {
  return TensorDict({{"obs", at::randn({n, 4})}, {"target", at::randn({n, 2})}}, {n});
}

}  // namespace

TEST_CASE("a callable writes its output at the out_key, in place", "[nn]") {
  TensorDict td = batch_of(5);
  TensorDictModule doubler([](const at::Tensor& x) { return x * 2; }, {"obs"}, {"twice"});
  TensorDict out = doubler(td);
  CHECK(out.is_same(td));
  CHECK(same(td.get("twice"), td.get("obs") * 2));
  CHECK(doubler.in_keys() == std::vector<NestedKey>{"obs"});
  CHECK(doubler.out_keys() == std::vector<NestedKey>{"twice"});
  CHECK(doubler.name() == "TensorDictModule");
}

TEST_CASE("nested in_keys and out_keys, several inputs and a tuple of outputs", "[nn]") {
  TensorDict td = batch_of(3);
  td.set({"params", "scale"}, at::full({3, 1}, 3.0));
  TensorDictModule split(
      [](const at::Tensor& x, const at::Tensor& scale) {
        return std::make_tuple(x * scale, (x * scale).sum(-1));
      },
      {"obs", {"params", "scale"}}, {{"out", "y"}, {"out", "y_sum"}});
  split(td);
  const at::Tensor y = td.get("obs") * 3;
  CHECK(same(td.get({"out", "y"}), y));
  CHECK(same(td.get({"out", "y_sum"}), y.sum(-1)));
  CHECK(td.get_tensordict("out").batch_size() == BatchSize{3});
}

TEST_CASE("a std::vector of tensors maps onto the out_keys in order", "[nn]") {
  TensorDict td = batch_of(2);
  TensorDictModule halves([](const at::Tensor& x) { return x.chunk(2, -1); }, {"obs"},
                          {"left", "right"});
  halves(td);
  CHECK(same(td.get("left"), td.get("obs").slice(-1, 0, 2)));
  CHECK(same(td.get("right"), td.get("obs").slice(-1, 2, 4)));
}

TEST_CASE("torch::nn holders and AnyModule run as modules, named after the module", "[nn]") {
  torch::nn::Linear linear(4, 2);
  TensorDict td = batch_of(6);
  TensorDictModule actor(linear, {"obs"}, {"action"});
  CHECK(actor.name() == "torch::nn::Linear");
  actor(td);
  CHECK(same(td.get("action"), linear->forward(td.get("obs"))));

  torch::nn::Sequential mlp(torch::nn::Linear(4, 8), torch::nn::Tanh(), torch::nn::Linear(8, 2));
  TensorDictModule(mlp, {"obs"}, {"mlp"})(td);
  CHECK(same(td.get("mlp"), mlp->forward(td.get("obs"))));

  TensorDictModule any(torch::nn::AnyModule(linear), {"obs"}, {"any"});
  CHECK(any.name() == "torch::nn::Linear");
  any(td);
  CHECK(same(td.get("any"), td.get("action")));
}

TEST_CASE("gradients flow from a TensorDict's output back to the module", "[nn]") {
  torch::nn::Linear linear(4, 2);
  TensorDict td = batch_of(8);
  TensorDictModule(linear, {"obs"}, {"pred"})(td);
  (td.get("pred") - td.get("target")).pow(2).mean().backward();
  REQUIRE(linear->weight.grad().defined());
  CHECK(linear->weight.grad().abs().sum().item<float>() > 0);
}

TEST_CASE("module errors name the module and the key, and change nothing", "[nn]") {
  TensorDict td = batch_of(4);
  const auto keys_before = td.keys();

  TensorDictModule missing([](const at::Tensor& x) { return x; }, {{"next", "obs"}}, {"y"}, "copy");
  CHECK_THROWS_AS(missing(td), KeyError);
  CHECK_THROWS_WITH(missing(td),
                    "TensorDictModule 'copy': missing in_key ('next', 'obs') (it "
                    "takes in_keys [('next', 'obs')])");

  TensorDictModule two_for_one([](const at::Tensor& x) { return std::make_tuple(x, x); }, {"obs"},
                               {"y"}, "pair");
  CHECK_THROWS_WITH(two_for_one(td),
                    "TensorDictModule 'pair': the module returned 2 outputs for 1 out_keys ['y']");

  TensorDictModule summed([](const at::Tensor& x) { return x.sum(); }, {"obs"}, {"total"}, "sum");
  CHECK_THROWS_AS(summed(td), ShapeError);
  CHECK_THROWS_WITH(summed(td),
                    "TensorDictModule 'sum': output 'total' has shape [], whose "
                    "leading dims are not the batch size [4]");

  // A failing second output leaves the first unwritten too (checked before any write).
  TensorDictModule half_bad([](const at::Tensor& x) { return std::make_tuple(x, x.unsqueeze(0)); },
                            {"obs"}, {"ok", "bad"}, "half");
  CHECK_THROWS_WITH(half_bad(td), ContainsSubstring("output 'bad' has shape [1, 4, 4]") &&
                                      !ContainsSubstring("output 'ok'"));

  TensorDictModule unary([](const at::Tensor& x) { return x; }, {"obs", "target"}, {"y"}, "unary");
  CHECK_THROWS_WITH(unary(td),
                    "TensorDictModule 'unary': the module cannot be called with 2 "
                    "tensors (in_keys ['obs', 'target'])");

  td.set("task", "cartpole");
  TensorDictModule on_text([](const at::Tensor& x) { return x; }, {"task"}, {"y"}, "text");
  CHECK_THROWS_AS(on_text(td), TypeError);
  CHECK_THROWS_WITH(on_text(td),
                    "TensorDictModule 'text': in_key 'task' holds NonTensorData, but "
                    "the module takes tensors");
  td.del_("task");
  CHECK(td.keys() == keys_before);
}

TEST_CASE("an exception inside a module names the module and its keys, the original nested",
          "[nn]") {
  TensorDict td = batch_of(4);
  TensorDictModule failing(
      [](const at::Tensor& x) -> at::Tensor { throw std::out_of_range("row 3 is poisoned"); },
      {"obs"}, {"y"}, "poisoned");
  CHECK_THROWS_AS(failing(td), ModuleError);
  CHECK_THROWS_WITH(failing(td),
                    "TensorDictModule 'poisoned' (in_keys ['obs'], out_keys ['y']) "
                    "failed: row 3 is poisoned");
  bool original_reached = false;
  try {
    failing(td);
  } catch (const ModuleError& e) {
    try {
      std::rethrow_if_nested(e);
    } catch (const std::out_of_range& original) {
      original_reached = std::string(original.what()) == "row 3 is poisoned";
    }
  }
  CHECK(original_reached);

  // A torch error keeps its message, without its C++ backtrace.
  torch::nn::Linear linear(3, 2);
  TensorDictModule wrong_width(linear, {"obs"}, {"y"});
  CHECK_THROWS_WITH(wrong_width(td),
                    ContainsSubstring("TensorDictModule 'torch::nn::Linear' (in_keys ['obs'], "
                                      "out_keys ['y']) failed: mat1 and mat2 shapes cannot be "
                                      "multiplied") &&
                        !ContainsSubstring("frame #0"));

  // The runtime's own errors pass through with their type.
  TensorDictModule refusing([](const at::Tensor&) -> at::Tensor { throw ValueError("no"); },
                            {"obs"}, {"y"});
  CHECK_THROWS_AS(refusing(td), ValueError);
  CHECK_FALSE(td.contains("y"));
}

TEST_CASE("a write that fails undoes the outputs written before it", "[nn]") {
  TensorDict td = batch_of(4);
  const at::Tensor old_y = at::zeros({4, 2});
  td.set("y", old_y);
  td.set("t", at::ones({4}));
  // The third out_key goes through the tensor 't': the first two were written, and are undone,
  // the replaced 'y' restored and the new nested 'fresh' removed with its parent.
  TensorDictModule through_tensor(
      [](const at::Tensor& x) { return std::make_tuple(x * 2, x + 1, x); }, {"obs"},
      {"y", {"fresh", "z"}, {"t", "w"}}, "three");
  CHECK_THROWS(through_tensor(td));
  CHECK(td.get("y").equal(old_y));
  CHECK_FALSE(td.contains("fresh"));
  CHECK(td.keys() == std::vector<NestedKey>{"obs", "target", "y", "t"});

  // Into an existing nested TensorDict, only the new leaf goes.
  td.set({"fresh", "kept"}, at::ones({4}));
  CHECK_THROWS(through_tensor(td));
  CHECK(td.get_tensordict("fresh").keys() == std::vector<NestedKey>{"kept"});
}

TEST_CASE("in_keys missing at the end leave out defaulted arguments, as Python passes None",
          "[nn]") {
  // A GRU policy called with and without its hidden state: GRU's forward(input, hx = {}).
  torch::nn::GRU gru(torch::nn::GRUOptions(4, 3));
  TensorDictModule policy(gru, {"obs", "hidden"}, {"features", "hidden"});
  const at::Tensor obs = at::randn({5, 2, 4});  // (seq, batch, features)
  TensorDict td({{"obs", obs}});
  policy(td);
  const auto [from_zero, h1] = gru->forward(obs);
  CHECK(td.get("features").equal(from_zero));
  CHECK(td.get("hidden").equal(h1));
  policy(td);  // now with the hidden state the first call wrote
  const auto [from_h1, h2] = gru->forward(obs, h1);
  CHECK(td.get("features").equal(from_h1));
  CHECK(td.get("hidden").equal(h2));

  // A callable that needs every input: the missing key is named.
  TensorDictModule both([](const at::Tensor& a, const at::Tensor& b) { return a + b; },
                        {"obs", "other"}, {"sum"}, "both");
  CHECK_THROWS_MATCHES(both(td), KeyError,
                       Catch::Matchers::Message("TensorDictModule 'both': missing in_key 'other' "
                                                "(it takes in_keys ['obs', 'other'])"));
  // Only the last in_keys may be missing: a gap would shift the arguments.
  TensorDictModule gap([](const at::Tensor& a, const at::Tensor&) { return a; }, {"absent", "obs"},
                       {"y"}, "gap");
  CHECK_THROWS_MATCHES(gap(td), KeyError,
                       Catch::Matchers::Message("TensorDictModule 'gap': missing in_key "
                                                "'absent', which a later in_key 'obs' follows"));
}

TEST_CASE("TensorDictSequential chains modules and computes its keys", "[nn]") {
  torch::nn::Linear linear(4, 2);
  TensorDictModule actor(linear, {"obs"}, {"action"});
  TensorDictModule loss(
      [](const at::Tensor& a, const at::Tensor& t) { return (a - t).pow(2).mean(-1); },
      {"action", "target"}, {"loss"}, "mse");
  TensorDictModule scale([](const at::Tensor& l) { return l * 0.5; }, {"loss"}, {"loss"}, "half");
  TensorDictSequential seq(actor, loss, scale);
  CHECK(seq.in_keys() == std::vector<NestedKey>{"obs", "target"});
  CHECK(seq.out_keys() == std::vector<NestedKey>{"action", "loss"});
  CHECK(seq.modules().size() == 3);

  TensorDict td = batch_of(5);
  seq(td);
  const at::Tensor action = linear->forward(td.get("obs"));
  CHECK(same(td.get("action"), action));
  CHECK(same(td.get("loss"), (action - td.get("target")).pow(2).mean(-1) * 0.5));

  // Sequentials nest, and the chain's keys see through them.
  TensorDictModule report([](const at::Tensor& l) { return l.mean().expand({5}); }, {"loss"},
                          {"mean_loss"}, "report");
  TensorDictSequential outer(seq, report);
  CHECK(outer.in_keys() == std::vector<NestedKey>{"obs", "target"});
  CHECK(outer.out_keys() == std::vector<NestedKey>{"action", "loss", "mean_loss"});
  TensorDict td2 = batch_of(5);
  outer(td2);
  CHECK(td2.get("mean_loss").allclose(td2.get("loss").mean().expand({5})));
}

TEST_CASE("select_out_keys keeps only the selected outputs", "[nn]") {
  TensorDictModule first([](const at::Tensor& x) { return x + 1; }, {"obs"}, {"hidden"}, "a");
  TensorDictModule second([](const at::Tensor& h) { return h * 2; }, {"hidden"}, {"out"}, "b");
  TensorDictSequential seq(first, second);
  seq.select_out_keys({"out"});
  CHECK(seq.out_keys() == std::vector<NestedKey>{"out"});
  TensorDict td = batch_of(3);
  seq(td);
  CHECK_FALSE(td.contains("hidden"));
  CHECK(same(td.get("out"), (td.get("obs") + 1) * 2));
  CHECK(td.contains("obs"));  // inputs are the caller's: never removed

  CHECK_THROWS_AS(seq.select_out_keys({"nope"}), KeyError);
  CHECK_THROWS_WITH(seq.select_out_keys({"nope"}),
                    "TensorDictSequential.select_out_keys: 'nope' is not an out_key (out_keys "
                    "['hidden', 'out'])");
  seq.reset_out_keys();
  TensorDict td2 = batch_of(3);
  seq(td2);
  CHECK(td2.contains("hidden"));
}

TEST_CASE("select_out_keys and the out key \"_\" on a single module", "[nn]") {
  TensorDictModule split([](const at::Tensor& x) { return std::make_tuple(x + 1, x * 2); }, {"obs"},
                         {"plus", "times"}, "split");
  split.select_out_keys({"times"});
  CHECK(split.out_keys() == std::vector<NestedKey>{"times"});
  CHECK(split.all_out_keys() == std::vector<NestedKey>{"plus", "times"});
  TensorDict td = batch_of(3);
  td.set("plus", at::zeros({3, 4}));  // an unselected out_key's entry goes, as in Python
  split(td);
  CHECK_FALSE(td.contains("plus"));
  CHECK(same(td.get("times"), td.get("obs") * 2));
  CHECK_THROWS_MATCHES(split.select_out_keys({"obs"}), KeyError,
                       Catch::Matchers::Message("TensorDictModule.select_out_keys: 'obs' is not "
                                                "an out_key (out_keys ['plus', 'times'])"));
  split.reset_out_keys();
  split(td);
  CHECK(same(td.get("plus"), td.get("obs") + 1));

  // "_" drops an output, and is no key of a chain.
  TensorDictModule drop([](const at::Tensor& x) { return std::make_tuple(x + 1, x * 2); }, {"obs"},
                        {"_", "times"}, "drop");
  TensorDict td2 = batch_of(3);
  drop(td2);
  CHECK_FALSE(td2.contains("_"));
  CHECK(td2.keys() == std::vector<NestedKey>{"obs", "target", "times"});
  CHECK(TensorDictSequential(drop).out_keys() == std::vector<NestedKey>{"times"});
}

TEST_CASE("write_to: outputs into a new or an empty TensorDict, as Python's inplace", "[nn]") {
  TensorDictModule plus([](const at::Tensor& x) { return x + 1; }, {"obs"}, {"y"}, "plus");
  TensorDict td = batch_of(3);
  plus.write_to(WriteTo::NewTensorDict);  // inplace=False
  TensorDict fresh = plus(td);
  CHECK_FALSE(td.contains("y"));
  CHECK(fresh.keys() == std::vector<NestedKey>{"y"});
  CHECK(fresh.batch_size().empty());
  CHECK(same(fresh.get("y"), td.get("obs") + 1));
  plus.write_to(WriteTo::EmptyLike);  // inplace="empty"
  TensorDict empty_like = plus(td);
  CHECK(empty_like.keys() == std::vector<NestedKey>{"y"});
  CHECK(empty_like.batch_size() == BatchSize{3});
  CHECK_FALSE(td.contains("y"));
  plus.write_to(WriteTo::Input);
  CHECK(plus(td).contains("y"));
}

TEST_CASE("dispatch runs a module on tensors and returns tensors", "[nn]") {
  TensorDictModule split(
      [](const at::Tensor& x, const at::Tensor& t) { return std::make_tuple(x + t, x * t); },
      {"x", {"nested", "t"}}, {"sum", "product"}, "split");
  const at::Tensor x = at::arange(4, at::kFloat);
  const at::Tensor t = at::full({4}, 3.0F);
  const std::vector<at::Tensor> out = split.dispatch(x, t);
  REQUIRE(out.size() == 2);
  CHECK(same(out[0], x + t));
  CHECK(same(out[1], x * t));
  split.select_out_keys({"product"});
  CHECK(split.dispatch(x, t).size() == 1);
  CHECK_THROWS_AS(split.dispatch(x), TypeError);
}

TEST_CASE("SkipExistingGuard skips modules whose out_keys are all present", "[nn]") {
  int calls = 0;
  TensorDictModule counted(
      [&calls](const at::Tensor& x) {
        ++calls;
        return x + 1;
      },
      {"obs"}, {"y"}, "counted");
  TensorDict td = batch_of(2);
  counted(td);
  CHECK(calls == 1);
  CHECK_FALSE(skip_existing());
  {
    SkipExistingGuard skip;
    CHECK(skip_existing());
    counted(td);  // "y" is there: skipped
    CHECK(calls == 1);
    TensorDictSequential chain(counted, counted);
    chain(td);
    CHECK(calls == 1);
    td.del_("y");
    counted(td);  // missing: runs
    CHECK(calls == 2);
    // A module that writes one of its in_keys always runs.
    TensorDictModule update([&calls](const at::Tensor& y) { return ++calls, y * 2; }, {"y"}, {"y"},
                            "update");
    update(td);
    CHECK(calls == 3);
    {
      SkipExistingGuard off(false);
      counted(td);
      CHECK(calls == 4);
    }
    CHECK(skip_existing());
  }
  CHECK_FALSE(skip_existing());
  counted(td);
  CHECK(calls == 5);
}

#ifdef TC_NN_TENSORCLASS_TESTS
TEST_CASE("modules run on tensorclasses through their fields", "[nn][tensorclass]") {
  torch::nn::Linear linear(4, 2);
  TensorDictModule actor(linear, {"obs"}, {"action"});
  TensorDictModule critic([](const at::Tensor& a) { return a.sum(-1, true); }, {"action"},
                          {"value"}, "critic");
  TensorDictSequential policy(actor, critic);

  nntest::Step step({at::randn({3, 4})}, {3});
  CHECK_FALSE(step.action().has_value());
  nntest::Step out = policy(step);
  REQUIRE(step.action().has_value());  // written in place
  CHECK(same(*step.action(), linear->forward(step.obs())));
  CHECK(same(*out.value(), step.action()->sum(-1, true)));

  // The class's checks apply: Step.action is float32 [B, 2].
  TensorDictModule wrong([](const at::Tensor& x) { return x; }, {"obs"}, {"action"}, "wrong");
  CHECK_THROWS(wrong(step));
  // A key that is no field of the class is refused.
  TensorDictModule stray([](const at::Tensor& x) { return x; }, {"obs"}, {"stray"}, "stray");
  CHECK_THROWS(stray(step));

  // Typed in, typed out: the input is left unchanged.
  nntest::Observation obs({at::randn({2, 4})}, {2});
  nntest::Prediction pred = policy.forward_as<nntest::Prediction>(obs);
  CHECK(same(pred.action(), linear->forward(obs.obs())));
  CHECK(same(*pred.value(), pred.action().sum(-1, true)));
  CHECK(pred.batch_size() == BatchSize{2});
  CHECK(obs._tensordict().keys() == std::vector<NestedKey>{"obs"});
}

TEST_CASE("a module writing into a nested field that is None creates it", "[nn][tensorclass]") {
  TensorDictModule step_forward([](const at::Tensor& x) { return x * 2; }, {"obs"},
                                {NestedKey{"next", "obs"}}, "step");
  nntest::Transition t({at::ones({3, 4})}, {3});
  CHECK_FALSE(t.next().has_value());
  step_forward(t);
  REQUIRE(t.next().has_value());
  CHECK(same(t.next()->obs(), at::full({3, 4}, 2.0)));
  CHECK(t.next()->batch_size() == BatchSize{3});
  // The nested class's checks apply to what is written in it: Observation.obs is float32 [B, 4].
  TensorDictModule wrong([](const at::Tensor& x) { return x.sum(-1); }, {"obs"},
                         {NestedKey{"next", "obs"}}, "wrong");
  nntest::Transition fresh({at::ones({3, 4})}, {3});
  CHECK_THROWS_AS(wrong(fresh), tensordict::ShapeError);
  CHECK_FALSE(fresh.next().has_value());  // a refused write changes nothing
}
#endif
