// The training loop of tensordict's README, in C++: a memory-mapped dataset, a model and its loss
// as TensorDictModules chained by a TensorDictSequential, Adam over random minibatches, a memmap
// checkpoint of the parameters restored into a fresh model, and a TorchScript policy saved by
// Python run on TensorDicts.
//
//   train [DIR]     writes the dataset and the checkpoint under DIR (default: train_data)
//
// Exits non-zero when the loss does not decrease, the restored model predicts differently, or the
// TorchScript policy's outputs differ from Python's.
#include <ATen/ATen.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>
#include <unistd.h>  // isatty

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <string>

#include "tensordict/module.h"
#include "tensordict/nn/module.h"
#include "tensordict/nn/script.h"
#include "tensordict/tensordict.h"

using tensordict::TensorDict;
using tensordict::nn::TensorDictModule;
using tensordict::nn::TensorDictSequential;

namespace {

constexpr int64_t kRows = 4096, kFeatures = 8, kHidden = 64;
constexpr int64_t kBatch = 128, kEpochs = 8;
constexpr double kLearningRate = 1e-2;

torch::nn::Sequential make_model() {
  return torch::nn::Sequential(torch::nn::Linear(kFeatures, kHidden), torch::nn::ReLU(),
                               torch::nn::Linear(kHidden, 1));
}

/// "[#######.......]" for `done` of `total`.
std::string progress_bar(int64_t done, int64_t total, int width = 30) {
  const auto filled = static_cast<int>(width * done / total);
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
}

/// Float outputs within the fixtures' tolerance; integer ones (the action) exactly.
bool matches(const at::Tensor& actual, const at::Tensor& expected) {
  if (actual.sizes() != expected.sizes() || actual.scalar_type() != expected.scalar_type())
    return false;
  return actual.is_floating_point() ? at::allclose(actual, expected, 1e-5, 1e-6)
                                    : at::equal(actual, expected);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "train_data";
  torch::manual_seed(0);

  // ---- 1. a synthetic regression dataset, memory-mapped ----------------------------------------
  // target = sin(obs . w) + noise; the dataset lives in files and is read back through mmap.
  const at::Tensor obs = at::randn({kRows, kFeatures});
  const at::Tensor w = at::randn({kFeatures, 1}) / std::sqrt(static_cast<double>(kFeatures));
  const at::Tensor target = at::sin(obs.matmul(w)) + 0.05 * at::randn({kRows, 1});
  TensorDict({{"obs", obs}, {"target", target}}, {kRows}).memmap(dir + "/dataset");
  const TensorDict data = TensorDict::load_memmap(dir + "/dataset");
  std::cout << "dataset (memory-mapped from " << dir << "/dataset):\n" << data << "\n\n";

  // ---- 2. model and loss as TensorDictModules --------------------------------------------------
  torch::nn::Sequential model = make_model();
  TensorDictModule actor(model, {"obs"}, {"pred"});
  TensorDictModule loss_module(
      [](const at::Tensor& pred, const at::Tensor& target) { return (pred - target).pow(2); },
      {"pred", "target"}, {"loss"}, "mse");
  TensorDictSequential seq(actor, loss_module);  // reads obs, target; writes pred, loss

  // ---- 3. training: Adam over random minibatches ------------------------------------------------
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(kLearningRate));
  const int64_t steps = kRows / kBatch;
  const bool live_bar = isatty(STDOUT_FILENO);  // a log file gets one line per epoch
  double first_loss = 0, last_loss = 0;
  std::cout << std::fixed << std::setprecision(4);
  for (int64_t epoch = 1; epoch <= kEpochs; ++epoch) {
    const at::Tensor perm = at::randperm(kRows, at::kLong);
    double epoch_loss = 0;
    for (int64_t step = 0; step < steps; ++step) {
      // A batch of rows gathered from the memmap by a Long index (a copy in memory).
      TensorDict batch = data.index({perm.slice(0, step * kBatch, (step + 1) * kBatch)});
      seq(batch);  // writes "pred" and "loss" into the batch
      const at::Tensor loss = batch.get("loss").mean();
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();

      const double value = loss.item<double>();
      if (epoch == 1 && step == 0) first_loss = value;
      epoch_loss += value;
      if (live_bar)
        std::cout << "\repoch " << epoch << "/" << kEpochs << " " << progress_bar(step + 1, steps)
                  << " loss " << value << std::flush;
    }
    last_loss = epoch_loss / steps;
    std::cout << (live_bar ? "\r" : "") << "epoch " << epoch << "/" << kEpochs << " "
              << progress_bar(steps, steps) << " mean loss " << last_loss << "\n";
  }
  std::cout << "loss: first batch " << first_loss << " -> last epoch " << last_loss << "\n";
  if (!(last_loss < first_loss)) {
    std::cerr << "error: the loss did not decrease\n";
    return 1;
  }

  // ---- 4. checkpoint: parameters as a TensorDict, memmapped, loaded into a fresh model --------
  TensorDict::from_module(*model).memmap(dir + "/ckpt");
  torch::nn::Sequential fresh = make_model();
  TensorDict::load_memmap(dir + "/ckpt").to_module(*fresh, /*inplace=*/true);
  std::cout << "\ncheckpoint (" << dir << "/ckpt):\n"
            << TensorDict::load_memmap(dir + "/ckpt") << "\n";
  {
    at::NoGradGuard no_grad;
    const at::Tensor probe = data.index({tensordict::Slice(0, kBatch)}).get("obs");
    const bool same = at::equal(model->forward(probe), fresh->forward(probe));
    std::cout << "fresh model restored from the checkpoint predicts the same: " << std::boolalpha
              << same << "\n";
    if (!same) return 1;
  }

  // ---- 5. a TorchScript policy saved by Python, run on TensorDicts -----------------------------
  const std::string fixture =
      (std::filesystem::path(TC_FIXTURES_DIR) / "torchscript/dict_policy").lexically_normal();
  if (!std::filesystem::exists(fixture + "/module.pt")) {
    std::cout << "\nTorchScript policy: skipped (no fixture at " << fixture << ")\n";
    return 0;
  }
  at::NoGradGuard no_grad;
  torch::jit::Module script = torch::jit::load(fixture + "/module.pt");
  script.eval();
  TensorDictModule policy(script, {"observation"}, {"logits", "action", "value"});
  // The loaded memmap is locked; the policy writes into an unlocked copy.
  TensorDict td = policy(TensorDict::load_memmap(fixture + "/input").clone());
  const TensorDict expected = TensorDict::load_memmap(fixture + "/expected");
  std::cout << "\nTorchScript policy (" << fixture << "):\n" << td << "\n";
  bool all_match = true;
  for (const auto& key : expected.keys(true, true)) {
    const bool ok = matches(td.get(key), expected.get(key));
    std::cout << "  " << key << " matches Python's: " << ok << "\n";
    all_match = all_match && ok;
  }
  return all_match ? 0 : 1;
}
