// TorchRL History: construction, from_chats, append/extend, chat templates, inverse parse,
// default_spec, memmap round trips.
#include <ATen/ATen.h>

#include <filesystem>
#include <sstream>
#include "catch2_compat.h"

#include "chat_fixtures.h"
#include "history.h"
#include "tensordict/llm/conversation.h"
#include "tensordict/memmap.h"

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
  CHECK(h.is_complete() == true);
  CHECK_FALSE(h.tool_calls().has_value());
  CHECK(h._tensordict().get_value("is_complete").is_non_tensor_data());
  CHECK(h.apply_chat_template(no_prompt()).at(0) ==
        "<|im_start|>system\nYou are a bot.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n");
}

TEST_CASE("from_chats lazily stacks conversations of different lengths, unpadded", "[history]") {
  History h = History::from_chats(kChats);
  CHECK(h.batch_size() == (tensordict::BatchSize{2, -1}));
  CHECK(h[0].role() == Json::array({"system", "user"}));
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
  CHECK_THROWS_WITH(
      History::from_chats(Json::parse(R"([[{"role": "user", "content": "a"}], "hi"])")),
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

  CHECK_THROWS_WITH(reply.append(reply), Catch::Matchers::ContainsSubstring("unsqueeze(dim=0)"));
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
  CHECK_THROWS_WITH(chat.extend(reply), Catch::Matchers::ContainsSubstring("as many batch dims"));
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
    tensordict::llm::Encoding enc;
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
  CHECK_THAT(batched.str(),
             Catch::Matchers::ContainsSubstring("shape=torch.Size([4, -1])") &&
                 Catch::Matchers::EndsWith("shape=torch.Size([4]),\n    data_cls=<class "
                                           "'torchrl.data.llm.history.History'>)"));
  // zero(): the -1 dim becomes 1, fields hold their example data.
  History zero = History::from_tensordict(History::default_spec({4, -1}).zero());
  CHECK(zero.batch_size() == std::vector<int64_t>{4, 1});
  CHECK(zero.is_complete() == true);
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

  History stacked = History::lazy_stack({h[0], h[1]});
  CHECK(stacked.apply_chat_template() == h.apply_chat_template());
  CHECK(stacked[0].content() == Json::array({"You are a bot.", "Hello"}));
}

namespace {

Json meta_of(const std::filesystem::path& dir) {
  return tensordict::memmap::read_meta(dir.string());
}

}  // namespace

TEST_CASE("from_chats saves what TorchRL's from_chats saves", "[history][memmap]") {
  // The directory tensordict 0.14 writes for TorchRL's History.from_chats of these chats (read
  // from Python's output by hand): one 0-D TensorDict per message under two lazy stacks, fields
  // in the chat's key order then the defaults, None fields in the class's meta.json, lists as
  // NonTensorStacks.
  const Json chats = Json::parse(R"([
    [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}],
    [{"role": "user", "content": [{"type": "text", "text": "z"}],
      "tool_calls": [{"name": "f", "arguments": {"a": 1}}], "tool_responses": ["r1", "r2"]},
     {"role": "assistant", "content": "b", "is_complete": false}]])");
  auto dir = temp_dir("layout");
  tensordict::MemmapOptions v0;  // tensordict 0.14's files: format version 0 (docs/format.md)
  v0.format_version = 0;
  History::from_chats(chats).memmap(dir.string(), v0);
  const std::string lazy = "<class 'tensordict._lazy.LazyStackedTensorDict'>";
  CHECK(meta_of(dir) == Json::parse(R"({"_type": "<class 'torchrl.data.llm.history.History'>",
                                         "tool_calls": null, "tool_responses": null})"));
  CHECK(meta_of(dir / "_tensordict") == Json{{"_type", lazy}, {"stack_dim", 0}});
  CHECK(meta_of(dir / "_tensordict/1") == Json{{"_type", lazy}, {"stack_dim", 0}});
  const Json plain = Json::parse(R"({"role": {"type": "NonTensorData"},
    "content": {"type": "NonTensorData"}, "is_complete": {"type": "NonTensorData"}, "shape": [],
    "device": "cpu", "_type": "<class 'tensordict._td.TensorDict'>"})");
  CHECK(meta_of(dir / "_tensordict/0/0") == plain);
  CHECK(meta_of(dir / "_tensordict/1/1") == plain);
  const Json with_lists = meta_of(dir / "_tensordict/1/0");
  std::vector<std::string> keys;
  for (const auto& item : with_lists.items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"role", "content", "tool_calls", "tool_responses",
                                         "is_complete", "shape", "device", "_type"});
  CHECK(with_lists["content"] == Json{{"type", "NonTensorStack"}});
  CHECK(meta_of(dir / "_tensordict/0/0/role") ==
        Json::parse(R"({"_type": "<class 'tensordict.tensorclass.NonTensorData'>", "data": "system",
                        "_is_non_tensor": true, "_metadata": null})"));
  CHECK(meta_of(dir / "_tensordict/1/1/is_complete")["data"] == false);
  const std::string stack_type = "<class 'tensordict.tensorclass.NonTensorStack'>";
  CHECK(meta_of(dir / "_tensordict/1/0/tool_responses") ==
        Json{{"_type", stack_type}, {"stack_dim", 0}, {"device", nullptr}, {"data", {"r1", "r2"}}});
  CHECK(meta_of(dir / "_tensordict/1/0/tool_calls")["data"] ==
        Json::parse(R"([{"name": "f", "arguments": {"a": 1}}])"));
  CHECK(meta_of(dir / "_tensordict/1/0/content")["data"] ==
        Json::parse(R"([{"type": "text", "text": "z"}])"));
  CHECK_FALSE(std::filesystem::exists(dir / "_tensordict/0/role"));

  // And it loads back to the same messages.
  History back = History::load_memmap(dir.string());
  CHECK(back.batch_size() == (tensordict::BatchSize{2, 2}));
  const auto second = tensordict::llm::conversation_messages(back[1]._tensordict());
  REQUIRE(second.size() == 2);
  CHECK(second[0].tool_calls == Json::parse(R"([{"name": "f", "arguments": {"a": 1}}])"));
  CHECK(second[0].tool_responses == Json::array({"r1", "r2"}));
  CHECK(second[0].content_parts == Json::parse(R"([{"type": "text", "text": "z"}])"));
  CHECK_FALSE(second[1].is_complete);
  std::filesystem::remove_all(dir);
}

