// Extends a class of another header (inner.h) and one of its own.
#include "inner.h"

namespace sim {

struct TC_CLASS() Body : parts::Inner {
  TC_FIELD("shape=(N)") at::Tensor mass;
};

struct TC_CLASS("options=shadow") Probe : Body {
  std::string tag;
};

}  // namespace sim
