#pragma once
// Fixture of the layer check's self-test (tests/layers/CMakeLists.txt): core reaching up.
#include <vector>

#include "core/entry_impl.h"
#include "lazy/stack.h"
#include "tensordict/tensordict.h"
// #include "ops/util.h"  (a comment: not an include)
