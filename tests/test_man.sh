#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages render cleanly and cannot drift from what they describe:
#  - dchctl.1 and libdch.3 render with groff and with man, every warning on,
#    without one line on standard error, and hold their usual sections;
#  - every command that `dchctl help` lists has an entry under COMMANDS in
#    dchctl(1), and every page entry is a command of the tool (the etcd
#    commands may be missing from a tool built without dch-etcd);
#  - every --option that CMD takes by `dchctl help CMD` is in the synopsis
#    line of CMD's entry, every other --option the help mentions is in the
#    page, every exit status the help texts give has an entry under EXIT
#    STATUS, and every DCH_ variable they name is under ENVIRONMENT;
#  - libdch(3) names every public header under include/dch/ and every error
#    code of error.h.
# Entries are read from the roff scdoc writes: a line that starts with a
# bold word and is followed by an indented block (.RS) is an entry.
#
# Usage: test_man.sh MAN_DIR [DCHCTL]
#   MAN_DIR  the build folder holding the rendered dchctl.1 and libdch.3
#   DCHCTL   the dchctl to check dchctl(1) against (skipped when absent)
set -uo pipefail

dir=${1:?usage: test_man.sh MAN_DIR [DCHCTL]}
tool=${2:-}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

for prog in groff man; do
    command -v "$prog" >/dev/null || { echo "SKIP: $prog is not installed"; exit 77; }
done

failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# ---- Rendering -----------------------------------------------------------

