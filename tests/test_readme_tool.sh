#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's walk-through of the dchctl tool, run as written: the first sh
# block of its "The dchctl tool" section is executed line by line in an empty
# temporary folder with the built dch first on PATH. Every command must
# succeed, the diff at the end must show node-a's slots going to node-b, and
# the lookup in the replicated map must print three copies, so the README
# cannot drift from the tool.
#
# Usage: test_readme_tool.sh README DCH_TOOL WORK_DIR
set -euo pipefail

readme=${1:?README.md}
tool=${2:?dchctl tool}
work=${3:?work dir}

fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work/bin" "$work/run"
ln -s "$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")" "$work/bin/dchctl"

# The first ```sh block after the section heading.
awk '/^## The dchctl tool/ { in_section = 1; next }
     /^## / { in_section = 0 }
     in_section && /^```sh$/ && !done { in_block = 1; next }
     in_block && /^```$/ { in_block = 0; done = 1; next }
     in_block { print }' "$readme" >"$work/walkthrough.sh"
lines=$(grep -c . "$work/walkthrough.sh" || true)
[ "$lines" -ge 5 ] || fail "no walk-through found in $readme ($lines lines)"

cd "$work/run"
export PATH="$work/bin:$PATH"
n=0
while IFS= read -r line; do
    [ -n "$line" ] || continue
    n=$((n + 1))
    echo "\$ $line"
    bash -c "set -euo pipefail; $line" >"../out-$n.txt" 2>&1 ||
        { cat "../out-$n.txt"; fail "README line $n failed: $line"; }
    cat "../out-$n.txt"
    case $line in "dchctl diff "*) [ -n "${diff_n:-}" ] || diff_n=$n ;; esac
    case $line in "dchctl lookup replicated"*) lookup_n=$n ;; esac
done <"$work/walkthrough.sh"

# The lookup of a key in the replicated map prints the key and its three
# copies: four tab-separated columns of distinct names.
[ -n "${lookup_n:-}" ] || fail "the walk-through has no lookup in a replicated map"
awk -F'\t' 'NF != 4 || $2 == $3 || $2 == $4 || $3 == $4 { bad = 1 } END { exit bad || NR != 1 }' \
    "../out-$lookup_n.txt" || fail "the replicated lookup does not print three distinct copies"

# The first diff's own output (dchctl plan prints a similar header).
[ -n "${diff_n:-}" ] || fail "the walk-through has no diff"
diff_out=../out-$diff_n.txt
grep -q 'epoch .* -> ' "$diff_out" || fail "the diff printed no plan header"
grep -q 'node-a -> node-b' "$diff_out" || fail "the diff does not move node-a's slots to node-b"
echo "the README's $n tool commands run as written"
