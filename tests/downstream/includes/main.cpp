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
  // run_downstream.cmake adds a field to common.yaml, then builds once: this line must see it.
  std::cout << "Step fields: " << includes::Step::class_spec().fields.size() << "\n";
  return 0;
}
