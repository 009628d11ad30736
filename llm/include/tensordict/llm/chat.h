#pragma once
/// \file
/// Chat templates of TorchRL's History, without Jinja: TorchRL's six templates (`chatml_format`,
/// `qwen`, `dialogpt`, `falcon`, `deepseek`, `llama`) rendered byte-exactly as transformers renders
/// them, their inverse (text -> messages), templates users register (add_chat_template), and the
/// assistant-token mask computed from character spans.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensordict/errors.h"  // ValueError, what these functions throw
#include "tensordict/non_tensor.h"

namespace tensordict::llm {

/// The JSON type of messages' fields, here too, so that `using namespace tensordict::llm` brings
/// it.
using tensordict::Json;

/// One chat message, as a History element holds it.
struct ChatMessage {
  /// "system", "user", "assistant", "tool", ..., or History's padding role kPaddingRole.
  std::string role;
  /// The text (unused when content_parts is set).
  std::string content;
  Json tool_calls = nullptr;  ///< null, or a list of {"name", "arguments"} / {"function": ...}
  /// null, or a list of responses (qwen prints Python's str() of the list; a list of numbers
  /// only, which TorchRL stores as a tensor, is tensordict::TypeError there).
  Json tool_responses = nullptr;
  bool is_complete = true;  ///< false for a trailing message still being written
  /// null, or the message's content as a list of TorchRL ContentBase parts (JSON objects with
  /// "type" and optional "text", "url", "data", "mime_type", "name", "size", "function_name",
  /// "function_args"); `content` is then unused.
  Json content_parts = nullptr;
  /// The content is null (Python's None: TorchRL leaves it out of the message): the templates see
  /// Jinja's undefined, which prints as nothing and fails where a template concatenates it.
  /// `content` is then unused.
  bool content_null = false;
};

/// Half-open character range [begin, end) in a rendered text.
struct CharSpan {
  /// Offset of the first character.
  size_t begin = 0;
  /// Offset one past the last character.
  size_t end = 0;
};

/// A rendered conversation, with the parts the model generates.
struct RenderedChat {
  /// The rendered text.
  std::string text;
  /// What the template's `{% generation %}` blocks enclose (assistant contents, qwen tool calls).
  std::vector<CharSpan> assistant_spans;
};

/// Options of render_chat: transformers' apply_chat_template keyword arguments.
struct ChatTemplateOptions {
  /// End with the template's prompt for the assistant's next message.
  bool add_generation_prompt = true;
  /// Stop right after the last message's content (no end token, no generation prompt), so a
  /// model continues it; an empty final message stops where its content would start.
  /// Incompatible with add_generation_prompt, as in transformers.
  bool continue_final_message = false;
  Json tools = nullptr;  ///< qwen: a list of tool descriptions (JSON objects)
  /// The tokenizer's special tokens the templates write (`{{ bos_token }}`, `{{ eos_token }}`);
  /// unset: the model family's own (see docs/llm.md), e.g. "<|endoftext|>" for dialogpt.
  ///@{
  std::optional<std::string> bos_token = std::nullopt;
  std::optional<std::string> eos_token = std::nullopt;
  ///@}
};

/// Builds a rendering: template text, and text a template's `{% generation %}` block encloses.
class ChatWriter {
 public:
  /// Template text (outside the assistant mask).
  void put(std::string_view s) { text_ += s; }
  /// Text the model generates (marked in the assistant mask).
  void generated(std::string_view s) {
    spans_.push_back({text_.size(), text_.size() + s.size()});
    text_ += s;
  }
  /// The text written so far.
  const std::string& text() const { return text_; }
  /// The rendering, moved out of the writer (call it last).
  RenderedChat finish() { return {std::move(text_), std::move(spans_)}; }

 private:
  std::string text_;
  std::vector<CharSpan> spans_;
};

/// A template's renderer gets the messages without History's "<none>" padding; it writes the
/// generation prompt itself when options.add_generation_prompt is set. continue_final_message is
/// applied by render_chat as transformers applies it, whatever the template: the final text gets
/// the marker "CONTINUE_FINAL_MESSAGE_TAG " appended, and the rendering is cut where the marker
/// starts (so a renderer must write that text as given, or trimmed).
using ChatRenderer =
    std::function<RenderedChat(const std::vector<ChatMessage>&, const ChatTemplateOptions&)>;
/// A template's inverse: a rendered text back into messages (tensordict::ValueError on text the
/// template cannot have rendered).
using ChatParser = std::function<std::vector<ChatMessage>(std::string_view text)>;

/// Registers a template under `name` for render_chat, parse_chat, History's apply_chat_template
/// (text, tokens, assistant masks) and from_text. `model_family_keywords` (case-insensitive) make
/// detect_chat_template pick it for model names containing one of them, before the built-in
/// families. Registering a name again replaces that template; a built-in name is
/// tensordict::ValueError, as is a missing renderer or parser.
void add_chat_template(const std::string& name, ChatRenderer render, ChatParser parse,
                       std::vector<std::string> model_family_keywords = {});

/// The names render_chat accepts: the built-in ones, then the registered ones.
std::vector<std::string> chat_template_names();

/// TorchRL's choice of template for a tokenizer's name_or_path (case-insensitive): registered
/// keywords first, then qwen ("qwen"), dialogpt ("dialogpt", "microsoft/dialo"), falcon
/// ("falcon"), deepseek ("deepseek"), llama ("llama"), else chatml_format.
std::string detect_chat_template(std::string_view model_name);

/// Renders messages with the template `template_name`; messages whose role is "<none>"
/// (History's padding) are skipped. tensordict::ValueError for an unknown name (listing the known
/// ones) or a final message that continue_final_message cannot find in the rendering.
RenderedChat render_chat(const std::vector<ChatMessage>& messages, std::string_view template_name,
                         const ChatTemplateOptions& options = {});

/// Parses a rendered text back into messages. A trailing open message becomes an incomplete one;
/// a trailing generation prompt is dropped. tensordict::ValueError, naming the character, on text
/// the template cannot have rendered.
std::vector<ChatMessage> parse_chat(std::string_view text, std::string_view template_name);

/// Token ids with the character span each token covers, as a user's tokenizer reports them
/// (transformers: `return_offsets_mapping=True`; see docs/llm.md for wiring a tokenizer library).
struct Encoding {
  /// Token ids, in text order.
  std::vector<int64_t> ids;
  /// The span of each token (same length as ids).
  std::vector<CharSpan> offsets;
};
/// A user's tokenizer wrapped as a callback (none is bundled; docs/llm.md wires SentencePiece).
using Tokenizer = std::function<Encoding(std::string_view text)>;

/// 1 for every token overlapping an assistant span, else 0.
std::vector<int64_t> assistant_token_mask(const Encoding& encoding,
                                          const std::vector<CharSpan>& assistant_spans);

}  // namespace tensordict::llm

/// `tensorclass::llm`, the llm library's namespace until it moved under tensordict: an alias of
/// tensordict::llm, kept for one release with the headers' old paths (`tensorclass/llm/*.h`).
namespace tensorclass {
namespace llm = ::tensordict::llm;
}  // namespace tensorclass
