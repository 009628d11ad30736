// ContentBase (TorchRL's typed content parts) as History content, and malformed chats: every
// error names the message and the field. The llama strings are rendered from TorchRL's llama
// Jinja template with jinja2 (see test_chat_templates.cpp).
#include <ATen/ATen.h>

#include <filesystem>
#include "catch2_compat.h"

#include "history.h"
#include "tensordict/llm/conversation.h"
#include "tensordict/memmap.h"

using tensordict::Json;
using torchrl::llm::ContentBase;
using torchrl::llm::History;
using torchrl::llm::HistoryTemplateOptions;

namespace {

const Json kParts = Json::parse(R"([
  {"type": "text", "text": " Describe "},
  {"type": "image", "url": "https://example.com/cat.jpg", "mime_type": "image/jpeg", "size": 2048},
  {"type": "text", "text": "this."}])");

Json multimodal_chat(const Json& answer) {
  return Json::array({Json{{"role", "user"}, {"content", kParts}},
                      Json{{"role", "assistant"}, {"content", answer}}});
}

HistoryTemplateOptions template_options(std::string name, bool generation_prompt) {
  HistoryTemplateOptions o;
  o.chat_template_name = std::move(name);
  o.add_generation_prompt = generation_prompt;
  return o;
}

}  // namespace

TEST_CASE("ContentBase is a generated tensorclass with TorchRL's fields", "[content]") {
  ContentBase::Args args;
  args.field_type = "text";
  args.text = "Hello, world!";
  ContentBase part(args);
  CHECK(part.field_type() == "text");
  CHECK(part.text() == "Hello, world!");
  CHECK(part.url().is_null());
  CHECK(std::string(ContentBase::spec().python_type) ==
        "<class 'torchrl.data.llm.history.ContentBase'>");
  CHECK(ContentBase::fields() == std::vector<std::string>{"type", "text", "url", "data",
                                                          "mime_type", "name", "size",
                                                          "function_name", "function_args"});
  // Batched parts: one value per part.
  ContentBase::Args two;
  two.field_type = Json::array({"text", "image"});
  two.url = Json::array({nullptr, "https://example.com/a.png"});
  ContentBase parts(two, {2});
  CHECK(parts[1].url() == "https://example.com/a.png");
  CHECK(parts[0].field_type() == "text");
}

TEST_CASE("a History holds ContentBase parts and renders their text", "[content]") {
  History h =
      History::from_chats(multimodal_chat(Json::parse(R"([{"type": "text", "text": "A cat. "}])")));
  // TorchRL's layout: a lazy stack of messages, each holding its part dicts as given, a
  // NonTensorStack of k items (History(**message) with list_to_stack), not ContentBase parts.
  CHECK(h._tensordict().is_lazy_stack());
  CHECK(h.batch_size() == std::vector<int64_t>{2});
  const tensordict::Value content = h[0]._tensordict().get_value("content");
  REQUIRE(content.is_non_tensor_stack());
  CHECK(content.non_tensor_stack().shape() == std::vector<int64_t>{3});
  CHECK(content.non_tensor_stack().tolist() == kParts);
  CHECK(h[0].content() == kParts);  // a message's content: its dicts, as TorchRL returns them
  // llama renders the text parts, each trimmed.
  CHECK(h.apply_chat_template(template_options("llama", true))[0] ==
        "<|begin_of_text|><|header_start|>user<|header_end|>\n\nDescribethis.<|eot|><|header_start|"
        ">assistant<|header_end|>\n\nA cat.<|eot|><|header_start|>assistant<|header_end|>\n\n");
  // continue_final_message continues the last text part.
  History open = History::from_chats(multimodal_chat(
      Json::parse(R"([{"type": "text", "text": "A cat "}, {"type": "image", "url": "u"}])")));
  HistoryTemplateOptions cont = template_options("llama", false);
  cont.continue_final_message = true;
  CHECK(open.apply_chat_template(cont)[0] ==
        "<|begin_of_text|><|header_start|>user<|header_end|>\n\nDescribethis.<|eot|><|header_start|"
        ">assistant<|header_end|>\n\nA cat");
  // chatml joins a user's content with its header: TorchRL's Jinja fails there too (str + list).
  CHECK_THROWS_WITH(h.apply_chat_template(template_options("chatml_format", false)),
                    "template 'chatml_format' joins message 0's content with text, and it is a "
                    "list of parts (as TorchRL's Jinja template, which fails to add a string and "
                    "a list; the llama template renders text parts)");
}

