// The inverse of render_chat: rendered chatml / qwen text back into messages.
#include <stdexcept>

#include "tensorclass/llm/chat.h"
#include "tensordict/json.h"

namespace tensorclass::llm {
namespace {

constexpr std::string_view kStart = "<|im_start|>";
constexpr std::string_view kEnd = "<|im_end|>";

[[noreturn]] void bad_text(size_t pos, const std::string& what) {
  throw std::invalid_argument("parse_chat: at character " + std::to_string(pos) + ": " + what);
}

struct Block {
  std::string role;
  std::string body;
  bool closed = true;
};

// Splits "<|im_start|>ROLE\nBODY<|im_end|>\n..." into blocks; the last may be open.
std::vector<Block> split_blocks(std::string_view text) {
  std::vector<Block> blocks;
  size_t pos = 0;
  while (pos < text.size()) {
    if (text.substr(pos, kStart.size()) != kStart) bad_text(pos, "expected '<|im_start|>'");
    pos += kStart.size();
    Block block;
    const size_t end = text.find(kEnd, pos);
    const size_t newline = text.find('\n', pos);
    const size_t body_end = end == std::string_view::npos ? text.size() : end;
    if (newline == std::string_view::npos || newline > body_end) {
      block.role = std::string(text.substr(pos, body_end - pos));  // "<|im_start|>tool\n..." too
    } else {
      block.role = std::string(text.substr(pos, newline - pos));
      block.body = std::string(text.substr(newline + 1, body_end - newline - 1));
    }
    block.closed = end != std::string_view::npos;
    pos = block.closed ? end + kEnd.size() : text.size();
    if (pos < text.size() && text[pos] == '\n') ++pos;
    blocks.push_back(std::move(block));
  }
  return blocks;
}

// Text between each `open` ... `close` pair, in order.
std::vector<std::string> between(std::string_view body, std::string_view open,
                                 std::string_view close) {
  std::vector<std::string> out;
  for (size_t pos = body.find(open); pos != std::string_view::npos; pos = body.find(open, pos)) {
    const size_t start = pos + open.size();
    const size_t stop = body.find(close, start);
    if (stop == std::string_view::npos) bad_text(start, "unterminated '" + std::string(open) + "'");
    out.emplace_back(body.substr(start, stop - start));
    pos = stop + close.size();
  }
  return out;
}

void add_qwen_assistant(const Block& block, std::vector<ChatMessage>& out) {
  ChatMessage m{"assistant", block.body};
  const size_t first_call =
      block.body.rfind("<tool_call>\n", 0) == 0 ? 0 : block.body.find("\n<tool_call>\n");
  if (first_call != std::string::npos) {
    m.content = block.body.substr(0, first_call);
    m.tool_calls = Json::array();
    for (const auto& call : between(block.body, "<tool_call>\n", "\n</tool_call>")) {
      m.tool_calls.push_back(tensordict::parse_json(call, "tool call"));
    }
  }
  m.is_complete = block.closed;
  out.push_back(std::move(m));
}

}  // namespace

std::vector<ChatMessage> parse_chat(std::string_view text, ChatFormat format) {
  std::vector<ChatMessage> out;
  for (const Block& block : split_blocks(text)) {
    if (!block.closed && block.role == "assistant" && block.body.empty()) continue;  // gen prompt
    if (format == ChatFormat::Qwen && block.role == "tool") {
      for (auto& response : between(block.body, "<tool_response>\n", "\n</tool_response>")) {
        out.push_back(ChatMessage{"tool", std::move(response)});
      }
      continue;
    }
    if (format == ChatFormat::Qwen && block.role == "assistant") {
      add_qwen_assistant(block, out);
      continue;
    }
    ChatMessage m{block.role, block.body};
    m.is_complete = block.closed;
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace tensorclass::llm
