#pragma once
// Fixture: runtime/internal/ is read by other libraries, which see no runtime/src/.
#include "tensordict/tensordict.h"
#include "core/entry.h"
