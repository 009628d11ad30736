// The template registry (built-in and user templates), render_chat / parse_chat over it,
// transformers' continue_final_message cut, and the assistant-token mask.
#include <algorithm>
#include <cstdio>
#include <mutex>

#include "chat_builtin.h"
#include "tensordict/errors.h"
#include "tensordict/json.h"
#include "tensordict/llm/chat.h"

namespace tensordict::llm {
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
  if (m.content_null) {
    throw ::tensordict::ValueError("continue_final_message: the final message's content is null");
  }
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
    end = detail::rstrip(std::string_view(r.text).substr(0, at)).size();
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

namespace {

// The code point starting at s[i] (of UTF-8 text) and its length in bytes; a stray byte reads as
// itself.
std::pair<uint32_t, size_t> code_point(std::string_view s, size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  const size_t n = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  if (n == 1 || i + n > s.size()) return {lead, 1};
  uint32_t c = lead & (0xFFu >> (n + 1));
  for (size_t k = 1; k < n; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
  return {c, n};
}

// Python's str.isspace() of one code point (Unicode's White_Space plus the ASCII separators).
bool is_python_space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

size_t space_prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto [c, n] = code_point(s, i);
    if (!is_python_space(c)) break;
    i += n;
  }
  return i;
}

// Python's str.isprintable() of one code point: false for the categories Cc, Cf, Cs, Co, Zl, Zp,
// Zs (but the space) and for noncharacters; the rest of Cn (unassigned) is taken as printable.
bool is_python_printable(uint32_t c) {
  if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD) return false;
  if (c < 0x600) return true;
  static constexpr std::pair<uint32_t, uint32_t> kNot[] = {
      {0x600, 0x605},     {0x61C, 0x61C},     {0x6DD, 0x6DD},     {0x70F, 0x70F},
      {0x890, 0x891},     {0x8E2, 0x8E2},     {0x1680, 0x1680},   {0x180E, 0x180E},
      {0x2000, 0x200F},   {0x2028, 0x202F},   {0x205F, 0x2064},   {0x2066, 0x206F},
      {0x3000, 0x3000},   {0xD800, 0xF8FF},   {0xFDD0, 0xFDEF},   {0xFEFF, 0xFEFF},
      {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD}, {0x110CD, 0x110CD}, {0x13430, 0x1343F},
      {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001}, {0xE0020, 0xE007F},
      {0xF0000, 0x10FFFF}};
  for (const auto& [lo, hi] : kNot) {
    if (c >= lo && c <= hi) return false;
  }
  return (c & 0xFFFE) != 0xFFFE;  // U+xFFFE and U+xFFFF of every plane
}

std::string repr_string(std::string_view s) {
  const bool double_quotes =
      s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
  const char quote = double_quotes ? '"' : '\'';
  std::string out(1, quote);
  char buf[16];
  for (size_t i = 0; i < s.size();) {
    const auto [c, n] = code_point(s, i);
    if (c == '\\' || c == static_cast<uint32_t>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (!is_python_printable(c)) {
      std::snprintf(buf, sizeof buf,
                    c < 0x100     ? "\\x%02x"
                    : c < 0x10000 ? "\\u%04x"
                                  : "\\U%08x",
                    c);
      out += buf;
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  out += quote;
  return out;
}

}  // namespace

std::string python_repr(const Json& value) {
  if (value.is_string()) return repr_string(value.get_ref<const std::string&>());
  if (value.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + python_repr(value[i]);
    return out + "]";
  }
  if (value.is_object()) {
    std::string out = "{";
    bool first = true;
    for (const auto& [key, item] : value.items()) {
      out += (first ? "" : ", ") + repr_string(key) + ": " + python_repr(item);
      first = false;
    }
    return out + "}";
  }
  return tensordict::python_repr(value);
}

std::string_view rstrip(std::string_view s) {
  while (!s.empty()) {
    size_t start = s.size() - 1;  // the last code point's lead byte
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80 &&
           s.size() - start < 4) {
      --start;
    }
    const auto [c, n] = code_point(s, start);
    if (start + n != s.size() || !is_python_space(c)) break;
    s.remove_suffix(n);
  }
  return s;
}

std::string_view strip(std::string_view s) { return rstrip(s.substr(space_prefix(s))); }

const std::string& joined_content(const ChatMessage& m, size_t index,
                                  std::string_view template_name) {
  if (m.content_null) {
    throw ::tensordict::ValueError("template '" + std::string(template_name) + "' joins message " +
                                   std::to_string(index) +
                                   "'s content with text, and it is null (as TorchRL's Jinja "
                                   "template, which fails on the undefined value)");
  }
  if (!m.content_parts.is_null()) {
    throw ::tensordict::ValueError(
        "template '" + std::string(template_name) + "' joins message " + std::to_string(index) +
        "'s content with text, and it is a list of parts (as TorchRL's Jinja template, which "
        "fails to add a string and a list; the llama template renders text parts)");
  }
  return m.content;
}

std::string printed_content(const ChatMessage& m) {
  if (m.content_null) return "";
  if (!m.content_parts.is_null()) return python_repr(m.content_parts);
  return m.content;
}

bool content_truthy(const ChatMessage& m) {
  if (m.content_null) return false;
  if (!m.content_parts.is_null()) return !m.content_parts.empty();
  return !m.content.empty();
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
}  // namespace tensordict::llm
