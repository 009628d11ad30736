#pragma once
// Fixture: lazy may include core, and ops (one layer with it), even by a relative path; a relative
// include of memmap/ is still memmap.
#include "core/entry_impl.h"
#include "../ops/util.h"
#include "../memmap/files.h"
