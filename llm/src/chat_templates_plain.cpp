// dialogpt, falcon and deepseek: templates that write each message as prefix + content + suffix
// with no role tokens, rendered as transformers renders TorchRL's Jinja templates, and parsed
// back. One table per template drives both directions.
#include <algorithm>

#include "chat_builtin.h"

namespace tensordict::llm::detail {
namespace {

struct RoleLayout {
  std::string_view role;
  std::string prefix;
  std::string_view lead;  // written inside the generation block, before the content
  std::string suffix;
  bool first_only = false;  // no prefix: recognised only as the chat's first message
  bool printed = false;     // the template prints the content (else it joins it with text)
};

struct PlainTemplate {
  std::string_view name;
  std::string bos;
  std::vector<RoleLayout> roles;  // messages of other roles render nothing
  std::string_view generation_prompt;
};

std::string token(const std::optional<std::string>& given, std::string_view fallback) {
  return given ? *given : std::string(fallback);
}

// The layouts, as the Jinja templates write them. In falcon, trim_blocks eats the first newline
// after `{% endgeneration %}`: an assistant message ends with one newline, the others with two.
PlainTemplate dialogpt(const ChatTemplateOptions& o) {
  const std::string eos = token(o.eos_token, kDialoGptEos);
  return {"dialogpt",
          "",
          {{"user", "", "", eos, false, true}, {"assistant", "", "", eos, false, true}},
          " "};
}
PlainTemplate falcon(const ChatTemplateOptions&) {
  return {"falcon",
          "",
          {{"user", "User: ", "", "\n\n"},
           {"assistant", "Assistant:", " ", "\n"},
           {"system", "", "", "\n\n", true, true}},
          "Assistant:"};
}
PlainTemplate deepseek(const ChatTemplateOptions& o) {
  return {"deepseek",
          token(o.bos_token, kDeepSeekBos),
          {{"user", "User: ", "", "\n\n"},
           {"assistant", "Assistant:", " ", token(o.eos_token, kDeepSeekEos)},
           {"system", "", "", "\n\n", true}},
          "Assistant:"};
}

RenderedChat render(const PlainTemplate& t, const std::vector<ChatMessage>& messages,
                    bool generation_prompt) {
  ChatWriter out;
  out.put(t.bos);
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    auto layout = std::find_if(t.roles.begin(), t.roles.end(),
                               [&](const RoleLayout& r) { return r.role == m.role; });
    if (layout == t.roles.end()) continue;  // TorchRL's template drops other roles too
    const std::string text = std::string(layout->lead) +
                             (layout->printed ? printed_content(m) : joined_content(m, i, t.name));
    out.put(layout->prefix);
    m.role == "assistant" ? out.generated(text) : out.put(text);
    out.put(layout->suffix);
  }
  if (generation_prompt) out.put(t.generation_prompt);
  return out.finish();
}

// The role of the message at `rest`: the longest prefix that matches; roles sharing it (dialogpt's
// two empty prefixes) alternate, starting with the first.
const RoleLayout* role_at(const PlainTemplate& t, std::string_view rest, bool first,
                          const std::vector<ChatMessage>& so_far) {
  std::vector<const RoleLayout*> candidates;
  size_t longest = 0;
  for (const auto& r : t.roles) {
    if ((r.first_only && !first) || rest.substr(0, r.prefix.size()) != r.prefix) continue;
    if (r.prefix.size() > longest) candidates.clear();
    if (r.prefix.size() >= longest) candidates.push_back(&r);
    longest = std::max(longest, r.prefix.size());
  }
  if (candidates.empty()) return nullptr;
  for (size_t k = 0; k + 1 < candidates.size(); ++k) {
    if (!so_far.empty() && so_far.back().role == candidates[k]->role) return candidates[k + 1];
  }
  return candidates.front();
}

std::vector<ChatMessage> parse(const PlainTemplate& t, std::string_view text) {
  std::vector<std::string_view> next;  // what may follow a message's end
  for (const auto& r : t.roles) {
    if (!r.first_only) next.push_back(r.prefix);
  }
  std::vector<ChatMessage> out;
  size_t pos = text.substr(0, t.bos.size()) == t.bos ? t.bos.size() : 0;
  const size_t start = pos;
  while (pos < text.size()) {
    const std::string_view rest = text.substr(pos);
    if (rest == t.generation_prompt) break;
    const RoleLayout* r = role_at(t, rest, pos == start, out);
    if (!r) {
      std::string expected;
      for (auto n : next) expected += (expected.empty() ? "'" : ", '") + std::string(n) + "'";
      bad_text(t.name, pos, "expected a message starting with " + expected);
    }
    pos += r->prefix.size();
    if (text.substr(pos, r->lead.size()) != r->lead) {
      bad_text(t.name, pos, "expected '" + std::string(r->lead) + "' after '" + r->prefix + "'");
    }
    pos += r->lead.size();
    const size_t end = find_message_end(text, pos, r->suffix, next);
    const bool complete = end != std::string_view::npos;
    ChatMessage m{std::string(r->role), std::string(text.substr(pos, end - pos))};
    m.is_complete = complete;
    out.push_back(std::move(m));
    pos = complete ? end + r->suffix.size() : text.size();
  }
  return out;
}

}  // namespace

RenderedChat render_dialogpt(const std::vector<ChatMessage>& messages,
                             const ChatTemplateOptions& o) {
  return render(dialogpt(o), messages, o.add_generation_prompt);
}
RenderedChat render_falcon(const std::vector<ChatMessage>& messages, const ChatTemplateOptions& o) {
  return render(falcon(o), messages, o.add_generation_prompt);
}
RenderedChat render_deepseek(const std::vector<ChatMessage>& messages,
                             const ChatTemplateOptions& o) {
  return render(deepseek(o), messages, o.add_generation_prompt);
}

// The parsers know the default special tokens only: a text rendered with other ones is parsed
// with a template registered for them (see docs/llm.md).
std::vector<ChatMessage> parse_dialogpt(std::string_view text) { return parse(dialogpt({}), text); }
std::vector<ChatMessage> parse_falcon(std::string_view text) { return parse(falcon({}), text); }
std::vector<ChatMessage> parse_deepseek(std::string_view text) { return parse(deepseek({}), text); }

}  // namespace tensordict::llm::detail
