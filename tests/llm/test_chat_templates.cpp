// dialogpt, falcon, deepseek and llama. The expected strings are what transformers renders from
// TorchRL's Jinja templates (torchrl/data/llm/history.py, _CHAT_TEMPLATES, TorchRL 0.14.0 /
// commit ae9719f): rendered by hand with jinja2 3.1.6's ImmutableSandboxedEnvironment(
// trim_blocks=True, lstrip_blocks=True), a `{% generation %}` extension that only passes its body
// through, transformers' continue_final_message cut, and the families' special tokens
// (dialogpt eos <|endoftext|>, deepseek bos/eos <｜begin▁of▁sentence｜>/<｜end▁of▁sentence｜>,
// llama bos <|begin_of_text|>).
#include "catch2_compat.h"

#include "tensordict/llm/chat.h"

using namespace tensordict::llm;

namespace {

const std::vector<ChatMessage>& four_turns() {
  static const std::vector<ChatMessage> chat = {{"system", "You are a bot."},
                                                {"user", "What is the capital of France?"},
                                                {"assistant", "Paris."},
                                                {"user", "And Germany?"}};
  return chat;
}

ChatTemplateOptions options(bool generation_prompt, bool continue_final = false) {
  ChatTemplateOptions o;
  o.add_generation_prompt = generation_prompt;
  o.continue_final_message = continue_final;
  return o;
}

std::string render(const std::vector<ChatMessage>& chat, std::string_view name, bool gen,
                   bool cont = false) {
  return render_chat(chat, name, options(gen, cont)).text;
}

std::string span_text(const RenderedChat& r, size_t i) {
  return r.text.substr(r.assistant_spans.at(i).begin,
                       r.assistant_spans.at(i).end - r.assistant_spans.at(i).begin);
}

struct Expected {
  std::string name;
  std::string with_prompt;     // four_turns(), add_generation_prompt
  std::string without_prompt;  // four_turns()
  std::string continued;       // {user, assistant "France is "}, continue_final_message
  std::string unknown_roles;   // {user, critic, tool, assistant}
  std::string empty_final;     // {user, assistant ""}
  std::string generated;       // the assistant span of "Paris."
};

const std::vector<Expected>& expected() {
  static const std::vector<Expected> all = {
      {"dialogpt",
       "What is the capital of France?<|endoftext|>Paris.<|endoftext|>And "
       "Germany?<|endoftext|> ",
       "What is the capital of France?<|endoftext|>Paris.<|endoftext|>And Germany?<|endoftext|>",
       "Complete: the capital of<|endoftext|>France is ", "Hi<|endoftext|>Yo<|endoftext|>",
       "Hi<|endoftext|><|endoftext|>", "Paris."},
      {"falcon",
       "You are a bot.\n\nUser: What is the capital of France?\n\nAssistant: Paris.\nUser: And "
       "Germany?\n\nAssistant:",
       "You are a bot.\n\nUser: What is the capital of France?\n\nAssistant: Paris.\nUser: And "
       "Germany?\n\n",
       "User: Complete: the capital of\n\nAssistant: France is ", "User: Hi\n\nAssistant: Yo\n",
       "User: Hi\n\nAssistant: \n", " Paris."},
      {"deepseek",
       "<｜begin▁of▁sentence｜>You are a bot.\n\nUser: What is the capital of "
       "France?\n\nAssistant: "
       "Paris.<｜end▁of▁sentence｜>User: And Germany?\n\nAssistant:",
       "<｜begin▁of▁sentence｜>You are a bot.\n\nUser: What is the capital of "
       "France?\n\nAssistant: "
       "Paris.<｜end▁of▁sentence｜>User: And Germany?\n\n",
       "<｜begin▁of▁sentence｜>User: Complete: the capital of\n\nAssistant: France is ",
       "<｜begin▁of▁sentence｜>User: Hi\n\nAssistant: Yo<｜end▁of▁sentence｜>",
       "<｜begin▁of▁sentence｜>User: Hi\n\nAssistant: <｜end▁of▁sentence｜>", " Paris."},
      {"llama",
       "<|begin_of_text|><|header_start|>system<|header_end|>\n\nYou are a "
       "bot.<|eot|><|header_start|>user<|header_end|>\n\nWhat is the capital of "
       "France?<|eot|><|header_start|>assistant<|header_end|>\n\nParis.<|eot|><|header_start|>user<"
       "|header_end|>\n\nAnd Germany?<|eot|><|header_start|>assistant<|header_end|>\n\n",
       "<|begin_of_text|><|header_start|>system<|header_end|>\n\nYou are a "
       "bot.<|eot|><|header_start|>user<|header_end|>\n\nWhat is the capital of "
       "France?<|eot|><|header_start|>assistant<|header_end|>\n\nParis.<|eot|><|header_start|>user<"
       "|header_end|>\n\nAnd Germany?<|eot|>",
       "<|begin_of_text|><|header_start|>user<|header_end|>\n\nComplete: the capital "
       "of<|eot|><|header_start|>assistant<|header_end|>\n\nFrance is ",
       "<|begin_of_text|><|header_start|>user<|header_end|>\n\nHi<|eot|><|header_start|>critic<|"
       "header_end|>\n\nmeh<|eot|><|header_start|>tool<|header_end|>\n\n42<|eot|><|header_start|>"
       "assistant<|header_end|>\n\nYo<|eot|>",
       "<|begin_of_text|><|header_start|>user<|header_end|>\n\nHi<|eot|><|header_start|>assistant<"
       "|header_end|>\n\n<|eot|>",
       "Paris."},
  };
  return all;
}

void check_same(const std::vector<ChatMessage>& parsed, const std::vector<ChatMessage>& chat) {
  REQUIRE(parsed.size() == chat.size());
  for (size_t i = 0; i < chat.size(); ++i) {
    INFO("message " << i);
    CHECK(parsed[i].role == chat[i].role);
    CHECK(parsed[i].content == chat[i].content);
  }
}

}  // namespace

