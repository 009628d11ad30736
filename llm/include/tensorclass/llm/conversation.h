#pragma once
// Conversions between chat messages and the TensorDict layout of a TorchRL History: entries
// `role`, `content`, `is_complete`, `tool_calls`, `tool_responses`, one value per message. A
// conversation is a 1-D batch over messages; a batch of conversations is a lazy stack of them
// (batch [B, -1] when their lengths differ), as TorchRL's History.from_chats makes it. Dense 2-D
// batches (loaded or stacked) may hold padding messages of role "<none>".

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

/// A lazy stack (tensordict/lazy_stack.h) of one 1-D History TensorDict per conversation: batch
/// [B, n] when every conversation has n messages, [B, -1] otherwise. No padding.
tensordict::TensorDict batch_tensordict(const std::vector<std::vector<ChatMessage>>& chats);

/// One message from a JSON object {"role", "content", ["is_complete", "tool_calls",
/// "tool_responses"]}; std::invalid_argument naming an unknown key.
ChatMessage message_from_json(const Json& message);

}  // namespace tensorclass::llm
