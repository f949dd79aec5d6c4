#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install libdch into a temporary prefix and build tests/consumer against it
# twice, through find_package(dch CONFIG) and through plain cc with
# `pkg-config --cflags --libs dch`, then run both programs. When dch-etcd is
# built (DCH_ETCD=1), the same for it: the etcd component of the package
# (dch::etcd) and dch-etcd.pc, and a program that calls it.
#
#   static  installs this build tree and links its static libraries
#           (dch::dch_static, dch::etcd_static; `pkg-config --static`).
#   shared  builds the library anew (shared and static, as by default),
#           checks that the shared one is libdch.so.SOVERSION and exports
#           only the public dch_ functions, installs and links it (dch::dch,
#           dch::etcd; plain pkg-config).
#
# Usage: test_consumer.sh static|shared WORK_DIR
# Environment (set by ctest): CC, DCH_SOURCE_DIR, DCH_BINARY_DIR, DCH_CMAKE,
# DCH_GENERATOR, DCH_VERSION, DCH_SOVERSION, DCH_SANITIZE, DCH_ETCD.
set -euo pipefail

mode=${1:?mode}
work=${2:?work dir}
cc=${CC:-cc}
cmake=${DCH_CMAKE:-cmake}
src=${DCH_SOURCE_DIR:?}
bin=${DCH_BINARY_DIR:?}
gen=${DCH_GENERATOR:-Unix Makefiles}
consumer_src="$src/tests/consumer"

# A library built with sanitizers needs their runtimes in the consumer too.
san=()
[ -n "${DCH_SANITIZE:-}" ] && san=("-fsanitize=$DCH_SANITIZE")

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "progress: consumer_$mode: $*"; }

rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"

case $mode in
static)
    lib_build=$bin
    ;;
shared)
    lib_build="$work/lib-build"
    step "building libdch as a shared library"
    "$cmake" -S "$src" -B "$lib_build" -G "$gen" -DCMAKE_C_COMPILER="$cc" \
        -DDCH_BUILD_SHARED=ON -DDCH_BUILD_STATIC=ON -DDCH_WITH_TESTS=OFF -DDCH_WITH_ANALYSIS=OFF \
        -DDCH_WITH_BENCH=OFF -DDCH_WITH_EXAMPLES=OFF -DDCH_WITH_EXPLORER=OFF -DDCH_WITH_MAN=OFF \
        -DDCH_WERROR=ON -DDCH_SANITIZE="${DCH_SANITIZE:-}" >"$work/lib-configure.log" ||
        { cat "$work/lib-configure.log"; fail "configure of the shared build"; }
    "$cmake" --build "$lib_build" -j2
    ;;
*)
    fail "unknown mode '$mode'"
    ;;
esac

step "installing into $prefix"
"$cmake" --install "$lib_build" --prefix "$prefix" >"$work/install.log" ||
    { cat "$work/install.log"; fail "install"; }