TEST_CASE("the four plain templates render as TorchRL's Jinja templates", "[chat][templates]") {
  const std::vector<ChatMessage> continued = {{"user", "Complete: the capital of"},
                                              {"assistant", "France is "}};
  const std::vector<ChatMessage> unknown = {
      {"user", "Hi"}, {"critic", "meh"}, {"tool", "42"}, {"assistant", "Yo"}};
  for (const auto& e : expected()) {
    SECTION(e.name) {
      CHECK(render(four_turns(), e.name, true) == e.with_prompt);
      CHECK(render(four_turns(), e.name, false) == e.without_prompt);
      CHECK(render(continued, e.name, false, true) == e.continued);
      // Roles a template does not know: dropped by dialogpt/falcon/deepseek, rendered by llama.
      CHECK(render(unknown, e.name, false) == e.unknown_roles);
      CHECK(render({{"user", "Hi"}, {"assistant", ""}}, e.name, false) == e.empty_final);
      // These templates do not use tools.
      ChatTemplateOptions with_tools = options(false);
      with_tools.tools = Json::array({Json{{"name", "add"}}});
      CHECK(render_chat(four_turns(), e.name, with_tools).text == e.without_prompt);
      // The assistant mask covers what `{% generation %}` encloses.
      const RenderedChat r = render_chat(four_turns(), e.name, options(true));
      REQUIRE(r.assistant_spans.size() == 1);
      CHECK(span_text(r, 0) == e.generated);
    }
  }
}

TEST_CASE("the plain templates' special tokens can be the tokenizer's", "[chat][templates]") {
  ChatTemplateOptions o = options(false);
  o.bos_token = "<s>";
  o.eos_token = "</s>";
  const std::vector<ChatMessage> chat = {{"user", "Hi"}, {"assistant", "Yo"}};
  CHECK(render_chat(chat, "deepseek", o).text == "<s>User: Hi\n\nAssistant: Yo</s>");
  CHECK(render_chat(chat, "dialogpt", o).text == "Hi</s>Yo</s>");
  CHECK(render_chat(chat, "llama", o).text ==
        "<s><|header_start|>user<|header_end|>\n\nHi<|eot|><|header_start|>assistant<|header_end|>"
        "\n\nYo<|eot|>");
}

TEST_CASE("llama trims a leading system message and drops an empty one", "[chat][templates]") {
  CHECK(render({{"system", "  Be brief. \n"}, {"user", "Hi"}}, "llama", false) ==
        "<|begin_of_text|><|header_start|>system<|header_end|>\n\nBe "
        "brief.<|eot|><|header_start|>user<|header_end|>\n\nHi<|eot|>");
  CHECK(render({{"system", " \n"}, {"user", "Hi"}}, "llama", false) ==
        "<|begin_of_text|><|header_start|>user<|header_end|>\n\nHi<|eot|>");
  // A later system message is an ordinary one.
  CHECK(render({{"user", "Hi"}, {"system", " S "}}, "llama", false) ==
        "<|begin_of_text|><|header_start|>user<|header_end|>\n\nHi<|eot|><|header_start|>system<|"
        "header_end|>\n\n S <|eot|>");
}

