// episode.h includes common.h, which tensorclass_generate() made without common.yaml being listed.
#include <ATen/ATen.h>

#include <iostream>

#include "episode.h"

std::size_t step_args_size_in_direct();  // direct.cpp

int main() {
  includes::Step step({at::ones({3, 2})}, {3});
  includes::Episode episode({step, at::zeros({3}, at::kBool)}, {3});
  if (!episode.step().obs().equal(at::ones({3, 2}))) {
    std::cerr << "includes: MISMATCH in episode.step().obs()\n";
    return 1;
  }
  // run_downstream.cmake adds a field to common.yaml, then builds once: this line must see it.
  std::cout << "Step fields: " << includes::Step::class_spec().fields.size() << " (direct.cpp: "
            << (step_args_size_in_direct() == sizeof(includes::Step::Args) ? "the same" : "another")
            << " Step::Args)\n";
  return 0;
}
