// A one-rank Gloo group broadcasting a TensorDict to itself, through the installed
// TensorClass::distributed.
#include <ATen/ATen.h>

#include <iostream>

#include "tensordict/distributed.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: downstream_dist <store file>\n";
    return 2;
  }
  auto group = tensordict::dist::Group::file(argv[1], 0, 1);
  tensordict::TensorDict td({{"x", at::ones({2})}}, {2});
  std::cout << tensordict::dist::broadcast(td, group.pg(), 0) << "\n";
  return 0;
}
