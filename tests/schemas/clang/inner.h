// Nesting across headers: outer.h names this header's class.
#pragma once
#include "prelude.h"

namespace sim::parts {

/// Where a particle is.
struct TC_CLASS("batch_dims=N") Inner {
  TC_FIELD("shape=(N, 3)") at::Tensor pos;
};

}  // namespace sim::parts
