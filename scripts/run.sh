#!/usr/bin/env bash
# The main job end to end: install deps if missing, build (which generates the tensorclasses of
# schemas/), check generated/ is fresh, and run the example program.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
if [ -x build/generator/tcgen ]; then
  build/generator/tcgen schemas/*.yaml -o generated --check
fi
build/examples/example "$@"
