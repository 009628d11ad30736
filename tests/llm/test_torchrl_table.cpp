// History against real TorchRL: tests/llm/torchrl/table.json holds what TorchRL main's History
// rendered (apply_chat_template, assistant masks) and parsed (from_text) for a broad set of chats
// and texts; tests/llm/torchrl/make_table.py made it (regenerating: see its header). Every case
// is replayed here. Renderings must be byte-identical, masks identical, and an input TorchRL
// rejects must be rejected, except where TorchRL crashes on an input a user means something by
// ("crash" cases): there we must render what TorchRL renders for that meaning ("instead"), and
// where docs/llm.md lists a difference (qwen's tool_responses of numbers, an empty-span mask).
// from_text must give TorchRL's messages, or what TorchRL's would be by the differences
// docs/llm.md lists (as_torchrl_parses applies them to ours: any other difference fails), and
// the chat a text was rendered from, exactly.
#include "catch2_compat.h"

#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "history.h"
#include "tensordict/errors.h"
#include "tensordict/json.h"
#include "tensordict/llm/conversation.h"

using tensordict::Json;
using tensordict::llm::ChatMessage;
using tensordict::llm::Encoding;
using torchrl::llm::History;
using torchrl::llm::HistoryTemplateOptions;

namespace {

const Json& table() {
  static const Json t = [] {
    std::ifstream in(TC_SOURCE_DIR "/tests/llm/torchrl/table.json", std::ios::binary);
    REQUIRE(in.good());
    std::stringstream s;
    s << in.rdbuf();
    return tensordict::parse_json(s.str(), "table.json");
  }();
  return t;
}

size_t utf8_length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

// The table's tokenizer: one token per code point, one per special token (bos/eos), as
// transformers splits the tokenizer's added tokens out first. `cp` gets each token's code point
// range (the table's masks are in code points; Encoding's offsets are bytes).
Encoding tokenize(std::string_view text, const std::vector<std::string>& specials,
                  std::vector<std::pair<int64_t, int64_t>>* cp) {
  Encoding enc;
  size_t pos = 0;
  int64_t point = 0;
  while (pos < text.size()) {
    size_t len = 0;
    int64_t points = 1;
    for (const auto& s : specials) {
      if (!s.empty() && text.substr(pos, s.size()) == s) {
        len = s.size();
        points = 0;
        for (size_t k = 0; k < len; k += utf8_length(static_cast<unsigned char>(s[k]))) ++points;
        break;
      }
    }
    if (len == 0) len = utf8_length(static_cast<unsigned char>(text[pos]));
    enc.ids.push_back(0);
    enc.offsets.push_back({pos, pos + len});
    if (cp) cp->push_back({point, point + points});
    pos += len;
    point += points;
  }
  return enc;
}

HistoryTemplateOptions options_of(const Json& c) {
  const Json& o = table()["options"][c["options"].get<std::string>()];
  HistoryTemplateOptions out;
  if (!c["template"].is_null()) out.chat_template_name = c["template"].get<std::string>();
  out.add_generation_prompt = o.value("add_generation_prompt", true);
  out.continue_final_message = o.value("continue_final_message", false);
  out.tools = o.value("tools", Json(nullptr));
  if (o.contains("bos_token")) out.bos_token = o["bos_token"].get<std::string>();
  if (o.contains("eos_token")) out.eos_token = o["eos_token"].get<std::string>();
  out.tokenizer_name = o.value("tokenizer_name", std::string());
  return out;
}

constexpr const char* kDeepSeekBos =
    "<\xEF\xBD\x9C"
    "begin\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>";
constexpr const char* kDeepSeekEos =
    "<\xEF\xBD\x9C"
    "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>";

// The special tokens the table's tokenizer had: the options' or the family's (make_table.py's
// FAMILY_TOKENS, which are our defaults).
std::vector<std::string> specials_of(const Json& c) {
  const Json& o = table()["options"][c["options"].get<std::string>()];
  std::vector<std::string> out;
  if (o.contains("bos_token")) out.push_back(o["bos_token"].get<std::string>());
  if (o.contains("eos_token")) out.push_back(o["eos_token"].get<std::string>());
  if (!out.empty()) return out;
  const std::string t = c["template"].is_null() ? "" : c["template"].get<std::string>();
  if (t == "dialogpt") return {"<|endoftext|>"};
  if (t == "deepseek") return {kDeepSeekBos, kDeepSeekEos};
  if (t == "llama") return {"<|begin_of_text|>"};
  return {};
}

// Our assistant masks as the table writes them: per conversation, merged code point ranges.
Json mask_ranges(const History& h, const Json& c) {
  HistoryTemplateOptions o = options_of(c);
  const auto specials = specials_of(c);
  o.tokenizer = [&](std::string_view text) { return tokenize(text, specials, nullptr); };
  o.return_assistant_tokens_mask = true;
  const auto texts = h.apply_chat_template(o);
  const at::Tensor masks = h.apply_chat_template_tokens(o).get("assistant_masks");
  Json out = Json::array();
  for (size_t b = 0; b < texts.size(); ++b) {
    std::vector<std::pair<int64_t, int64_t>> cp;
    tokenize(texts[b], specials, &cp);
    Json runs = Json::array();
    for (size_t t = 0; t < cp.size(); ++t) {
      if (masks[static_cast<int64_t>(b)][static_cast<int64_t>(t)].item<int64_t>() == 0) continue;
      if (!runs.empty() && runs.back()[1].get<int64_t>() == cp[t].first) {
        runs.back()[1] = cp[t].second;
      } else {
        runs.push_back(Json::array({cp[t].first, cp[t].second}));
      }
    }
    out.push_back(runs);
  }
  return out;
}

size_t code_point_count(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); i += utf8_length(static_cast<unsigned char>(s[i]))) ++n;
  return n;
}

