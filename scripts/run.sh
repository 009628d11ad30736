#!/usr/bin/env bash
# The main job end to end: install deps if missing, build what it runs (tcgen and the examples,
# whose tensorclasses are generated from schemas at build time), check that generated/ matches
# schemas/, run the example, then the training loop of tensordict's README in C++
# (examples/train.cpp; fails if the loss does not decrease or the checkpoint does not restore).
set -euo pipefail
cd "$(dirname "$0")/.."
TC_TARGETS="tcgen example train" ./scripts/build.sh
build=${TC_BUILD_DIR:-build}
"$build"/bin/tcgen schemas/*.yaml -o generated --check
"$build"/examples/example "$build"/example_data/pairwise "$@"
echo
echo "== examples/train: the README training loop in C++"
"$build"/examples/train "$build"/example_data/train
