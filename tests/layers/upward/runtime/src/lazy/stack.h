#pragma once
// Fixture: lazy may include core; a relative include of ops/ is still ops.
#include "core/entry_impl.h"
#include "../ops/util.h"
