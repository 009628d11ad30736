#!/usr/bin/env bash
# The main job end to end: install deps if missing, build (which generates the example's
# tensorclasses from schemas/), check that generated/ matches schemas/, and run the example.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
build/bin/tcgen schemas/*.yaml -o generated --check
build/examples/example build/example_data/pairwise "$@"
