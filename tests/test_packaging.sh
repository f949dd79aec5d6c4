#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packaging (debian/) builds and is lintian-clean. From a copy of
# the tree as git sees it (tracked files as they are in the working tree, and
# new files that .gitignore does not exclude), it makes the source package
# (dpkg-source) and the binary packages (`dpkg-buildpackage -us -uc -b`),
# then checks:
#   - the five packages libdchX.Y, libdch-dev, libdch-etcdX.Y,
#     libdch-etcd-dev and dchctl (X.Y: the SONAME version, now 0.3) are built, and each holds what it should
#     (dpkg-deb -c): the shared libraries with the SONAMEs their package
#     names promise (readelf -d), the headers, static libraries, pkg-config
#     and CMake files in the -dev packages, /usr/bin/dchctl (and no
#     /usr/bin/dch, which is devscripts' debchange), the manual pages and
#     the design documents (NOTES.md and docs/ in libdch-dev);
#   - their control fields (dpkg-deb -I): Multi-Arch, and dependencies on
#     the libraries found by dpkg-shlibdeps;
#   - the symbols files debian/*.symbols list exactly what the libraries
#     export (dpkg-gensymbols reports no new or missing symbol);
#   - lintian finds no error and no warning in the source and binary
#     packages;
#   - the packages work: unpacked with dpkg-deb -x into a folder (nothing is
#     installed on this machine), a consumer builds against them through
#     find_package(dch COMPONENTS etcd), through pkg-config (shared) and
#     against the static libraries, and runs; so does dchctl.
# Exits 77 (ctest: skipped) when dpkg-buildpackage, dpkg-deb or lintian is
# missing. The build tree, packages and logs stay in WORK_DIR.
#
# Usage: test_packaging.sh [WORK_DIR]
# Environment (set by ctest): DCH_SOURCE_DIR (default: this script's tree).
set -euo pipefail

src=${DCH_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
work=${1:-${TMPDIR:-/tmp}/dch-test-packaging}
cc=cc

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "progress: packaging: $*"; }

for tool in dpkg-buildpackage dpkg-source dpkg-deb dpkg-architecture dpkg-parsechangelog lintian; do
    if ! command -v "$tool" >/dev/null; then
        echo "SKIP: $tool not found (Debian's dpkg-dev and lintian are needed)"
        exit 77
    fi
done
[ -f "$src/debian/control" ] || fail "no debian/control in $src"

# The package version follows the project's: a release that changes the
# version needs a debian/changelog entry, and one that changes the SONAME
# (MAJOR.MINOR while MAJOR is 0, MAJOR after) new library package names.
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -SVersion)
upstream=${version%-*}
project_version=$(sed -n '/^project(dch/,/)/ s/^.*VERSION \([0-9][0-9.]*\).*$/\1/p' \
    "$src/CMakeLists.txt")
[ "$upstream" = "$project_version" ] ||
    fail "debian/changelog is at $upstream, CMakeLists.txt at $project_version: add a changelog entry"
if [ "${upstream%%.*}" = 0 ]; then
    soversion=$(cut -d. -f1,2 <<<"$upstream")
else
    soversion=${upstream%%.*}
