// Names a class of another header (inner.h), in another namespace.
#include "inner.h"

namespace sim {

struct TC_CLASS("batch_dims=N") Outer {
  parts::Inner inner;
  std::optional<sim::parts::Inner> spare;
};

}  // namespace sim
