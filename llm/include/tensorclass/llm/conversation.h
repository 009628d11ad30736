#pragma once
/// \file
/// The former path of tensordict/llm/conversation.h (conversations), kept for one release.

#include "tensordict/llm/conversation.h"
