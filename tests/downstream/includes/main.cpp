// episode.h includes common.h, which tensorclass_generate() made without common.yaml being listed.
#include <ATen/ATen.h>

#include <iostream>

#include "episode.h"

int main() {
  includes::Step step({at::ones({3, 2})}, {3});
  includes::Episode episode({step, at::zeros({3}, at::kBool)}, {3});
  if (!episode.step().obs().equal(at::ones({3, 2}))) {
    std::cerr << "includes: MISMATCH in episode.step().obs()\n";
    return 1;
  }
  return 0;
}
