#!/usr/bin/env bash
# t0012 — the Debian package (debian/, make deb, scripts/deb.sh):
#   - make deb refuses, before building anything, a tree with local changes,
#     a debian/changelog whose version is not VT_VERSION (what vitals
#     --version prints), and Build-Depends that are not scripts/deps.sh's
#     build_pkgs (less build-essential's) plus debhelper-compat;
#   - from a clean tree it builds vitals and vitals-dbgsym, which lintian
#     passes without an error;
#   - the .deb holds the binary, both agents, the demo target, the man page,
#     bash completion, contrib/ as examples; its control fields name vitals
#     0.1.0-as-version.h, amd64, the libraries vitals links; the dbgsym holds
#     the binary's debug file (by build-id: the build kept -g, nothing
#     stripped it before dh_strip);
#   - unpacked (dpkg -x, not installed: other tests share this host), its
#     vitals prints the package's version, finds its agent and runs
#     `vitals demo` from its own lib/vitals (bin/../lib/vitals).
# It works on a copy of this tree made one commit (tracked files as they are
# now, and untracked ones not ignored), so the checkout is never touched.
# lane: solo — it compiles vitals once more (about 45 s on two idle cores, more on a busy host): no CPU judge beside it
. "$(dirname "$0")/lib.sh"
case "$B" in *-san*) skip "the package is checked once, from the plain build's test run" ;; esac
for tool in git dpkg-buildpackage dh lintian dpkg-deb readelf; do
	command -v "$tool" >/dev/null || skip "no $tool (scripts/deps.sh --test installs debhelper, dpkg-dev, lintian, git)"
done
SRC=$(cd "$(dirname "$0")/../.." && pwd)
git -C "$SRC" rev-parse --verify -q HEAD >/dev/null || skip "$SRC is not a git checkout: make deb builds from a commit"
S=$WORK/src
mkdir "$S"
(cd "$SRC" && git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf -) | tar -x -C "$S" ||
	fail "copy of the tree"
git_s() { git -C "$S" -c user.name=t0012 -c user.email=t0012@localhost "$@"; }
{ git_s init -q && git_s add -A && git_s commit -qm "t0012: the tree under test"; } || fail "git commit of the copy"
version=$(sed -n 's/^#define VT_VERSION "\(.*\)"$/\1/p' "$S/src/base/version.h")
[ -n "$version" ] || fail "no VT_VERSION in src/base/version.h"
echo "# version.h: $version"

# refusals: each before any build (exit 2, a message saying what to do), the tree left as it was
refused() {  # $1 description, $2 pattern the message must hold
	local rc=0
	(cd "$S" && scripts/deb.sh "$WORK/refused") >"$WORK/refused.out" 2>&1 || rc=$?
	sed 's/^/#   /' "$WORK/refused.out"
	check "$1: refused (exit 2)" test "$rc" -eq 2
	check "$1: the message says so" grep -q -- "$2" "$WORK/refused.out"
	check "$1: nothing built" test ! -e "$WORK/refused"
	git_s reset -q --hard
}
echo "// a local change" >>"$S/src/base/version.h"
refused "a tracked file changed, not committed" "local changes.*commit or stash"
grep -q "src/base/version.h" "$WORK/refused.out" || fail "the refusal names the changed file"
echo "x" >"$S/README.md" && git_s add README.md
refused "a change staged, not committed" "local changes"
sed -i "1s/($version)/(0.0.9)/" "$S/debian/changelog" && git_s commit -qam "t0012: changelog behind"
refused "debian/changelog at 0.0.9, version.h at $version" "changelog's version is 0.0.9, vitals --version says $version"
git_s reset -q --hard HEAD~1
sed -i 's/^\( *\)libyaml-dev,$/\1libyaml-dev-typo,/' "$S/debian/control" && git_s commit -qam "t0012: control drifts"
refused "Build-Depends drifted from deps.sh (libyaml-dev)" "missing from debian/control: libyaml-dev"
grep -q "not in scripts/deps.sh: libyaml-dev-typo" "$WORK/refused.out" || fail "the refusal names the extra package"
git_s reset -q --hard HEAD~1
sed -i 's/^build_pkgs="\(.*\)"$/build_pkgs="\1 libcap-dev"/' "$S/scripts/deps.sh" && git_s commit -qam "t0012: deps.sh gains one"
refused "deps.sh builds with a package debian/control lacks" "missing from debian/control: libcap-dev"
git_s reset -q --hard HEAD~1
(cd "$S" && scripts/deb.sh --check) >"$WORK/check.out" 2>&1 || { cat "$WORK/check.out"; fail "the clean copy passes the checks"; }