TEST_CASE("is_complete reads as TorchRL reads it: a bool, or one flag per message", "[history]") {
  // One flag for the whole History: a bool.
  History dense({Json::array({"user", "assistant"}), Json::array({"a", "b"})}, {2});
  CHECK(dense.is_complete() == true);
  // A flag per message given as a list: Python's list rule makes it a bool tensor (TorchRL
  // returns that tensor); the accessor gives its values.
  History flags(
      {Json::array({"user", "assistant"}), Json::array({"a", "b"}), Json::array({true, false})},
      {2});
  const tensordict::Value stored = flags._tensordict().get_value("is_complete");
  REQUIRE(stored.is_tensor());
  CHECK(stored.tensor().scalar_type() == at::kBool);
  CHECK(flags.is_complete() == Json::array({true, false}));
  // One message of from_chats: its own flag.
  History h = History::from_chats(Json::parse(
      R"([[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b",
            "is_complete": false}], [{"role": "user", "content": "c"}]])"));
  CHECK(h[0][1].is_complete() == false);
  CHECK(h[0].is_complete() == Json::array({true, false}));
}

// TorchRL reads every field of a ragged batch as one list per conversation (tensordict 0.14's
// lazy stacks always stack non-tensor values into a NonTensorStack).
TEST_CASE("a ragged History's fields read one list per conversation, as in TorchRL", "[history]") {
  History h = History::from_chats(Json::parse(R"([
    [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}],
    [{"role": "user", "content": "Hi"}],
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "is_complete": false},
     {"role": "user", "content": [{"type": "text", "text": "c"}]}]])"));
  CHECK(h.batch_size() == (tensordict::BatchSize{3, -1}));
  CHECK(h.role() ==
        Json::parse(R"([["system", "user"], ["user"], ["user", "assistant", "user"]])"));
  CHECK(h.content() ==
        Json::parse(R"([["S", "U"], ["Hi"], ["a", "b", [{"type": "text", "text": "c"}]]])"));
  CHECK(h.is_complete() == Json::parse(R"([[true, true], [true], [true, false, true]])"));
  CHECK(h[1].role() == Json::array({"user"}));
}
