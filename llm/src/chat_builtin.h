#pragma once
// The built-in templates' renderers and parsers (registered by chat_template.cpp), and the
// helpers they share. Internal to the llm library.

#include <string>
#include <string_view>
#include <vector>

#include "tensorclass/llm/chat.h"

namespace tensorclass::llm::detail {

RenderedChat render_chatml(const std::vector<ChatMessage>& messages, const ChatTemplateOptions& o);
RenderedChat render_qwen(const std::vector<ChatMessage>& messages, const ChatTemplateOptions& o);
RenderedChat render_dialogpt(const std::vector<ChatMessage>& messages,
                             const ChatTemplateOptions& o);
RenderedChat render_falcon(const std::vector<ChatMessage>& messages, const ChatTemplateOptions& o);
RenderedChat render_deepseek(const std::vector<ChatMessage>& messages,
                             const ChatTemplateOptions& o);
RenderedChat render_llama(const std::vector<ChatMessage>& messages, const ChatTemplateOptions& o);

std::vector<ChatMessage> parse_chatml(std::string_view text);
std::vector<ChatMessage> parse_qwen(std::string_view text);
std::vector<ChatMessage> parse_dialogpt(std::string_view text);
std::vector<ChatMessage> parse_falcon(std::string_view text);
std::vector<ChatMessage> parse_deepseek(std::string_view text);
std::vector<ChatMessage> parse_llama(std::string_view text);

/// The special tokens of the model families TorchRL's templates were written for, used when
/// ChatTemplateOptions leaves bos_token / eos_token unset.
inline constexpr std::string_view kDialoGptEos = "<|endoftext|>";
inline constexpr std::string_view kDeepSeekBos =
    "<\xEF\xBD\x9C"
    "begin\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>";
inline constexpr std::string_view kDeepSeekEos =
    "<\xEF\xBD\x9C"
    "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>";
inline constexpr std::string_view kLlamaBos = "<|begin_of_text|>";

/// A message's content as a string, for templates that concatenate it as one (all but llama).
/// ContentBase parts there fail in TorchRL's Jinja (str + list); here a clear error.
const std::string& text_content(const ChatMessage& m, size_t index, std::string_view template_name);

/// Python's str.isspace() for ASCII characters (what strip() removes).
bool is_space(char c);
std::string_view strip(std::string_view s);

/// ::tensordict::ValueError "parse_chat(<template>): at character <pos>: <what>".
[[noreturn]] void bad_text(std::string_view template_name, size_t pos, const std::string& what);

/// The first occurrence of `end` at or after `from` that is followed by one of `next` or by the
/// end of `text`: where a message ends even when its content holds the end token as text.
/// npos when none.
size_t find_message_end(std::string_view text, size_t from, std::string_view end,
                        const std::vector<std::string_view>& next);

}  // namespace tensorclass::llm::detail
