#pragma once
#include <cstdint>

namespace tensordict::dist::detail {

/// Python tensordict's int_generator(seed), 0 <= seed < 2^63: the next pseudo_rand tag.
int64_t pseudo_rand_tag(int64_t seed);

}  // namespace tensordict::dist::detail