# the build: make deb, as a user runs it
start=$(date +%s)
make -C "$S" --no-print-directory deb DEB_OUT="$WORK/out" >"$WORK/deb.out" 2>&1 || { tail -40 "$WORK/deb.out"; fail "make deb"; }
echo "# make deb took $(( $(date +%s) - start )) s"
deb=$WORK/out/vitals_${version}_amd64.deb
dbg=$WORK/out/vitals-dbgsym_${version}_amd64.deb
changes=$WORK/out/vitals_${version}_amd64.changes
for f in "$deb" "$dbg" "$changes"; do check "make deb wrote $(basename "$f")" test -s "$f"; done
echo "# sizes: $(stat -c '%n %s' "$deb" "$dbg" | sed "s#$WORK/out/##" | tr '\n' ' ')"
check "make deb wrote nothing into the parent of the tree" test -z "$(find "$WORK" -maxdepth 1 \( -name '*.deb' -o -name '*.changes' -o -name '*.buildinfo' \))"
check "make deb left the tree clean" test -z "$(git_s status --porcelain --untracked-files=all)"

# lintian: no error on the .changes (which names both .debs)
lrc=0
lintian --fail-on error "$changes" >"$WORK/lintian.out" 2>&1 || lrc=$?
grep -v 'root privileges' "$WORK/lintian.out" | sed 's/^/# lintian: /'
check "lintian passes the .changes and both .debs (exit 0)" test "$lrc" -eq 0
check "lintian reports no error" test -z "$(grep '^E:' "$WORK/lintian.out")"

# the contents
dpkg-deb -c "$deb" | awk '{ print $6 }' >"$WORK/contents"
for p in ./usr/bin/vitals ./usr/lib/vitals/libvitals-agent.so ./usr/lib/vitals/libvitals-agent-allocs.so \
	./usr/lib/vitals/targets/arena_churn ./usr/share/man/man1/vitals.1.gz \
	./usr/share/bash-completion/completions/vitals ./usr/share/doc/vitals/copyright; do
	check "the .deb holds $p" grep -qxF "$p" "$WORK/contents"
done
# every file, those of contrib/grafana/ too (dpkg-deb lists a directory with a trailing /)
while IFS= read -r f; do
	check "the .deb holds contrib/$f as an example" \
		grep -qxF "./usr/share/doc/vitals/examples/$f" "$WORK/contents"
done < <(cd "$S/contrib" && find . -type f | sed 's|^\./||' | sort)

# the control fields
field() { dpkg-deb -f "$1" "$2"; }
check "Package: vitals" test "$(field "$deb" Package)" = vitals
check "Version: $version (VT_VERSION)" test "$(field "$deb" Version)" = "$version"
check "Architecture: amd64" test "$(field "$deb" Architecture)" = amd64
deps=$(field "$deb" Depends)
echo "# Depends: $deps"
for lib in libc6; do
	check "Depends names $lib (from the binary's links)" grep -qE "(^|, )$lib( |,|$)" <<<"$deps"
done
# opened by the commands that use them (dlopen): dh_shlibdeps cannot see them, debian/control names them
for lib in libelf1 libdw1 libsqlite3-0 libexpat1 zlib1g libjansson4 libprotobuf-c1 libyaml-0-2 libcrypt1; do
	check "Depends names $lib (opened when a command needs it)" grep -qE "(^|, )$lib( |,|$)" <<<"$deps"
done
check "Recommends libmicrohttpd12 and libcurl4 (opened by vitals serve and --prometheus)" \
	test "$(field "$deb" Recommends)" = "libmicrohttpd12, libcurl4"
check "vitals-dbgsym is the debug package of vitals $version" \
	test "$(field "$dbg" Package) $(field "$dbg" Version)" = "vitals-dbgsym $version"

# unpacked, not installed
R=$WORK/root
{ dpkg-deb -x "$deb" "$R" && dpkg-deb -x "$dbg" "$R"; } || fail "dpkg-deb -x"
check "the packaged vitals is stripped" test -z "$(readelf -S "$R/usr/bin/vitals" | grep -F .debug_info)"
id=$(readelf -n "$R/usr/bin/vitals" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
check "vitals has a build-id" test -n "$id"
dfile=$R/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
check "vitals-dbgsym holds its debug file (.build-id/${id:0:2}/${id:2}.debug) with DWARF" \
	sh -c "readelf -S '$dfile' 2>/dev/null | grep -qF .debug_info"
got=$("$R/usr/bin/vitals" --version)
echo "# $got"
check "the packaged vitals --version prints the package's version" test "$got" = "vitals $version"
if [ -x "$B/vitals" ]; then
	check "and the build's vitals --version agrees" test "$("$B/vitals" --version)" = "$got"
fi
"$R/usr/bin/vitals" caps $$ >"$WORK/caps.out" 2>&1
check "the packaged vitals finds its agent under its own lib/vitals" \
	grep -qF "LD_PRELOAD=$R/usr/lib/vitals/libvitals-agent.so" "$WORK/caps.out"
drc=0
"$R/usr/bin/vitals" demo --seconds 10s --threads 2 >"$WORK/demo.out" 2>&1 || { drc=$?; tail -20 "$WORK/demo.out"; }
check "vitals demo runs from the unpacked files (exit 0)" test "$drc" -eq 0
check "vitals demo ran the target under its own lib/vitals" \
	grep -qF "$R/usr/bin/../lib/vitals/targets/arena_churn" "$WORK/demo.out"
check "vitals demo compared both arms" grep -q "^ON YOUR OWN SERVICE" "$WORK/demo.out"
