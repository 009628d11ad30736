#!/usr/bin/env bash
# The whole test suite: install deps if missing, build, run every test through CTest.
# Arguments go to CMake's configure (scripts/build.sh), e.g. -DTC_TEST_COMPILES=OFF (.ci/run).
# The benchmarks are not built here (TC_BUILD_BENCHMARKS=OFF); .ci/run builds and runs them once.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh -DTC_BUILD_BENCHMARKS=OFF "$@"
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir "${TC_BUILD_DIR:-build}" --output-on-failure -j"$jobs"