fi
so=${soversion//./\\.} up=${upstream//./\\.}
lib=libdch$soversion etcdlib=libdch-etcd$soversion
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=usr/lib/$triplet
packages=("libdch$soversion" libdch-dev "libdch-etcd$soversion" libdch-etcd-dev dchctl)

rm -rf "$work"
tree="$work/libdch-$upstream"
mkdir -p "$tree"
start=$SECONDS

# The tree as git sees it, with the working tree's contents (uncommitted
# edits and new files included); without git (a source tarball), every
# file but the build folders.
step "copying the source tree into $tree"
list_files() {
    if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git -C "$src" ls-files -z --cached --others --exclude-standard
    else
        (cd "$src" && find . \( -path './build*' -o -path './.git' \) -prune -o \
            \( -type f -o -type l \) -printf '%P\0')
    fi
}
# Files deleted in the working tree but still in git's index are left out.
list_files | (cd "$src" && while IFS= read -r -d '' f; do
    if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
done) | tar -C "$src" --null -T - -cf - | tar -C "$tree" -xf -
[ -x "$tree/debian/rules" ] || fail "debian/rules missing or not executable in the copy"

# The source package too (3.0 (quilt): an orig tarball without debian/),
# so that lintian checks debian/ itself: copyright, control, rules.
step "building the source package"
tar -C "$work" --exclude="libdch-$upstream/debian" -cJf "$work/libdch_$upstream.orig.tar.xz" \
    "libdch-$upstream"
(cd "$work" && dpkg-source --build "libdch-$upstream") >"$work/source.log" 2>&1 ||
    { cat "$work/source.log"; fail "dpkg-source --build"; }

step "dpkg-buildpackage -us -uc -b (log: $work/build.log)"
# With Debian's default compiler and flags, whatever the caller's CC is.
(cd "$tree" && env -u CC -u CFLAGS -u CPPFLAGS -u LDFLAGS dpkg-buildpackage -us -uc -b -J2) \
    >"$work/build.log" 2>&1 || {
    grep -E '(error|Error)[: ]|\*\*\*' "$work/build.log" | head -n 40 || true
    echo "---- the end of $work/build.log"
    tail -n 30 "$work/build.log"
    fail "dpkg-buildpackage failed; full log: $work/build.log"
}
echo "built in $((SECONDS - start)) s"

changes="$work/libdch_${version}_$arch.changes"
[ -f "$changes" ] || fail "no $changes"
for p in "${packages[@]}"; do
    [ -f "$work/${p}_${version}_$arch.deb" ] || fail "package $p was not built"
done

# A symbols file that lags the library would give later packages too weak a
# dependency: any symbol dpkg-gensymbols finds new or missing fails here.
symbols_report=$(awk '/^dpkg-gensymbols: (warning|error)/ { on = 1 } /^   dh_/ { on = 0 } on' \
    "$work/build.log")
if [ -n "$symbols_report" ]; then
    echo "$symbols_report"
    fail "debian/*.symbols differ from what the libraries export (diff above: + is a symbol the
library exports that the file lacks, - one the file lists that the library lost). Add new symbols
with the upstream version that first exports them; the file as the build sees it:
  cd $tree && dpkg-gensymbols -q -p$lib -Pdebian/$lib -v$upstream -O"
fi

# Contents of each package, as dpkg-deb -c lists them (./path, symlinks as
# "./link -> target").
contents() { dpkg-deb -c "$work/${1}_${version}_$arch.deb" | awk '{ $1=$2=$3=$4=$5=""; sub(/^ +/, ""); print }'; }
has() {
    local pkg=$1 path=$2
    contents "$pkg" | grep -Eq "^\./$path( -> .*)?\$" || fail "$pkg lacks /$path"
}
lacks() {
    local pkg=$1 path=$2
    ! contents "$pkg" | grep -Eq "^\./$path( -> .*)?\$" || fail "$pkg holds /$path"
}

step "checking the packages' contents"
for p in "${packages[@]}"; do
    echo "---- $p"
    contents "$p" | grep -v '/$'
done
has "$lib" "$libdir/libdch\.so\.$so"
has "$lib" "$libdir/libdch\.so\.$up"
lacks "$lib" "$libdir/libdch\.so"
has libdch-dev "usr/include/dch/dch\.h"
has libdch-dev "usr/include/dch/version\.h"
lacks libdch-dev "usr/include/dch/etcd\.h"
has libdch-dev "$libdir/libdch\.so"
has libdch-dev "$libdir/libdch\.a"
has libdch-dev "$libdir/pkgconfig/dch\.pc"
has libdch-dev "$libdir/cmake/dch/dchConfig\.cmake"
has libdch-dev "$libdir/cmake/dch/dchConfigVersion\.cmake"
has libdch-dev "$libdir/cmake/dch/dchTargets\.cmake"
has libdch-dev "usr/share/man/man3/libdch\.3\.gz"
# The documents the headers cite, in the package's own doc folder (dh_compress
# may gzip them), and not in the upstream share/doc/libdch.
has libdch-dev "usr/share/doc/libdch-dev/NOTES\.md(\.gz)?"
has libdch-dev "usr/share/doc/libdch-dev/docs/map-format\.md(\.gz)?"
lacks libdch-dev "usr/share/doc/libdch/NOTES\.md(\.gz)?"
has "$etcdlib" "$libdir/libdch-etcd\.so\.$so"
has "$etcdlib" "$libdir/libdch-etcd\.so\.$up"
has libdch-etcd-dev "usr/include/dch/etcd\.h"
has libdch-etcd-dev "$libdir/libdch-etcd\.so"
has libdch-etcd-dev "$libdir/libdch-etcd\.a"
has libdch-etcd-dev "$libdir/pkgconfig/dch-etcd\.pc"
has libdch-etcd-dev "$libdir/cmake/dch/dchEtcdTargets\.cmake"
has dchctl "usr/bin/dchctl"
lacks dchctl "usr/bin/dch"
has dchctl "usr/share/man/man1/dchctl\.1\.gz"

