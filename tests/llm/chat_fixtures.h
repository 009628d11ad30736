#pragma once
// Chats shared by the History tests: two conversations of different lengths.
#include "tensordict/non_tensor.h"

namespace chat_fixtures {

inline const tensordict::Json& two_chats() {
  static const tensordict::Json chats = tensordict::Json::array({
      tensordict::Json::array({tensordict::Json{{"role", "system"}, {"content", "You are a bot."}},
                               tensordict::Json{{"role", "user"}, {"content", "Hello"}}}),
      tensordict::Json::array({tensordict::Json{{"role", "user"}, {"content", "Hi"}}}),
  });
  return chats;
}

}  // namespace chat_fixtures
