// llama (TorchRL's Llama 4 layout: <|header_start|>role<|header_end|>\n\ncontent<|eot|>), rendered
// as transformers renders TorchRL's Jinja template, and parsed back.
#include "chat_builtin.h"
#include "tensordict/json.h"

namespace tensordict::llm::detail {
namespace {

constexpr std::string_view kHeaderStart = "<|header_start|>";
constexpr std::string_view kHeaderEnd = "<|header_end|>\n\n";
constexpr std::string_view kEot = "<|eot|>";

// The template prints a string content as is; of ContentBase parts, the text parts, each
// trimmed (Jinja's `trim` of a null text is "None", of a missing one ""); a null content is
// Jinja's undefined, over which the loop runs no time.
std::string llama_content(const ChatMessage& m) {
  if (m.content_null) return "";
  if (m.content_parts.is_null()) return m.content;
  std::string out;
  for (const auto& part : m.content_parts) {
    if (!part.is_object() || part.value("type", Json()) != Json("text")) continue;
    if (!part.contains("text")) continue;
    const Json& text = part["text"];
    out += strip(text.is_string() ? text.get<std::string>() : python_repr(text));
  }
  return out;
}

void header(ChatWriter& out, std::string_view role) {
  out.put(kHeaderStart);
  out.put(role);
  out.put(kHeaderEnd);
}

}  // namespace

RenderedChat render_llama(const std::vector<ChatMessage>& messages, const ChatTemplateOptions& o) {
  ChatWriter out;
  out.put(o.bos_token ? *o.bos_token : std::string(kLlamaBos));
  size_t first = 0;
  // A leading system message is trimmed, and left out when that leaves nothing.
  if (!messages.empty() && messages.front().role == "system") {
    first = 1;
    // `content|trim`: Python's str() of the value, stripped.
    const std::string printed = printed_content(messages.front());
    const std::string_view system = strip(printed);
    if (!system.empty()) {
      header(out, "system");
      out.put(system);
      out.put(kEot);
    }
  }
  // Every other role renders, unknown ones included, as in TorchRL's template.
  for (size_t i = first; i < messages.size(); ++i) {
    header(out, messages[i].role);
    const std::string content = llama_content(messages[i]);
    messages[i].role == "assistant" ? out.generated(content) : out.put(content);
    out.put(kEot);
  }
  if (o.add_generation_prompt) header(out, "assistant");
  return out.finish();
}

std::vector<ChatMessage> parse_llama(std::string_view text) {
  std::vector<ChatMessage> out;
  size_t pos = text.substr(0, kLlamaBos.size()) == kLlamaBos ? kLlamaBos.size() : 0;
  while (pos < text.size()) {
    if (text.substr(pos, kHeaderStart.size()) != kHeaderStart) {
      bad_text("llama", pos, "expected '<|header_start|>'");
    }
    pos += kHeaderStart.size();
    const size_t role_end = text.find(kHeaderEnd, pos);
    if (role_end == std::string_view::npos) bad_text("llama", pos, "unterminated message header");
    ChatMessage m{std::string(text.substr(pos, role_end - pos)), ""};
    pos = role_end + kHeaderEnd.size();
    const size_t end = find_message_end(text, pos, kEot, {kHeaderStart});
    m.content = std::string(text.substr(pos, end - pos));
    m.is_complete = end != std::string_view::npos;
    pos = m.is_complete ? end + kEot.size() : text.size();
    // A trailing open, empty assistant header is the generation prompt.
    if (!m.is_complete && m.role == "assistant" && m.content.empty()) break;
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace tensordict::llm::detail