# Every package unpacked into one root, as if installed there.
root="$work/root"
for p in "${packages[@]}"; do
    dpkg-deb -x "$work/${p}_${version}_$arch.deb" "$root"
done

step "checking the SONAMEs and the exported symbols"
soname_is() {
    local file=$root/$libdir/$1 want=$2 got
    got=$(readelf -d "$file" | sed -nE 's/.*\(SONAME\).*\[(.*)\]/\1/p')
    [ "$got" = "$want" ] || fail "$1 has SONAME '$got', not $want"
    echo "$1: SONAME $got"
}
soname_is "libdch.so.$upstream" "libdch.so.$soversion"
soname_is "libdch-etcd.so.$upstream" "libdch-etcd.so.$soversion"
for f in "libdch.so.$upstream" "libdch-etcd.so.$upstream"; do
    bad=$(nm -D --defined-only "$root/$libdir/$f" | awk '{ print $NF }' | grep -v '^dch_' || true)
    [ -z "$bad" ] || fail "$f exports names outside dch_: $bad"
done

step "checking the control fields"
field() { dpkg-deb -f "$work/${1}_${version}_$arch.deb" "$2"; }
for p in "$lib" libdch-dev "$etcdlib" libdch-etcd-dev; do
    [ "$(field "$p" Multi-Arch)" = same ] || fail "$p is not Multi-Arch: same"
done
[ "$(field dchctl Multi-Arch)" = foreign ] || fail "dchctl is not Multi-Arch: foreign"
dpkg-deb -I "$work/libdch${soversion}_${version}_$arch.deb" symbols >/dev/null ||
    fail "$lib has no symbols file"
dpkg-deb -I "$work/libdch-etcd${soversion}_${version}_$arch.deb" symbols >/dev/null ||
    fail "$etcdlib has no symbols file"
etcd_deps=$(field "$etcdlib" Depends)
echo "$etcdlib Depends: $etcd_deps"
for dep in 'libcurl[0-9]' 'libjson-c[0-9]' "libdch$so \\(>= "; do
    grep -Eq "(^|, )$dep" <<<"$etcd_deps" || fail "$etcdlib does not depend on $dep"
done
tool_deps=$(field dchctl Depends)
echo "dchctl Depends: $tool_deps"
# dchctl may link libdch statically; when it links the shared one, the
# package must say so (dpkg-shlibdeps through the symbols files).
for name in libdch libdch-etcd; do
    if readelf -d "$root/usr/bin/dchctl" | grep "NEEDED.*\[$name\.so\.$so\]" >/dev/null; then
        grep -Eq "(^|, )$name$so \\(>= " <<<"$tool_deps" ||
            fail "dchctl links $name.so.$soversion but does not depend on $name$soversion"
    fi
done

step "lintian (errors and warnings fail)"
lintian_status=0
lintian --fail-on error,warning "$changes" "$work/libdch_$version.dsc" >"$work/lintian.log" 2>&1 ||
    lintian_status=$?
cat "$work/lintian.log"
[ "$lintian_status" -eq 0 ] || fail "lintian found errors or warnings (status $lintian_status)"
echo "lintian: clean"

step "dchctl from the package"
export LD_LIBRARY_PATH="$root/$libdir"
"$root/usr/bin/dchctl" init "$work/cluster.dchmap" --random-key >/dev/null
"$root/usr/bin/dchctl" add "$work/cluster.dchmap" node-a >/dev/null
"$root/usr/bin/dchctl" add "$work/cluster.dchmap" node-b >/dev/null
"$root/usr/bin/dchctl" lookup "$work/cluster.dchmap" user:42 | grep -Eq $'^user:42\tnode-[ab]$' ||
    fail "dchctl lookup from the package"
"$root/usr/bin/dchctl" verify "$work/cluster.dchmap" >/dev/null || fail "dchctl verify"

