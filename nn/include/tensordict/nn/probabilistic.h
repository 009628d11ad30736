#pragma once
/// \file
/// Stochastic policies on TensorDicts (Python's ProbabilisticTensorDictModule and
/// ProbabilisticTensorDictSequential): a distribution built from entries of the TensorDict, and
/// a value drawn from it (a sample, its mode or mean, per the interaction type) written at the
/// out_key, with its log-probability when asked.
///
/// \code
///   // obs -> Linear -> NormalParamExtractor -> (loc, scale) -> Normal -> action
///   TensorDictModule net([linear](const at::Tensor& obs) mutable {
///     return normal_param_extractor(linear->forward(obs));
///   }, {"obs"}, {"loc", "scale"});
///   ProbabilisticTensorDictModule sampler({"loc", "scale"}, {"action"}, normal(),
///                                         {InteractionType::Deterministic, true});
///   ProbabilisticTensorDictSequential actor(net, sampler);
///   actor(data);  // writes loc, scale, action (= loc) and action_log_prob
/// \endcode

#include <optional>

#include "tensordict/nn/distributions.h"
#include "tensordict/nn/module.h"

namespace tensordict::nn {

/// The interaction type set for the current thread, or nullopt (modules then use their own
/// default): Python's interaction_type().
std::optional<InteractionType> interaction_type();

/// Python's `with set_interaction_type(type):` for the current thread, until destroyed.
class InteractionTypeGuard {
 public:
  /// Sets the type; the destructor restores the one before.
  explicit InteractionTypeGuard(InteractionType type);
  ~InteractionTypeGuard();
  InteractionTypeGuard(const InteractionTypeGuard&) = delete;
  InteractionTypeGuard& operator=(const InteractionTypeGuard&) = delete;

 private:
  std::optional<InteractionType> previous_;
};

/// How a ProbabilisticTensorDictModule draws and reports its value.
struct ProbabilisticOptions {
  /// Used when no InteractionTypeGuard is active (Python's default_interaction_type).
  InteractionType default_interaction_type = InteractionType::Deterministic;
  /// Also write the value's log-probability (Python's return_log_prob).
  bool return_log_prob = false;
  /// Where: by default the out_key with "_log_prob" appended to its last part
  /// ("action_log_prob"), as Python names it.
  std::optional<NestedKey> log_prob_key;
};

/// Python's ProbabilisticTensorDictModule: reads the distribution's parameters at its in_keys
/// (each named by its key's last part: "loc", "scale", "logits"; or by by_argument()),
/// builds the distribution and writes the value drawn at its one out_key, then the log-prob at
/// log_prob_key when asked (which then is an out_key too).
class ProbabilisticTensorDictModule : public TensorDictModule {
 public:
  /// Parameters named by their keys' last parts.
  ProbabilisticTensorDictModule(const std::vector<NestedKey>& in_keys, NestedKey out_key,
                                DistributionClass distribution, ProbabilisticOptions options = {});
  /// Parameters named explicitly: (parameter, key) pairs, as Python's dict in_keys
  /// (`{{"probs", "p"}}`).
  static ProbabilisticTensorDictModule by_argument(const ArgumentKeys& in_keys, NestedKey out_key,
                                                   DistributionClass distribution,
                                                   ProbabilisticOptions options = {});

  /// The distribution the entries at the in_keys give (KeyError naming a missing in_key).
  std::shared_ptr<Distribution> get_dist(const TensorDict& td) const;
  /// Where the log-prob goes (written only with return_log_prob).
  const NestedKey& log_prob_key() const { return log_prob_key_; }

 private:
  ProbabilisticTensorDictModule(const ArgumentKeys& in_keys, const NestedKey& out_key,
                                const DistributionClass& distribution,
                                const ProbabilisticOptions& options, const NestedKey& log_prob_key);

  ArgumentKeys params_;
  DistributionClass distribution_;
  NestedKey log_prob_key_;
};

/// Python's ProbabilisticTensorDictSequential: a TensorDictSequential whose last module is a
/// ProbabilisticTensorDictModule; get_dist runs the others and returns its distribution.
class ProbabilisticTensorDictSequential : public TensorDictSequential {
 public:
  /// TypeError unless the last module is probabilistic.
  template <class... M>
  explicit ProbabilisticTensorDictSequential(M... modules)
      : ProbabilisticTensorDictSequential(
            std::vector<std::shared_ptr<const TensorDictModuleBase>>{
                std::make_shared<const M>(std::move(modules))...},
            0) {}

  /// The distribution of the last module, on a copy of `td`'s structure that the other modules
  /// write into (`td` is left unchanged).
  std::shared_ptr<Distribution> get_dist(const TensorDict& td) const;

 private:
  ProbabilisticTensorDictSequential(
      std::vector<std::shared_ptr<const TensorDictModuleBase>> modules, int);
  const ProbabilisticTensorDictModule& last() const;
};

}  // namespace tensordict::nn