// transformers marks an empty generation span (an empty assistant content) from the token after
// it to the end of the text when the token before it is the first one (its end token reads as
// "none"); we mark nothing for an empty content (docs/llm.md). True when that is the only
// difference: TorchRL's masks are ours plus one run to the end, in a chat with an empty
// assistant content.
bool transformers_empty_span_quirk(const Json& ours, const Json& c,
                                   const std::vector<std::string>& texts) {
  const Json& chats = table()["chats"][c["chats"].get<std::string>()];
  const Json& theirs = c["masks"];
  bool empty_assistant = false;
  for (const auto& m : chats) {
    empty_assistant |= m.is_object() && m["role"] == "assistant" && m["content"] == "";
  }
  if (!empty_assistant || ours.size() != theirs.size()) return false;
  for (size_t b = 0; b < ours.size(); ++b) {
    if (ours[b] == theirs[b]) continue;
    Json extra = theirs[b];
    if (extra.empty()) return false;
    const Json last = extra.back();
    extra.erase(extra.size() - 1);
    if (extra != ours[b] || last[1].get<size_t>() != code_point_count(texts.at(b))) {
      return false;
    }
  }
  return true;
}

// TorchRL stores tool_responses of numbers only as a tensor, which qwen's template prints as
// "tensor([1])" when it holds one value; we refuse such responses (docs/llm.md). True when that
// is the difference: TorchRL printed a tensor as the response and we raised TypeError.
bool refused_number_responses(const Json& c, bool type_error) {
  for (const auto& text : c["result"]) {
    if (text.get<std::string>().find("<tool_response>\ntensor(") != std::string::npos) {
      return type_error && c["template"] == "qwen";
    }
  }
  return false;
}

std::string describe(const std::vector<std::string>& texts) {
  Json j = texts;
  return tensordict::dumps_python(j, {false, false});
}

}  // namespace

