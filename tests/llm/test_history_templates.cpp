// History with every template: qwen's inverse details (expected strings rendered from TorchRL's
// qwen Jinja template with jinja2, as described in test_chat_templates.cpp), a template registered
// with add_chat_template, and assistant masks from tokenizers whose tokens span several characters.
#include <ATen/ATen.h>

#include <map>
#include "catch2_compat.h"

#include "history.h"
#include "tensordict/llm/conversation.h"

using tensordict::Json;
using tensordict::llm::ChatMessage;
using tensordict::llm::ChatWriter;
using tensordict::llm::Encoding;
using tensordict::llm::RenderedChat;
using torchrl::llm::History;
using torchrl::llm::HistoryTemplateOptions;

namespace {

HistoryTemplateOptions named(std::string name, bool generation_prompt = false) {
  HistoryTemplateOptions o;
  o.chat_template_name = std::move(name);
  o.add_generation_prompt = generation_prompt;
  return o;
}

Json chat(std::initializer_list<std::pair<const char*, const char*>> messages) {
  Json out = Json::array();
  for (const auto& [role, content] : messages)
    out.push_back({{"role", role}, {"content", content}});
  return out;
}

// "[INST] user [/INST]assistant</s>": a template a user registers, with its inverse.
RenderedChat render_inst(const std::vector<ChatMessage>& messages,
                         const tensordict::llm::ChatTemplateOptions& options) {
  ChatWriter out;
  for (const auto& m : messages) {
    if (m.role == "user") {
      out.put("[INST] " + m.content + " [/INST]");
    } else if (m.role == "assistant") {
      out.generated(m.content);
      out.put("</s>");
    } else {
      throw std::invalid_argument("inst: role '" + m.role + "' is not supported");
    }
  }
  if (options.add_generation_prompt) out.put("");
  return out.finish();
}

std::vector<ChatMessage> parse_inst(std::string_view text) {
  std::vector<ChatMessage> out;
  while (!text.empty()) {
    if (text.rfind("[INST] ", 0) == 0) {
      const size_t end = text.find(" [/INST]");
      out.push_back({"user", std::string(text.substr(7, end - 7))});
      text.remove_prefix(end + 8);
    } else {
      const size_t end = text.find("</s>");
      ChatMessage m{"assistant", std::string(text.substr(0, end))};
      m.is_complete = end != std::string_view::npos;
      out.push_back(std::move(m));
      text.remove_prefix(end == std::string_view::npos ? text.size() : end + 4);
    }
  }
  return out;
}

// A word-level tokenizer, as BPE ones behave: special tokens <|...|> whole, a word with the
// space before it, runs of punctuation, single newlines.
Encoding word_tokenizer(std::string_view text) {
  static std::map<std::string, int64_t> vocab;
  Encoding enc;
  size_t i = 0;
  auto alnum = [&](size_t k) {
    return k < text.size() && std::isalnum(static_cast<unsigned char>(text[k]));
  };
  while (i < text.size()) {
    size_t j = i + 1;
    if (text.compare(i, 2, "<|") == 0 && text.find("|>", i) != std::string_view::npos) {
      j = text.find("|>", i) + 2;
    } else if (alnum(i) || (text[i] == ' ' && alnum(i + 1))) {
      j = i + 1;
      while (alnum(j)) ++j;
    } else if (std::ispunct(static_cast<unsigned char>(text[i])) && text[i] != '<') {
      while (j < text.size() && std::ispunct(static_cast<unsigned char>(text[j])) && text[j] != '<')
        ++j;
    }
    const std::string piece(text.substr(i, j - i));
    enc.ids.push_back(vocab.emplace(piece, static_cast<int64_t>(vocab.size())).first->second);
    enc.offsets.push_back({i, j});
    i = j;
  }
  return enc;
}

// The text of the tokens the mask marks.
std::string masked_text(const tensordict::TensorDict& tokens, const std::string& text,
                        const Encoding& enc) {
  const at::Tensor mask = tokens.get("assistant_masks")[0];
  std::string out;
  for (size_t t = 0; t < enc.ids.size(); ++t) {
    if (mask[static_cast<int64_t>(t)].item<int64_t>() == 1) {
      out += text.substr(enc.offsets[t].begin, enc.offsets[t].end - enc.offsets[t].begin);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("from_text(qwen) leaves out the template's default system message", "[history][qwen]") {
  History h = History::from_chats(chat({{"user", "Hi"}, {"assistant", "Yo"}}));
  History back = History::from_text(h.apply_chat_template(named("qwen"))[0], "qwen");
  CHECK(back.role() == Json::array({"user", "assistant"}));
  // A system message of the user's comes back, without the tools section qwen appends to it.
  HistoryTemplateOptions tools = named("qwen");
  tools.tools = Json::array({Json{{"name", "add"}}});
  History own = History::from_chats(chat({{"system", "Be brief."}, {"user", "Hi"}}));
  const std::string text = own.apply_chat_template(tools)[0];
  CHECK(text.rfind("<|im_start|>system\nBe brief.\n\n# Tools\n\nYou may call", 0) == 0);
  History parsed = History::from_text(text, "qwen");
  CHECK(parsed.content() == Json::array({"Be brief.", "Hi"}));
  CHECK(History::from_text(h.apply_chat_template(tools)[0], "qwen").role() ==
        Json::array({"user", "assistant"}));
  // Kept when a system message follows it (qwen drops the unknown role "critic" before that):
  // without it, the later system message would render as the first.
  const RenderedChat r =
      tensordict::llm::render_chat({{"critic", "x"}, {"system", "Late"}}, "qwen", named("qwen"));
  CHECK(r.text ==
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>system\nLate<|im_"
        "end|>\n");
  const auto parsed_back = tensordict::llm::parse_chat(r.text, "qwen");
  REQUIRE(parsed_back.size() == 2);
  CHECK(parsed_back[0].content == "You are a helpful assistant.");
  CHECK(tensordict::llm::render_chat(parsed_back, "qwen", named("qwen")).text == r.text);
  // A text of the default system message alone (with or without the generation prompt) is that
  // message, as TorchRL reads it; it renders back to the same text.
  const std::string alone = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n";
  for (const std::string& text : {alone, alone + "<|im_start|>assistant\n"}) {
    INFO(text);
    History only = History::from_text(text, "qwen");
    CHECK(only.role() == Json::array({"system"}));
    CHECK(only.content() == Json::array({"You are a helpful assistant."}));
  }
  CHECK(History::from_text(alone, "qwen").apply_chat_template(named("qwen"))[0] == alone);
}

TEST_CASE("qwen: a continued tool message and an empty final assistant parse back",
          "[history][qwen]") {
  std::vector<ChatMessage> messages = {
      {"user", "1+?"}, {"assistant", ""}, {"tool", "first"}, {"tool", "partial result "}};
  messages[1].tool_calls =
      Json::array({Json{{"function", {{"name", "add"}, {"arguments", {{"a", 1}}}}}}});
  tensordict::llm::ChatTemplateOptions cont;
  cont.add_generation_prompt = false;
  cont.continue_final_message = true;
  const RenderedChat r = tensordict::llm::render_chat(messages, "qwen", cont);
  CHECK(
      r.text ==
      "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n1+?<|im_end|>"
      "\n<|im_start|>assistant\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": "
      "1}}\n</tool_call><|im_end|>\n<|im_start|>tool\n<tool_response>\nfirst\n</"
      "tool_response>\n<tool_response>\npartial result ");
  // The tool call is what qwen's `{% generation %}` encloses.
  REQUIRE(r.assistant_spans.size() == 1);
  CHECK(r.text.substr(r.assistant_spans[0].begin,
                      r.assistant_spans[0].end - r.assistant_spans[0].begin) ==
        "\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}\n</tool_call>");
  const auto parsed = tensordict::llm::parse_chat(r.text, "qwen");
  REQUIRE(parsed.size() == 4);
  CHECK(parsed[1].tool_calls == Json::array({Json{{"name", "add"}, {"arguments", {{"a", 1}}}}}));
  CHECK(parsed[2].content == "first");
  CHECK(parsed[2].is_complete);
  CHECK(parsed[3].content == "partial result ");
  CHECK_FALSE(parsed[3].is_complete);
  // Re-rendering the parsed messages gives the text back.
  CHECK(tensordict::llm::render_chat(parsed, "qwen", cont).text == r.text);

  History empty = History::from_chats(chat({{"user", "Hi"}, {"assistant", ""}}));
  const std::string text = empty.apply_chat_template(named("qwen"))[0];
  CHECK(text ==
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>"
        "\n<|im_start|>assistant\n<|im_end|>\n");
  History back = History::from_text(text, "qwen");
  CHECK(back.content() == Json::array({"Hi", ""}));
  const auto back_messages = tensordict::llm::conversation_messages(back._tensordict());
  CHECK(std::all_of(back_messages.begin(), back_messages.end(),
                    [](const ChatMessage& m) { return m.is_complete; }));
}

TEST_CASE("every template renders a batch, one text per conversation", "[history][templates]") {
  const Json first = chat({{"user", "Hi"}, {"assistant", "Yo"}});
  History batch = History::from_chats(Json::array({first, chat({{"user", "Bye"}})}));
  for (const auto& name : tensordict::llm::chat_template_names()) {
    INFO(name);
    const auto texts = batch.apply_chat_template(named(name, true));
    REQUIRE(texts.size() == 2);
    CHECK(texts[0] == History::from_chats(first).apply_chat_template(named(name, true))[0]);
    const auto back =
        tensordict::llm::conversation_messages(History::from_text(texts[1], name)._tensordict());
    REQUIRE(back.size() == 1);
    CHECK(back[0].content == "Bye");
  }
}

TEST_CASE("a template registered with add_chat_template works like a built-in one",
          "[history][templates]") {
  tensordict::llm::add_chat_template("inst", render_inst, parse_inst, {"Mistral"});
  const auto names = tensordict::llm::chat_template_names();
  CHECK(std::find(names.begin(), names.end(), "inst") != names.end());
  History h = History::from_chats(chat({{"user", "Hi"}, {"assistant", "Yo"}, {"user", "Q"}}));
  const std::string expected = "[INST] Hi [/INST]Yo</s>[INST] Q [/INST]";
  CHECK(h.apply_chat_template(named("inst"))[0] == expected);
  // Picked by its model family keyword (case-insensitive), before the built-in families.
  HistoryTemplateOptions detected;
  detected.add_generation_prompt = false;
  detected.tokenizer_name = "mistralai/mistral-llama-7b";
  CHECK(h.apply_chat_template(detected)[0] == expected);
  // Tokens and assistant masks.
  detected.tokenizer = word_tokenizer;
  detected.return_assistant_tokens_mask = true;
  const auto tokens = h.apply_chat_template_tokens(detected);
  CHECK(masked_text(tokens, expected, word_tokenizer(expected)) == "Yo");
  // from_text, and continue_final_message through the generic cut.
  History back = History::from_text(expected, "inst");
  CHECK(back.role() == Json::array({"user", "assistant", "user"}));
  History open = History::from_text("[INST] Hi [/INST]Once upon ", "inst");
  CHECK(open._tensordict().get_non_tensor("is_complete") == Json::array({true, false}));
  HistoryTemplateOptions cont = named("inst");
  cont.continue_final_message = true;
  CHECK(open.apply_chat_template(cont)[0] == "[INST] Hi [/INST]Once upon ");
  // The renderer's own errors come through.
  CHECK_THROWS_WITH(History::from_chats(chat({{"critic", "x"}})).apply_chat_template(named("inst")),
                    "inst: role 'critic' is not supported");
  CHECK_THROWS_WITH(tensordict::llm::add_chat_template("qwen", render_inst, parse_inst),
                    "add_chat_template: 'qwen' is a built-in template and cannot be replaced");
  CHECK_THROWS_WITH(tensordict::llm::add_chat_template("half", render_inst, nullptr),
                    "add_chat_template: template 'half' needs both a renderer and a parser");
  CHECK_THROWS_WITH(h.apply_chat_template(named("nope")),
                    Catch::Matchers::ContainsSubstring(
                        "unknown chat template 'nope' (known: chatml_format, qwen, "
                        "dialogpt, falcon, deepseek, llama, inst") &&
                        Catch::Matchers::ContainsSubstring("add_chat_template"));
  CHECK_THROWS_WITH(History::from_text("x", "nope"),
                    Catch::Matchers::ContainsSubstring("unknown chat template 'nope'"));
}

TEST_CASE("assistant masks with tokens spanning several characters", "[history][tokens]") {
  History h = History::from_chats(chat({{"system", "Be brief."},
                                        {"user", "Capital of France?"},
                                        {"assistant", "Paris, of course."}}));
  for (const char* name : {"chatml_format", "qwen", "dialogpt", "falcon", "deepseek", "llama"}) {
    INFO(name);
    HistoryTemplateOptions o = named(name);
    o.tokenizer = word_tokenizer;
    o.return_assistant_tokens_mask = true;
    const auto tokens = h.apply_chat_template_tokens(o);
    const std::string text = h.apply_chat_template(named(name))[0];
    const Encoding enc = word_tokenizer(text);
    CHECK(tokens.get("input_ids").size(1) == static_cast<int64_t>(enc.ids.size()));
    // falcon and deepseek put the space before the content inside `{% generation %}`.
    const bool lead = std::string(name) == "falcon" || std::string(name) == "deepseek";
    CHECK(masked_text(tokens, text, enc) == (lead ? " Paris, of course." : "Paris, of course."));
  }
  // Fixed 4-byte tokens straddle the content's edges: a token overlapping it is marked, as
  // transformers marks the tokens holding the span's first and last characters and all between.
  HistoryTemplateOptions o = named("chatml_format");
  o.return_assistant_tokens_mask = true;
  o.tokenizer = [](std::string_view text) {
    Encoding enc;
    for (size_t i = 0; i < text.size(); i += 4) {
      enc.ids.push_back(static_cast<int64_t>(i / 4));
      enc.offsets.push_back({i, std::min(i + 4, text.size())});
    }
    return enc;
  };
  // "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n" is 52 bytes: "Hello there" is
  // [52, 63), tokens 13 to 15.
  History two = History::from_chats(chat({{"user", "Hi"}, {"assistant", "Hello there"}}));
  const at::Tensor mask = two.apply_chat_template_tokens(o).get("assistant_masks")[0];
  CHECK(mask.nonzero().flatten().equal(at::tensor({13, 14, 15}, at::kLong)));
}
