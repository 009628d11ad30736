// Chat templates: expected strings are TorchRL's (test/llm/test_data.py, test_llm_envs.py) and the
// templates' documented layout.
#include "catch2_compat.h"

#include <type_traits>

#include "tensorclass/llm/chat.h"  // the former path, forwarding (tensordict/llm/chat.h)
#include "tensordict/llm/chat.h"

using namespace tensordict::llm;

namespace {

std::vector<ChatMessage> system_user() { return {{"system", "You are a bot."}, {"user", "Hello"}}; }

std::string render_text(const std::vector<ChatMessage>& m, std::string_view f, bool gen = true) {
  ChatTemplateOptions options;
  options.add_generation_prompt = gen;
  return render_chat(m, f, options).text;
}

}  // namespace

TEST_CASE("chatml_format renders system and user messages", "[chat]") {
  const std::string base =
      "<|im_start|>system\nYou are a bot.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n";
  CHECK(render_text(system_user(), "chatml_format", false) == base);
  CHECK(base.size() == 77);
  CHECK(render_text(system_user(), "chatml_format", true) == base + "<|im_start|>assistant\n");
  CHECK(render_text(system_user(), "chatml_format", true).size() == 99);
}

TEST_CASE("the former names tensorclass::llm and tensorclass/llm/ still reach the llm library",
          "[chat]") {
  STATIC_REQUIRE(std::is_same_v<tensorclass::llm::ChatMessage, ChatMessage>);
  const std::vector<tensorclass::llm::ChatMessage> messages = system_user();
  CHECK(tensorclass::llm::render_chat(messages, "chatml_format", {}).text ==
        render_text(messages, "chatml_format"));
}

TEST_CASE("qwen equals chatml for system+user and injects a default system prompt", "[chat]") {
  for (bool gen : {false, true}) {
    CHECK(render_text(system_user(), "qwen", gen) ==
          render_text(system_user(), "chatml_format", gen));
  }
  CHECK(render_text({{"user", "Hello"}}, "qwen") ==
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
        "Hello<|im_end|>\n<|im_start|>assistant\n");
  CHECK(render_text({{"user", "Hello"}}, "chatml_format") ==
        "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n");
}

TEST_CASE("assistant contents are the generated spans", "[chat]") {
  std::vector<ChatMessage> chat = {
      {"user", "Hi"}, {"assistant", "Hello there"}, {"user", "Bye"}, {"assistant", "Ciao"}};
  for (std::string_view format : {"chatml_format", "qwen"}) {
    RenderedChat r = render_chat(chat, format, {false});
    REQUIRE(r.assistant_spans.size() == 2);
    CHECK(r.text.substr(r.assistant_spans[0].begin,
                        r.assistant_spans[0].end - r.assistant_spans[0].begin) == "Hello there");
    CHECK(r.text.substr(r.assistant_spans[1].begin,
                        r.assistant_spans[1].end - r.assistant_spans[1].begin) == "Ciao");
  }
}

TEST_CASE("padding messages with role <none> are dropped", "[chat]") {
  std::vector<ChatMessage> chat = {{"user", "Hi"}, {"<none>", ""}, {"<none>", ""}};
  CHECK(render_text(chat, "chatml_format", false) == "<|im_start|>user\nHi<|im_end|>\n");
}

