#pragma once
/// \file
/// The distributions a stochastic policy samples its actions from (Python's torch.distributions
/// classes, as tensordict.nn uses them): Normal, Categorical and OneHotCategorical, with their
/// samples, log-probabilities and point estimates, and NormalParamExtractor, which splits a
/// network's output into a Normal's loc and scale.

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace tensordict::nn {

/// How a ProbabilisticTensorDictModule turns its distribution into a value (Python's
/// InteractionType).
enum class InteractionType {
  Mode,           ///< the distribution's mode
  Median,         ///< its median, where one is defined (as in torch, none of these has one)
  Mean,           ///< its mean
  Random,         ///< a sample: rsample() where the distribution has one, else sample()
  Deterministic,  ///< the distribution's own point estimate: the mean of a Normal, the mode of a
                  ///< categorical one
};

/// A distribution over tensors, batched over its parameters' shape.
class Distribution {
 public:
  virtual ~Distribution() = default;
  /// Python's class name ("Normal"), for messages.
  virtual const char* name() const = 0;
  /// A sample, without a gradient path.
  virtual at::Tensor sample() const = 0;
  /// A reparameterized sample (gradients flow to the parameters); Error where there is none.
  virtual at::Tensor rsample() const;
  /// Whether rsample() is defined.
  virtual bool has_rsample() const { return false; }
  /// Log-probability of `value`, per element of the batch (and event, for Normal).
  virtual at::Tensor log_prob(const at::Tensor& value) const = 0;
  /// Mean; Error where it is not defined (Categorical).
  virtual at::Tensor mean() const = 0;
  /// Mode.
  virtual at::Tensor mode() const = 0;
  /// Median; Error where it is not defined (as torch's NotImplementedError: Normal has none).
  virtual at::Tensor median() const;
  /// What InteractionType::Deterministic picks: Mean for Normal, Mode for the categorical ones.
  virtual InteractionType deterministic() const = 0;
  /// The value `type` picks.
  at::Tensor value(InteractionType type) const;
};

/// Normal(loc, scale): Python's torch.distributions.Normal.
class Normal final : public Distribution {
 public:
  /// ValueError unless every scale is positive.
  Normal(at::Tensor loc, at::Tensor scale);
  const char* name() const override { return "Normal"; }
  at::Tensor sample() const override;
  at::Tensor rsample() const override;
  bool has_rsample() const override { return true; }
  at::Tensor log_prob(const at::Tensor& value) const override;
  at::Tensor mean() const override { return loc_; }
  at::Tensor mode() const override { return loc_; }
  InteractionType deterministic() const override { return InteractionType::Mean; }

 private:
  at::Tensor loc_;
  at::Tensor scale_;
};

/// Categorical over the last dim of `logits` (unnormalized log-probabilities), or of `probs`:
/// Python's torch.distributions.Categorical. Values are class indices (int64).
class Categorical : public Distribution {
 public:
  /// From logits (or, with `are_probs`, probabilities).
  explicit Categorical(const at::Tensor& logits, bool are_probs = false);
  const char* name() const override { return "Categorical"; }
  at::Tensor sample() const override;
  at::Tensor log_prob(const at::Tensor& value) const override;
  at::Tensor mean() const override;
  at::Tensor mode() const override;
  InteractionType deterministic() const override { return InteractionType::Mode; }

 protected:
  /// The normalized logits: log-probabilities over the last dim.
  at::Tensor logits_;
};

/// OneHotCategorical: Categorical whose values are one-hot vectors (of the logits' dtype), as
/// Python's torch.distributions.OneHotCategorical.
class OneHotCategorical final : public Categorical {
 public:
  using Categorical::Categorical;
  const char* name() const override { return "OneHotCategorical"; }
  at::Tensor sample() const override;
  at::Tensor log_prob(const at::Tensor& value) const override;
  at::Tensor mean() const override;
  at::Tensor mode() const override;
};

/// Makes a distribution from its parameters by name ("loc", "scale"; "logits" or "probs"): what a
/// ProbabilisticTensorDictModule is given as its distribution class.
using DistributionClass =
    std::function<std::shared_ptr<Distribution>(const std::map<std::string, at::Tensor>& params)>;

/// The DistributionClass of Normal, Categorical, OneHotCategorical. KeyError naming the parameter
/// a module's in_keys do not give.
///@{
DistributionClass normal();
DistributionClass categorical();
DistributionClass one_hot_categorical();
///@}

/// Python's NormalParamExtractor: splits the last dim of `x` in two halves, loc and a scale
/// mapped to positive values by `biased_softplus_1.0` (softplus(x + b) + 0.01, b such that 0
/// maps to 1) and clamped below at `scale_lb`. Returns (loc, scale).
std::tuple<at::Tensor, at::Tensor> normal_param_extractor(const at::Tensor& x,
                                                          double scale_lb = 1e-4);

}  // namespace tensordict::nn
