// History's TensorDict layout <-> chat messages.
#include "catch2_compat.h"

#include "tensordict/llm/conversation.h"

using namespace tensordict::llm;
using tensordict::TensorDict;

TEST_CASE("a conversation round-trips through its TensorDict layout", "[conversation]") {
  std::vector<ChatMessage> chat = {{"system", "S"}, {"user", "Q"}, {"assistant", "A"}};
  chat[2].is_complete = false;
  TensorDict td = conversation_tensordict(chat);
  CHECK(td.batch_size() == tensordict::BatchSize{3});
  CHECK(td.get_non_tensor("role") == Json::array({"system", "user", "assistant"}));
  CHECK_FALSE(td.contains("tool_calls"));
  CHECK(conversation_tensordict({}).batch_size() == tensordict::BatchSize{0});

  auto back = conversation_messages(td);
  REQUIRE(back.size() == 3);
  CHECK(back[1].content == "Q");
  CHECK_FALSE(back[2].is_complete);
  CHECK(back[0].tool_calls.is_null());
}

TEST_CASE("a batch of conversations is a lazy stack, unpadded", "[conversation]") {
  TensorDict td = batch_tensordict({{{"user", "a"}}, {{"user", "b"}, {"assistant", "c"}}});
  CHECK(td.is_lazy_stack());
  CHECK(td.batch_size() == (tensordict::BatchSize{2, -1}));
  // Each conversation is a lazy stack of 0-D messages, as TorchRL's from_chats makes it.
  CHECK(td[1].is_lazy_stack());
  CHECK(td[1].tensordicts().at(1).batch_size().empty());
  CHECK(td[1].tensordicts().at(1).get_non_tensor("role") == "assistant");
  CHECK(conversation_messages(td[0]).at(0).role == "user");
  CHECK(conversation_messages(td[1]).at(1).content == "c");
  CHECK_THROWS_WITH(conversation_messages(td),
                    "a conversation is a 0-D or 1-D History, got batch_size [2, -1]");
}

TEST_CASE("a single message is a 0-D History, NonTensorData fields apply to every message",
          "[conversation]") {
  TensorDict td;
  td.set("role", "user").set("content", "hi");
  auto one = conversation_messages(td);
  REQUIRE(one.size() == 1);
  CHECK(one[0].role == "user");
  CHECK(one[0].is_complete);

  ChatMessage m =
      message_from_json(Json{{"role", "tool"}, {"content", "x"}, {"tool_responses", {"r"}}});
  CHECK(m.tool_responses == Json::array({"r"}));
  CHECK_THROWS_WITH(message_from_json(Json{{"role", "user"}, {"text", "x"}}),
                    "unknown chat message key 'text' (known: role, content, is_complete, "
                    "tool_calls, tool_responses)");
}
