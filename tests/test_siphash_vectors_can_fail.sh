#!/usr/bin/env bash
# The SipHash vector tests can fail. Through DCH_SIPHASH_VECTORS the siphash
# test program is handed copies of the vector file:
#   - the unchanged copy must pass (so the failures below come from the damage);
#   - one hex digit flipped in a siphash-2-4-64 line, then in a siphash-2-4-128
#     line, must fail, and the failure must name that line;
#   - a copy without one of the 64-bit lines must fail.
#
# Usage: test_siphash_vectors_can_fail.sh TEST_PROGRAM VECTOR_FILE WORK_DIR
set -euo pipefail
# Only the failures matter here; tests/run's per-case lines would show the
# damaged copies' expected failures as if they were the suite's.
unset CRITERION_VERBOSITY_LEVEL

program=${1:?test program}
vectors=${2:?vector file}
work=${3:?work dir}
rm -rf "$work"
mkdir -p "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }

# Run only the vector tests against a copy; prints the output, returns the status.
run() {
    local status=0
    DCH_SIPHASH_VECTORS=$1 "$program" --jobs=1 --filter='siphash/matches_every_reference_vector_*' \
        >"$work/out.log" 2>&1 || status=$?
    cat "$work/out.log"
    return "$status"
}

cp "$vectors" "$work/unchanged.txt"
echo "--- unchanged copy"
run "$work/unchanged.txt" || fail "the unchanged vector file does not pass"
grep -q 'Tested: 2 ' "$work/out.log" || fail "expected both vector tests to run"

# Flip the last hex digit (0<->1, 2<->3, ..., e<->f) of the first line of a
# variant whose message length is 15.
for variant in siphash-2-4-64 siphash-2-4-128; do
    lineno=$(grep -n "^$variant 15 " "$vectors" | head -n 1 | cut -d: -f1)
    [ -n "$lineno" ] || fail "no $variant line for length 15 in $vectors"
    copy="$work/flipped-$variant.txt"
    awk -v n="$lineno" 'NR == n {
            d = substr($0, length($0), 1)
            i = index("0123456789abcdef", d) - 1
            j = (i % 2 == 0) ? i + 1 : i - 1
            $0 = substr($0, 1, length($0) - 1) substr("0123456789abcdef", j + 1, 1)
        } { print }' "$vectors" >"$copy"
    [ "$(diff "$vectors" "$copy" | grep -c '^[<>]')" -eq 2 ] ||
        fail "the flipped copy should differ from the original in exactly one line"
    echo "--- $variant, line $lineno: $(sed -n "${lineno}p" "$vectors") -> $(sed -n "${lineno}p" "$copy")"
    if run "$copy"; then
        fail "a flipped digit in line $lineno ($variant) went unnoticed"
    fi
    grep -q ":$lineno: $variant" "$work/out.log" ||
        fail "the failure does not name line $lineno"
done

echo "--- copy without the siphash-2-4-64 line for length 63"
grep -v '^siphash-2-4-64 63 ' "$vectors" >"$work/short.txt"
if run "$work/short.txt"; then
    fail "a missing vector line went unnoticed"
fi
grep -q '63 lines of siphash-2-4-64' "$work/out.log" || fail "the failure does not count the lines"

echo "--- missing file"
if run "$work/does-not-exist.txt"; then
    fail "a missing vector file went unnoticed"
fi

echo "the vector tests catch a flipped digit, a missing line and a missing file"
