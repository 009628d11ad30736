// The template registry (built-in and user templates), render_chat / parse_chat over it,
// transformers' continue_final_message cut, and the assistant-token mask.
#include <algorithm>
#include <mutex>

#include "chat_builtin.h"
#include "tensorclass/llm/chat.h"
#include "tensordict/errors.h"

namespace tensorclass::llm {
namespace {

struct Template {
  std::string name;
  ChatRenderer render;
  ChatParser parse;
  std::vector<std::string> keywords;  // lower case
};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

class Registry {
 public:
  static Registry& instance() {
    static Registry registry;
    return registry;
  }

  void add(Template t) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(templates_.begin(), templates_.end(),
                           [&](const Template& x) { return x.name == t.name; });
    if (it == templates_.end()) {
      templates_.push_back(std::move(t));
    } else if (static_cast<size_t>(it - templates_.begin()) < builtin_count_) {
      throw ::tensordict::ValueError("add_chat_template: '" + t.name +
                                     "' is a built-in template and cannot be replaced");
    } else {
      *it = std::move(t);
    }
  }

  Template find(std::string_view name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& t : templates_) {
      if (t.name == name) return t;
    }
    std::string known;
    for (const auto& t : templates_) known += (known.empty() ? "" : ", ") + t.name;
    throw ::tensordict::ValueError("unknown chat template '" + std::string(name) +
                                   "' (known: " + known + "; add_chat_template registers others)");
  }

  std::vector<std::string> names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out;
    for (const auto& t : templates_) out.push_back(t.name);
    return out;
  }

  std::string detect(std::string_view model_name) const {
    const std::string name = lower(model_name);
    std::lock_guard<std::mutex> lock(mutex_);
    // Registered families win over the built-in ones, as in TorchRL; the built-ins are tried in
    // TorchRL's order (a "qwen" match beats a "llama" one).
    auto matches = [&](const Template& t) {
      return std::any_of(t.keywords.begin(), t.keywords.end(),
                         [&](const std::string& k) { return name.find(k) != std::string::npos; });
    };
    const auto builtins_end = templates_.begin() + static_cast<std::ptrdiff_t>(builtin_count_);
    auto found = std::find_if(builtins_end, templates_.end(), matches);
    if (found != templates_.end()) return found->name;
    found = std::find_if(templates_.begin(), builtins_end, matches);
    if (found != builtins_end) return found->name;
    return "chatml_format";
  }

 private:
  Registry() {
    using namespace detail;
    templates_ = {
        {"chatml_format", render_chatml, parse_chatml, {}},
        {"qwen", render_qwen, parse_qwen, {"qwen"}},
        {"dialogpt", render_dialogpt, parse_dialogpt, {"dialogpt", "microsoft/dialo"}},
        {"falcon", render_falcon, parse_falcon, {"falcon"}},
        {"deepseek", render_deepseek, parse_deepseek, {"deepseek"}},
        {"llama", render_llama, parse_llama, {"llama"}},
    };
    builtin_count_ = templates_.size();
  }

  mutable std::mutex mutex_;
  std::vector<Template> templates_;
  size_t builtin_count_ = 0;
};

// transformers' continue_final_message (render_jinja_template since huggingface/transformers
// #40732): a marker is appended to the final message's text, the chat is rendered, and the text is
// cut where the marker starts, so nothing the template writes after the final content (end token,
// next header) stays, even when that content is empty or also appears earlier.
constexpr std::string_view kContinueTag = "CONTINUE_FINAL_MESSAGE_TAG ";

// Appends the marker to the text transformers continues (the content, or the last part with a
// "text" key) and returns that text as it was.
std::string mark_final_message(ChatMessage& m) {
  if (m.content_parts.is_null()) {
    std::string text = m.content;
    m.content += kContinueTag;
    return text;
  }
  for (auto it = m.content_parts.rbegin(); it != m.content_parts.rend(); ++it) {
    if (!it->is_object() || !it->contains("text")) continue;
    Json& text = (*it)["text"];
    if (!text.is_string()) {
      throw ::tensordict::ValueError(
          "continue_final_message: the final message's last text part is not a string: " +
          text.dump());
    }
    std::string before = text.get<std::string>();
    text = before + std::string(kContinueTag);
    return before;
  }
  throw ::tensordict::ValueError(
      "continue_final_message: the final message has no text part to continue");
}

