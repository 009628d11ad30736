// Generated tensorclasses over a lazy stack: typed accessors, row indexing, History batches of
// different lengths (TorchRL's lazy layout, no padding) and their chat templates and memmap.
#include <ATen/ATen.h>

#include <filesystem>
#include <sstream>
#include "catch2_compat.h"

#include "../llm/chat_fixtures.h"
#include "history.h"
#include "io_test_util.h"
#include "reward.h"
#include "tensordict/lazy_stack.h"

using tensordict::BatchSize;
using tensordict::Json;
using tensordict::TensorDict;
using torchrl::llm::History;
using torchrl::llm::RewardData;

namespace {

const Json& kChats = chat_fixtures::two_chats();

Json meta_of(const std::string& dir) { return Json::parse(tc_test::read_file(dir + "/meta.json")); }

}  // namespace

TEST_CASE("a tensorclass over a lazy stack: typed accessors stack or throw",
          "[lazy][tensorclass]") {
  RewardData a({at::arange(3), at::ones({3}, at::kLong)}, {3});
  RewardData b({at::arange(3) + 10, at::zeros({3}, at::kLong)}, {3});
  RewardData even =
      RewardData::from_tensordict(tensordict::lazy_stack({a._tensordict(), b._tensordict()}));
  CHECK(even.batch_size() == BatchSize{2, 3});
  CHECK(at::equal(even.input_ids(), at::stack({at::arange(3), at::arange(3) + 10})));
  CHECK_FALSE(even.rewards().has_value());
  CHECK(even[1]._tensordict().is_same(b._tensordict()));  // row = the element itself

  RewardData c({at::arange(5), at::ones({5}, at::kLong)}, {5});
  RewardData ragged =
      RewardData::from_tensordict(tensordict::lazy_stack({a._tensordict(), c._tensordict()}));
  CHECK(ragged.batch_size() == BatchSize{2, -1});
  CHECK_THROWS_AS(ragged.input_ids(), tensordict::ShapeError);
  CHECK_THROWS_WITH(ragged.input_ids(), Catch::Matchers::ContainsSubstring("'input_ids'"));
  CHECK(at::equal(ragged[1].input_ids(), at::arange(5)));
  std::ostringstream repr;
  repr << ragged;
  CHECK_THAT(repr.str(), Catch::Matchers::ContainsSubstring(
                             "input_ids=Tensor(shape=torch.Size([2, -1]), device=cpu, "
                             "dtype=torch.int64, is_shared=False)") &&
                             Catch::Matchers::ContainsSubstring("rewards=None") &&
                             Catch::Matchers::ContainsSubstring("batch_size=torch.Size([2, -1])"));
  auto rows = ragged.unbind(0);
  REQUIRE(rows.size() == 2);
  CHECK(at::equal(rows[0].attention_mask(), at::ones({3}, at::kLong)));
}

TEST_CASE("from_chats rows are the lazy stack's elements, of their own lengths",
          "[lazy][history]") {
  History h = History::from_chats(kChats);
  REQUIRE(h._tensordict().is_lazy_stack());
  CHECK(h.batch_size() == BatchSize{2, -1});
  CHECK(h[1].role() == Json::array({"user"}));  // no "<none>" padding
  CHECK(h[0].content() == Json::array({"You are a bot.", "Hello"}));
  // Stacked fields and the chat templates over these rows: tests/llm/test_history.cpp.

  // Equal lengths: still a lazy stack, with a dense batch size.
  History even = History::from_chats(Json::array({kChats[1], kChats[1]}));
  CHECK(even.batch_size() == BatchSize{2, 1});
  CHECK(even.role() == Json::array({Json::array({"user"}), Json::array({"user"})}));

  // append/extend keep the rows as they are.
  History more = h.extend(History::from_chats(Json::array({kChats[1]})), false, 0);
  CHECK(more.batch_size() == BatchSize{3, -1});
  CHECK(more[2].role() == Json::array({"user"}));
}

TEST_CASE("a lazy History saves in TorchRL's layout and reloads ragged", "[lazy][history]") {
  tc_test::TempDir tmp;
  History h = History::from_chats(kChats);
  tensordict::MemmapOptions v0;  // TorchRL's files (tensordict 0.14): format version 0
  v0.format_version = 0;
  h.memmap(tmp / "h", v0);
  const Json top = meta_of(tmp / "h");
  CHECK(top["_type"] == History::spec().python_type);
  CHECK(meta_of(tmp / "h/_tensordict") ==
        Json::parse(R"({"_type": "<class 'tensordict._lazy.LazyStackedTensorDict'>",
                        "stack_dim": 0})"));
  // Conversation 1 is a lazy stack of its one 0-D message.
  CHECK(meta_of(tmp / "h/_tensordict/1")["_type"] ==
        "<class 'tensordict._lazy.LazyStackedTensorDict'>");
  CHECK(meta_of(tmp / "h/_tensordict/1/0")["shape"] == Json::array());
  CHECK(meta_of(tmp / "h/_tensordict/1/0/role")["data"] == "user");

  History back = History::load_memmap(tmp / "h");
  REQUIRE(back._tensordict().is_lazy_stack());
  CHECK(back.batch_size() == BatchSize{2, -1});
  CHECK(back.apply_chat_template() == h.apply_chat_template());
  CHECK(back[0].is_complete() == Json::array({true, true}));

  // Through the plain TensorDict API the class and the lazy layout survive a re-save.
  tensordict::MemmapOptions copy;
  copy.copy_existing = true;
  TensorDict::load_memmap(tmp / "h").memmap(tmp / "again", copy);
  CHECK(meta_of(tmp / "again")["_type"] == History::spec().python_type);
  CHECK(meta_of(tmp / "again/_tensordict")["_type"] ==
        "<class 'tensordict._lazy.LazyStackedTensorDict'>");
  CHECK(History::load_memmap(tmp / "again")[1].role() == Json::array({"user"}));
}