TEST_CASE("TorchRL table: the table covers every built-in template", "[llm][torchrl]") {
  std::map<std::string, size_t> per_template;
  for (const auto& c : table()["render"]) {
    if (!c["template"].is_null()) ++per_template[c["template"].get<std::string>()];
  }
  for (const auto& name : tensordict::llm::chat_template_names()) {
    if (name == "chatml_format" || name == "qwen" || name == "dialogpt" || name == "falcon" ||
        name == "deepseek" || name == "llama") {
      INFO(name);
      CHECK(per_template[name] >= 100);
    }
  }
  CHECK(table()["from_text"].size() >= 150);
}

TEST_CASE("TorchRL table: renderings and assistant masks", "[llm][torchrl]") {
  size_t same = 0, crashes = 0, errors = 0, quirks = 0, refused = 0;
  for (const auto& c : table()["render"]) {
    const std::string id = c["id"].get<std::string>();
    INFO("case " << id);
    const Json& chats = table()["chats"][c["chats"].get<std::string>()];
    std::vector<std::string> ours;
    std::string our_error;
    bool type_error = false;
    try {
      ours = History::from_chats(chats).apply_chat_template(options_of(c));
    } catch (const tensordict::TypeError& e) {
      our_error = e.what();
      type_error = true;
    } catch (const std::exception& e) {
      our_error = e.what();
    }
    INFO("ours: " << (our_error.empty() ? describe(ours) : "error: " + our_error));
    if (c.contains("result") && refused_number_responses(c, type_error)) {
      ++refused;
    } else if (c.contains("result")) {
      CHECK(our_error.empty());
      CHECK(ours == c["result"].get<std::vector<std::string>>());
      same += ours == c["result"].get<std::vector<std::string>>();
      if (c.contains("masks") && our_error.empty()) {
        const Json ours_masks = mask_ranges(History::from_chats(chats), c);
        INFO("our masks " << ours_masks.dump() << ", TorchRL's " << c["masks"].dump());
        CHECK((ours_masks == c["masks"] || transformers_empty_span_quirk(ours_masks, c, ours)));
        quirks += ours_masks != c["masks"];
      }
    } else if (c.contains("crash")) {
      INFO("TorchRL crashes (" << c["crash"].get<std::string>() << "); TorchRL's rendering of "
                               << c["means"].get<std::string>());
      CHECK(ours == c["instead"].get<std::vector<std::string>>());
      crashes += ours == c["instead"].get<std::vector<std::string>>();
    } else {
      INFO("TorchRL raises " << c["error"]["type"].get<std::string>() << ": "
                             << c["error"]["message"].get<std::string>());
      CHECK_FALSE(our_error.empty());
      errors += !our_error.empty();
    }
  }
  WARN("TorchRL table: " << same << " renderings identical, " << errors
                         << " rejected as TorchRL rejects them, " << crashes
                         << " TorchRL crashes rendered as meant, " << refused
                         << " tool_responses of numbers refused where TorchRL prints a tensor, of "
                         << table()["render"].size()
                         << "; masks differing by transformers' empty-span quirk: " << quirks);
}

namespace {

// Python's str.isspace() on a code point.
bool is_unicode_space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

std::vector<uint32_t> code_points(std::string_view s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_length(lead);
    uint32_t c = n == 1 ? lead : lead & (0xFF >> (n + 1));
    for (size_t k = 1; k < n && i + k < s.size(); ++k) c = (c << 6) | (s[i + k] & 0x3F);
    out.push_back(c);
    i += n;
  }
  return out;
}

// Python's str.strip().
std::string python_strip(std::string_view s) {
  size_t begin = 0, end = s.size();
  while (begin < end) {
    const size_t n = utf8_length(static_cast<unsigned char>(s[begin]));
    if (!is_unicode_space(code_points(s.substr(begin, n)).front())) break;
    begin += n;
  }
  while (end > begin) {
    size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    if (!is_unicode_space(code_points(s.substr(start, end - start)).front())) break;
    end = start;
  }
  return std::string(s.substr(begin, end - begin));
}

