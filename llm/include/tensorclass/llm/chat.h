#pragma once
/// \file
/// The former path of tensordict/llm/chat.h (chat templates), kept for one release.

#include "tensordict/llm/chat.h"
