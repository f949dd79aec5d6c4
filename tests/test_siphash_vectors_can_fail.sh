#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The SipHash vector tests can fail. Through DCH_SIPHASH_VECTORS the siphash
# test program is handed copies of the vector file:
#   - the unchanged copy must pass (so the failures below come from the damage);
#   - one hex digit flipped in a siphash-2-4-64 line, then in a siphash-2-4-128
#     line, must fail, and the failure must name that line;
#   - a copy without one of the 64-bit lines must fail;
#   - a missing file must fail.
#
# Usage: test_siphash_vectors_can_fail.sh TEST_PROGRAM VECTOR_FILE WORK_DIR
vector_env=DCH_SIPHASH_VECTORS
vector_filter='siphash/matches_every_reference_vector_*'
source "$(dirname "$0")/vector_damage.sh" "$@"

expect_unchanged_passes 2

# The output ends each line: flip the last digit of the first line of a
# variant whose message length is 15.
for variant in siphash-2-4-64 siphash-2-4-128; do
    lineno=$(grep -n "^$variant 15 " "$vectors" | head -n 1 | cut -d: -f1)
    [ -n "$lineno" ] || fail "no $variant line for length 15 in $vectors"
    copy="$work/flipped-$variant.txt"
    flip "$lineno" last "$copy"
    echo "--- $variant, line $lineno: $(sed -n "${lineno}p" "$vectors") -> $(sed -n "${lineno}p" "$copy")"
    expect_failure "$copy" "a flipped digit in line $lineno ($variant)" ":$lineno: $variant"
done

echo "--- copy without the siphash-2-4-64 line for length 63"
grep -v '^siphash-2-4-64 63 ' "$vectors" >"$work/short.txt"
expect_failure "$work/short.txt" "a missing vector line" '63 lines of siphash-2-4-64'

echo "--- missing file"
if run "$work/does-not-exist.txt"; then
    fail "a missing vector file went unnoticed"
fi

echo "the vector tests catch a flipped digit, a missing line and a missing file"
