// ProbabilisticTensorDictModule and ProbabilisticTensorDictSequential
// (tensordict/nn/probabilistic.h).
#include "tensordict/nn/probabilistic.h"

#include <utility>

namespace tensordict::nn {
namespace {

thread_local std::optional<InteractionType> current_interaction_type;

ArgumentKeys named_by_last_part(const std::vector<NestedKey>& in_keys) {
  ArgumentKeys params;
  for (const auto& key : in_keys) params.emplace_back(key.back(), key);
  return params;
}

// Python's default: "<out_key>_log_prob", the suffix on the key's last part.
NestedKey default_log_prob_key(const NestedKey& out_key) {
  return out_key.is_nested() ? out_key.parent().child(out_key.back() + "_log_prob")
                             : NestedKey(out_key.back() + "_log_prob");
}

std::shared_ptr<Distribution> make_dist(const ArgumentKeys& params,
                                        const DistributionClass& distribution,
                                        const std::vector<Value>& inputs) {
  std::map<std::string, at::Tensor> tensors;
  for (size_t i = 0; i < inputs.size(); ++i)
    tensors[params[i].first] = detail::input_tensor(inputs, i);
  return distribution(tensors);
}

}  // namespace

std::optional<InteractionType> interaction_type() { return current_interaction_type; }

InteractionTypeGuard::InteractionTypeGuard(InteractionType type)
    : previous_(current_interaction_type) {
  current_interaction_type = type;
}
InteractionTypeGuard::~InteractionTypeGuard() { current_interaction_type = previous_; }

ProbabilisticTensorDictModule::ProbabilisticTensorDictModule(const std::vector<NestedKey>& in_keys,
                                                             NestedKey out_key,
                                                             DistributionClass distribution,
                                                             ProbabilisticOptions options)
    : ProbabilisticTensorDictModule(named_by_last_part(in_keys), out_key, distribution, options,
                                    options.log_prob_key.value_or(default_log_prob_key(out_key))) {}

ProbabilisticTensorDictModule ProbabilisticTensorDictModule::by_argument(
    const ArgumentKeys& in_keys, NestedKey out_key, DistributionClass distribution,
    ProbabilisticOptions options) {
  return ProbabilisticTensorDictModule(
      in_keys, out_key, distribution, options,
      options.log_prob_key.value_or(default_log_prob_key(out_key)));
}

ProbabilisticTensorDictModule::ProbabilisticTensorDictModule(const ArgumentKeys& in_keys,
                                                             const NestedKey& out_key,
                                                             const DistributionClass& distribution,
                                                             const ProbabilisticOptions& options,
                                                             const NestedKey& log_prob_key)
    : TensorDictModule(
          [in_keys, distribution, options](const std::vector<Value>& inputs, const BatchSize&) {
            if (inputs.size() < in_keys.size()) throw detail::WrongInputCount{};
            const auto dist = make_dist(in_keys, distribution, inputs);
            std::vector<Value> outputs;
            const at::Tensor value =
                dist->value(interaction_type().value_or(options.default_interaction_type));
            outputs.emplace_back(value);
            if (options.return_log_prob) outputs.emplace_back(dist->log_prob(value));
            return outputs;
          },
          detail::keyword_keys(in_keys),
          options.return_log_prob ? std::vector<NestedKey>{out_key, log_prob_key}
                                  : std::vector<NestedKey>{out_key},
          "ProbabilisticTensorDictModule", Tag{}),
      params_(in_keys),
      distribution_(distribution),
      log_prob_key_(log_prob_key) {}

std::shared_ptr<Distribution> ProbabilisticTensorDictModule::get_dist(const TensorDict& td) const {
  std::vector<Value> inputs;
  for (const auto& key : in_keys()) {
    if (!td.contains(key)) {
      throw KeyError("ProbabilisticTensorDictModule: missing in_key " + key.repr());
    }
    inputs.push_back(td.get_value(key));
  }
  return make_dist(params_, distribution_, inputs);
}

ProbabilisticTensorDictSequential::ProbabilisticTensorDictSequential(
    std::vector<std::shared_ptr<const TensorDictModuleBase>> modules, int)
    : TensorDictSequential(std::move(modules)) {
  last();  // TypeError unless the last module is probabilistic
}

const ProbabilisticTensorDictModule& ProbabilisticTensorDictSequential::last() const {
  const auto* last =
      modules().empty()
          ? nullptr
          : dynamic_cast<const ProbabilisticTensorDictModule*>(modules().back().get());
  if (last == nullptr) {
    throw TypeError(
        "ProbabilisticTensorDictSequential: the last module must be a "
        "ProbabilisticTensorDictModule");
  }
  return *last;
}

std::shared_ptr<Distribution> ProbabilisticTensorDictSequential::get_dist(
    const TensorDict& td) const {
  TensorDict copy = td.clone(false);
  for (size_t i = 0; i + 1 < modules().size(); ++i) modules()[i]->forward(copy);
  return last().get_dist(copy);
}

}  // namespace tensordict::nn