TEST_CASE("ContentBase parts round-trip through a History", "[content]") {
  const Json answer = Json::parse(R"([{"type": "function_call", "function_name": "zoom",
                                       "function_args": {"factor": 2}}])");
  History h = History::from_chats(multimodal_chat(answer));
  const auto messages = tensordict::llm::conversation_messages(h._tensordict());
  REQUIRE(messages.size() == 2);
  CHECK(messages[0].content_parts == kParts);
  CHECK(messages[1].content_parts == answer);
  CHECK(h[1].role() == "assistant");
  // A single message (0-D History): its content is the parts themselves, batch [k].
  const auto one = tensordict::llm::conversation_messages(h[0]._tensordict());
  REQUIRE(one.size() == 1);
  CHECK(one[0].content_parts == kParts);
  // Parts stored densely (a ContentBase of batch [k], as stack() makes it) read the same.
  ContentBase::Args dense;
  dense.field_type = Json::array({"text", "image"});
  dense.text = Json::array({"Hi", nullptr});
  dense.url = Json::array({nullptr, "u"});
  tensordict::TensorDict message({}, {});
  message.set_non_tensor("role", "user");
  message.set("content", ContentBase(dense, {2})._tensordict());
  CHECK(tensordict::llm::conversation_messages(message).at(0).content_parts ==
        Json::parse(R"([{"type": "text", "text": "Hi"}, {"type": "image", "url": "u"}])"));
  // A batch of such conversations, of different lengths.
  const Json text_answer = Json::parse(R"([{"type": "text", "text": "Zoomed."}])");
  History batch = History::from_chats(
      Json::array({multimodal_chat(text_answer), Json::array({multimodal_chat(answer)[0]})}));
  CHECK(batch.batch_size() == std::vector<int64_t>{2, -1});
  const auto texts = batch.apply_chat_template(template_options("llama", false));
  REQUIRE(texts.size() == 2);
  CHECK(texts[1] == "<|begin_of_text|><|header_start|>user<|header_end|>\n\nDescribethis.<|eot|>");
  CHECK_THAT(texts[0], Catch::Matchers::EndsWith(
                           "<|header_start|>assistant<|header_end|>\n\nZoomed.<|eot|>"));
}