render_check() {
    local page=$1 out
    # groff: -k reads UTF-8, -t runs tbl (scdoc's tables), -ww: all warnings.
    out=$(groff -k -t -man -ww -z -Tutf8 "$page" 2>&1 >/dev/null)
    local rc=$?
    [ "$rc" -eq 0 ] || fail "groff exits with $rc on $page"
    [ -z "$out" ] || fail "groff warns on $page:"$'\n'"$out"
    out=$(LC_ALL=C.UTF-8 MANWIDTH=80 MANPAGER=cat \
        man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
    rc=$?
    [ "$rc" -eq 0 ] || fail "man exits with $rc on $page"
    [ -z "$out" ] || fail "man warns on $page:"$'\n'"$out"
}

# The section names (.SH) of a page, one a line.
sections() {
    sed -n 's/^\.SH  *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$1"
}

need_sections() {
    local page=$1 s
    shift
    local have
    have=$(sections "$page")
    for s in "$@"; do
        grep -qxF -- "$s" <<<"$have" || fail "$(basename "$page") has no section $s"
    done
}

for name in dchctl.1 libdch.3; do
    page=$dir/$name
    if [ ! -s "$page" ]; then
        fail "$page is missing or empty (build the dch_man target)"
        continue
    fi
    render_check "$page"
done
[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }

need_sections "$dir/dchctl.1" NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS "EXIT STATUS" \
    ENVIRONMENT FILES EXAMPLES "SEE ALSO"
need_sections "$dir/libdch.3" NAME SYNOPSIS DESCRIPTION "RETURN VALUE" VERSIONS EXAMPLES \
    "SEE ALSO"

# ---- The page as plain text ----------------------------------------------

# The roff with font changes and zero-width escapes removed and \- read as
# -, so that an option reads as it is typed.
plain() {
    sed -e 's/\\f[BIRP]//g' -e 's/\\&//g' -e 's/\\-/-/g' "$1"
}

# The lines of section $2 (an .SH name) of the plain page $1.
section_text() {
    awk -v want="$2" '
        /^\.SH / { name = $0; sub(/^\.SH +"?/, "", name); sub(/"? *$/, "", name)
                   on = (name == want); next }
        on' "$1"
}

# ---- libdch(3): headers and error codes ------------------------------------

lib=$(mktemp)
man1=$(mktemp)
trap 'rm -f "$lib" "$man1"' EXIT
plain "$dir/libdch.3" >"$lib"
for h in "$src"/include/dch/*.h "$src"/include/dch/*.h.in; do
    [ -e "$h" ] || continue
    base=$(basename "$h" .in)
    grep -qF "dch/$base" "$lib" || fail "libdch(3) does not name the header dch/$base"
done
codes=$(sed -n 's/^ *X(\(DCH_[A-Z]*\),.*/\1/p' "$src/include/dch/error.h")
[ -n "$codes" ] || fail "no error codes read from include/dch/error.h"
for code in $codes; do
    grep -qw -- "$code" "$lib" || fail "libdch(3) does not give the error code $code"
done

# ---- dchctl(1) against the tool ------------------------------------------

if [ -z "$tool" ]; then
    echo "no dchctl given: its commands and options are not checked"
else
    plain "$dir/dchctl.1" >"$man1"
    help=$("$tool" help) || fail "$tool help exits with $?"
    mapfile -t cmds < <(awk '/^commands:/ { on = 1; next }
                             on && /^  [a-z]/ { print $1 }
                             on && /^$/ { exit }' <<<"$help")
    if [ "${#cmds[@]}" -lt 5 ]; then
        fail "read only ${#cmds[@]} commands from '$tool help'"
    fi

    # The entries of COMMANDS, each line tagged "NAME<TAB>": an entry starts
    # at a line that begins with a lower-case word and is followed by .RS,
    # and ends at the next entry or (sub)section.
    tagged=$(section_text "$man1" COMMANDS | awk '
        { line[NR] = $0 }
        END {
            for (i = 1; i <= NR; i++) {
                if (line[i] ~ /^\.S[HS]/) { cur = ""; continue }
                if (line[i] ~ /^[a-z][a-z-]*( |$)/ && line[i + 1] ~ /^\.RS/) {
                    split(line[i], w, " ")
                    cur = w[1]
                }
                if (cur != "") print cur "\t" line[i]
            }
        }')
    entries=$(cut -f1 <<<"$tagged" | uniq)
    entry_text() {
        awk -F '\t' -v want="$1" '$1 == want { sub(/^[^\t]*\t/, ""); print }' <<<"$tagged"
    }

    has_etcd=0
    for c in "${cmds[@]}"; do
        case $c in publish | fetch | watch | rollout) has_etcd=1 ;; esac
    done

    for c in "${cmds[@]}"; do
        if ! grep -qxF -- "$c" <<<"$entries"; then
            fail "dchctl(1) has no entry for the command $c under COMMANDS"
            continue
        fi
        text=$(entry_text "$c")
        chelp=$("$tool" help "$c") || fail "$tool help $c exits with $?"
        # The options c takes (its usage line, and the help's lines that
        # start with an option) belong in its entry's first line, the
        # command's synopsis; an option the help mentions in passing
        # (`dchctl diff --json`) anywhere in the page.
        synopsis=$(head -n 1 <<<"$text")
        own=$(grep -E -- '^usage:|^ +--[a-z]' <<<"$chelp" |
            sed -E 's/^ +(--[a-z][a-z0-9-]*).*/\1/' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
        for opt in $own; do
            grep -qE -- "(^|[^a-z0-9-])$opt([^a-z0-9-]|\$)" <<<"$synopsis" ||
                fail "the synopsis of $c in dchctl(1) lacks $opt (dchctl help $c has it)"
        done
        for opt in $(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$chelp" | sort -u); do
            grep -qE -- "(^|[^a-z0-9-])$opt([^a-z0-9-]|\$)" "$man1" ||
                fail "dchctl(1) does not mention $opt (dchctl help $c does)"
        done
    done

    while read -r e; do
        [ -n "$e" ] || continue
        printf '%s\n' "${cmds[@]}" | grep -xF -- "$e" >/dev/null && continue
        case $e in publish | fetch | watch | rollout) [ "$has_etcd" -eq 0 ] && continue ;; esac
        fail "dchctl(1) documents a command $e that '$tool help' does not list"
    done <<<"$entries"

    # Options of the general help (--help, --version) anywhere in the page.
    for opt in $(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u); do
        grep -qE -- "(^|[^a-z0-9-])$opt([^a-z0-9-]|\$)" "$man1" ||
            fail "dchctl(1) does not mention $opt (dchctl help does)"
    done

    # Exit statuses and environment variables the help texts give.
    all_help=$help
    for c in "${cmds[@]}"; do all_help+=$'\n'$("$tool" help "$c"); done
    status_entries=$(section_text "$man1" "EXIT STATUS" | grep -E '^[0-9]+$')
    for s in 0 1 2 $(grep -oiE 'exit status [0-9]+' <<<"$all_help" | grep -oE '[0-9]+$' | sort -u); do
        grep -qxF -- "$s" <<<"$status_entries" ||
            fail "dchctl(1) has no entry for exit status $s under EXIT STATUS"
    done
    env_text=$(section_text "$man1" ENVIRONMENT)
    for v in $(grep -oE 'DCH_[A-Z_]+' <<<"$all_help" | sort -u); do
        grep -qw -- "$v" <<<"$env_text" ||
            fail "dchctl(1) does not describe $v under ENVIRONMENT"
    done
    echo "dchctl(1) checked against the ${#cmds[@]} commands of $tool"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "man pages: dchctl.1 and libdch.3 render without warnings and match what they describe"