Json message_json(const ChatMessage& m) {
  Json out = {{"role", m.role},
              {"content", m.content_parts.is_null() ? Json(m.content) : m.content_parts},
              {"is_complete", m.is_complete}};
  if (!m.tool_calls.is_null()) out["tool_calls"] = m.tool_calls;
  if (!m.tool_responses.is_null()) out["tool_responses"] = m.tool_responses;
  return out;
}

Json messages_json(const History& h) {
  Json out = Json::array();
  for (const auto& m : tensordict::llm::conversation_messages(h._tensordict())) {
    out.push_back(message_json(m));
  }
  return out;
}

bool ends_with(std::string_view s, std::string_view end) {
  return s.size() >= end.size() && s.substr(s.size() - end.size()) == end;
}

// TorchRL's dialogpt parser reads a layout dialogpt does not write: each line of the stripped
// text is a message, stripped, its role given by a "User:" or "Assistant:" prefix (else user);
// blank lines are skipped.
Json torchrl_dialogpt_lines(const std::string& text) {
  Json out = Json::array();
  const std::string all = python_strip(text);
  for (size_t begin = 0; begin <= all.size();) {
    size_t end = all.find('\n', begin);
    if (end == std::string::npos) end = all.size();
    std::string line = python_strip(std::string_view(all).substr(begin, end - begin));
    begin = end + 1;
    if (line.empty()) continue;
    std::string role = "user";
    for (const auto& [prefix, prefix_role] :
         {std::pair<std::string_view, const char*>{"Assistant:", "assistant"}, {"User:", "user"}}) {
      if (line.rfind(prefix, 0) == 0) {
        role = prefix_role;
        line = python_strip(std::string_view(line).substr(prefix.size()));
        break;
      }
    }
    out.push_back(Json{{"role", role}, {"content", line}, {"is_complete", true}});
  }
  return out;
}

// What TorchRL's parser gives for the messages we parsed, by the differences docs/llm.md lists;
// null where TorchRL raises (every parser does when it finds no message).
// - all: contents stripped.
// - chatml/qwen: a trailing generation prompt is an empty incomplete assistant message.
// - qwen: the default system message returned, tool calls' text kept in the content, a tool
//   block's responses one message (its text the content, the responses tool_responses).
// - llama, deepseek: messages with a blank content dropped.
// - deepseek: the system message dropped; an assistant message keeps its end-of-sentence token
//   unless the token ends the text; every message complete.
// - dialogpt: its lines read as above. falcon: always raises.
Json as_torchrl_parses(Json ours, const std::string& template_name, const std::string& text) {
  if (template_name == "falcon") return nullptr;
  if (template_name == "dialogpt") {
    Json lines = torchrl_dialogpt_lines(text);
    return lines.empty() ? Json(nullptr) : lines;
  }
  const bool qwen = template_name == "qwen";
  const bool deepseek = template_name == "deepseek";
  if (qwen && text.rfind("<|im_start|>system\nYou are a helpful assistant.", 0) == 0 &&
      (ours.empty() || ours[0]["role"] != "system")) {
    ours.insert(ours.begin(), Json{{"role", "system"},
                                   {"content", "You are a helpful assistant."},
                                   {"is_complete", true}});
  }
  const std::string prompt = "<|im_start|>assistant\n";
  if ((qwen || template_name == "chatml_format") && ends_with(text, prompt)) {
    ours.push_back(Json{{"role", "assistant"}, {"content", ""}, {"is_complete", false}});
  }
  Json out = Json::array();
  const bool wrapped_responses = text.find("<tool_response>") != std::string::npos;
  for (size_t i = 0; i < ours.size(); ++i) {
    Json m = ours[i];
    std::string content = m["content"].is_string() ? m["content"].get<std::string>() : "";
    if (qwen && m.contains("tool_calls")) {
      for (const auto& call : m["tool_calls"]) {
        content +=
            "\n<tool_call>\n" + tensordict::dumps_python(call, {false, false}) + "\n</tool_call>";
      }
    }
    if (qwen && wrapped_responses && m["role"] == "tool") {
      const std::string wrapped = "<tool_response>\n" + content + "\n</tool_response>";
      if (!out.empty() && out.back()["role"] == "tool") {  // the same block
        out.back()["content"] = out.back()["content"].get<std::string>() + "\n" + wrapped;
        out.back()["tool_responses"].push_back(content);
        out.back()["is_complete"] = m["is_complete"];
        continue;
      }
      m["tool_responses"] = Json::array({content});
      content = wrapped;
    }
    // TorchRL removes one token at the end of the text only.
    if (deepseek && m["role"] == "assistant" && m["is_complete"].get<bool>() &&
        !(i + 1 == ours.size() && ends_with(text, kDeepSeekEos))) {
      content += kDeepSeekEos;
    }
    m["content"] = content;
    out.push_back(m);
  }
  Json stripped = Json::array();
  for (auto m : out) {
    m["content"] = python_strip(m["content"].get<std::string>());
    if ((template_name == "llama" || deepseek) && m["content"] == "") continue;
    if (deepseek && m["role"] == "system") continue;
    if (deepseek) m["is_complete"] = true;
    stripped.push_back(m);
  }
  return stripped.empty() ? Json(nullptr) : stripped;
}

