#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A plain build needs only a C compiler and CMake: configured as if
# pkg-config found nothing (no Criterion, libsodium, hiredis, libcurl or
# json-c), the tree must configure, build and install with default options,
# saying in one status line each which optional part it skips. The explorer is left out: it is a
# second build with another compiler (Emscripten), not a package pkg-config
# could hide, and building it here would only repeat tests/run's build.
#
# Usage: test_plain_build.sh WORK_DIR
# Environment (set by ctest): CC, DCH_SOURCE_DIR, DCH_CMAKE, DCH_GENERATOR.
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
    -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON -DDCH_BUILD_EXPLORER=OFF >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log"; fail "a plain configure failed"; }
cat "$work/configure.log"
for part in 'the tests are not built' 'examples/redis-shard is not built' \
    'dch-bench is not built' 'dch-etcd is not built'; do
    [ "$(grep -c -- "$part" "$work/configure.log")" -eq 1 ] ||
        fail "expected one status line saying '$part'"
done

echo "progress: plain_build: build"
"$cmake" --build "$work/build" -j2 >"$work/build.log" 2>&1 ||
    { tail -n 40 "$work/build.log"; fail "a plain build failed"; }

echo "progress: plain_build: install"
"$cmake" --install "$work/build" --prefix "$work/prefix" >"$work/install.log" ||
    { cat "$work/install.log"; fail "a plain install failed"; }
for f in include/dch/dch.h bin/dchctl; do
    [ -e "$work/prefix/$f" ] || fail "$f not installed"
done
# The tool is dchctl: /usr/bin/dch is Debian's debchange (devscripts).
[ ! -e "$work/prefix/bin/dch" ] || fail "bin/dch installed: the tool is dchctl"
"$work/prefix/bin/dchctl" help >/dev/null || fail "the installed dchctl does not run"
echo "a plain build configures, builds and installs with the optional parts skipped"
