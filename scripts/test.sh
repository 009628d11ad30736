#!/usr/bin/env bash
# The whole test suite: install deps if missing, build, run every test through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir "${TC_BUILD_DIR:-build}" --output-on-failure -j"$jobs"
