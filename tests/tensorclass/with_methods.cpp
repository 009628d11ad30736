// Hand-written members of golden::WithMethods (declared by tests/goldens/methods.yaml).
#include <ATen/ATen.h>

#include "methods.h"

namespace golden {

int64_t WithMethods::twice_numel() const { return 2 * x().numel(); }

WithMethods WithMethods::ones(int64_t n) { return WithMethods({at::ones({n})}, {n}); }

}  // namespace golden