consumer_src="$src/tests/consumer"
needs_shared() {
    readelf -d "$1" | grep "NEEDED.*\[$2\]" >/dev/null || fail "$1 does not link $2"
}

step "consumer through find_package(dch COMPONENTS etcd)"
cmake -S "$consumer_src" -B "$work/cmake-consumer" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_PREFIX_PATH="$root/usr" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
    -DDCH_EXPECTED_VERSION="$upstream" -DDCH_CONSUMER_ETCD=ON \
    >"$work/cmake-consumer.log" 2>&1 ||
    { cat "$work/cmake-consumer.log"; fail "consumer configure"; }
found_dir=$(sed -n 's/^dch_DIR:PATH=//p' "$work/cmake-consumer/CMakeCache.txt")
[ "$found_dir" = "$root/$libdir/cmake/dch" ] ||
    fail "find_package used $found_dir, not the unpacked packages"
cmake --build "$work/cmake-consumer" >>"$work/cmake-consumer.log" 2>&1 ||
    { cat "$work/cmake-consumer.log"; fail "consumer build"; }
needs_shared "$work/cmake-consumer/consumer" "libdch.so.$soversion"
needs_shared "$work/cmake-consumer/etcd-consumer" "libdch-etcd.so.$soversion"
"$work/cmake-consumer/consumer"
"$work/cmake-consumer/etcd-consumer"

step "consumer through pkg-config"
# Only the unpacked packages' .pc files, then the system's (libcurl and
# json-c, which dch-etcd.pc requires). No PKG_CONFIG_SYSROOT_DIR: it would
# move the system's paths too, and dch.pc finds its prefix from its own
# place (${pcfiledir}), which the check below holds it to.
system_pc=$(pkg-config --variable pc_path pkg-config)
export PKG_CONFIG_LIBDIR="$root/$libdir/pkgconfig:$system_pc" PKG_CONFIG_PATH=''
[ "$(pkg-config --modversion dch)" = "$upstream" ] || fail "dch.pc gives version $(pkg-config --modversion dch)"
[ "$(pkg-config --modversion dch-etcd)" = "$upstream" ] || fail "dch-etcd.pc gives a wrong version"
pcflags=$(pkg-config --cflags --libs dch)
echo "pkg-config --cflags --libs dch: $pcflags"
incdir=$(sed -nE 's/^(.* )?-I([^ ]*).*/\2/p' <<<"$pcflags")
[ "$(readlink -f "$incdir")" = "$root/usr/include" ] ||
    fail "dch.pc gives the headers in $incdir, not in the unpacked root"
# shellcheck disable=SC2086 # pkg-config output is a list of flags
"$cc" -std=c11 -pedantic -Wall -Wextra -Werror -o "$work/pc-consumer" "$consumer_src/main.c" $pcflags
needs_shared "$work/pc-consumer" "libdch.so.$soversion"
"$work/pc-consumer"
pcflags=$(pkg-config --cflags --libs dch-etcd)
echo "pkg-config --cflags --libs dch-etcd: $pcflags"
# shellcheck disable=SC2086
"$cc" -std=c11 -pedantic -Wall -Wextra -Werror -o "$work/pc-etcd-consumer" \
    "$consumer_src/etcd_main.c" $pcflags
needs_shared "$work/pc-etcd-consumer" "libdch-etcd.so.$soversion"
"$work/pc-etcd-consumer"

step "consumer against the static libraries"
# libdch-etcd.a and libdch.a named in full (given -ldch, the linker would
# take the .so), with the shared libcurl and json-c (their static libraries
# are not packaged, so no `pkg-config --static`).
# shellcheck disable=SC2046 # pkg-config output is a list of flags
"$cc" -std=c11 -pedantic -Wall -Wextra -Werror $(pkg-config --cflags dch-etcd) \
    -o "$work/static-consumer" "$consumer_src/etcd_main.c" \
    "$root/$libdir/libdch-etcd.a" "$root/$libdir/libdch.a" \
    $(pkg-config --libs libcurl json-c) -pthread
if readelf -d "$work/static-consumer" | grep 'NEEDED.*libdch' >/dev/null; then
    fail "the static consumer still needs a shared libdch"
fi
env -u LD_LIBRARY_PATH "$work/static-consumer"

echo "packaging: ${packages[*]} built, lintian-clean and usable ($((SECONDS - start)) s)"
