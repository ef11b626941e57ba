#!/usr/bin/env bash
# deps.sh — install the Debian packages vitals needs, only those missing.
#
#   scripts/deps.sh          build dependencies (compiler, libelf/libdw, jansson, protobuf-c,
#                            libmicrohttpd, libcurl, libyaml, libcrypt for vitals serve)
#   scripts/deps.sh --test   also what the tests use (python3, redis-server, gdb as a witness,
#                            gcc-multilib for the 32-bit and x32 programs vitals must refuse,
#                            clang with libFuzzer for the bounded fuzz runs, perf as the
#                            profiler's witness, chromium to open its flame graph, prometheus
#                            and promtool for vitals serve and analyze --prometheus, go tool
#                            pprof to read the pprof files, lintian to check the Debian package,
#                            strace for bench/snap to record the reads of its floor)
#   scripts/deps.sh --deb    build dependencies and what make deb uses (debhelper, dpkg-dev, git);
#                            --test includes them too
#
# debian/control's Build-Depends are build_pkgs (less gcc, make and libc6-dev, which
# build-essential brings) and debhelper-compat: scripts/deb.sh refuses to build when they differ.
#
# Runs apt-get only when something is missing; needs root (or sudo) then.
set -eu
build_pkgs="gcc make pkg-config libc6-dev linux-libc-dev libelf-dev libdw-dev zlib1g-dev libjansson-dev libexpat1-dev libsqlite3-dev libprotobuf-c-dev protobuf-c-compiler libmicrohttpd-dev libcurl4-openssl-dev libyaml-dev libcrypt-dev libiberty-dev"
test_pkgs="python3 python3-psutil strace redis-server libtcmalloc-minimal4 libjemalloc-dev procps util-linux gdb man-db sysstat gcc-multilib clang linux-perf chromium prometheus curl openssl golang-go g++ rustc xz-utils lintian"
deb_pkgs="debhelper dpkg-dev git"
pkgs=$build_pkgs
test=
[ "${1:-}" = "--deb" ] && pkgs="$pkgs $deb_pkgs"
[ "${1:-}" = "--test" ] && { pkgs="$pkgs $deb_pkgs $test_pkgs"; test=1; }

SUDO=
updated=
cleanup() { [ -n "${policy:-}" ] && $SUDO rm -f /usr/sbin/policy-rc.d; true; }
trap cleanup EXIT

install_missing() {
	local missing="" p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0

	echo "vitals: installing Debian packages:$missing" >&2
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || { echo "vitals: need root to install:$missing" >&2; exit 1; }
		SUDO=sudo
	fi
	export DEBIAN_FRONTEND=noninteractive
	# the redis-server and prometheus packages start a service on install; we only need the binaries
	if [ -d /usr/sbin ] && [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
		$SUDO chmod +x /usr/sbin/policy-rc.d
		policy=1
	fi
	[ -n "$updated" ] || { $SUDO apt-get update -qq; updated=1; }
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

install_missing $pkgs
# clang only recommends libFuzzer's runtime, which --no-install-recommends skips:
# add the one of the installed clang's version when it cannot link a fuzzer yet.
if [ -n "$test" ] && command -v clang >/dev/null && ! "$(dirname "$0")/have-libfuzzer.sh" 2>/dev/null; then
	install_missing "libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
fi
