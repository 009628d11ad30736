// The README's run command builds and runs this program: a tour of the runtime.
#include <ATen/ATen.h>

#include <filesystem>
#include <iostream>

#include "mydata.h"
#include "pairwise_demo.h"
#include "tensordict/tensordict.h"

using tensordict::TensorDict;

int main(int argc, char** argv) {
  // A batch of 4 transitions; nested keys create sub-TensorDicts sharing the batch dims.
  TensorDict data({{"obs", at::randn({4, 3})}, {"action", at::randint(0, 2, {4}, at::kLong)}}, {4});
  data.set({"next", "obs"}, at::randn({4, 3}));
  data.set({"next", "reward"}, at::ones({4, 1}));
  data.set("task", "cartpole");  // non-tensor data, shared by the batch

  std::cout << data << "\n\n";
  std::cout << "keys (nested, leaves only):";
  for (const auto& key : data.keys(true, true)) std::cout << " " << key;
  std::cout << "\n";

  TensorDict next = data.get_tensordict("next");  // a handle: writes go through to `data`
  next.get("reward").mul_(2);
  std::cout << "total reward: " << data.get({"next", "reward"}).sum().item<float>() << "\n";

  TensorDict copy = data.clone();
  std::cout << "clone equals original: " << std::boolalpha << (copy == data).all() << "\n";
  data.lock_();
  try {
    data.set("new_key", at::zeros({4}));
  } catch (const tensordict::LockedError& e) {
    std::cout << "locked: " << e.what() << "\n";
  }

  const std::filesystem::path pairwise_dir = argc > 1 ? argv[1] : "example_data/pairwise";

  // The README's schema (examples/mydata.yaml): a typed class, saved in Python's layout (Python
  // loads it as example.MyData) and loaded back.
  example::MyData batch({at::randn({4, 3}), "train"}, {4});
  const std::string mydata_dir = (pairwise_dir.parent_path() / "mydata").string();
  batch.memmap(mydata_dir);
  const auto loaded = example::MyData::load_memmap(mydata_dir);
  std::cout << "\nMyData (" << mydata_dir << "): label " << loaded.label() << ", obs equal "
            << loaded.obs().equal(batch.obs()) << ", extra set " << loaded.extra().has_value()
            << "\n";

  // TorchRL's PairwiseDataset: 10,000 rows x 550 tokens, memmapped, reloaded, sampled.
  std::cout << "\nPairwiseDataset\n";
  run_pairwise_demo(pairwise_dir.string(), 10000, 550, 64);
  return 0;
}
