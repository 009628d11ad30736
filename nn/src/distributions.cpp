// Distributions (tensordict/nn/distributions.h), computed as torch.distributions computes them,
// so that a policy trained in Python gives the same log-probabilities here.
#include "tensordict/nn/distributions.h"

#include <ATen/ATen.h>

#include <string>

#include "tensordict/errors.h"

namespace tensordict::nn {
namespace {

const at::Tensor& param(const std::map<std::string, at::Tensor>& params, const char* distribution,
                        const std::string& name) {
  const auto it = params.find(name);
  if (it == params.end()) {
    throw KeyError(std::string(distribution) + " needs the parameter '" + name +
                   "', which no in_key gives");
  }
  return it->second;
}

}  // namespace

at::Tensor Distribution::rsample() const {
  throw Error(std::string(name()) + " has no reparameterized sample (rsample)");
}

at::Tensor Distribution::median() const {
  throw Error(std::string(name()) + ".median is not implemented (as in torch.distributions)");
}

at::Tensor Distribution::value(InteractionType type) const {
  switch (type) {
    case InteractionType::Mode:
      return mode();
    case InteractionType::Median:
      return median();
    case InteractionType::Mean:
      return mean();
    case InteractionType::Random:
      return has_rsample() ? rsample() : sample();
    case InteractionType::Deterministic:
      return value(deterministic());
  }
  throw Error("unknown InteractionType");
}

// ---- Normal ------------------------------------------------------------------------------------

Normal::Normal(at::Tensor loc, at::Tensor scale) {
  if (!(scale > 0).all().item<bool>()) {
    throw ValueError("Normal: every scale must be positive (Python's constraint GreaterThan(0))");
  }
  auto both = at::broadcast_tensors({loc, scale});
  loc_ = std::move(both[0]);
  scale_ = std::move(both[1]);
}

at::Tensor Normal::sample() const {
  const at::NoGradGuard no_grad;
  return at::normal(loc_, scale_);
}

at::Tensor Normal::rsample() const { return loc_ + at::randn_like(loc_) * scale_; }

at::Tensor Normal::log_prob(const at::Tensor& value) const {
  constexpr double kLogSqrtTwoPi = 0.91893853320467274178;  // log(sqrt(2 pi))
  const at::Tensor var = scale_.pow(2);
  return -((value - loc_).pow(2)) / (2 * var) - scale_.log() - kLogSqrtTwoPi;
}

// ---- Categorical -------------------------------------------------------------------------------

Categorical::Categorical(const at::Tensor& logits, bool are_probs) {
  if (are_probs) {
    const at::Tensor probs = logits / logits.sum(-1, true);
    // As torch's probs_to_logits: clamp to the dtype's eps before the log.
    const double eps =
        probs.scalar_type() == at::kDouble ? 2.220446049250313e-16 : 1.1920928955078125e-07;
    logits_ = probs.clamp(eps, 1 - eps).log();
  } else {
    logits_ = logits - logits.logsumexp(-1, true);
  }
}

at::Tensor Categorical::sample() const {
  const at::NoGradGuard no_grad;
  const at::Tensor probs = logits_.exp();
  const at::Tensor flat = probs.reshape({-1, probs.size(-1)});
  return at::multinomial(flat, 1, true).reshape(probs.sizes().slice(0, probs.dim() - 1));
}

at::Tensor Categorical::log_prob(const at::Tensor& value) const {
  auto both = at::broadcast_tensors({value.to(at::kLong).unsqueeze(-1), logits_});
  const at::Tensor index = both[0].narrow(-1, 0, 1);
  return both[1].gather(-1, index).squeeze(-1);
}

at::Tensor Categorical::mean() const {
  return at::full(logits_.sizes().slice(0, logits_.dim() - 1), NAN, logits_.options());
}

at::Tensor Categorical::mode() const { return logits_.argmax(-1); }

// ---- OneHotCategorical -------------------------------------------------------------------------

at::Tensor OneHotCategorical::sample() const {
  return at::one_hot(Categorical::sample(), logits_.size(-1)).to(logits_.scalar_type());
}

at::Tensor OneHotCategorical::log_prob(const at::Tensor& value) const {
  return Categorical::log_prob(std::get<1>(value.max(-1)));
}

at::Tensor OneHotCategorical::mean() const { return logits_.exp(); }

at::Tensor OneHotCategorical::mode() const {
  return at::one_hot(Categorical::mode(), logits_.size(-1)).to(logits_.scalar_type());
}

// ---- classes and helpers -----------------------------------------------------------------------

DistributionClass normal() {
  return [](const std::map<std::string, at::Tensor>& params) {
    return std::make_shared<Normal>(param(params, "Normal", "loc"),
                                    param(params, "Normal", "scale"));
  };
}

namespace {
template <class D>
DistributionClass categorical_class(const char* name) {
  return [name](const std::map<std::string, at::Tensor>& params) -> std::shared_ptr<Distribution> {
    if (params.count("probs") != 0) return std::make_shared<D>(params.at("probs"), true);
    return std::make_shared<D>(param(params, name, "logits"));
  };
}
}  // namespace

DistributionClass categorical() { return categorical_class<Categorical>("Categorical"); }

DistributionClass one_hot_categorical() {
  return categorical_class<OneHotCategorical>("OneHotCategorical");
}

std::tuple<at::Tensor, at::Tensor> normal_param_extractor(const at::Tensor& x, double scale_lb) {
  // biased_softplus(1.0) with its default min_val 0.01: softplus(x + b) + 0.01, where
  // b = inv_softplus(1.0 - 0.01) = log(expm1(0.99)), computed in float32 as Python does.
  constexpr double kMinVal = 0.01;
  const double bias =
      at::scalar_tensor(1.0 - kMinVal, at::kFloat).expm1().clamp_min(1e-6).log().item<double>();
  const auto halves = x.chunk(2, -1);
  const at::Tensor scale = (at::softplus(halves[1] + bias) + kMinVal).clamp_min(scale_lb);
  return {halves[0], scale};
}

}  // namespace tensordict::nn
