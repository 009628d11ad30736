#!/usr/bin/env bash
# Runs a command on another Debian release's stack, in a chroot made once and reused:
#   scripts/on-debian.sh sid ./scripts/test.sh        # libtorch 2.14, g++ 16, C++20
#   scripts/on-debian.sh trixie ./scripts/build.sh    # Debian 13: libtorch 2.6, g++ 14
# The chroot lives in $TC_CHROOT_DIR (default /var/lib/tensorclass/chroots/RELEASE), is made with
# debootstrap --variant=minbase, and gets the project's packages from scripts/install-deps.sh. The
# checkout and ../shared are bind-mounted at their own paths, so the command runs in the same folder;
# builds go to build-RELEASE/ (TC_BUILD_DIR), apart from the host's build/. Needs root.
set -euo pipefail
release=${1:?usage: on-debian.sh RELEASE COMMAND [ARGS...] (RELEASE: trixie/13, sid)}
shift
case "$release" in
  13 | trixie) release=trixie ;;
  sid | unstable) release=sid ;;
  *) echo "on-debian.sh: unsupported release '$release' (trixie/13 or sid)" >&2; exit 2 ;;
esac
[ $# -gt 0 ] || set -- bash
checkout=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "$checkout/.." && pwd)/shared
root=${TC_CHROOT_DIR:-/var/lib/tensorclass/chroots}/$release
mirror=${TC_DEBIAN_MIRROR:-http://deb.debian.org/debian}

if [ ! -e "$root/.tensorclass-base" ]; then
  command -v debootstrap >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; }
  rm -rf "$root"; mkdir -p "$root"
  echo "on-debian: debootstrap $release into $root (once)"
  debootstrap --variant=minbase --include=ca-certificates "$release" "$root" "$mirror" >"$root.log" 2>&1 \
    || { tail -20 "$root.log" >&2; exit 1; }
  touch "$root/.tensorclass-base"
fi

mounts=()
bind() { # bind SOURCE TARGET-INSIDE
  mkdir -p "$root$2"
  mountpoint -q "$root$2" || { mount --bind "$1" "$root$2"; mounts+=("$root$2"); }
}
cleanup() { for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done; }
trap cleanup EXIT
bind /proc /proc
bind /dev /dev
bind /dev/pts /dev/pts
bind /dev/shm /dev/shm
bind "$checkout" "$checkout"
[ -d "$shared" ] && bind "$shared" "$shared"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# The archive these machines reach may serve a Release file past its Valid-Until date.
echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99tensorclass"

# The live Python tests run the chroot's own tensordict where scripts/python-peer.sh put one there
# (TC_PYTHON_PEER=/opt/peer-HEAD/tdpy picks another).
peer=${TC_PYTHON_PEER:-}
[ -z "$peer" ] && [ -x "$root/opt/peer-default/tdpy" ] && peer=/opt/peer-default/tdpy
# The chroot starts from a clean environment; the caller's TC_* settings (TC_TARGETS, ...) go in.
tc_vars=()
for name in "${!TC_@}"; do tc_vars+=("$name=${!name}"); done
in_root() { chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/root LANG=C.UTF-8 CI="${CI:-}" "${tc_vars[@]}" \
  TC_BUILD_DIR="${TC_BUILD_DIR:-build-$release}" TC_PYTHON_PEER="$peer" "$@"; }

in_root "$checkout/scripts/install-deps.sh" >/dev/null
cd "$checkout"
in_root bash -c 'cd "$1" && shift && exec "$@"' bash "$checkout" "$@"
