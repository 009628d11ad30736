// chatml_format and qwen, rendered as transformers renders TorchRL's Jinja templates.
#include <algorithm>

#include "chat_builtin.h"
#include "tensordict/errors.h"
#include "tensordict/json.h"

namespace tensordict::llm::detail {
namespace {

constexpr std::string_view kEndLine = "<|im_end|>\n";
constexpr std::string_view kToolsIntro =
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
constexpr std::string_view kToolsOutro =
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": "
    "<function-name>, \"arguments\": <args-json-object>}\n</tool_call>";

// JSON as the templates' `tojson` filter writes it (raw UTF-8, ", " and ": ").
std::string tojson(const Json& value) { return tensordict::dumps_python(value, {false, false}); }

// Jinja's truthiness of a value.
bool truthy(const Json& value) {
  return !(value.is_null() || (value.is_structured() && value.empty()) ||
           (value.is_string() && value.get_ref<const std::string&>().empty()) ||
           (value.is_boolean() && !value.get<bool>()));
}

void block(ChatWriter& out, std::string_view role, std::string_view content, bool generated) {
  out.put(kImStart);
  out.put(role);
  out.put("\n");
  generated ? out.generated(content) : out.put(content);
  out.put(kEndLine);
}

void qwen_system(const std::vector<ChatMessage>& messages, const Json& tools, ChatWriter& out) {
  const bool system_first = !messages.empty() && messages.front().role == "system";
  out.put(kImStart);
  out.put("system\n");
  // With tools the template prints the system content; without, it joins it with text.
  if (!system_first) {
    out.put(kQwenDefaultSystem);
  } else if (truthy(tools)) {
    out.put(printed_content(messages.front()));
  } else {
    out.put(joined_content(messages.front(), 0, "qwen"));
  }
  if (truthy(tools)) {
    out.put(kToolsIntro);
    for (const auto& tool : tools) out.put("\n" + tojson(tool));
    out.put(kToolsOutro);
  }
  out.put(kEndLine);
}

// A number, a bool, or a non-empty list of them (nested or not): what tensordict stores as a
// tensor.
bool numbers_only(const Json& value) {
  if (value.is_number() || value.is_boolean()) return true;
  return value.is_array() && !value.empty() &&
         std::all_of(value.begin(), value.end(), [](const Json& v) { return numbers_only(v); });
}

// The template prints a tool message's responses (Python's str() of the list). TorchRL stores a
// list of numbers only as a tensor, which the template fails on (more than one value) or prints
// as "tensor([1])", so such responses are refused.
std::string tool_response(const ChatMessage& m, size_t index) {
  if (numbers_only(m.tool_responses)) {
    throw ::tensordict::TypeError("template 'qwen': message " + std::to_string(index) +
                                  "'s tool_responses " + tojson(m.tool_responses) +
                                  " hold only numbers; give the responses as strings");
  }
  return truthy(m.tool_responses) ? python_repr(m.tool_responses) : printed_content(m);
}

void qwen_tool_calls(const ChatMessage& m, ChatWriter& out) {
  out.put(kImStart);
  out.put("assistant");
  if (content_truthy(m)) {
    out.put("\n");
    out.generated(printed_content(m));
  }
  for (const auto& call : m.tool_calls) {
    const Json& fn = call.contains("function") ? call["function"] : call;
    const Json& name = fn.contains("name") ? fn["name"] : Json("");
    // Jinja prints a string as is, anything else as Python's str() of it.
    out.generated("\n<tool_call>\n{\"name\": \"" +
                  (name.is_string() ? name.get<std::string>() : python_repr(name)) +
                  "\", \"arguments\": " + tojson(fn.value("arguments", Json(nullptr))) +
                  "}\n</tool_call>");
  }
  out.put(kEndLine);
}

}  // namespace

RenderedChat render_chatml(const std::vector<ChatMessage>& messages,
                           const ChatTemplateOptions& options) {
  ChatWriter out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    // The template prints an assistant's content and joins the others' with the header.
    if (m.role == "assistant") {
      block(out, m.role, printed_content(m), true);
    } else {
      block(out, m.role, joined_content(m, i, "chatml_format"), false);
    }
  }
  if (options.add_generation_prompt) out.put("<|im_start|>assistant\n");
  return out.finish();
}

RenderedChat render_qwen(const std::vector<ChatMessage>& messages,
                         const ChatTemplateOptions& options) {
  ChatWriter out;
  qwen_system(messages, options.tools, out);
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    // Roles other than these four render nothing, as in TorchRL's template.
    if (m.role == "user" || (m.role == "system" && i > 0)) {
      block(out, m.role, joined_content(m, i, "qwen"), false);
    } else if (m.role == "assistant" && !truthy(m.tool_calls)) {
      block(out, m.role, printed_content(m), true);
    } else if (m.role == "assistant") {
      qwen_tool_calls(m, out);
    } else if (m.role == "tool") {
      // Consecutive tool messages share one block.
      if (i == 0 || messages[i - 1].role != "tool") out.put("<|im_start|>tool");
      out.put("\n<tool_response>\n");
      out.put(tool_response(m, i));
      out.put("\n</tool_response>");
      if (i + 1 == messages.size() || messages[i + 1].role != "tool") out.put(kEndLine);
    }
  }
  if (options.add_generation_prompt) out.put("<|im_start|>assistant\n");
  return out.finish();
}

}  // namespace tensordict::llm::detail
