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
      : key_(key), fallback_(std::move(fallback)) {
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
      return t.scalar_type() == at::kBool ? Json(t.item<bool>()) : Json(t.item<double>());
    }
    throw tensordict::TypeError(std::string("History entry '") + key_ + "' is a nested TensorDict");
  }

 private:
  const char* key_;
  Json fallback_;
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

}  // namespace

std::vector<ChatMessage> conversation_messages(const TensorDict& conversation) {
  if (conversation.ndim() > 1) {
    throw tensordict::ShapeError("a conversation is a 0-D or 1-D History, got batch_size " +
                                 tensordict::shape_str(conversation.batch_size()));
  }
  // A conversation stacked lazily from single messages (as Python's lazy_stack of Histories).
  const TensorDict history = conversation.is_lazy_stack() ? conversation.densify() : conversation;
  const int64_t n = history.ndim() == 0 ? 1 : history.batch_size()[0];
  const Column role(history, "role", Json(kPaddingRole)), content(history, "content", Json("")),
      complete(history, "is_complete", Json(true)), calls(history, "tool_calls", nullptr),
      responses(history, "tool_responses", nullptr);
  std::vector<ChatMessage> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    ChatMessage m;
    m.role = role.element(i).get<std::string>();
    const Json text = content.element(i);
    m.content = text.is_string() ? text.get<std::string>() : text.dump();
    m.is_complete = complete.element(i).get<bool>();
    m.tool_calls = calls.element(i);
    m.tool_responses = responses.element(i);
    out.push_back(std::move(m));
  }
  return out;
}

TensorDict conversation_tensordict(const std::vector<ChatMessage>& messages) {
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

ChatMessage message_from_json(const Json& message) {
  if (!message.is_object()) {
    throw tensordict::TypeError("a chat message must be a JSON object, got " + message.dump());
  }
  ChatMessage m;
  for (const auto& [key, value] : message.items()) {
    if (key == "role") {
      m.role = message_field<std::string>(value, key, &Json::is_string, "a string");
    } else if (key == "content") {
      m.content = message_field<std::string>(value, key, &Json::is_string, "a string");
    } else if (key == "is_complete") {
      m.is_complete = message_field<bool>(value, key, &Json::is_boolean, "a bool");
    } else if (key == "tool_calls") {
      m.tool_calls = value;
    } else if (key == "tool_responses") {
      m.tool_responses = value;
    } else {
      throw std::invalid_argument("unknown chat message key '" + key +
                                  "' (known: role, content, is_complete, tool_calls, "
                                  "tool_responses)");
    }
  }
  if (m.role.empty()) throw std::invalid_argument("chat message without a role: " + message.dump());
  return m;
}

}  // namespace tensorclass::llm
