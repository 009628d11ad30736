#pragma once
// `n` rows of golden::Plain (tests/goldens/plain.yaml): obs 0, 1, ..., 3n-1 as n rows of 3, and an
// all-true mask; the other fields at their defaults.
#include <ATen/ATen.h>

#include "plain.h"

inline golden::Plain plain_rows(int64_t n) {
  golden::Plain p({at::arange(n * 3, at::kFloat).reshape({n, 3})}, {n});
  p.set_mask(at::ones({n}, at::kBool));
  return p;
}
