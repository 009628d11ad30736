// TorchRL History: construction, from_chats, append/extend, chat templates, inverse parse,
// default_spec, memmap round trips.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

#include "chat_fixtures.h"
#include "history.h"

using tensordict::Json;
using torchrl::llm::History;
using torchrl::llm::HistoryTemplateOptions;

namespace {

const Json& kChats = chat_fixtures::two_chats();

HistoryTemplateOptions no_prompt() {
  HistoryTemplateOptions o;
  o.add_generation_prompt = false;
  return o;
}

std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("tc_history_" + name);
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace

TEST_CASE("a History built from strings stores non-tensor data (nocast)", "[history]") {
  History h({Json::array({"system", "user"}), Json::array({"You are a bot.", "Hello"})}, {2});
  CHECK(h.role() == Json::array({"system", "user"}));
  CHECK(h.is_complete());
  CHECK_FALSE(h.tool_calls().has_value());
  CHECK(h._tensordict().get_value("is_complete").is_non_tensor_data());
  CHECK(h.apply_chat_template(no_prompt()).at(0) ==
        "<|im_start|>system\nYou are a bot.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n");
}

TEST_CASE("from_chats lazily stacks conversations of different lengths, unpadded", "[history]") {
  History h = History::from_chats(kChats);
  CHECK(h.batch_size() == (tensordict::BatchSize{2, -1}));
  CHECK(h.role() == Json::array({Json::array({"system", "user"}), Json::array({"user"})}));
  auto texts = h.apply_chat_template();
  REQUIRE(texts.size() == 2);
  CHECK(texts[0] ==
        "<|im_start|>system\nYou are a bot.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n"
        "<|im_start|>assistant\n");
  CHECK(texts[1] == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");

  HistoryTemplateOptions qwen;
  qwen.tokenizer_name = "Qwen/Qwen2.5-3B";
  CHECK(h.apply_chat_template(qwen)[1] ==
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi"
        "<|im_end|>\n<|im_start|>assistant\n");
  CHECK_THROWS_WITH(History::from_chats(Json::array({Json{{"role", "user"}, {"msg", "x"}}})),
                    "from_chats: message 0: unknown chat message key 'msg' (known: role, content, "
                    "is_complete, tool_calls, tool_responses)");
}

TEST_CASE("malformed chats: the error names the chat, the message and the field", "[history]") {
  CHECK_THROWS_AS(History::from_chats(Json::parse(R"([{"role": "user", "content": 3}])")),
                  tensordict::TypeError);
  CHECK_THROWS_WITH(
      History::from_chats(Json::parse(R"([{"role": "user", "content": "a"}, {"role": 7}])")),
      "from_chats: message 1: field 'role' must be a string, got number 7");
  CHECK_THROWS_WITH(
      History::from_chats(Json::parse(
          R"([[{"role": "user", "content": "a"}], [{"role": "user", "content": ["b"]}]])")),
      "from_chats: chat 1, message 0: field 'content' must be a string or a list of ContentBase "
      "parts "
      "(JSON objects), got array "
      "[\"b\"]");
  CHECK_THROWS_WITH(History::from_chats(Json::parse(R"([[{"role": "user"}], "hi"])")),
                    "from_chats: chat 1, a chat must be a list of messages, got \"hi\"");
  CHECK_THROWS_WITH(
      History::from_chats(Json::parse(R"([{"role": "user", "content": "a", "is_complete": 1}])")),
      "from_chats: message 0: field 'is_complete' must be a bool, got number 1");
}

TEST_CASE("append adds a message, extend adds messages or conversations", "[history]") {
  History chat = History::from_chats(kChats[0]);
  CHECK(chat.batch_size() == tensordict::BatchSize{2});
  History reply({"assistant", "Hi there"});
  History longer = chat.append(reply, false);
  CHECK(chat.batch_size() == tensordict::BatchSize{2});  // not in place
  CHECK(longer.batch_size() == tensordict::BatchSize{3});
  chat.append(reply);
  CHECK(chat.role() == Json::array({"system", "user", "assistant"}));

  CHECK_THROWS_WITH(reply.append(reply), Catch::Contains("unsqueeze(dim=0)"));
  CHECK_THROWS_WITH(chat.append(chat),
                    "append: the message must have 0 batch dims (one less than this History), "
                    "got batch_size [3]");

  History batch = History::from_chats(kChats);
  History replies({Json::array({"assistant", "assistant"}), Json::array({"A", "B"})}, {2});
  batch.append(replies);  // dim -1: one message per conversation
  CHECK(batch.batch_size() == (tensordict::BatchSize{2, -1}));  // lengths 3 and 2
  CHECK(batch.content()[1] == Json::array({"Hi", "B"}));

  batch.extend(History::from_chats(Json::array({kChats[1]})));  // dim 0: more conversations
  CHECK(batch.batch_size() == (tensordict::BatchSize{3, -1}));
  chat.extend(History::from_chats(kChats[1]));
  CHECK(chat.batch_size() == tensordict::BatchSize{4});
  CHECK_THROWS_WITH(chat.extend(reply), Catch::Contains("as many batch dims"));
}

TEST_CASE("from_text parses a rendered chat back", "[history]") {
  History chat = History::from_chats(kChats[0]);
  History back = History::from_text(chat.apply_chat_template(no_prompt())[0]);
  CHECK(back.role() == chat.role());
  CHECK(back.content() == chat.content());

  History open = History::from_text(
      "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\nhalf an ans", "qwen");
  CHECK(open.role() == Json::array({"user", "assistant"}));
  CHECK(open._tensordict().get_non_tensor("is_complete") == Json::array({true, false}));
}

TEST_CASE("apply_chat_template_tokens pads and masks assistant tokens", "[history]") {
  HistoryTemplateOptions options = no_prompt();
  options.return_assistant_tokens_mask = true;
  options.pad_token_id = -1;
  options.tokenizer = [](std::string_view text) {  // one token per character
    tensorclass::llm::Encoding enc;
    for (size_t i = 0; i < text.size(); ++i) {
      enc.ids.push_back(static_cast<unsigned char>(text[i]));
      enc.offsets.push_back({i, i + 1});
    }
    return enc;
  };
  History h = History::from_chats(Json::array({
      Json::array({Json{{"role", "user"}, {"content", "a"}},
                   Json{{"role", "assistant"}, {"content", "xyz"}}}),
      Json::array({Json{{"role", "user"}, {"content", "b"}}}),
  }));
  tensordict::TensorDict tokens = h.apply_chat_template_tokens(options);
  const auto texts = h.apply_chat_template(no_prompt());
  CHECK(tokens.get("input_ids").size(1) == static_cast<int64_t>(texts[0].size()));
  CHECK(tokens.get("assistant_masks")[0].sum().item<int64_t>() == 3);
  CHECK(tokens.get("assistant_masks")[1].sum().item<int64_t>() == 0);
  CHECK(tokens.get("attention_mask")[1].sum().item<int64_t>() ==
        static_cast<int64_t>(texts[1].size()));
  CHECK(tokens.get("input_ids")[1][-1].item<int64_t>() == -1);
  CHECK_THROWS_WITH(h.apply_chat_template_tokens(no_prompt()),
                    "apply_chat_template_tokens: options.tokenizer is not set");
}

TEST_CASE("default_spec prints as TorchRL 0.14 prints it and makes a zero instance", "[history]") {
  // Expected text: TorchRL 0.14.0's History.default_spec (example data: a field's default, else
  // None; role and content are annotated as unions, not `str`), NonTensor.__repr__ and
  // Composite.__repr__ (torchrl/data/tensor_specs.py), read from the source.
  std::ostringstream os;
  os << History::default_spec({-1});
  std::string expected = "Composite(\n";
  for (const char* field : {"role", "content", "is_complete", "tool_calls", "tool_responses"}) {
    expected += std::string("    ") + field +
                ": NonTensor(\n        shape=torch.Size([-1]),\n        space=None,\n        "
                "device=None,\n        dtype=None,\n        domain=None,\n        example_data=" +
                (std::string(field) == "is_complete" ? "True" : "None") + "),\n";
  }
  expected +=
      "    device=None,\n    shape=torch.Size([]),\n    data_cls=<class "
      "'torchrl.data.llm.history.History'>)";
  CHECK(os.str() == expected);
  std::ostringstream batched;
  batched << History::default_spec({4, -1});
  CHECK_THAT(batched.str(), Catch::Contains("shape=torch.Size([4, -1])") &&
                                Catch::EndsWith("shape=torch.Size([4]),\n    data_cls=<class "
                                                "'torchrl.data.llm.history.History'>)"));
  // zero(): the -1 dim becomes 1, fields hold their example data.
  History zero = History::from_tensordict(History::default_spec({4, -1}).zero());
  CHECK(zero.batch_size() == std::vector<int64_t>{4, 1});
  CHECK(zero.is_complete());
  CHECK_FALSE(zero.tool_calls().has_value());
  CHECK(zero.role().is_null());
  CHECK_THROWS_AS(History::default_spec({}), tensordict::ShapeError);
}

TEST_CASE("batched histories round-trip through memmap in TorchRL's layout", "[history][memmap]") {
  History h = History::from_chats(kChats);
  auto dir = temp_dir("batch");
  h.memmap(dir.string());
  History back = History::load_memmap(dir.string());
  CHECK(back.role() == h.role());
  CHECK(back.content() == h.content());
  CHECK(back.apply_chat_template() == h.apply_chat_template());
  std::filesystem::remove_all(dir);

  History one = h[1];
  CHECK(one.role() == Json::array({"user"}));
  History stacked = History::lazy_stack({h[0], h[1]});
  CHECK(stacked.role() == h.role());
  CHECK_THROWS_AS(History::stack({h[0], h[1]}), tensordict::ShapeError);  // ragged: dense fails
}
