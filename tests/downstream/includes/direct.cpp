// Includes common.h alone: no listed schema's header is included here, so only the build's
// OBJECT_DEPENDS on tcgen's changed-stamp recompiles this file when common.yaml changes. The
// size of Step::Args is fixed at compile time (a stale object keeps the old one; an inline
// function would not show it, the linker keeping one definition for both files).
#include <cstddef>

#include "common.h"

std::size_t step_args_size_in_direct() { return sizeof(includes::Step::Args); }
