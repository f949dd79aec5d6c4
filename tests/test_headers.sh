#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every public header, the generated version.h included, compiles alone as the
# first include of a translation unit under strict C11, so no header leans on
# something an earlier include happened to provide.
#
# Environment (set by ctest): CC, DCH_SOURCE_DIR, DCH_BINARY_DIR.
set -euo pipefail

cc=${CC:-cc}
src=${DCH_SOURCE_DIR:?}
bin=${DCH_BINARY_DIR:?}
flags=(-std=c11 -pedantic -Werror -Wall -Wextra)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shopt -s nullglob
headers=()
for h in "$src"/include/dch/*.h "$bin"/include/dch/*.h; do
    headers+=("dch/$(basename "$h")")
done
[ ${#headers[@]} -gt 0 ] || { echo "no public headers found" >&2; exit 1; }

failed=0
for h in "${headers[@]}"; do
    tu="$work/$(basename "$h" .h).c"
    # The include comes first; the declaration keeps the unit non-empty, as
    # ISO C requires.
    printf '#include "%s"\ntypedef int dch_header_test_unit;\n' "$h" >"$tu"
    if "$cc" "${flags[@]}" -I"$src/include" -I"$bin/include" \
        -c "$tu" -o "$work/out.o"; then
        echo "ok   $h"
    else
        echo "FAIL $h"
        failed=$((failed + 1))
    fi
done

echo "${#headers[@]} headers, $failed failed"
[ "$failed" -eq 0 ]