// Chats whose contents hold the template's own delimiters (end tokens, headers, role prefixes):
// their renderings are also those of other chats, so no parser can give them back (docs/llm.md).
bool ambiguous_source(const std::string& id) {
  return id.find("/special_tokens") != std::string::npos ||
         id.find("/role_prefixes") != std::string::npos;
}

}  // namespace

TEST_CASE("TorchRL table: from_text", "[llm][torchrl]") {
  size_t same = 0, as_documented = 0, round_trips = 0, torchrl_fails = 0, ambiguous = 0,
         both_raise = 0;
  for (const auto& c : table()["from_text"]) {
    const std::string id = c["id"].get<std::string>();
    const std::string name = c["template"].get<std::string>();
    const std::string text = c["text"].get<std::string>();
    INFO("case " << id);
    Json ours;
    std::string our_error;
    try {
      ours = messages_json(History::from_text(text, name));
    } catch (const std::exception& e) {
      our_error = e.what();
    }
    INFO("ours: " << (our_error.empty() ? ours.dump() : "error: " + our_error));
    if (ambiguous_source(id)) {
      ++ambiguous;
      continue;
    }
    // Where TorchRL raises, it found no message (RuntimeError "Couldn't ..."). We raise only
    // there (a text holding no message: dialogpt's rendering of a system message alone).
    const Json theirs = c.contains("result") ? c["result"] : Json(nullptr);
    INFO("TorchRL: " << (theirs.is_null() ? "raises " + c["error"].dump() : theirs.dump()));
    if (theirs.is_null()) CHECK(c["error"]["type"] == "RuntimeError");
    if (!our_error.empty()) {
      CHECK(theirs.is_null());
      both_raise += theirs.is_null();
      continue;
    }
    // A text TorchRL rendered from a chat parses back to messages that render to it again.
    if (c.contains("source")) {
      HistoryTemplateOptions o;
      o.chat_template_name = name;
      o.add_generation_prompt = ends_with(id, "/gen");
      const auto again = History::from_text(text, name).apply_chat_template(o);
      CHECK(again == std::vector<std::string>{text});
      round_trips += again == std::vector<std::string>{text};
    }
    if (ours == theirs) {
      ++same;
      continue;
    }
    const Json expected = as_torchrl_parses(ours, name, text);
    INFO("ours as TorchRL would read them: " << expected.dump());
    CHECK(expected == theirs);
    if (expected == theirs) (theirs.is_null() ? torchrl_fails : as_documented) += 1;
  }
  WARN("TorchRL table, from_text: "
       << same << " identical, " << as_documented << " identical up to the documented differences, "
       << torchrl_fails << " where TorchRL raises, " << both_raise << " rejected by both, "
       << ambiguous << " ambiguous texts, " << round_trips << " texts parsed back, of "
       << table()["from_text"].size());
}
