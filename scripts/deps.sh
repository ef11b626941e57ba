#!/usr/bin/env bash
# deps.sh — install the Debian packages vitals needs, only those missing.
#
#   scripts/deps.sh          build dependencies (compiler, libelf, jansson)
#   scripts/deps.sh --test   also what the tests use (python3, redis-server, gdb as a witness,
#                            gcc-multilib for the 32-bit and x32 programs vitals must refuse)
#
# Runs apt-get only when something is missing; needs root (or sudo) then.
set -eu
build_pkgs="gcc make pkg-config libc6-dev linux-libc-dev libelf-dev libjansson-dev libexpat1-dev libsqlite3-dev"
test_pkgs="python3 python3-psutil redis-server procps util-linux gdb man-db sysstat gcc-multilib"
pkgs=$build_pkgs
[ "${1:-}" = "--test" ] && pkgs="$pkgs $test_pkgs"

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "vitals: installing Debian packages:$missing" >&2
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "vitals: need root to install:$missing" >&2; exit 1; }
	SUDO=sudo
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
# the redis-server package starts a service on install; we only need the binary
if [ -d /usr/sbin ] && [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
	$SUDO chmod +x /usr/sbin/policy-rc.d
	trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