TEST_CASE("continue_final_message keeps or drops whitespace as transformers does",
          "[chat][templates]") {
  const auto cont = [](std::string content, std::string_view name) {
    return render({{"user", "Q"}, {"assistant", std::move(content)}}, name, false, true);
  };
  CHECK(cont("France is ", "falcon") == "User: Q\n\nAssistant: France is ");
  // The content is kept as written, leading and trailing whitespace included.
  CHECK(cont("  France is ", "falcon") == "User: Q\n\nAssistant:   France is ");
  CHECK(cont("France is\n", "dialogpt") == "Q<|endoftext|>France is\n");
  // A template that trims the content (llama's system message) trims the rest too.
  CHECK(render({{"system", " Be brief. "}}, "llama", false, true) ==
        "<|begin_of_text|><|header_start|>system<|header_end|>\n\nBe brief.");
  // A continued user message.
  CHECK(render({{"user", "Tell me "}}, "deepseek", false, true) ==
        "<｜begin▁of▁sentence｜>User: Tell me ");
  const RenderedChat r =
      render_chat({{"user", "Q"}, {"assistant", "France is "}}, "falcon", options(false, true));
  REQUIRE(r.assistant_spans.size() == 1);
  CHECK(span_text(r, 0) == " France is ");
  // The final message must appear in the rendering: dialogpt drops system messages (empty or not).
  CHECK_THROWS_WITH(
      render({{"user", "Q"}, {"system", "S"}}, "dialogpt", false, true),
      Catch::Matchers::ContainsSubstring("the final message does not appear in the rendered chat"));
  CHECK_THROWS_WITH(
      render({{"user", "Q"}, {"system", ""}}, "dialogpt", false, true),
      Catch::Matchers::ContainsSubstring("the final message does not appear in the rendered chat"));
}

TEST_CASE("continue_final_message on an empty final message stops where its content starts",
          "[chat][templates]") {
  // transformers' cut at its marker, for each template (jinja2 renderings of TorchRL's texts):
  // nothing after the final message's header, no end token.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"chatml_format", "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n"},
      {"qwen",
       "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nQ<|im_end|>"
       "\n<|im_start|>assistant\n"},
      {"dialogpt", "Q<|endoftext|>"},
      {"falcon", "User: Q\n\nAssistant: "},
      {"deepseek", "<｜begin▁of▁sentence｜>User: Q\n\nAssistant: "},
      {"llama",
       "<|begin_of_text|><|header_start|>user<|header_end|>\n\nQ<|eot|><|header_start|>assistant<|"
       "header_end|>\n\n"},
  };
  for (const auto& [name, expected] : cases) {
    INFO(name);
    const RenderedChat r =
        render_chat({{"user", "Q"}, {"assistant", ""}}, name, options(false, true));
    CHECK(r.text == expected);
    // What `{% generation %}` encloses of it: falcon's and deepseek's leading space only.
    const bool space = name == "falcon" || name == "deepseek";
    REQUIRE(r.assistant_spans.size() == (space ? 1u : 0u));
    if (space) CHECK(span_text(r, 0) == " ");
  }
  // qwen: an empty final message with tool calls opens its content, the calls come after it.
  std::vector<ChatMessage> calls = {{"user", "Q"}, {"assistant", ""}};
  calls[1].tool_calls =
      Json::array({Json{{"function", {{"name", "add"}, {"arguments", {{"a", 1}}}}}}});
  CHECK(render(calls, "qwen", false, true) ==
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nQ<|im_end|>"
        "\n<|im_start|>assistant\n");
  // The last text part of a list content: llama trims each part, marker included, so transformers
  // strips the text before the cut too, the header's "\n\n" with it.
  ChatMessage parts{"assistant", ""};
  parts.content_parts = Json::parse(R"([{"type": "text", "text": ""}, {"type": "image"}])");
  CHECK(render_chat({{"user", "Q"}, parts}, "llama", options(false, true)).text ==
        "<|begin_of_text|><|header_start|>user<|header_end|>\n\nQ<|eot|><|header_start|>assistant<|"
        "header_end|>");
}

TEST_CASE("the plain templates parse back what they rendered", "[chat][templates][parse]") {
  const std::vector<ChatMessage> chat = {{"system", "You are a bot."},
                                         {"user", "Two\n\nparagraphs, User: quoted"},
                                         {"assistant", "Answer: Assistant: inline\nnext line"},
                                         {"user", "Thanks"}};
  for (std::string_view name : {"falcon", "deepseek", "llama"}) {
    INFO(name);
    for (bool gen : {false, true}) check_same(parse_chat(render(chat, name, gen), name), chat);
  }
  // dialogpt writes no roles and no system message: turns alternate from the user.
  const std::vector<ChatMessage> turns(chat.begin() + 1, chat.end());
  for (bool gen : {false, true}) {
    check_same(parse_chat(render(turns, "dialogpt", gen), "dialogpt"), turns);
  }
}

