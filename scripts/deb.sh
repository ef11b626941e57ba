#!/usr/bin/env bash
# deb.sh — build the vitals Debian package (debian/) from the committed tree.
#
#   scripts/deb.sh [OUTDIR]    (make deb: OUTDIR build-deb/) writes OUTDIR/vitals_<v>_amd64.deb,
#                              vitals-dbgsym_<v>_amd64.deb, the .changes and the .buildinfo
#   scripts/deb.sh --check     only the checks below, no build
#
# Refused, with exit status 2 and what to do:
#   - a tree with local changes to tracked files (staged or not): a package
#     says which commit it is; commit or stash them.  Untracked files are
#     left out of the package (it is built from `git archive HEAD`), so they
#     do not count;
#   - debian/changelog's version is not VT_VERSION (src/base/version.h), the
#     string `vitals --version` prints: one version, set in version.h, and a
#     changelog entry for it;
#   - debian/control's Build-Depends are not scripts/deps.sh's build_pkgs
#     (less gcc, make and libc6-dev, which build-essential brings and
#     Debian policy says not to name) plus debhelper-compat.
# dpkg-buildpackage writes into the parent of the tree it builds: that is a
# temporary directory here, never the parent of this checkout.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
refuse() { echo "vitals: make deb: $*" >&2; exit 2; }

# the build dependencies, in one list (deps.sh) and the control file
build_pkgs=$(sed -n 's/^build_pkgs="\(.*\)"$/\1/p' scripts/deps.sh)
[ -n "$build_pkgs" ] || refuse "no build_pkgs=\"...\" line in scripts/deps.sh"
# shellcheck disable=SC2086 # one package a word
want=$( { printf '%s\n' $build_pkgs | grep -vxE 'gcc|make|libc6-dev'; echo debhelper-compat; } | sort -u)
have=$(awk '/^Build-Depends:/ { on = 1; sub(/^Build-Depends:/, "") }
            on && /^[A-Za-z-]+:/ && !/^Build-Depends:/ { on = 0 }
            on { print }' debian/control | tr ',' '\n' | sed 's/[[(|].*//; s/[[:space:]]//g' | grep -v '^$' | sort -u)
if [ "$want" != "$have" ]; then
	echo "vitals: make deb: debian/control's Build-Depends differ from scripts/deps.sh's build_pkgs:" >&2
	diff <(echo "$want") <(echo "$have") | sed -n 's/^< /  missing from debian\/control: /p; s/^> /  not in scripts\/deps.sh: /p' >&2
	exit 2
fi

# one version
version=$(sed -n 's/^#define VT_VERSION "\(.*\)"$/\1/p' src/base/version.h)
[ -n "$version" ] || refuse "no VT_VERSION in src/base/version.h"
deb_version=$(dpkg-parsechangelog -S Version)
[ "$deb_version" = "$version" ] ||
	refuse "debian/changelog's version is $deb_version, vitals --version says $version (src/base/version.h): add a changelog entry for $version (dch -v $version)"

# the committed tree
git rev-parse --verify -q HEAD >/dev/null || refuse "$src is not a git checkout with a commit: the package is built from one"
changes=$(git status --porcelain --untracked-files=no)
if [ -n "$changes" ]; then
	echo "vitals: make deb: refused: the tree has local changes, and a package is built from a commit (commit or stash them):" >&2
	echo "$changes" | sed 's/^/  /' >&2
	exit 2
fi
[ "${1:-}" = "--check" ] && { echo "vitals: make deb: checks pass (version $version, $(git rev-parse --short HEAD))"; exit 0; }

out=${1:-build-deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d /tmp/vitals-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/vitals-$version"
git archive HEAD | tar -x -C "$tmp/vitals-$version"
echo "vitals: building the package of $version ($(git rev-parse --short HEAD)) in $tmp" >&2
(cd "$tmp/vitals-$version" && DEB_BUILD_OPTIONS="parallel=${VT_DEB_JOBS:-2} ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1 || {
	tail -40 "$tmp/build.log" >&2
	echo "vitals: make deb: dpkg-buildpackage failed (the end of its log above)" >&2
	exit 1
}
rm -f "$out"/vitals_* "$out"/vitals-dbgsym_*
files=()
for f in "$tmp"/vitals_*.deb "$tmp"/vitals-dbgsym_*.deb "$tmp"/vitals_*.changes "$tmp"/vitals_*.buildinfo; do
	[ -e "$f" ] && files+=("$f")
done
mv "${files[@]}" "$out"/
cp "$tmp/build.log" "$out/build.log"
for f in "${files[@]}"; do echo "$out/${f##*/}"; done