TEST_CASE("continue_final_message stops after the last content", "[chat]") {
  // transformers marks the final content, renders, and cuts where the mark starts: the content is
  // kept as written, whitespace included (checked against jinja2 and transformers' algorithm).
  std::vector<ChatMessage> chat = {{"user", "Hi"}, {"assistant", "Once upon a time "}};
  ChatTemplateOptions options;
  options.add_generation_prompt = false;
  options.continue_final_message = true;
  RenderedChat r = render_chat(chat, "chatml_format", options);
  CHECK(r.text == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nOnce upon a time ");
  CHECK(r.assistant_spans.back().end == r.text.size());
  chat.back().content = " Once upon a time ";
  CHECK(render_chat(chat, "chatml_format", options).text ==
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n Once upon a time ");
  // An empty final message: the text stops where its content would start (no <|im_end|>), and
  // no assistant token is masked.
  chat.back().content = "";
  RenderedChat empty = render_chat(chat, "chatml_format", options);
  CHECK(empty.text == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  CHECK(empty.assistant_spans.empty());
  // The final content also appearing earlier does not move the cut.
  chat = {{"user", "Paris"}, {"assistant", "Paris"}};
  CHECK(render_chat(chat, "chatml_format", options).text ==
        "<|im_start|>user\nParis<|im_end|>\n<|im_start|>assistant\nParis");
  options.add_generation_prompt = true;
  CHECK_THROWS_AS(render_chat(chat, "chatml_format", options), tensordict::ValueError);
}

TEST_CASE("qwen renders tools, tool calls and grouped tool responses", "[chat]") {
  ChatMessage call{"assistant", ""};
  call.tool_calls = Json::array(
      {Json{{"function", Json{{"name", "add"}, {"arguments", Json{{"a", 1}, {"b", 2}}}}}}});
  ChatMessage r1{"tool", "3"};
  ChatMessage r2{"tool", "ignored"};
  r2.tool_responses = Json::array({"r1"});
  ChatTemplateOptions options;
  options.add_generation_prompt = false;
  options.tools = Json::array({Json{{"name", "add"}, {"description", "adds"}}});
  const std::string text =
      render_chat({{"user", "1+2?"}, call, r1, r2, {"assistant", "It is 3."}}, "qwen", options)
          .text;
  CHECK(text ==
        "<|im_start|>system\nYou are a helpful assistant.\n\n# Tools\n\nYou may call one or more "
        "functions to assist with the user query.\n\nYou are provided with function signatures "
        "within <tools></tools> XML tags:\n<tools>\n{\"name\": \"add\", \"description\": "
        "\"adds\"}\n</tools>\n\nFor each function call, return a json object with function name "
        "and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": "
        "<function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n"
        "<|im_start|>user\n1+2?<|im_end|>\n"
        "<|im_start|>assistant\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, "
        "\"b\": 2}}\n</tool_call><|im_end|>\n"
        "<|im_start|>tool\n<tool_response>\n3\n</tool_response>\n<tool_response>\n['r1']\n"
        "</tool_response><|im_end|>\n"
        "<|im_start|>assistant\nIt is 3.<|im_end|>\n");
}

// TorchRL (tensordict's list_to_stack) stores a list of numbers only as a tensor: its qwen
// template raises on one of several values and prints "tensor([1])" for one. A list mixing
// numbers with other values stays a list and prints as TorchRL prints it (checked with TorchRL).
TEST_CASE("qwen refuses tool_responses of numbers only", "[chat]") {
  auto tool_block = [](const Json& responses) {
    ChatMessage m{"tool", "c"};
    m.tool_responses = responses;
    return render_text({{"user", "q"}, m}, "qwen", false);
  };
  CHECK_THROWS_AS(tool_block(Json::array({2, 3})), tensordict::TypeError);
  CHECK_THROWS_WITH(
      tool_block(Json::array({2, 3})),
      "template 'qwen': message 1's tool_responses [2, 3] hold only numbers; give the "
      "responses as strings");
  CHECK_THROWS_AS(tool_block(Json::array({1.5})), tensordict::TypeError);
  CHECK_THROWS_AS(tool_block(Json::array({true})), tensordict::TypeError);
  CHECK_THROWS_AS(tool_block(Json::parse("[[1, 2]]")), tensordict::TypeError);
  const std::string head =
      "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nq<|im_end|>"
      "\n<|im_start|>tool\n<tool_response>\n";
  const std::string tail = "\n</tool_response><|im_end|>\n";
  CHECK(tool_block(Json::parse(R"([1, "a"])")) == head + "[1, 'a']" + tail);
  CHECK(tool_block(Json::parse(R"([{"x": 1}, 2])")) == head + "[{'x': 1}, 2]" + tail);
  CHECK(tool_block(Json::parse(R"(["1", "2"])")) == head + "['1', '2']" + tail);
  // The other templates do not print tool_responses.
  ChatMessage numbers{"tool", "c"};
  numbers.tool_responses = Json::array({2, 3});
  CHECK(render_text({numbers}, "chatml_format", false) == "<|im_start|>tool\nc<|im_end|>\n");
}

TEST_CASE("parse_chat inverts render_chat", "[chat][parse]") {
  std::vector<ChatMessage> chat = {{"system", "S"}, {"user", "multi\nline"}, {"assistant", "A"}};
  for (std::string_view format : {"chatml_format", "qwen"}) {
    auto parsed = parse_chat(render_text(chat, format, true), format);
    REQUIRE(parsed.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
      CHECK(parsed[i].role == chat[i].role);
      CHECK(parsed[i].content == chat[i].content);
      CHECK(parsed[i].is_complete);
    }
  }
  auto open =
      parse_chat("<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\npartial", "chatml_format");
  REQUIRE(open.size() == 2);
  CHECK(open[1].content == "partial");
  CHECK_FALSE(open[1].is_complete);
  CHECK_THROWS_WITH(parse_chat("hello", "chatml_format"),
                    "parse_chat(chatml_format): at character 0: expected '<|im_start|>'");
}

TEST_CASE("parse_chat recovers qwen tool calls and responses", "[chat][parse]") {
  ChatMessage call{"assistant", "Let me add."};
  call.tool_calls = Json::array({Json{{"name", "add"}, {"arguments", Json{{"a", 1}}}}});
  std::vector<ChatMessage> chat = {{"user", "1+2?"}, call, {"tool", "3"}, {"tool", "4"}};
  auto parsed = parse_chat(render_text(chat, "qwen", false), "qwen");
  REQUIRE(parsed.size() == 4);  // the template's default system message is not the user's
  CHECK(parsed[0].role == "user");
  CHECK(parsed[1].content == "Let me add.");
  CHECK(parsed[1].tool_calls == call.tool_calls);
  CHECK(parsed[2].role == "tool");
  CHECK(parsed[2].content == "3");
  CHECK(parsed[3].content == "4");
}

TEST_CASE("assistant token mask marks tokens overlapping assistant spans", "[chat]") {
  RenderedChat r = render_chat({{"user", "Hi"}, {"assistant", "Yo"}}, "chatml_format", {false});
  // A toy tokenizer: one token per character.
  Encoding enc;
  for (size_t i = 0; i < r.text.size(); ++i) {
    enc.ids.push_back(static_cast<unsigned char>(r.text[i]));
    enc.offsets.push_back({i, i + 1});
  }
  auto mask = assistant_token_mask(enc, r.assistant_spans);
  std::string masked;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i]) masked += r.text[i];
  }
  CHECK(masked == "Yo");
}

TEST_CASE("unknown roles: chatml renders them, qwen drops them, as TorchRL's templates do",
          "[chat]") {
  // Rendered from TorchRL's Jinja templates with jinja2 (see test_chat_templates.cpp).
  const std::vector<ChatMessage> chat = {
      {"user", "Hi"}, {"critic", "meh"}, {"tool", "42"}, {"assistant", "Yo"}};
  CHECK(render_text(chat, "chatml_format", false) ==
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>critic\nmeh<|im_end|>\n<|im_start|>tool\n42<|"
        "im_end|>\n<|im_start|>assistant\nYo<|im_end|>\n");
  CHECK(render_text(chat, "qwen", false) ==
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>"
        "\n<|im_start|>tool\n<tool_response>\n42\n</tool_response><|im_end|>\n<|im_start|>"
        "assistant\nYo<|im_end|>\n");
}

TEST_CASE("a model's output ending at <|im_end|> parses as complete", "[chat][parse]") {
  auto parsed = parse_chat("<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\nA<|im_end|>",
                           "chatml_format");
  REQUIRE(parsed.size() == 2);
  CHECK(parsed[1].content == "A");
  CHECK(parsed[1].is_complete);
}
