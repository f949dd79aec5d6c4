#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A plain build needs only a C compiler and CMake: configured as if
# pkg-config found nothing (no Criterion, libsodium, hiredis, libcurl or
# json-c), the tree must configure, build and install with default options,
# saying in one status line each which optional part it skips, and install
# both libraries and dchctl. A part switched OFF says nothing; a part
# switched ON whose package is missing fails the configure, naming it. The
# explorer is left out: it is a second build with another compiler
# (Emscripten), not a package pkg-config could hide, and building it here
# would only repeat tests/run's build.
#
# Usage: test_plain_build.sh WORK_DIR
# Environment (set by ctest): CC, DCH_SOURCE_DIR, DCH_CMAKE, DCH_GENERATOR,
# DCH_SOVERSION.
set -euo pipefail

work=${1:?work dir}
cmake=${DCH_CMAKE:-cmake}
src=${DCH_SOURCE_DIR:?}
gen=${DCH_GENERATOR:-Unix Makefiles}

fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"

echo "progress: plain_build: configure without pkg-config"
"$cmake" -S "$src" -B "$work/build" -G "$gen" -DCMAKE_C_COMPILER="${CC:-cc}" \
    -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON -DDCH_WITH_EXPLORER=OFF >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log"; fail "a plain configure failed"; }
cat "$work/configure.log"
# Each optional part left AUTO says in one line that it is not built.
for part in TESTS EXAMPLES BENCH ETCD; do
    [ "$(grep -c -- "DCH_WITH_$part=AUTO: .* not found, so it is not built" "$work/configure.log")" -eq 1 ] ||
        fail "expected one status line saying DCH_WITH_$part is not built"
done
# OFF says nothing; ON with what it needs missing fails, naming it.
echo "progress: plain_build: configure with parts ON and OFF"
"$cmake" -S "$src" -B "$work/build-off" -G "$gen" -DCMAKE_C_COMPILER="${CC:-cc}" \
    -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON -DDCH_WITH_EXPLORER=OFF -DDCH_WITH_TESTS=OFF \
    -DDCH_WITH_ETCD=OFF >"$work/configure-off.log" 2>&1 ||
    { cat "$work/configure-off.log"; fail "a configure with parts OFF failed"; }
! grep -Eq 'DCH_WITH_(TESTS|ETCD)' "$work/configure-off.log" ||
    fail "a part switched OFF still printed a status line"
for part in ETCD:libcurl TESTS:Criterion EXAMPLES:hiredis; do
    if "$cmake" -S "$src" -B "$work/build-on-${part%%:*}" -G "$gen" -DCMAKE_C_COMPILER="${CC:-cc}" \
        -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON -DDCH_WITH_EXPLORER=OFF \
        "-DDCH_WITH_${part%%:*}=ON" >"$work/configure-on.log" 2>&1; then
        fail "DCH_WITH_${part%%:*}=ON configured without ${part#*:}"
    fi
    grep -q "DCH_WITH_${part%%:*}=ON, but .*${part#*:}" "$work/configure-on.log" ||
        { cat "$work/configure-on.log"; fail "DCH_WITH_${part%%:*}=ON failed without naming ${part#*:}"; }
done

echo "progress: plain_build: build"
"$cmake" --build "$work/build" -j2 >"$work/build.log" 2>&1 ||
    { tail -n 40 "$work/build.log"; fail "a plain build failed"; }

echo "progress: plain_build: install"
"$cmake" --install "$work/build" --prefix "$work/prefix" >"$work/install.log" ||
    { cat "$work/install.log"; fail "a plain install failed"; }
so_version=${DCH_SOVERSION:?}
for f in include/dch/dch.h bin/dchctl lib*/libdch.a "lib*/libdch.so.$so_version"; do
    # shellcheck disable=SC2086 # the lib* glob picks lib or lib64
    [ -n "$(ls -d "$work"/prefix/$f 2>/dev/null)" ] || fail "$f not installed"
done
# The tool is dchctl: /usr/bin/dch is Debian's debchange (devscripts).
[ ! -e "$work/prefix/bin/dch" ] || fail "bin/dch installed: the tool is dchctl"
"$work/prefix/bin/dchctl" help >/dev/null || fail "the installed dchctl does not run"
echo "a plain build configures, builds and installs with the optional parts skipped"
