#pragma once
// Chat templates of TorchRL's History, without Jinja: the `chatml_format` and `qwen` templates
// rendered byte-exactly as transformers renders them, their inverse (text -> messages), and the
// assistant-token mask computed from character spans.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tensordict/non_tensor.h"

namespace tensorclass::llm {

using tensordict::Json;

/// One chat message, as a History element holds it.
struct ChatMessage {
  std::string role;
  std::string content;
  Json tool_calls = nullptr;      ///< null, or a list of {"name", "arguments"} / {"function": ...}
  Json tool_responses = nullptr;  ///< null, or a list of responses (rendered with Python's str())
  bool is_complete = true;        ///< false for a trailing assistant message still being written
};

/// Half-open character range [begin, end) in a rendered text.
struct CharSpan {
  size_t begin = 0;
  size_t end = 0;
};

struct RenderedChat {
  std::string text;
  std::vector<CharSpan> assistant_spans;  ///< the generated part of every assistant message
};

enum class ChatFormat { ChatML, Qwen };

struct ChatTemplateOptions {
  bool add_generation_prompt = true;
  /// Stop right after the last message's content (no end token, no generation prompt), so a
  /// model continues it. Incompatible with add_generation_prompt, as in transformers.
  bool continue_final_message = false;
  Json tools = nullptr;  ///< qwen: a list of tool descriptions (JSON objects)
};

/// "chatml_format" or "qwen"; std::invalid_argument listing the known names otherwise.
ChatFormat chat_format_from_name(std::string_view name);
/// TorchRL's auto-detection from a tokenizer name: names containing "qwen" use qwen, others chatml.
ChatFormat detect_chat_format(std::string_view tokenizer_name);

/// Renders messages; messages whose role is "<none>" (History's padding) are skipped.
RenderedChat render_chat(const std::vector<ChatMessage>& messages, ChatFormat format,
                         const ChatTemplateOptions& options = {});

/// Parses a rendered text back into messages. A trailing open assistant block becomes an
/// incomplete message (or is dropped when empty: it was a generation prompt). For qwen, tool calls
/// and tool responses are recovered. std::invalid_argument on text that is not in the format.
std::vector<ChatMessage> parse_chat(std::string_view text, ChatFormat format);

/// Token ids with the character span each token covers, as a user's tokenizer reports them.
struct Encoding {
  std::vector<int64_t> ids;
  std::vector<CharSpan> offsets;
};
using Tokenizer = std::function<Encoding(std::string_view text)>;

/// 1 for every token overlapping an assistant span, else 0.
std::vector<int64_t> assistant_token_mask(const Encoding& encoding,
                                          const std::vector<CharSpan>& assistant_spans);

}  // namespace tensorclass::llm
