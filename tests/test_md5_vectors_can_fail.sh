#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The MD5 vector test can fail. Through DCH_MD5_VECTORS the md5 test program
# is handed copies of the RFC 1321 vector file:
#   - the unchanged copy must pass (so the failures below come from the damage);
#   - each line with one hex digit of its digest flipped must fail, naming it;
#   - a copy without its last vector must fail.
#
# Usage: test_md5_vectors_can_fail.sh TEST_PROGRAM VECTOR_FILE WORK_DIR
vector_env=DCH_MD5_VECTORS
vector_filter='md5/matches_the_rfc_1321_test_suite'
source "$(dirname "$0")/vector_damage.sh" "$@"

expect_unchanged_passes 1

# The digest leads each line: flip its first digit, in every line in turn.
for lineno in $(grep -vn '^#' "$vectors" | cut -d: -f1); do
    flip "$lineno" first "$work/flipped-$lineno.txt"
    expect_failure "$work/flipped-$lineno.txt" "a flipped digit in line $lineno" \
        ":$lineno: MD5"
done

echo "--- copy without the last vector"
sed '$d' "$vectors" >"$work/short.txt"
expect_failure "$work/short.txt" "a missing vector" 'holds 6 vectors'

echo "the MD5 vector test catches a flipped digit in every line and a missing line"
