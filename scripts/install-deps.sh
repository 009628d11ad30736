#!/usr/bin/env bash
# Installs the Debian packages tensorclass builds with; idempotent: apt-get runs only when a
# package is missing (and `apt-get update` only then).
set -euo pipefail

packages=(
  cmake g++ make ninja-build python3
  libtorch-dev libgloo-dev libyaml-cpp-dev catch2 libclang-dev libkainjow-mustache-dev
  nlohmann-json3-dev libcli11-dev libbenchmark-dev
  doxygen  # the `docs` target (API reference)
  libhiredis-dev redis-server  # TensorClass::store, and the redis-server each store test starts
  libssl-dev openssl  # the store's TLS (rediss://), and the certificates its test makes
)

missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
