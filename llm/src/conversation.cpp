#include "tensorclass/llm/conversation.h"

#include "tensordict/lazy_stack.h"

#include <algorithm>
#include <stdexcept>

namespace tensorclass::llm {
namespace {

using tensordict::NonTensorStack;
using tensordict::TensorDict;
using tensordict::Value;

// One entry of a conversation, looked up once (a row costs O(messages), not O(messages^2)):
// element(i) is its value for message i.
class Column {
 public:
  Column(const TensorDict& td, const char* key, Json fallback)
      : key_(key), fallback_(std::move(fallback)), scalar_(td.ndim() == 0) {
    const int64_t slot = td.slot_of(key);
    if (slot >= 0) value_ = &td.value_at(static_cast<size_t>(slot));
  }

  Json element(int64_t i) const {
    if (!value_) return fallback_;
    if (value_->is_non_tensor_data()) return value_->non_tensor_data().data;
    if (value_->is_non_tensor_stack())
      return value_->non_tensor_stack().items().at(static_cast<size_t>(i));
    if (value_->is_tensor()) {
      const at::Tensor& all = value_->tensor();
      const at::Tensor t = all.dim() == 0 ? all : all.reshape({-1})[i];
      if (t.scalar_type() == at::kBool) return Json(t.item<bool>());
      if (at::isIntegralType(t.scalar_type(), false)) return Json(t.item<int64_t>());
      return Json(t.item<double>());
    }
    // A nested TensorDict: a message's ContentBase parts (one more batch dim than the message).
    const TensorDict& parts = value_->tensordict();
    return content_parts_json(scalar_ ? parts : parts[i]);
  }