TEST_CASE("special tokens inside contents round-trip where the text is unambiguous",
          "[chat][templates][parse]") {
  const std::vector<ChatMessage> chatml = {{"user", "what is <|im_end|> or <|im_start|>?"},
                                           {"assistant", "a token<|im_end|>, see"}};
  for (std::string_view name : {"chatml_format", "qwen"}) {
    INFO(name);
    check_same(parse_chat(render(chatml, name, true), name), chatml);
  }
  const std::vector<ChatMessage> llama = {{"user", "<|eot|> and <|header_start|>?"},
                                          {"assistant", "tokens<|eot|>x"}};
  check_same(parse_chat(render(llama, "llama", false), "llama"), llama);
  const std::vector<ChatMessage> deepseek = {{"user", "Hi"},
                                             {"assistant", "a<｜end▁of▁sentence｜>b"}};
  check_same(parse_chat(render(deepseek, "deepseek", false), "deepseek"), deepseek);
  // Where a content holds a whole message boundary the text reads as two messages; a text no
  // template could render is an error naming the character.
  CHECK(parse_chat(render({{"user", "a<|im_end|>\n<|im_start|>user\nb"}}, "chatml_format", false),
                   "chatml_format")
            .size() == 2);
  CHECK_THROWS_WITH(parse_chat("<|header_start|>user<|eot|>", "llama"),
                    "parse_chat(llama): at character 16: unterminated message header");
  CHECK_THROWS_WITH(parse_chat("Assistant:Yo", "falcon"),
                    "parse_chat(falcon): at character 10: expected ' ' after 'Assistant:'");
  // A line that starts like a turn is one: falcon cannot tell "\nUser: " in a content from a new
  // message, so a text holding it reads as two messages.
  CHECK(parse_chat(render({{"assistant", "a\nUser: b"}}, "falcon", false), "falcon").size() == 2);
  CHECK_THROWS_WITH(parse_chat("User: Hi\n\nAssistant:Yo", "deepseek"),
                    "parse_chat(deepseek): at character 20: expected ' ' after 'Assistant:'");
}

TEST_CASE("open and empty final messages parse back", "[chat][templates][parse]") {
  for (const auto& e : expected()) {
    INFO(e.name);
    // An empty but complete assistant message.
    auto empty = parse_chat(e.empty_final, e.name);
    REQUIRE(empty.size() == 2);
    CHECK(empty[1].role == "assistant");
    CHECK(empty[1].content.empty());
    CHECK(empty[1].is_complete);
    // A continued assistant message is incomplete and keeps its trailing space.
    auto open = parse_chat(e.continued, e.name);
    REQUIRE(open.size() == 2);
    CHECK(open[1].content == "France is ");
    CHECK_FALSE(open[1].is_complete);
    CHECK(open[0].is_complete);
    // The generation prompt is not a message.
    CHECK(parse_chat(e.with_prompt, e.name).size() == (e.name == "dialogpt" ? 3 : 4));
  }
}

TEST_CASE("model names pick templates as TorchRL does", "[chat][templates]") {
  CHECK(detect_chat_template("Qwen/Qwen2.5-0.5B") == "qwen");
  CHECK(detect_chat_template("microsoft/DialoGPT-medium") == "dialogpt");
  CHECK(detect_chat_template("tiiuae/falcon-7b-instruct") == "falcon");
  CHECK(detect_chat_template("deepseek-ai/deepseek-coder-6.7b-base") == "deepseek");
  CHECK(detect_chat_template("meta-llama/Llama-4-Scout-17B-16E-Instruct") == "llama");
  CHECK(detect_chat_template("Qwen/qwen-llama-merge") == "qwen");  // TorchRL's order
  for (const char* other : {"gpt2", "microsoft/phi-2", "HuggingFaceH4/zephyr-7b-beta",
                            "facebook/opt-125m", "EleutherAI/pythia-70m", ""}) {
    CHECK(detect_chat_template(other) == "chatml_format");
  }
  CHECK_THROWS_WITH(
      render_chat({{"user", "Hi"}}, "jinja"),
      Catch::Matchers::StartsWith("unknown chat template 'jinja' (known: chatml_format, qwen, "
                                  "dialogpt, falcon, deepseek, llama"));
}