// Cuts the rendering of the marked chat at the marker. When the template kept the marker's
// trailing space the cut is exact; when it trimmed it (llama's text parts), the text before the
// marker is stripped of trailing whitespace too, as transformers does.
void cut_at_marker(RenderedChat& r, std::string_view final_text) {
  const std::string_view marker = detail::strip(kContinueTag);
  const size_t at = r.text.rfind(marker);
  if (at == std::string::npos || r.text.find(detail::strip(final_text)) == std::string::npos) {
    throw ::tensordict::ValueError(
        "continue_final_message: the final message does not appear in the rendered chat (the "
        "template drops or changes it)");
  }
  size_t end = at;
  if (r.text.compare(at, kContinueTag.size(), kContinueTag) != 0) {
    while (end > 0 && detail::is_space(r.text[end - 1])) --end;
  }
  r.text.resize(end);
  std::vector<CharSpan> spans;
  for (auto span : r.assistant_spans) {
    span.end = std::min(span.end, end);
    if (span.begin < span.end) spans.push_back(span);
  }
  r.assistant_spans = std::move(spans);
}

}  // namespace

void add_chat_template(const std::string& name, ChatRenderer render, ChatParser parse,
                       std::vector<std::string> model_family_keywords) {
  if (name.empty()) throw ::tensordict::ValueError("add_chat_template: the name is empty");
  if (!render || !parse) {
    throw ::tensordict::ValueError("add_chat_template: template '" + name +
                                   "' needs both a renderer and a parser");
  }
  for (auto& k : model_family_keywords) {
    if (k.empty()) throw ::tensordict::ValueError("add_chat_template: an empty model keyword");
    k = lower(k);
  }
  Registry::instance().add({name, std::move(render), std::move(parse), model_family_keywords});
}

std::vector<std::string> chat_template_names() { return Registry::instance().names(); }

std::string detect_chat_template(std::string_view model_name) {
  return Registry::instance().detect(model_name);
}

RenderedChat render_chat(const std::vector<ChatMessage>& messages, std::string_view template_name,
                         const ChatTemplateOptions& options) {
  const Template t = Registry::instance().find(template_name);
  if (options.continue_final_message && options.add_generation_prompt) {
    throw ::tensordict::ValueError(
        "continue_final_message and add_generation_prompt cannot both be set: the first continues "
        "the last message, the second opens a new one");
  }
  std::vector<ChatMessage> kept;
  std::copy_if(messages.begin(), messages.end(), std::back_inserter(kept),
               [](const ChatMessage& m) { return m.role != "<none>"; });
  if (options.continue_final_message && kept.empty()) {
    throw ::tensordict::ValueError("continue_final_message needs at least one message");
  }
  if (!options.continue_final_message) return t.render(kept, options);
  const std::string final_text = mark_final_message(kept.back());
  RenderedChat out = t.render(kept, options);
  cut_at_marker(out, final_text);
  return out;
}

std::vector<ChatMessage> parse_chat(std::string_view text, std::string_view template_name) {
  return Registry::instance().find(template_name).parse(text);
}

std::vector<int64_t> assistant_token_mask(const Encoding& encoding,
                                          const std::vector<CharSpan>& assistant_spans) {
  if (encoding.offsets.size() != encoding.ids.size()) {
    throw ::tensordict::ValueError("tokenizer returned " + std::to_string(encoding.ids.size()) +
                                   " ids but " + std::to_string(encoding.offsets.size()) +
                                   " offsets");
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

namespace detail {

bool is_space(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u == ' ' || (u >= '\t' && u <= '\r') || (u >= 0x1c && u <= 0x1f);
}

std::string_view strip(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

const std::string& text_content(const ChatMessage& m, size_t index,
                                std::string_view template_name) {
  if (!m.content_parts.is_null()) {
    throw ::tensordict::ValueError(
        "template '" + std::string(template_name) + "' renders content as a string; message " +
        std::to_string(index) + " has ContentBase parts (the llama template renders their text)");
  }
  return m.content;
}

void bad_text(std::string_view template_name, size_t pos, const std::string& what) {
  throw ::tensordict::ValueError("parse_chat(" + std::string(template_name) + "): at character " +
                                 std::to_string(pos) + ": " + what);
}

size_t find_message_end(std::string_view text, size_t from, std::string_view end,
                        const std::vector<std::string_view>& next) {
  for (size_t at = text.find(end, from); at != std::string_view::npos;
       at = text.find(end, at + 1)) {
    const std::string_view rest = text.substr(at + end.size());
    if (rest.empty()) return at;
    for (auto n : next) {
      if (rest.substr(0, n.size()) == n) return at;
    }
  }
  return std::string_view::npos;
}

}  // namespace detail
}  // namespace tensorclass::llm
