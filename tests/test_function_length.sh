#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Functions a person can hold in mind: no function in src/ is longer than
# DCH_FUNCTION_MAX lines (default 80), counted from its opening brace to
# its closing one, both in column 0 as the project's layout puts them
# (a function body is the only block whose braces stand in column 0).
#
# Before it reads src/ it checks itself: a generated 81-line function must
# fail and an 80-line one pass, so that a pass means something.
#
# Usage: test_function_length.sh SOURCE_DIR
set -euo pipefail

src=${1:?source dir}
max=${DCH_FUNCTION_MAX:-80}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# "file:line name length" for every function of the files given longer
# than $max lines; the name is the last identifier before "(" on the lines
# above the brace.
long_functions() {
    awk -v max="$max" '
        FNR == 1 { sig = "" }
        /^\{/ { start = FNR; name = sig; next }
        /^\}/ && start {
            len = FNR - start + 1
            if (len > max) printf "%s:%d %s %d\n", FILENAME, start, name, len
            start = 0
            next
        }
        !start && /\(/ {
            line = $0
            sub(/\(.*/, "", line)
            n = split(line, w, /[^A-Za-z0-9_]+/)
            for (i = n; i > 0; i--) if (w[i] != "") { sig = w[i]; break }
        }
    ' "$@"
}

# Self-check.
{
    echo "static int big(void)"
    echo "{"
    for i in $(seq 79); do echo "    (void)$i;"; done
    echo "}"
} >"$work/big.c"
{
    echo "static int fits(void)"
    echo "{"
    for i in $(seq 78); do echo "    (void)$i;"; done
    echo "}"
} >"$work/fits.c"
[[ $(long_functions "$work/big.c") == "$work/big.c:2 big 81" ]] ||
    { echo "FAIL: self-check: an 81-line function was not found"; exit 1; }
[[ -z $(long_functions "$work/fits.c") ]] ||
    { echo "FAIL: self-check: an 80-line function was reported"; exit 1; }
echo "self-check: an 81-line function is found, an 80-line one passes"

mapfile -t files < <(cd "$src" && find src -name '*.c' | LC_ALL=C sort)
found=$(cd "$src" && long_functions "${files[@]}")
echo "read: ${#files[@]} files of src/, limit $max lines a function"
if [[ -n $found ]]; then
    echo "$found" | sed 's/^/too long: /'
    echo "FAIL: split each function above into steps of one purpose each"
    exit 1
fi
echo "PASS: no function over $max lines"