TEST_CASE("a History with content parts memmaps and loads back", "[content][memmap]") {
  const Json answer = Json::parse(R"([{"type": "text", "text": "A cat."}])");
  History h = History::from_chats(
      Json::array({multimodal_chat(answer), Json::array({multimodal_chat(answer)[0]})}));
  const auto dir = std::filesystem::temp_directory_path() / "tc_history_content";
  std::filesystem::remove_all(dir);
  h.memmap(dir.string());
  History back = History::load_memmap(dir.string());
  CHECK(back.apply_chat_template(template_options("llama", false)) ==
        h.apply_chat_template(template_options("llama", false)));
  const auto messages = tensordict::llm::conversation_messages(back[0]._tensordict());
  REQUIRE(messages.size() == 2);
  CHECK(messages[0].content_parts == kParts);
  CHECK(messages[1].content_parts == answer);
  // Python's layout (tensordict 0.14 writing TorchRL's from_chats, checked by hand): each
  // message's content is a NonTensorStack directory whose meta.json holds the dicts as given.
  const Json meta = tensordict::memmap::read_meta((dir / "_tensordict/0/0/content").string());
  Json expected = {{"_type", "<class 'tensordict.tensorclass.NonTensorStack'>"},
                   {"stack_dim", 0},
                   {"device", nullptr},
                   {"data", kParts}};
  CHECK(meta == expected);
  CHECK(tensordict::memmap::read_meta((dir / "_tensordict/0/0").string())["content"] ==
        Json{{"type", "NonTensorStack"}});
  CHECK_FALSE(std::filesystem::exists(dir / "_tensordict/0/0/content/_tensordict"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("typed ContentBase contents are still read", "[content]") {
  // A message whose content is a ContentBase (lazily stacked 0-D parts, as content_parts_tensordict
  // builds them, or dense ones): its messages read as the parts' dicts.
  tensordict::TensorDict message({}, {});
  message.set_non_tensor("role", "user");
  message.set("content", tensordict::llm::content_parts_tensordict(kParts));
  CHECK(tensordict::llm::conversation_messages(message).at(0).content_parts == kParts);
  CHECK(History::from_tensordict(message).content() == kParts);
  History conversation = History::lazy_stack({History::from_tensordict(message)});
  CHECK(conversation.apply_chat_template(template_options("llama", false))[0] ==
        "<|begin_of_text|><|header_start|>user<|header_end|>\n\nDescribethis.<|eot|>");
}

TEST_CASE("malformed chats name the message, the part and the field", "[content][errors]") {
  auto from = [](const char* json) { return History::from_chats(Json::parse(json)); };
  CHECK_THROWS_WITH(from(R"([{"role": "user", "content": [{"type": 3}]}])"),
                    "from_chats: message 0: field 'content': part 0: field 'type' must be a "
                    "string, got number 3");
  CHECK_THROWS_WITH(
      from(R"([{"role": "user", "content": [{"type": "text"}, {"type": "image", "colour": 1}]}])"),
      Catch::Matchers::StartsWith(
          "from_chats: message 0: field 'content': part 1: unknown ContentBase field "
          "'colour' (known: type, text,"));
  // A part without a type is kept, as TorchRL keeps it (the templates do not take it for text).
  CHECK(tensordict::llm::conversation_messages(
            from(R"([{"role": "user", "content": [{"text": "no type"}]}])")._tensordict())
            .at(0)
            .content_parts == Json::parse(R"([{"text": "no type"}])"));
  // As TorchRL's History, a message needs a content; a null one is kept (templates that print it
  // print nothing).
  CHECK_THROWS_WITH(from(R"([{"role": "user"}])"),
                    Catch::Matchers::ContainsSubstring("chat message without a content"));
  CHECK(tensordict::llm::conversation_messages(
            from(R"([{"role": "user", "content": null}])")._tensordict())
            .at(0)
            .content_null);
  CHECK_THROWS_WITH(from(R"([{"role": "user", "content": [{"type": "image", "size": "big"}]}])"),
                    "from_chats: message 0: field 'content': part 0: field 'size' must be an "
                    "integer, got string \"big\"");
  CHECK_THROWS_WITH(from(R"([{"role": "user", "content": "a", "tool_calls": "add"}])"),
                    "from_chats: message 0: field 'tool_calls' must be null or a list of JSON "
                    "objects, got \"add\"");
  CHECK_THROWS_WITH(from(R"([{"role": "user", "content": "a", "tool_responses": 3}])"),
                    "from_chats: message 0: field 'tool_responses' must be null or a list, got 3");
  // Strings and parts may mix in a conversation: each message holds its own content.
  History mixed = from(
      R"([{"role": "user", "content": "a"}, {"role": "user", "content": [{"type": "text", "text": "b"}]}])");
  const auto mixed_messages = tensordict::llm::conversation_messages(mixed._tensordict());
  REQUIRE(mixed_messages.size() == 2);
  CHECK(mixed_messages[0].content == "a");
  CHECK(mixed_messages[1].content_parts == Json::parse(R"([{"type": "text", "text": "b"}])"));
  // A History built directly, with a role that is not a string: the error names the message.
  History direct({Json::array({"user", 7}), Json::array({"a", "b"})}, {2});
  CHECK_THROWS_WITH(direct.apply_chat_template(),
                    "History message 1: field 'role' must be a string, got number 7");
  History no_text({Json::array({"user"}), Json::array({Json{{"a", 1}}})}, {1});
  CHECK_THROWS_WITH(no_text.apply_chat_template(),
                    "History message 0: field 'content' must be a string or a list of ContentBase "
                    "parts (JSON objects), got object {\"a\":1}");
}

TEST_CASE("content() of a conversation mixing strings and parts", "[content]") {
  // TorchRL's `history.content` raises on such a conversation (tensordict cannot stack a string
  // and a list); its messages' own values (`[m.content for m in history.unbind(0)]`, or
  // `tolist()`) are a string and the list of part dicts. content() gives that list.
  History mixed = History::from_chats(Json::parse(
      R"([{"role": "user", "content": "a"}, {"role": "assistant", "content": [{"type": "text", "text": "b"}]}])"));
  CHECK(mixed.content() == Json::parse(R"(["a", [{"type": "text", "text": "b"}]])"));
  CHECK(mixed.role() == Json::array({"user", "assistant"}));
  CHECK(mixed.apply_chat_template(template_options("llama", false))[0] ==
        "<|begin_of_text|><|header_start|>user<|header_end|>\n\na<|eot|><|header_start|>"
        "assistant<|header_end|>\n\nb<|eot|>");
}

// A lazy stack whose elements hold `content` as different kinds (a ContentBase TensorDict and a
// string) or as ragged non-tensor data (a batch of such conversations) does not stack it; an `any`
// accessor then reads one value per message, one list per conversation (TorchRL's own
// history.content raises on these).
TEST_CASE("content() of mixed ContentBase parts and strings, and of a batch of them", "[content]") {
  const Json parts =
      Json::parse(R"([{"type": "text", "text": "Hi"}, {"type": "image", "url": "u"}])");
  tensordict::TensorDict with_parts({}, {});
  with_parts.set_non_tensor("role", "user");
  with_parts.set("content", tensordict::llm::content_parts_tensordict(parts));
  tensordict::TensorDict plain({}, {});
  plain.set_non_tensor("role", "assistant");
  plain.set_non_tensor("content", "hi");
  History conversation =
      History::lazy_stack({History::from_tensordict(with_parts), History::from_tensordict(plain)});
  CHECK(conversation.apply_chat_template(template_options("llama", false))[0] ==
        "<|begin_of_text|><|header_start|>user<|header_end|>\n\nHi<|eot|><|header_start|>"
        "assistant<|header_end|>\n\nhi<|eot|>");
  CHECK(conversation.content() == Json::array({parts, "hi"}));
  History batch = History::from_chats(Json::parse(
      R"([[{"role": "user", "content": "a"}, {"role": "assistant", "content": [{"type": "text", "text": "b"}]}],
          [{"role": "user", "content": "c"}]])"));
  CHECK(batch.content() == Json::parse(R"([["a", [{"type": "text", "text": "b"}]], ["c"]])"));
}