 private:
  const char* key_;
  Json fallback_;
  bool scalar_;                   // a 0-D TensorDict: one message
  const Value* value_ = nullptr;  // absent entry: the fallback
};

// Stacks one JSON value per message into a NonTensorStack of `shape`.
NonTensorStack column(const std::vector<const ChatMessage*>& messages, std::vector<int64_t> shape,
                      Json (*pick)(const ChatMessage&)) {
  std::vector<Json> items;
  items.reserve(messages.size());
  for (const auto* m : messages) items.push_back(pick(*m));
  return NonTensorStack(std::move(shape), std::move(items));
}

[[noreturn]] void throw_mixed_content(size_t index) {
  throw tensordict::TypeError("message " + std::to_string(index) +
                              ": a conversation's contents must be all strings or all ContentBase "
                              "parts (TorchRL stacks them into one entry)");
}

TensorDict from_rows(const std::vector<const ChatMessage*>& rows,
                     const std::vector<int64_t>& shape) {
  TensorDict td({}, shape);
  td.set("role", column(rows, shape, [](const ChatMessage& m) { return Json(m.role); }));
  td.set("content", column(rows, shape, [](const ChatMessage& m) { return Json(m.content); }));
  // One flag for the whole batch when all agree, as History's constructor stores it.
  NonTensorStack complete =
      column(rows, shape, [](const ChatMessage& m) { return Json(m.is_complete); });
  if (complete.numel() > 0 && complete.all_equal()) {
    td.set_non_tensor("is_complete", complete.items().front());
  } else {
    td.set("is_complete", std::move(complete));
  }
  const bool any_calls = std::any_of(rows.begin(), rows.end(),
                                     [](const ChatMessage* m) { return !m->tool_calls.is_null(); });
  const bool any_responses = std::any_of(
      rows.begin(), rows.end(), [](const ChatMessage* m) { return !m->tool_responses.is_null(); });
  if (any_calls)
    td.set("tool_calls", column(rows, shape, [](const ChatMessage& m) { return m.tool_calls; }));
  if (any_responses) {
    td.set("tool_responses",
           column(rows, shape, [](const ChatMessage& m) { return m.tool_responses; }));
  }
  return td;
}

// The messages of a dense 0-D or 1-D History; errors name the message, counting from `first`.
std::vector<ChatMessage> dense_messages(const TensorDict& history, int64_t first) {
  const int64_t n = history.ndim() == 0 ? 1 : history.batch_size()[0];
  const Column role(history, "role", Json(kPaddingRole)), content(history, "content", Json("")),
      complete(history, "is_complete", Json(true)), calls(history, "tool_calls", nullptr),
      responses(history, "tool_responses", nullptr);
  std::vector<ChatMessage> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    ChatMessage m;
    try {
      set_message_field(m, "role", role.element(i));
      set_message_field(m, "content", content.element(i));
      set_message_field(m, "is_complete", complete.element(i));
      set_message_field(m, "tool_calls", calls.element(i));
      set_message_field(m, "tool_responses", responses.element(i));
    } catch (const tensordict::Error& e) {
      throw tensordict::TypeError("History message " + std::to_string(first + i) + ": " + e.what());
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

std::vector<ChatMessage> conversation_messages(const TensorDict& conversation) {
  if (conversation.ndim() > 1) {
    throw tensordict::ShapeError("a conversation is a 0-D or 1-D History, got batch_size " +
                                 tensordict::shape_str(conversation.batch_size()));
  }
  // A conversation stacked lazily from single messages (as Python's lazy_stack of Histories):
  // read message by message (their contents may be ContentBase parts of different counts).
  if (conversation.is_lazy_stack()) {
    std::vector<ChatMessage> out;
    for (int64_t i = 0; i < conversation.batch_size()[0]; ++i) {
      auto one = dense_messages(conversation[i], i);
      out.insert(out.end(), one.begin(), one.end());
    }
    return out;
  }
  return dense_messages(conversation, 0);
}

namespace {

// A 0-D History of one message whose content is ContentBase parts (batch [k]).
TensorDict message_with_parts(const ChatMessage& m) {
  TensorDict td({}, {});
  td.set_non_tensor("role", m.role);
  td.set("content", content_parts_tensordict(m.content_parts));
  td.set_non_tensor("is_complete", m.is_complete);
  if (!m.tool_calls.is_null()) td.set_non_tensor("tool_calls", m.tool_calls);
  if (!m.tool_responses.is_null()) td.set_non_tensor("tool_responses", m.tool_responses);
  return td;
}

}  // namespace

TensorDict conversation_tensordict(const std::vector<ChatMessage>& messages) {
  // Messages with ContentBase parts are stacked lazily, as TorchRL's from_chats stacks them: their
  // part counts may differ, and message i is then the 0-D History holding its parts.
  const auto has_parts = [](const ChatMessage& m) { return !m.content_parts.is_null(); };
  if (!messages.empty() && has_parts(messages.front())) {
    std::vector<TensorDict> rows;
    for (size_t i = 0; i < messages.size(); ++i) {
      if (!has_parts(messages[i])) throw_mixed_content(i);
      rows.push_back(message_with_parts(messages[i]));
    }
    return tensordict::lazy_stack(rows, 0);
  }
  auto first_parts = std::find_if(messages.begin(), messages.end(), has_parts);
  if (first_parts != messages.end())
    throw_mixed_content(static_cast<size_t>(first_parts - messages.begin()));
  std::vector<const ChatMessage*> rows;
  for (const auto& m : messages) rows.push_back(&m);
  return from_rows(rows, {static_cast<int64_t>(messages.size())});
}

TensorDict batch_tensordict(const std::vector<std::vector<ChatMessage>>& chats) {
  std::vector<TensorDict> conversations;
  conversations.reserve(chats.size());
  for (const auto& chat : chats) conversations.push_back(conversation_tensordict(chat));
  return tensordict::lazy_stack(conversations, 0);
}

namespace {

// The value of `key` of a message, which must be of the kind `expected` names.
template <class T>
T message_field(const Json& value, const std::string& key, bool (Json::*is_kind)() const noexcept,
                const char* expected) {
  if (!(value.*is_kind)()) {
    throw tensordict::TypeError("field '" + key + "' must be " + expected + ", got " +
                                value.type_name() + " " + value.dump());
  }
  return value.get<T>();
}

}  // namespace

void set_message_field(ChatMessage& m, const std::string& key, const Json& value) {
  if (key == "role") {
    m.role = message_field<std::string>(value, key, &Json::is_string, "a string");
  } else if (key == "content") {
    if (value.is_array() && !value.empty() && value.front().is_object()) {
      try {
        check_content_parts(value);
      } catch (const tensordict::Error& e) {
        throw tensordict::TypeError("field 'content': " + std::string(e.what()));
      }
      m.content_parts = value;
      return;
    }
    if (!value.is_string()) {
      throw tensordict::TypeError(
          "field 'content' must be a string or a list of ContentBase parts "
          "(JSON objects), got " +
          std::string(value.type_name()) + " " + value.dump());
    }
    m.content = value.get<std::string>();
  } else if (key == "is_complete") {
    m.is_complete = message_field<bool>(value, key, &Json::is_boolean, "a bool");
  } else if (key == "tool_calls") {
    const bool objects =
        value.is_array() &&
        std::all_of(value.begin(), value.end(), [](const Json& c) { return c.is_object(); });
    if (!value.is_null() && !objects) {
      throw tensordict::TypeError(
          "field 'tool_calls' must be null or a list of JSON objects, got " + value.dump());
    }
    m.tool_calls = value;
  } else if (key == "tool_responses") {
    if (!value.is_null() && !value.is_array()) {
      throw tensordict::TypeError("field 'tool_responses' must be null or a list, got " +
                                  value.dump());
    }
    m.tool_responses = value;
  } else {
    throw std::invalid_argument("unknown chat message key '" + key +
                                "' (known: role, content, is_complete, tool_calls, "
                                "tool_responses)");
  }
}

ChatMessage message_from_json(const Json& message) {
  if (!message.is_object()) {
    throw tensordict::TypeError("a chat message must be a JSON object, got " + message.dump());
  }
  ChatMessage m;
  for (const auto& [key, value] : message.items()) set_message_field(m, key, value);
  if (m.role.empty()) throw std::invalid_argument("chat message without a role: " + message.dump());
  return m;
}

Json message_column(const TensorDict& td, const char* key, int64_t n) {
  const Column column(td, key, nullptr);
  Json out = Json::array();
  for (int64_t i = 0; i < n; ++i) out.push_back(column.element(i));
  return out;
}

}  // namespace tensorclass::llm
