#!/usr/bin/env bash
# Puts the real Python tensordict into a chroot of scripts/on-debian.sh, for the live interop tests
# (TC_PYTHON_PEER), with ../shared/python-peer/setup-in-chroot.sh:
#   [TD_MIRROR=<bare git of pytorch/tensordict>] scripts/python-peer.sh sid [REF...]
# Without TD_MIRROR the sources come from ../shared/python-peer/src (refs v0.14.0 and main), so CI
# needs no fetch. Each REF (default: v0.14.0 and main) goes to
# /opt/peer-REF inside the chroot, with a `tdpy` there that runs python3 with it importable.
# /opt/peer-default links the first; scripts/on-debian.sh hands its tdpy to the tests.
set -euo pipefail
release=${1:?usage: [TD_MIRROR=...] python-peer.sh RELEASE [REF...]}
shift
[ $# -gt 0 ] || set -- v0.14.0 main
checkout=$(cd "$(dirname "$0")/.." && pwd)
setup=$checkout/../shared/python-peer/setup-in-chroot.sh
[ -x "$setup" ] || { echo "python-peer.sh: $setup not found" >&2; exit 1; }
"$checkout/scripts/on-debian.sh" "$release" true  # makes the chroot if needed
root=${TC_CHROOT_DIR:-/var/lib/tensorclass/chroots}/$release
first=
for ref in "$@"; do
  name=peer-${ref//\//-}
  TD_REF=$ref "$setup" "$root"
  rm -rf "$root/opt/$name"
  mv "$root/opt/peer" "$root/opt/$name"
  cat >"$root/opt/$name/tdpy" <<TDPY
#!/bin/sh
# Python with tensordict $ref importable (made by scripts/python-peer.sh).
PYTHONPATH=/opt/$name/tensordict:/opt/$name/shim\${PYTHONPATH:+:\$PYTHONPATH} exec python3 "\$@"
TDPY
  chmod +x "$root/opt/$name/tdpy"
  [ -n "$first" ] || first=$name
done
ln -sfn "$first" "$root/opt/peer-default"
# What the project's live tests import beyond the peer's own set-up: redis-py, for Python's
# TensorDictStore (tests/store/test_store_python.cpp).
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::Check-Valid-Until=false \
  install -y -qq --no-install-recommends python3-redis >/dev/null
umount -l "$root/proc" 2>/dev/null || true
