#!/usr/bin/env bash
# The main job end to end: install deps if missing, build what it runs (tcgen and the examples,
# whose tensorclasses are generated from schemas at build time), check that generated/ matches
# schemas/, run the example, then the training loop of tensordict's README in C++
# (examples/train.cpp; fails if the loss does not decrease or the checkpoint does not restore).
# Last, it installs the package (libraries, headers, tcgen, tdtool, the CMake package that
# find_package(TensorClass) reads) into install/ of the checkout, or into $TC_PREFIX.
set -euo pipefail
cd "$(dirname "$0")/.."
TC_TARGETS="tc_package example train" ./scripts/build.sh
build=${TC_BUILD_DIR:-build}
prefix=${TC_PREFIX:-$PWD/install}
"$build"/bin/tcgen schemas/*.yaml -o generated --check
"$build"/examples/example "$build"/example_data/pairwise "$@"
echo
echo "== examples/train: the README training loop in C++"
"$build"/examples/train "$build"/example_data/train

cmake --install "$build" --prefix "$prefix" >/dev/null
echo
echo "== installed into $prefix: tcgen and tdtool in $prefix/bin; for a CMake project, add"
echo "   -DCMAKE_PREFIX_PATH=$prefix and find_package(TensorClass CONFIG REQUIRED)"
