#pragma once
// Conversions between chat messages and the TensorDict layout of a TorchRL History: entries
// `role`, `content`, `is_complete`, `tool_calls`, `tool_responses`, one value per message. A
// conversation is a 1-D batch over messages; a batch of conversations is 2-D, shorter
// conversations padded with messages of role "<none>" (History's padding role).

#include <vector>

#include "tensorclass/llm/chat.h"
#include "tensordict/tensordict.h"

namespace tensorclass::llm {

/// The role History uses for padding messages; chat templates skip them.
inline constexpr const char* kPaddingRole = "<none>";

/// The messages of a 0-D (one message) or 1-D (one conversation) History TensorDict.
std::vector<ChatMessage> conversation_messages(const tensordict::TensorDict& history);

/// A 1-D History TensorDict (batch [n]) holding `messages`.
tensordict::TensorDict conversation_tensordict(const std::vector<ChatMessage>& messages);

/// A 2-D History TensorDict (batch [B, max_len]); shorter conversations are padded.
tensordict::TensorDict batch_tensordict(const std::vector<std::vector<ChatMessage>>& chats);

/// One message from a JSON object {"role", "content", ["is_complete", "tool_calls",
/// "tool_responses"]}; std::invalid_argument naming an unknown key.
ChatMessage message_from_json(const Json& message);

}  // namespace tensorclass::llm
