// chatml_format and qwen, rendered as transformers renders TorchRL's Jinja templates.
#include <algorithm>
#include <stdexcept>

#include "tensorclass/llm/chat.h"
#include "tensordict/json.h"

namespace tensorclass::llm {
namespace {

constexpr std::string_view kStart = "<|im_start|>";
constexpr std::string_view kEnd = "<|im_end|>\n";
constexpr std::string_view kDefaultSystem = "You are a helpful assistant.";

// JSON as the templates' `tojson` filter writes it (raw UTF-8, ", " and ": ").
std::string tojson(const Json& value) { return tensordict::dumps_python(value, {false, false}); }

bool truthy(const Json& value) {
  return !(value.is_null() || (value.is_structured() && value.empty()) ||
           (value.is_string() && value.get_ref<const std::string&>().empty()) ||
           (value.is_boolean() && !value.get<bool>()));
}

// Accumulates the text and remembers where contents start and end.
class Writer {
 public:
  void put(std::string_view s) { text_ += s; }
  /// Writes a message's content; `assistant` marks it as a generated span.
  void content(std::string_view s, bool assistant) {
    last_content_ = {text_.size(), text_.size() + s.size()};
    leading_ws_ = s.size() - trim_left(s).size();
    trailing_ws_ = s.size() - trim_right(s).size();
    text_ += s;
    if (assistant) spans_.push_back(last_content_);
  }
  /// Cuts the text right after the last content, as transformers does for
  /// continue_final_message (it searches the content stripped of surrounding whitespace).
  void cut_after_last_content() {
    const size_t stripped = last_content_.end - last_content_.begin;
    const size_t end = stripped <= leading_ws_ ? last_content_.begin + leading_ws_
                                               : last_content_.end - trailing_ws_;
    text_.resize(end);
    for (auto& span : spans_) span.end = std::min(span.end, end);
  }
  RenderedChat finish() { return {std::move(text_), std::move(spans_)}; }

 private:
  static std::string_view trim_left(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    return s;
  }
  static std::string_view trim_right(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  }
  std::string text_;
  std::vector<CharSpan> spans_;
  CharSpan last_content_;
  size_t leading_ws_ = 0;
  size_t trailing_ws_ = 0;
};

void render_chatml(const std::vector<ChatMessage>& messages, Writer& out) {
  for (const auto& m : messages) {
    out.put(kStart);
    out.put(m.role);
    out.put("\n");
    out.content(m.content, m.role == "assistant");
    out.put(kEnd);
  }
}

void render_qwen_header(const std::vector<ChatMessage>& messages, const Json& tools, Writer& out) {
  const bool system_first = !messages.empty() && messages.front().role == "system";
  out.put(kStart);
  out.put("system\n");
  out.content(system_first ? std::string_view(messages.front().content) : kDefaultSystem, false);
  if (truthy(tools)) {
    out.put(
        "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>");
    for (const auto& tool : tools) out.put("\n" + tojson(tool));
    out.put(
        "\n</tools>\n\nFor each function call, return a json object with function name and "
        "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": "
        "<function-name>, \"arguments\": <args-json-object>}\n</tool_call>");
  }
  out.put(kEnd);
}

void render_qwen_tool_calls(const ChatMessage& m, Writer& out) {
  out.put(kStart);
  out.put("assistant");
  if (!m.content.empty()) {
    out.put("\n");
    out.content(m.content, true);
  }
  for (const auto& call : m.tool_calls) {
    const Json& fn = call.contains("function") ? call["function"] : call;
    out.put("\n<tool_call>\n{\"name\": \"" + fn.value("name", std::string()) +
            "\", \"arguments\": " + tojson(fn.value("arguments", Json(nullptr))) +
            "}\n</tool_call>");
  }
  out.put(kEnd);
}

void render_qwen(const std::vector<ChatMessage>& messages, const Json& tools, Writer& out) {
  render_qwen_header(messages, tools, out);
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "user" || (m.role == "system" && i > 0)) {
      out.put(kStart);
      out.put(m.role + "\n");
      out.content(m.content, false);
      out.put(kEnd);
    } else if (m.role == "assistant" && !truthy(m.tool_calls)) {
      out.put(kStart);
      out.put("assistant\n");
      out.content(m.content, true);
      out.put(kEnd);
    } else if (m.role == "assistant") {
      render_qwen_tool_calls(m, out);
    } else if (m.role == "tool") {
      // Consecutive tool messages share one block.
      if (i == 0 || messages[i - 1].role != "tool") out.put(std::string(kStart) + "tool");
      out.put("\n<tool_response>\n");
      out.content(truthy(m.tool_responses) ? tensordict::python_repr(m.tool_responses) : m.content,
                  false);
      out.put("\n</tool_response>");
      if (i + 1 == messages.size() || messages[i + 1].role != "tool") out.put(kEnd);
    }
  }
}

}  // namespace

ChatFormat chat_format_from_name(std::string_view name) {
  if (name == "chatml_format") return ChatFormat::ChatML;
  if (name == "qwen") return ChatFormat::Qwen;
  throw std::invalid_argument("unknown chat template '" + std::string(name) +
                              "' (known: chatml_format, qwen)");
}

ChatFormat detect_chat_format(std::string_view tokenizer_name) {
  std::string lower(tokenizer_name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("qwen") != std::string::npos ? ChatFormat::Qwen : ChatFormat::ChatML;
}

RenderedChat render_chat(const std::vector<ChatMessage>& messages, ChatFormat format,
                         const ChatTemplateOptions& options) {
  if (options.continue_final_message && options.add_generation_prompt) {
    throw std::invalid_argument(
        "continue_final_message and add_generation_prompt cannot both be set: the first continues "
        "the last message, the second opens a new one");
  }
  std::vector<ChatMessage> kept;
  std::copy_if(messages.begin(), messages.end(), std::back_inserter(kept),
               [](const ChatMessage& m) { return m.role != "<none>"; });
  if (options.continue_final_message && kept.empty()) {
    throw std::invalid_argument("continue_final_message needs at least one message");
  }
  Writer out;
  if (format == ChatFormat::ChatML) {
    render_chatml(kept, out);
  } else {
    render_qwen(kept, options.tools, out);
  }
  if (options.continue_final_message) out.cut_after_last_content();
  if (options.add_generation_prompt) out.put(std::string(kStart) + "assistant\n");
  return out.finish();
}

std::vector<int64_t> assistant_token_mask(const Encoding& encoding,
                                          const std::vector<CharSpan>& assistant_spans) {
  if (encoding.offsets.size() != encoding.ids.size()) {
    throw std::invalid_argument("tokenizer returned " + std::to_string(encoding.ids.size()) +
                                " ids but " + std::to_string(encoding.offsets.size()) + " offsets");
  }
  std::vector<int64_t> mask(encoding.ids.size(), 0);
  for (size_t t = 0; t < mask.size(); ++t) {
    const CharSpan& tok = encoding.offsets[t];
    for (const auto& span : assistant_spans) {
      if (tok.begin < span.end && span.begin < tok.end) {
        mask[t] = 1;
        break;
      }
    }
  }
  return mask;
}

}  // namespace tensorclass::llm
