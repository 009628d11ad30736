#pragma once
// The built-in templates' renderers and parsers (registered by chat_template.cpp), and the
// helpers they share. Internal to the llm library.

#include <string>
#include <string_view>
#include <vector>

#include "tensordict/llm/chat.h"

namespace tensordict::llm::detail {

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
/// ChatML's message markers and Qwen's default system prompt, as the renderer writes them and the
/// parser reads them.
inline constexpr std::string_view kImStart = "<|im_start|>";
inline constexpr std::string_view kImEnd = "<|im_end|>";
inline constexpr std::string_view kQwenDefaultSystem = "You are a helpful assistant.";

/// A message's content where a template concatenates it with strings (`'<|im_start|>' + role +
/// '\n' + content`): a string. ContentBase parts (str + list) and a null content (undefined + str)
/// fail there in TorchRL's Jinja too: tensordict::ValueError naming the message.
const std::string& joined_content(const ChatMessage& m, size_t index,
                                  std::string_view template_name);
/// A message's content where a template prints it (`{{ content }}`): a string as is, parts as
/// Python's repr of the list (what Jinja prints), a null content as nothing.
std::string printed_content(const ChatMessage& m);
/// Python's repr of a JSON value as Jinja prints a list or dict: strings quoted as Python quotes
/// them, with what str.isprintable() rejects escaped (controls, separators such as U+00A0 or
/// U+3000, format characters such as U+200B; code points Unicode leaves unassigned are written
/// as is).
std::string python_repr(const Json& value);
/// Jinja's truthiness of a message's content.
bool content_truthy(const ChatMessage& m);

/// Python's str.strip() (Jinja's `trim`): strips what str.isspace() calls whitespace, Unicode
/// included (U+00A0, U+2028, U+3000, ...).
std::string_view strip(std::string_view s);
/// Python's str.rstrip().
std::string_view rstrip(std::string_view s);

/// ::tensordict::ValueError "parse_chat(<template>): at character <pos>: <what>".
[[noreturn]] void bad_text(std::string_view template_name, size_t pos, const std::string& what);

/// The first occurrence of `end` at or after `from` that is followed by one of `next` or by the
/// end of `text`: where a message ends even when its content holds the end token as text.
/// npos when none.
size_t find_message_end(std::string_view text, size_t from, std::string_view end,
                        const std::vector<std::string_view>& next);

}  // namespace tensordict::llm::detail
