// The inverse of chatml_format and qwen: rendered text back into messages. A message ends at an
// end token only where the next message (or the end of the text) follows, so contents holding
// the special tokens as text come back whole.
#include "chat_builtin.h"
#include "tensordict/json.h"

namespace tensordict::llm::detail {
namespace {

// A model's end-of-text token also ends a message (TorchRL's parsers take it for one).
constexpr std::string_view kEndOfText = "<|endoftext|>";
constexpr std::string_view kNext = "\n<|im_start|>";
constexpr std::string_view kToolsIntroPrefix = "\n\n# Tools\n\nYou may call one or more functions";
constexpr std::string_view kCallOpen = "\n<tool_call>\n";
constexpr std::string_view kCallClose = "\n</tool_call>";
constexpr std::string_view kResponseOpen = "<tool_response>\n";
constexpr std::string_view kResponseClose = "\n</tool_response>";

struct Block {
  size_t at = 0;  // where the body starts in the text
  std::string role;
  std::string_view body;
  bool closed = true;
};

// Splits "<|im_start|>ROLE\nBODY<|im_end|>\n..." into blocks; the last may be open.
std::vector<Block> split_blocks(std::string_view text, std::string_view name) {
  // A rendering ends with "<|im_end|>\n", a model's output may stop at "<|im_end|>" or
  // "<|endoftext|>": each ends the last message.
  for (auto end : {kImEnd, kEndOfText}) {
    if (text.size() > end.size() && text.back() == '\n' &&
        text.substr(text.size() - end.size() - 1, end.size()) == end) {
      text.remove_suffix(1);
    }
  }
  std::vector<Block> blocks;
  size_t pos = 0;
  while (pos < text.size()) {
    if (text.substr(pos, kImStart.size()) != kImStart)
      bad_text(name, pos, "expected '<|im_start|>'");
    pos += kImStart.size();
    size_t end = find_message_end(text, pos, kImEnd, {kNext});
    size_t end_size = kImEnd.size();
    const size_t eot = find_message_end(text, pos, kEndOfText, {kNext});
    if (eot < end) {
      end = eot;
      end_size = kEndOfText.size();
    }
    const size_t body_end = end == std::string_view::npos ? text.size() : end;
    const size_t newline = text.find('\n', pos);
    Block block;
    if (newline == std::string_view::npos || newline > body_end) {
      block.role = std::string(text.substr(pos, body_end - pos));  // a truncated header
      block.at = body_end;
    } else {
      block.role = std::string(text.substr(pos, newline - pos));
      block.at = newline + 1;
      block.body = text.substr(newline + 1, body_end - newline - 1);
    }
    block.closed = end != std::string_view::npos;
    pos = block.closed ? end + end_size + (end + end_size < text.size() ? 1 : 0) : text.size();
    blocks.push_back(std::move(block));
  }
  return blocks;
}

void add_message(std::vector<ChatMessage>& out, const Block& block) {
  // A trailing open, empty assistant block is the generation prompt, not a message.
  if (!block.closed && block.role == "assistant" && block.body.empty()) return;
  ChatMessage m{block.role, std::string(block.body)};
  m.is_complete = block.closed;
  out.push_back(std::move(m));
}

// The tool calls "\n<tool_call>\n{json}\n</tool_call>" filling `calls` to its end; null when
// `calls` is not such a sequence.
Json tool_call_list(std::string_view calls) {
  // Whitespace after the last call (a model's "</tool_call>\n<|im_end|>") is not content.
  const std::string_view trimmed = rstrip(calls);
  if (trimmed.size() >= kCallClose.size() &&
      trimmed.substr(trimmed.size() - kCallClose.size()) == kCallClose) {
    calls = trimmed;
  }
  Json list = Json::array();
  while (!calls.empty()) {
    if (calls.substr(0, kCallOpen.size()) != kCallOpen) return nullptr;
    calls.remove_prefix(kCallOpen.size());
    const size_t close = find_message_end(calls, 0, kCallClose, {kCallOpen});
    if (close == std::string_view::npos) return nullptr;
    try {
      list.push_back(tensordict::parse_json(calls.substr(0, close), "tool call"));
    } catch (const std::exception&) {
      return nullptr;
    }
    calls.remove_prefix(close + kCallClose.size());
  }
  return list;
}

// An assistant block: content, then tool calls. The calls are the longest suffix that parses as
// a sequence of them (content may hold "<tool_call>" as text).
void add_qwen_assistant(std::vector<ChatMessage>& out, const Block& block) {
  auto with_calls = [&](std::string_view content, std::string_view calls) {
    Json list = tool_call_list(calls);
    if (list.is_null()) return false;
    ChatMessage m{"assistant", std::string(content)};
    m.tool_calls = std::move(list);
    m.is_complete = block.closed;
    out.push_back(std::move(m));
    return true;
  };
  const std::string_view body = block.body;
  // Without content, qwen writes the first call right after the role: "assistant\n<tool_call>".
  if (body.substr(0, kCallOpen.size() - 1) == kCallOpen.substr(1) &&
      with_calls("", "\n" + std::string(body))) {
    return;
  }
  for (size_t at = body.find(kCallOpen); at != std::string_view::npos;
       at = body.find(kCallOpen, at + 1)) {
    if (with_calls(body.substr(0, at), body.substr(at))) return;
  }
  add_message(out, block);
}

// A tool block: "<tool_response>\nR\n</tool_response>" once per consecutive tool message; in an
// open block (a continued final tool message) the last response may be unterminated.
void add_qwen_tools(std::vector<ChatMessage>& out, const Block& block, std::string_view name) {
  std::string_view body = block.body;
  size_t at = block.at;
  // A tool message written as a plain block (not by this template): its text is the content.
  if (body.substr(0, kResponseOpen.size()) != kResponseOpen) {
    add_message(out, block);
    return;
  }
  while (true) {
    if (body.substr(0, kResponseOpen.size()) != kResponseOpen) {
      bad_text(name, at, "expected '<tool_response>' in a tool block");
    }
    body.remove_prefix(kResponseOpen.size());
    at += kResponseOpen.size();
    const size_t close =
        find_message_end(body, 0, kResponseClose, {"\n" + std::string(kResponseOpen)});
    ChatMessage m{"tool", std::string(body.substr(0, close))};
    m.is_complete = close != std::string_view::npos || block.closed;
    if (close == std::string_view::npos && block.closed) {
      bad_text(name, at, "unterminated '<tool_response>'");
    }
    out.push_back(std::move(m));
    if (close == std::string_view::npos) return;
    body.remove_prefix(close + kResponseClose.size());
    at += close + kResponseClose.size();
    if (body.empty()) return;
    body.remove_prefix(1);  // the newline before the next response
    at += 1;
  }
}

// The texts between `open` and the first `close` after it, in order.
std::vector<std::string_view> enclosed(std::string_view text, std::string_view open,
                                       std::string_view close) {
  std::vector<std::string_view> out;
  for (size_t at = text.find(open); at != std::string_view::npos; at = text.find(open, at)) {
    const size_t end = text.find(close, at + open.size());
    if (end == std::string_view::npos) break;
    out.push_back(text.substr(at + open.size(), end - at - open.size()));
    at = end + close.size();
  }
  return out;
}

}  // namespace

std::vector<ChatMessage> parse_chatml(std::string_view text) {
  std::vector<ChatMessage> out;
  for (const Block& block : split_blocks(text, "chatml_format")) {
    const size_t before = out.size();
    add_message(out, block);
    if (out.size() == before) continue;  // the generation prompt
    // The template writes no tool calls, but a model may: the content keeps their text (it
    // renders back the same) and they are also returned as tool_calls / tool_responses.
    ChatMessage& m = out.back();
    Json calls = Json::array();
    for (auto call : enclosed(m.content, "<tool_call>\n", "\n</tool_call>")) {
      try {
        calls.push_back(tensordict::parse_json(call, "tool call"));
      } catch (const std::exception&) {
        // not JSON: text
      }
    }
    if (!calls.empty()) m.tool_calls = std::move(calls);
    Json responses = Json::array();
    for (auto r : enclosed(m.content, "<tool_response>\n", "\n</tool_response>")) {
      responses.push_back(std::string(r));
    }
    if (!responses.empty()) m.tool_responses = std::move(responses);
  }
  return out;
}

std::vector<ChatMessage> parse_qwen(std::string_view text) {
  std::vector<Block> blocks = split_blocks(text, "qwen");
  std::vector<ChatMessage> out;
  bool default_system = false;  // the first block, left out as the template's own
  for (size_t i = 0; i < blocks.size(); ++i) {
    Block& block = blocks[i];
    if (i == 0 && block.role == "system" && block.closed) {
      // The tools section the template appends to the system message is not content.
      const size_t tools = block.body.rfind(kToolsIntroPrefix);
      if (tools != std::string_view::npos) block.body = block.body.substr(0, tools);
      // The default system message is the template's, not a message the user gave: the two
      // renderings are the same text, and this one re-renders to it. Unless a system message
      // follows: without this one, that one would render as the first.
      const bool system_next = blocks.size() > 1 && blocks[1].role == "system";
      default_system = block.body == kQwenDefaultSystem && !system_next;
      if (default_system) continue;
    }
    if (block.role == "tool") {
      add_qwen_tools(out, block, "qwen");
    } else if (block.role == "assistant") {
      add_qwen_assistant(out, block);
    } else {
      add_message(out, block);
    }
  }
  // A text of the default system message alone is that message (as TorchRL reads it).
  if (out.empty() && default_system) add_message(out, blocks.front());
  return out;
}

}  // namespace tensordict::llm::detail
