// Stochastic policies: distributions as torch.distributions defines them, NormalParamExtractor,
// ProbabilisticTensorDictModule and ProbabilisticTensorDictSequential with Python tensordict
// 0.14's keys ("<out_key>_log_prob"), interaction types and defaults. The expected values are
// computed here from the documented formulas, independently of the code under test.
// Before Catch: torch's headers bring glog's CHECK, which Catch's must replace.
#include "catch2_compat.h"
#include "tensordict/nn/probabilistic.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include <cmath>

using namespace tensordict;
using namespace tensordict::nn;

namespace {

constexpr double kLogSqrtTwoPi = 0.91893853320467274178;

bool close(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && a.allclose(b, 1e-6, 1e-6);
}

// obs [B, 3] -> Linear(3, 4) -> NormalParamExtractor -> loc, scale [B, 2] -> Normal -> action.
struct NormalPolicy {
  torch::nn::Linear linear{3, 4};
  TensorDictModule net{[linear = linear](const at::Tensor& obs) mutable {
                         return normal_param_extractor(linear->forward(obs));
                       },
                       {"obs"},
                       {"loc", "scale"},
                       "net"};
  ProbabilisticTensorDictModule sampler{
      {"loc", "scale"}, "action", normal(), {InteractionType::Deterministic, true, std::nullopt}};
  ProbabilisticTensorDictSequential actor{net, sampler};
};

}  // namespace

TEST_CASE("NormalParamExtractor maps 0 to a scale of 1 and splits the last dim",
          "[nn][probabilistic]") {
  const auto [loc, scale] = normal_param_extractor(at::zeros({5, 4}));
  CHECK(close(loc, at::zeros({5, 2})));
  CHECK(close(scale, at::ones({5, 2})));  // biased_softplus_1.0: fn(0) = 1
  const at::Tensor x = at::linspace(-30, 3, 8).reshape({2, 4});
  const auto [loc2, scale2] = normal_param_extractor(x);
  const float bias = std::log(std::expm1(0.99F));
  const at::Tensor raw = x.narrow(-1, 2, 2);
  CHECK(close(loc2, x.narrow(-1, 0, 2)));
  CHECK(close(scale2, (at::log1p(at::exp(raw + bias)) + 0.01).clamp_min(1e-4)));
}

TEST_CASE("a Normal policy's deterministic action is its loc, with its log-prob",
          "[nn][probabilistic]") {
  NormalPolicy policy;
  CHECK(policy.sampler.out_keys() == std::vector<NestedKey>{"action", "action_log_prob"});
  CHECK(policy.actor.out_keys() ==
        std::vector<NestedKey>{"loc", "scale", "action", "action_log_prob"});
  TensorDict td({{"obs", at::randn({6, 3})}}, {6});
  policy.actor(td);
  const at::Tensor loc = td.get("loc");
  const at::Tensor scale = td.get("scale");
  CHECK(close(td.get("action"), loc));
  // log N(loc; loc, scale) = -log(scale) - log(sqrt(2 pi)), per element.
  CHECK(close(td.get("action_log_prob"), -scale.log() - kLogSqrtTwoPi));

  for (const auto type : {InteractionType::Mode, InteractionType::Mean}) {
    const InteractionTypeGuard guard(type);
    CHECK(close(policy.actor(td.select({"obs"})).get("action"), loc));
  }
  {  // as Python's: torch's Normal has no median (NotImplementedError there)
    const InteractionTypeGuard guard(InteractionType::Median);
    CHECK_THROWS_WITH(policy.actor(td.select({"obs"})),
                      Catch::Matchers::ContainsSubstring("Normal.median is not implemented"));
  }
  // get_dist runs the network on a copy: td is not written.
  const TensorDict obs_only = td.select({"obs"});
  const auto dist = policy.actor.get_dist(obs_only);
  CHECK(std::string(dist->name()) == "Normal");
  CHECK(close(dist->mean(), loc));
  CHECK(obs_only.keys() == std::vector<NestedKey>{"obs"});
}

