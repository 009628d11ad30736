// Annotations each front-end check refuses: a malformed Python path, a control character in a
// doc, a type nested past the bound.
#include "prelude.h"

struct TC_CLASS("python=pkg..A") A {
  TC_FIELD("shape=(B, 3)", "dtype=float32") at::Tensor x;
  TC_FIELD("doc=line\rbreak") std::string s;
  std::vector<std::vector<std::optional<int64_t>>> deep;
};