[ -f "$prefix/include/dch/dch.h" ] || fail "dch/dch.h not installed"
[ -f "$prefix/include/dch/version.h" ] || fail "generated dch/version.h not installed"
pc=$(find "$prefix" -name dch.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || fail "dch.pc not installed"
config=$(find "$prefix" -name dchConfig.cmake | head -n 1)
[ -n "$config" ] || fail "dchConfig.cmake not installed"
etcd=${DCH_ETCD:-0}
if [ "$etcd" = 1 ]; then
    [ -f "$prefix/include/dch/etcd.h" ] || fail "dch/etcd.h not installed"
    [ -n "$(find "$prefix" -name dch-etcd.pc -path '*/pkgconfig/*')" ] || fail "dch-etcd.pc not installed"
    [ -n "$(find "$prefix" -name dchEtcdTargets.cmake)" ] || fail "the etcd component is not installed"
else
    [ ! -e "$prefix/include/dch/etcd.h" ] || fail "dch/etcd.h installed without dch-etcd"
fi

soversion=${DCH_SOVERSION:?}
if [ "$mode" = shared ]; then
    so=$(find "$prefix" -name 'libdch.so.*' -type f | head -n 1)
    [ -n "$so" ] || fail "no libdch.so installed"
    soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$soname" = "libdch.so.$soversion" ] || fail "$so has SONAME '$soname', not libdch.so.$soversion"
    [ -n "$(find "$prefix" -name libdch.a)" ] || fail "a default build did not install libdch.a beside it"
    step "checking the exported symbols of $(basename "$so")"
    mapfile -t exported < <(nm -D --defined-only "$so" | awk '{print $NF}' | sort)
    [ ${#exported[@]} -gt 0 ] || fail "the shared library exports nothing"
    decls=$(cat "$prefix"/include/dch/*.h)
    for sym in "${exported[@]}"; do
        [[ $sym =~ ^dch_[a-z0-9] ]] || fail "exports a non-public symbol: $sym"
        grep -Eq "[ *]$sym\(" <<<"$decls" || fail "exports $sym, which no installed header declares"
    done
    for sym in dch_version dch_strerror dch_siphash24 dch_siphash24_128; do
        printf '%s\n' "${exported[@]}" | grep -x "$sym" >/dev/null || fail "does not export $sym"
    done
    echo "exports ${#exported[@]} symbols, all dch_ and declared: ${exported[*]}"
    if [ "$etcd" = 1 ]; then
        so=$(find "$prefix" -name 'libdch-etcd.so.*' -type f | head -n 1)
        [ -n "$so" ] || fail "no libdch-etcd.so installed"
        mapfile -t exported < <(nm -D --defined-only "$so" | awk '{print $NF}' | sort)
        [ ${#exported[@]} -gt 0 ] || fail "libdch-etcd.so exports nothing"
        decls=$(cat "$prefix/include/dch/etcd.h")
        for sym in "${exported[@]}"; do
            grep -Eq "[ *]$sym\(" <<<"$decls" || fail "libdch-etcd.so exports $sym, which etcd.h does not declare"
        done
        echo "libdch-etcd.so exports ${#exported[@]} symbols, all declared in etcd.h"
    fi
fi

# The program must link libdch dynamically, by its SONAME, exactly in the
# shared mode: the static mode links libdch.a even where libdch.so is
# installed beside it.
check_linkage() {
    local exe=$1 needs
    needs=$(readelf -d "$exe" | grep -c "NEEDED.*\[libdch\.so\.$soversion\]" || true)
    if [ "$mode" = shared ]; then
        [ "$needs" -eq 1 ] || fail "$exe does not link libdch.so.$soversion"
    elif readelf -d "$exe" | grep 'NEEDED.*libdch' >/dev/null; then
        fail "$exe needs a shared libdch although it asked for the static one"
    fi
}

step "consumer through find_package(dch CONFIG)"
# Only the temporary prefix may provide dch: no package registry, and the
# cache below is checked for where dch came from.
"$cmake" -S "$consumer_src" -B "$work/cmake-consumer" -G "$gen" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_C_FLAGS="${san[*]}" \
    -DDCH_EXPECTED_VERSION="${DCH_VERSION:-}" -DDCH_CONSUMER_ETCD="$etcd" \
    -DDCH_CONSUMER_STATIC="$([ "$mode" = static ] && echo ON || echo OFF)" \
    >"$work/consumer-configure.log" ||
    { cat "$work/consumer-configure.log"; fail "consumer configure"; }
found_dir=$(sed -n 's/^dch_DIR:PATH=//p' "$work/cmake-consumer/CMakeCache.txt")
[ "$found_dir" = "$(dirname "$config")" ] ||
    fail "find_package used $found_dir, not the temporary prefix"
"$cmake" --build "$work/cmake-consumer"
check_linkage "$work/cmake-consumer/consumer"
"$work/cmake-consumer/consumer"
if [ "$etcd" = 1 ]; then
    check_linkage "$work/cmake-consumer/etcd-consumer"
    "$work/cmake-consumer/etcd-consumer"
fi

step "consumer through pkg-config"
# PKG_CONFIG_LIBDIR replaces the default search path, so only this dch.pc
# can answer.
export PKG_CONFIG_LIBDIR PKG_CONFIG_PATH=''
PKG_CONFIG_LIBDIR=$(dirname "$pc")
# The static mode asks for the archive by its file name (-l:libdch.a), as
# the linker prefers libdch.so when both are there, and for what
# `pkg-config --static` adds.
pc_libs() {
    if [ "$mode" = static ]; then
        pkg-config --static --cflags --libs "$1" | sed -E 's/(^| )-l(dch(-etcd)?)( |$)/\1-l:lib\2.a\4/g; s/(^| )-l(dch(-etcd)?)( |$)/\1-l:lib\2.a\4/g'
    else
        pkg-config --cflags --libs "$1"
    fi
}
pcflags=$(pc_libs dch)
libdir=$(pkg-config --variable=libdir dch)
echo "pkg-config --cflags --libs dch: $pcflags"
# shellcheck disable=SC2086 # pkg-config output is a list of flags
"$cc" -std=c11 -pedantic -Wall -Wextra -Werror "${san[@]}" -o "$work/pc-consumer" "$consumer_src/main.c" $pcflags
check_linkage "$work/pc-consumer"
LD_LIBRARY_PATH="$libdir" "$work/pc-consumer"

if [ "$etcd" = 1 ]; then
    step "etcd consumer through pkg-config"
    # dch-etcd.pc requires libcurl and json-c: the system's .pc files too,
    # after this prefix.
    PKG_CONFIG_LIBDIR=$(dirname "$pc"):$(env -u PKG_CONFIG_LIBDIR pkg-config --variable pc_path pkg-config)
    if [ "$mode" = static ]; then
        # `pkg-config --static` must carry what libdch-etcd.a needs. It
        # also expands libcurl's own private libraries, whose static
        # archives Debian does not ship, so the link takes libcurl and
        # json-c shared: the archives of libdch, the rest as usual.
        static_libs=" $(pkg-config --static --libs dch-etcd) "
        for want in -ldch-etcd -ldch -lcurl -ljson-c -pthread; do
            [[ $static_libs == *" $want "* ]] ||
                fail "pkg-config --static --libs dch-etcd lacks $want: $static_libs"
        done
        pcflags="$(pkg-config --cflags dch-etcd) -L$(pkg-config --variable=libdir dch-etcd)"
        pcflags+=" -l:libdch-etcd.a -l:libdch.a $(pkg-config --libs libcurl json-c) -pthread"
    else
        pcflags=$(pc_libs dch-etcd)
    fi
    echo "dch-etcd flags ($mode): $pcflags"
    # shellcheck disable=SC2086 # pkg-config output is a list of flags
    "$cc" -std=c11 -pedantic -Wall -Wextra -Werror "${san[@]}" -o "$work/pc-etcd-consumer" \
        "$consumer_src/etcd_main.c" $pcflags
    check_linkage "$work/pc-etcd-consumer"
    LD_LIBRARY_PATH="$libdir" "$work/pc-etcd-consumer"
fi

echo "consumer ($mode): find_package and pkg-config builds both pass$([ "$etcd" = 1 ] && echo ', dch-etcd included')"