TEST_CASE("a random action is loc + scale * a standard normal draw, with its log-prob",
          "[nn][probabilistic]") {
  NormalPolicy policy;
  TensorDict td({{"obs", at::randn({6, 3})}}, {6});
  policy.net(td);
  const at::Tensor loc = td.get("loc");
  const at::Tensor scale = td.get("scale");
  at::manual_seed(7);
  const at::Tensor eps = at::randn({6, 2});
  at::manual_seed(7);
  {
    const InteractionTypeGuard random(InteractionType::Random);
    CHECK(interaction_type() == InteractionType::Random);
    policy.sampler(td);
  }
  CHECK_FALSE(interaction_type().has_value());
  const at::Tensor action = td.get("action");
  CHECK(close(action, loc + eps * scale));  // rsample: gradients reach loc and scale
  CHECK(action.requires_grad());
  CHECK(close(td.get("action_log_prob"),
              -(action - loc).pow(2) / (2 * scale.pow(2)) - scale.log() - kLogSqrtTwoPi));
}

TEST_CASE("categorical policies act by their mode, with the log-softmax as log-prob",
          "[nn][probabilistic]") {
  const at::Tensor logits = at::randn({5, 4});
  const at::Tensor log_softmax = logits.log_softmax(-1);
  const at::Tensor best = logits.argmax(-1);
  TensorDict td({{"logits", logits}}, {5});
  ProbabilisticTensorDictModule discrete({"logits"}, "action", categorical(),
                                         {InteractionType::Deterministic, true, std::nullopt});
  discrete(td);
  CHECK(td.get("action").equal(best));
  CHECK(close(td.get("action_log_prob"), log_softmax.gather(-1, best.unsqueeze(-1)).squeeze(-1)));
  CHECK(discrete.get_dist(td)->mean().isnan().all().item<bool>());  // no mean, as in Python

  ProbabilisticTensorDictModule one_hot({"logits"}, {"agent", "action"}, one_hot_categorical(),
                                        {InteractionType::Deterministic, true, std::nullopt});
  CHECK(one_hot.log_prob_key() == NestedKey{"agent", "action_log_prob"});
  one_hot(td);
  CHECK(td.get({"agent", "action"}).equal(at::one_hot(best, 4).to(at::kFloat)));
  CHECK(close(td.get({"agent", "action_log_prob"}), td.get("action_log_prob")));

  // From probabilities, by an explicit parameter name; a random draw is a valid class.
  TensorDict probs({{"p", logits.softmax(-1)}}, {5});
  ProbabilisticTensorDictModule from_probs = ProbabilisticTensorDictModule::by_argument(
      {{"probs", "p"}}, "action", categorical(), {InteractionType::Random, true, NestedKey("lp")});
  from_probs(probs);
  const at::Tensor drawn = probs.get("action");
  CHECK(((drawn >= 0) & (drawn < 4)).all().item<bool>());
  CHECK(close(probs.get("lp"), log_softmax.gather(-1, drawn.unsqueeze(-1)).squeeze(-1)));
}

TEST_CASE("probabilistic modules refuse what they cannot build", "[nn][probabilistic]") {
  TensorDict td({{"loc", at::zeros({3})}, {"scale", at::zeros({3})}}, {3});
  ProbabilisticTensorDictModule no_scale({"loc"}, "action", normal());
  CHECK_THROWS_MATCHES(no_scale(td), KeyError,
                       Catch::Matchers::Message("Normal needs the parameter 'scale', which no "
                                                "in_key gives"));
  ProbabilisticTensorDictModule zero_scale({"loc", "scale"}, "action", normal());
  CHECK_THROWS_AS(zero_scale(td), ValueError);
  CHECK_FALSE(td.contains("action"));
  TensorDictModule plain([](const at::Tensor& x) { return x; }, {"loc"}, {"y"});
  CHECK_THROWS_AS(ProbabilisticTensorDictSequential(plain), TypeError);
}
