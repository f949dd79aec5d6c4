#!/usr/bin/env bash
# The MD5 vector test can fail. Through DCH_MD5_VECTORS the md5 test program
# is handed copies of the RFC 1321 vector file:
#   - the unchanged copy must pass (so the failures below come from the damage);
#   - each line with one hex digit of its digest flipped must fail, naming it;
#   - a copy without its last vector must fail.
#
# Usage: test_md5_vectors_can_fail.sh TEST_PROGRAM VECTOR_FILE WORK_DIR
set -euo pipefail

program=${1:?test program}
vectors=${2:?vector file}
work=${3:?work dir}
rm -rf "$work"
mkdir -p "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }

run() {
    local status=0
    DCH_MD5_VECTORS=$1 "$program" --jobs=1 --filter='md5/matches_the_rfc_1321_test_suite' \
        >"$work/out.log" 2>&1 || status=$?
    cat "$work/out.log"
    return "$status"
}

cp "$vectors" "$work/unchanged.txt"
echo "--- unchanged copy"
run "$work/unchanged.txt" || fail "the unchanged vector file does not pass"
grep -q 'Tested: 1 ' "$work/out.log" || fail "expected the vector test to run"

# Flip the first hex digit (0<->1, ..., e<->f) of every vector line in turn.
for lineno in $(grep -vn '^#' "$vectors" | cut -d: -f1); do
    copy="$work/flipped-$lineno.txt"
    awk -v n="$lineno" 'NR == n {
            d = substr($0, 1, 1)
            i = index("0123456789abcdef", d) - 1
            j = (i % 2 == 0) ? i + 1 : i - 1
            $0 = substr("0123456789abcdef", j + 1, 1) substr($0, 2)
        } { print }' "$vectors" >"$copy"
    [ "$(diff "$vectors" "$copy" | grep -c '^[<>]')" -eq 2 ] ||
        fail "the flipped copy should differ from the original in exactly one line"
    if run "$copy" >/dev/null; then
        fail "a flipped digit in line $lineno went unnoticed"
    fi
    grep -q ":$lineno: MD5" "$work/out.log" || fail "the failure does not name line $lineno"
done

echo "--- copy without the last vector"
sed '$d' "$vectors" >"$work/short.txt"
if run "$work/short.txt"; then
    fail "a missing vector went unnoticed"
fi
grep -q 'holds 6 vectors' "$work/out.log" || fail "the failure does not count the vectors"

echo "the MD5 vector test catches a flipped digit in every line and a missing line"
