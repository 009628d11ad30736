// TorchRL's RewardData and PairwiseDataset: optional fields, retain_none, memmap round trips in
// Python's tensorclass layout.
#include <ATen/ATen.h>

#include "catch2_compat.h"
#include <filesystem>
#include <fstream>

#include "reward.h"
#include "tensordict/json.h"

using torchrl::llm::PairwiseDataset;
using torchrl::llm::RewardData;

namespace {

RewardData tokens(int64_t rows, int64_t length, int64_t seed) {
  at::Tensor ids = at::arange(rows * length, at::kLong).view({rows, length}) + seed;
  return RewardData({ids, at::ones({rows, length}, at::kLong)}, {rows});
}

tensordict::Json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return tensordict::parse_json(std::string(std::istreambuf_iterator<char>(in), {}));
}

}  // namespace

TEST_CASE("RewardData without and with its optional fields", "[reward]") {
  RewardData data = tokens(4, 6, 0);
  CHECK_FALSE(data.rewards().has_value());
  CHECK_FALSE(data.end_scores().has_value());
  CHECK(data.to_tensordict().keys().size() == 2);  // None fields dropped by default
  tensordict::TensorDict with_none = data.to_tensordict(true);
  REQUIRE(with_none.contains("rewards"));
  CHECK(with_none.get_non_tensor("rewards").is_null());

  data.set_end_scores(at::full({4}, 0.5));
  REQUIRE(data.end_scores().has_value());
  CHECK(data.end_scores()->sum().item<float>() == 2.0f);
  CHECK(data.to_tensordict().contains("end_scores"));
  data.set_end_scores(std::nullopt);
  CHECK_FALSE(data.end_scores().has_value());
}

TEST_CASE("PairwiseDataset memmaps in TorchRL's layout and loads back", "[reward][memmap]") {
  PairwiseDataset pairs({tokens(8, 5, 0), tokens(8, 5, 1000)}, {8});
  const auto dir = std::filesystem::temp_directory_path() / "tc_pairwise_test";
  std::filesystem::remove_all(dir);
  pairs.memmap(dir.string());

  CHECK(read_json(dir / "meta.json") ==
        tensordict::Json{{"_type", "<class 'torchrl.data.llm.reward.PairwiseDataset'>"}});
  const auto chosen_meta = read_json(dir / "_tensordict" / "chosen_data" / "meta.json");
  CHECK(chosen_meta["_type"] == "<class 'torchrl.data.llm.reward.RewardData'>");
  CHECK(chosen_meta["rewards"].is_null());
  CHECK(std::filesystem::file_size(dir / "_tensordict" / "chosen_data" / "_tensordict" /
                                   "input_ids.memmap") == 8 * 5 * 8);

  PairwiseDataset back = PairwiseDataset::load_memmap(dir.string());
  CHECK(back.batch_size() == tensordict::BatchSize{8});
  CHECK(back.rejected_data().input_ids().equal(pairs.rejected_data().input_ids()));
  CHECK_FALSE(back.chosen_data().rewards().has_value());

  const at::Tensor idx = at::tensor({7, 0, 3}, at::kLong);
  PairwiseDataset sample = back.index({idx});
  CHECK(
      sample.chosen_data().input_ids().equal(pairs.chosen_data().input_ids().index_select(0, idx)));
  CHECK_THROWS_AS(RewardData::load_memmap(dir.string()), tensordict::FormatError);
  std::filesystem::remove_all(dir);
}
