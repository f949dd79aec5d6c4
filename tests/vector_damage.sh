# SPDX-License-Identifier: MIT
# Sourced by the *_vectors_can_fail.sh scripts, which prove that a vector
# test can fail: they hand the test program damaged copies of its vector
# file and expect it to fail, naming the damage.
#
# The sourcing script sets vector_env (the variable that names the vector
# file to the program) and vector_filter (the Criterion filter that selects
# the vector tests), and passes its arguments on:
#   source vector_damage.sh TEST_PROGRAM VECTOR_FILE WORK_DIR
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

# Run only the vector tests against a copy; prints the output to the
# terminal and to $work/out.log, returns the program's status.
run() {
    local status=0
    env "$vector_env=$1" "$program" --jobs=1 --filter="$vector_filter" \
        >"$work/out.log" 2>&1 || status=$?
    cat "$work/out.log"
    return "$status"
}

# The unchanged copy passes, with this many vector tests run: the failures
# the damaged copies give come from the damage.
expect_unchanged_passes() {
    cp "$vectors" "$work/unchanged.txt"
    echo "--- unchanged copy"
    run "$work/unchanged.txt" || fail "the unchanged vector file does not pass"
    grep -q "Tested: $1 " "$work/out.log" || fail "expected $1 vector test(s) to run"
}

# flip LINENO first|last COPY: COPY is the vector file with the first or last
# hex digit of line LINENO flipped (0<->1, 2<->3, ..., e<->f), and differs
# from it in that one line.
flip() {
    awk -v n="$1" -v where="$2" 'NR == n {
            p = where == "first" ? 1 : length($0)
            i = index("0123456789abcdef", substr($0, p, 1)) - 1
            j = (i % 2 == 0) ? i + 1 : i - 1
            $0 = substr($0, 1, p - 1) substr("0123456789abcdef", j + 1, 1) substr($0, p + 1)
        } { print }' "$vectors" >"$3"
    [ "$(diff "$vectors" "$3" | grep -c '^[<>]')" -eq 2 ] ||
        fail "the flipped copy should differ from the original in exactly one line"
}

# expect_failure COPY WHAT PATTERN: the program fails on COPY and its output
# holds PATTERN (the failure names the damage).
expect_failure() {
    if run "$1" >/dev/null; then
        fail "$2 went unnoticed"
    fi
    grep -q -- "$3" "$work/out.log" || fail "the failure over $2 does not say '$3'"
}
