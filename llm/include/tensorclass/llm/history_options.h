#pragma once
/// \file
/// The former path of tensordict/llm/history_options.h (History options), kept for one release.

#include "tensordict/llm/history_options.h"
