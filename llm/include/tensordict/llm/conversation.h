#pragma once
/// \file
/// Conversions between chat messages and the TensorDict layout of a TorchRL History: entries
/// `role`, `content`, `is_complete`, `tool_calls`, `tool_responses`. As TorchRL's
/// History.from_chats builds it, a message is a 0-D TensorDict, a conversation a lazy stack of its
/// messages (batch [n]) and a batch of conversations a lazy stack of those (batch [B, n], or
/// [B, -1] when their lengths differ). Dense 1-D and 2-D layouts (one NonTensorStack per field, as
/// History's constructor or stack() make them) are read too; they may hold padding messages of
/// role "<none>".

#include <vector>

#include "tensordict/llm/chat.h"
#include "tensordict/tensordict.h"

namespace tensordict::llm {

/// The role History uses for padding messages; chat templates skip them.
inline constexpr const char* kPaddingRole = "<none>";

/// The messages of a 0-D (one message) or 1-D (one conversation) History TensorDict.
std::vector<ChatMessage> conversation_messages(const tensordict::TensorDict& history);

/// A 0-D History TensorDict holding one message, as TorchRL's History(**message) stores it:
/// strings and bools as NonTensorData, lists (content parts, tool calls, tool responses) as a
/// NonTensorStack of their items (a tensor when they are numbers), null fields left out.
tensordict::TensorDict message_tensordict(const ChatMessage& message);
/// The same from a chat's JSON object (checked as message_from_json checks it), its fields in
/// the object's order, then `is_complete` when it is absent (Python's order of setting them).
tensordict::TensorDict message_tensordict(const Json& message);

/// A 1-D History TensorDict (batch [n]) holding `messages`: a lazy stack of their 0-D
/// TensorDicts (batch [0], role and content empty, when there are none).
tensordict::TensorDict conversation_tensordict(const std::vector<ChatMessage>& messages);

/// A lazy stack (tensordict/lazy_stack.h) of one conversation_tensordict per conversation:
/// batch [B, n] when every conversation has n messages, [B, -1] otherwise. No padding.
tensordict::TensorDict batch_tensordict(const std::vector<std::vector<ChatMessage>>& chats);

/// One message from a JSON object {"role", "content", ["is_complete", "tool_calls",
/// "tool_responses"]} (content may be null, not absent, as TorchRL's History requires it);
/// tensordict::ValueError naming an unknown key, tensordict::TypeError naming a field of the
/// wrong kind or a missing content.
ChatMessage message_from_json(const Json& message);

/// Sets `key` of `m` from a JSON value: role (string), content (string, a list of ContentBase
/// parts, or null: ChatMessage::content_null), is_complete (bool), tool_calls (null or list of
/// objects), tool_responses (null or list). tensordict::TypeError naming the field (and the part)
/// when the value is of another kind.
void set_message_field(ChatMessage& m, const std::string& key, const Json& value);

/// The values of entry `key` of a 0-D or 1-D TensorDict, one per element (`n`): a NonTensorData
/// repeated, a NonTensorStack's items (a 0-D TensorDict's whole stack: the message's list), a
/// tensor's numbers, a nested ContentBase's parts; nulls when absent.
Json message_column(const tensordict::TensorDict& td, const char* key, int64_t n);

/// ContentBase parts: TypeError naming the part and the field unless `parts` is a non-empty list
/// of objects holding TorchRL's fields only, of the right kinds ("type" may be left out, as
/// TorchRL's from_chats allows).
void check_content_parts(const Json& parts);
/// The ContentBase TensorDict (batch [k]) holding `parts` (checked); a field no part sets is
/// absent. For typed parts built by hand: from_chats keeps a chat's part dicts as given (a
/// NonTensorStack), as TorchRL does.
tensordict::TensorDict content_parts_tensordict(const Json& parts);
/// The parts of a ContentBase TensorDict of batch [k], as JSON objects without their null fields.
Json content_parts_json(const tensordict::TensorDict& parts);

}  // namespace tensordict::llm
