#!/usr/bin/env bash
# Configures and builds into build/ (Release). Extra arguments go to cmake's configure.
# TC_BUILD_DIR names another build folder (scripts/on-debian.sh uses build-RELEASE); TC_TARGETS, a
# space-separated list, builds those targets only (scripts/run.sh builds what the main job runs).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
dir=${TC_BUILD_DIR:-build}
# Ninja for a new build folder: it keeps both cores busy across targets and rebuilds less.
export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@"
read -r -a targets <<<"${TC_TARGETS:-all}"
cmake --build "$dir" -j"$jobs" --target "${targets[@]}"
