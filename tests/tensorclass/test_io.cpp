// The tensorclass on-disk layout (format spec §3), loading Python-written directories, and
// state_dict / load_state_dict (spec §6).
#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include "catch2_compat.h"

#include <unistd.h>

#include "fixture.h"
#include "frozen.h"
#include "history.h"
#include "nested.h"
#include "plain.h"
#include "reward.h"
#include "skip.h"
#include "tensordict/archive.h"
#include "tensordict/json.h"
#include "tensordict/memmap.h"

using namespace golden;
using tensordict::Json;
namespace fs = std::filesystem;

namespace {

fs::path io_scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("tc_io_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

Json meta(const fs::path& dir) {
  std::ifstream in(dir / "meta.json");
  std::stringstream text;
  text << in.rdbuf();
  return tensordict::parse_json(text.str());
}

}  // namespace

TEST_CASE("memmap writes Python's tensorclass layout and loads back", "[tensorclass][io]") {
  const fs::path dir = io_scratch("plain");
  Plain p({at::rand({2, 3})}, {2});
  Plain mapped = p.memmap(dir.string());
  CHECK(mapped.is_memmap());
  Json top = meta(dir);
  CHECK(top.begin().key() == "_type");  // first, unlike TensorDict meta.json
  CHECK(top["_type"] == "<class '__main__.Plain'>");
  CHECK(top == Json::parse(R"({"_type": "<class '__main__.Plain'>", "count": null,
                               "score": null, "meta": null, "mask": null})"));
  Json inner = meta(dir / "_tensordict");
  CHECK(inner["obs"]["dtype"] == "torch.float32");
  CHECK(inner["label"] == Json{{"type", "NonTensorData"}});
  CHECK(inner["shape"] == Json::array({2}));

  Plain loaded = Plain::load_memmap(dir.string());
  CHECK(loaded == p);
  CHECK_FALSE(loaded.count().has_value());
  CHECK_THROWS_AS(Frozen::load_memmap(dir.string()), tensordict::FormatError);
  fs::remove_all(dir);
}

TEST_CASE("a tensorclass over a ragged lazy stack saves and loads", "[tensorclass][io][lazy]") {
  const fs::path dir = io_scratch("ragged");
  // Rows of 3 and 2 elements: batch [2, -1]; obs cannot be stacked, only saved per element.
  Plain ragged =
      Plain::lazy_stack({Plain({at::rand({3, 3})}, {3}), Plain({at::rand({2, 3})}, {2})});
  REQUIRE(ragged.batch_size() == tensordict::BatchSize{2, -1});
  ragged.memmap(dir.string());
  CHECK(meta(dir)["_type"] == "<class '__main__.Plain'>");
  CHECK(meta(dir / "_tensordict")["_type"] == "<class 'tensordict._lazy.LazyStackedTensorDict'>");
  CHECK(meta(dir / "_tensordict" / "1")["obs"]["shape"] == Json::array({2, 3}));
  Plain loaded = Plain::load_memmap(dir.string());
  CHECK(loaded.batch_size() == tensordict::BatchSize{2, -1});
  CHECK(loaded._tensordict().tensordicts()[1].get("obs").equal(
      ragged._tensordict().tensordicts()[1].get("obs")));
  fs::remove_all(dir);
}

TEST_CASE("a tensorclass saves to and loads from a .tdz archive", "[tensorclass][io][tdz]") {
  const fs::path dir = io_scratch("archive");
  fs::create_directories(dir);
  const std::string path = (dir / "plain.tdz").string();
  Plain p({at::rand({2, 3})}, {2});
  p.set_label("archived");
  Plain saved = p.memmap(path);
  CHECK(fs::is_regular_file(path));
  CHECK(saved.is_locked());
  std::vector<std::string> names;
  for (const auto& entry : tensordict::archive::list(path)) names.push_back(entry.name);
  for (const char* name : {"meta.json", "_tensordict/meta.json", "_tensordict/obs.memmap"}) {
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
  Plain loaded = Plain::load_memmap(path);
  CHECK(loaded == p);
  CHECK(loaded.label() == "archived");
  CHECK_THROWS_AS(Frozen::load_memmap(path), tensordict::FormatError);
  fs::remove_all(dir);
}

TEST_CASE("memmap_ maps the instance in place", "[tensorclass][io]") {
  const fs::path dir = io_scratch("inplace");
  Outer o({Inner({at::ones({2})}, {2}), std::nullopt, at::zeros({2})}, {2});
  Outer alias = o;  // a handle on the same data
  Inner inner = o.inner();
  o.memmap_(dir.string());
  CHECK(alias.is_memmap());
  CHECK(alias.saved_path().has_value());
  CHECK(tensordict::MemoryMappedTensor::is_memory_mapped(inner.x()));

  Outer other({Inner({at::zeros({2})}, {2}), Inner({at::zeros({2})}, {2}), at::ones({2})}, {2});
  Outer other_alias = other;
  other.load_memmap_(dir.string());
  CHECK(other_alias.inner().x().sum().item<float>() == 2.0f);
  CHECK_FALSE(other_alias.maybe().has_value());  // None on disk
  fs::remove_all(dir);
}

TEST_CASE("nested classes are written as tensorclass directories", "[tensorclass][io]") {
  const fs::path dir = io_scratch("nested");
  Outer o({Inner({at::ones({2})}, {2}), std::nullopt, at::zeros({2})}, {2});
  o.memmap(dir.string());
  CHECK(meta(dir / "_tensordict")["inner"] == Json{{"type", "Inner"}});
  CHECK(meta(dir / "_tensordict" / "inner")["_type"] == "<class 'golden.Inner'>");
  Outer loaded = Outer::load(dir.string());
  CHECK(loaded.inner().x().sum().item<float>() == 2.0f);
  CHECK_FALSE(loaded.maybe().has_value());
  fs::remove_all(dir);
}

TEST_CASE("PairwiseDataset on disk matches TorchRL's", "[tensorclass][io]") {
  using torchrl::llm::PairwiseDataset;
  using torchrl::llm::RewardData;
  const fs::path dir = io_scratch("pairwise");
  RewardData chosen({at::ones({3, 5}, at::kLong), at::ones({3, 5}, at::kLong)}, {3});
  PairwiseDataset data({chosen, chosen.clone()}, {3});
  data.memmap(dir.string());
  CHECK(meta(dir) == Json{{"_type", "<class 'torchrl.data.llm.reward.PairwiseDataset'>"}});
  CHECK(meta(dir / "_tensordict" / "chosen_data") ==
        Json::parse(R"({"_type": "<class 'torchrl.data.llm.reward.RewardData'>",
                        "rewards": null, "end_scores": null})"));
  PairwiseDataset loaded = PairwiseDataset::load_memmap(dir.string());
  CHECK(loaded.rejected_data().input_ids().sum().item<int64_t>() == 15);
  fs::remove_all(dir);
}

TEST_CASE("History stores strings as NonTensorData / NonTensorStack (nocast)",
          "[tensorclass][io]") {
  using torchrl::llm::History;
  History h({Json::array({"system", "user"}), Json::array({"You are a bot.", "Hello"})}, {2});
  CHECK(h.get("role")->is_non_tensor_stack());
  CHECK(h.get("is_complete")->non_tensor_data().data == true);
  CHECK(h.role() == Json::array({"system", "user"}));
  const fs::path dir = io_scratch("history");
  h.memmap(dir.string());
  CHECK(meta(dir)["_type"] == "<class 'torchrl.data.llm.history.History'>");
  CHECK(meta(dir / "_tensordict")["role"] == Json{{"type", "NonTensorStack"}});
  CHECK(History::load_memmap(dir.string()) == h);
  fs::remove_all(dir);
}

TEST_CASE("a directory written by Python's tensorclass loads as the generated class",
          "[tensorclass][io][fixtures][needs-fixtures]") {
  const fs::path dir = fs::path(TC_FIXTURES_DIR) / "python-tensordict" / "tensorclass" / "td";
  if (!fs::exists(dir)) TC_SKIP("fixture directory " << dir << " is absent (set TC_FIXTURES_DIR)");
  RefTC loaded = RefTC::load_memmap(dir.string());
  CHECK(loaded.batch_size() == tensordict::BatchSize{2});
  CHECK(loaded.obs().equal(at::tensor({0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f}).reshape({2, 3})));
  CHECK(loaded.label() == "my-label");
  CHECK_FALSE(loaded.extra().has_value());
  CHECK_THROWS_AS(Plain::load_memmap(dir.string()), tensordict::FormatError);
}

TEST_CASE("state_dict is flat with per-level metadata", "[tensorclass][state]") {
  Outer o({Inner({at::ones({2})}, {2}), std::nullopt, at::zeros({2})}, {2});
  tensordict::StateDict state = o.state_dict();
  REQUIRE(state.tensors.size() == 2);
  CHECK(state.tensors[0].first == "inner.x");
  CHECK(state.tensors[1].first == "y");
  CHECK(state.metadata.dump() ==
        R"({"inner":{"batch_size":[2],"device":null,"_type":"Inner","_non_tensor":{}},)"
        R"("":{"batch_size":[2],"device":null,"_type":"Outer","_non_tensor":{"maybe":null}}})");

  Plain p({at::ones({2, 3})}, {2});
  CHECK(p.state_dict().metadata[""]["_non_tensor"] ==
        Json::parse(R"({"count": null, "score": null, "meta": null, "mask": null,
                        "label": "none"})"));
}

TEST_CASE("load_state_dict copies in place, or assigns", "[tensorclass][state]") {
  Outer source({Inner({at::full({2}, 3.0)}, {2}), std::nullopt, at::ones({2})}, {2});
  Outer target({Inner({at::zeros({2})}, {2}), std::nullopt, at::zeros({2})}, {2});
  at::Tensor before = target.y();
  target.load_state_dict(source.state_dict());
  CHECK(target == source);
  CHECK(target.y().data_ptr() == before.data_ptr());  // copied in place
  target.load_state_dict(source.state_dict(), true, /*assign=*/true);
  CHECK(target.y().data_ptr() == source.y().data_ptr());

  tensordict::StateDict extra = source.state_dict();
  extra.tensors.emplace_back("bogus", at::ones({2}));
  CHECK_THROWS_AS(target.load_state_dict(extra), tensordict::KeyError);

  Plain p({at::ones({2, 3})}, {2});
  tensordict::StateDict with_label = p.state_dict();
  with_label.metadata[""]["_non_tensor"]["label"] = "loaded";
  Plain q({at::zeros({2, 3})}, {2});
  q.load_state_dict(with_label);
  CHECK(q.label() == "loaded");
  CHECK(q.obs().sum().item<float>() == 6.0f);
}
