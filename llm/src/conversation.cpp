#include "tensordict/llm/conversation.h"

#include <ATen/ATen.h>

#include "tensordict/errors.h"
#include "tensordict/lazy_stack.h"

#include <algorithm>

namespace tensordict::llm {
namespace {

using tensordict::NonTensorStack;
using tensordict::TensorDict;
using tensordict::Value;

// A tensor's values as JSON (a list of k numbers is stored as a tensor, as Python's list rule
// stores it).
Json tensor_json(const at::Tensor& t) {
  if (t.dim() == 0) {
    if (t.scalar_type() == at::kBool) return Json(t.item<bool>());
    if (at::isIntegralType(t.scalar_type(), false)) return Json(t.item<int64_t>());
    return Json(t.item<double>());
  }
  Json out = Json::array();
  for (int64_t i = 0; i < t.size(0); ++i) out.push_back(tensor_json(t[i]));
  return out;
}

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
    if (value_->is_non_tensor_stack()) {
      // In a 0-D message a stack is the message's own list (its parts, its tool calls); in a
      // conversation, its first dim runs over the messages.
      const NonTensorStack& stack = value_->non_tensor_stack();
      if (scalar_) return stack.tolist();
      return stack.shape().size() == 1 ? stack.items().at(static_cast<size_t>(i))
                                       : stack.row(i).tolist();
    }
    if (value_->is_tensor()) {
      const at::Tensor& all = value_->tensor();
      return tensor_json(scalar_ || all.dim() == 0 ? all : all[i]);
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

// The messages of a dense 0-D or 1-D History; errors name the message, counting from `first`.
std::vector<ChatMessage> dense_messages(const TensorDict& history, int64_t first) {
  const int64_t n = history.ndim() == 0 ? 1 : history.batch_size()[0];
  const Column role(history, "role", Json(kPaddingRole)), content(history, "content", nullptr),
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

// A list field of a message, stored as Python's tensorclass stores a list under
// set_list_to_stack(True): numbers (or bools) as a tensor of k values, an empty list as an
// empty float tensor, anything else as a NonTensorStack of the k items.
Value list_value(const Json& list) {
  if (list.empty()) return Value(at::empty({0}, at::kFloat));
  const auto all = [&](bool (Json::*is_kind)() const noexcept) {
    return std::all_of(list.begin(), list.end(), [&](const Json& x) { return (x.*is_kind)(); });
  };
  if (all(&Json::is_boolean)) {
    std::vector<uint8_t> flags;
    for (const auto& x : list) flags.push_back(x.get<bool>() ? 1 : 0);
    return Value(at::tensor(flags, at::kByte).to(at::kBool));
  }
  if (all(&Json::is_number_integer)) return Value(at::tensor(list.get<std::vector<int64_t>>()));
  if (all(&Json::is_number)) {
    return Value(at::tensor(list.get<std::vector<double>>()).to(at::kFloat));
  }
  return Value(NonTensorStack({static_cast<int64_t>(list.size())}, list.get<std::vector<Json>>()));
}

// Sets one field of a 0-D message as TorchRL's History(**message) stores it: None stays out of
// the TensorDict (Python keeps it beside, in the class's non-tensor dict), a list follows the
// list rule, anything else is NonTensorData.
void set_message_entry(TensorDict& td, const std::string& key, const Json& value) {
  if (value.is_null()) return;
  if (value.is_array()) {
    td.set(key, list_value(value));
  } else {
    td.set_non_tensor(key, value);
  }
}

// The fields of `m` as JSON, in History's field order.
std::vector<std::pair<std::string, Json>> message_fields(const ChatMessage& m) {
  return {{"role", m.role},
          {"content", m.content_null              ? Json(nullptr)
                      : m.content_parts.is_null() ? Json(m.content)
                                                  : m.content_parts},
          {"is_complete", m.is_complete},
          {"tool_calls", m.tool_calls},
          {"tool_responses", m.tool_responses}};
}

// A conversation without messages: batch [0] (TorchRL cannot build one; a C++ History may hold
// it, e.g. after from_chats of a batch holding an empty chat).
TensorDict empty_conversation() {
  TensorDict td({}, {0});
  td.set("role", NonTensorStack({0}, {}));
  td.set("content", NonTensorStack({0}, {}));
  return td;
}

}  // namespace

TensorDict message_tensordict(const ChatMessage& m) {
  TensorDict td({}, {});
  for (const auto& [key, value] : message_fields(m)) set_message_entry(td, key, value);
  return td;
}

TensorDict message_tensordict(const Json& message) {
  static_cast<void>(message_from_json(message));  // checked: errors name the field
  // The keys in the chat's order, then the defaults it left out: Python's History(**message)
  // sets them in that order, which its meta.json files keep.
  TensorDict td({}, {});
  for (const auto& [key, value] : message.items()) set_message_entry(td, key, value);
  if (!message.contains("is_complete")) td.set_non_tensor("is_complete", true);
  return td;
}

TensorDict conversation_tensordict(const std::vector<ChatMessage>& messages) {
  if (messages.empty()) return empty_conversation();
  // TorchRL's layout: a lazy stack of 0-D messages (lazy_stack of one History per message), so
  // messages may hold contents of different kinds and lists of different lengths.
  std::vector<TensorDict> rows;
  rows.reserve(messages.size());
  for (const auto& m : messages) rows.push_back(message_tensordict(m));
  return tensordict::lazy_stack(rows, 0);
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
    m.content_null = value.is_null();  // None: TorchRL leaves it out of the message
    m.content_parts = nullptr;
    m.content.clear();
    if (m.content_null) return;
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
    throw ::tensordict::ValueError("unknown chat message key '" + key +
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
  if (m.role.empty())
    throw ::tensordict::ValueError("chat message without a role: " + message.dump());
  // History's content has no default (a null one is given as null).
  if (!message.contains("content")) {
    throw tensordict::TypeError("chat message without a content: " + message.dump());
  }
  return m;
}

Json message_column(const TensorDict& td, const char* key, int64_t n) {
  const Column column(td, key, nullptr);
  Json out = Json::array();
  for (int64_t i = 0; i < n; ++i) out.push_back(column.element(i));
  return out;
}

}  // namespace tensordict::llm
