#!/usr/bin/env bash
# Configures and builds everything into build/ (Release). Extra arguments go to cmake's configure.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"$jobs"
