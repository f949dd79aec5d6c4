#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The documentation cannot drift from the tree:
#  - every fenced block of README.md and docs/*.md with a line that runs a
#    program of the project (dchctl, dch-analysis, dch-bench, a run script)
#    is listed below, either run here (each line in an empty folder, with
#    the built programs first on PATH, and must succeed) or skipped with
#    its reason, printed on every run; a block that is not listed fails the
#    test, so a new one must be classified, and a listed one that is gone
#    fails too;
#  - NOTES.md links every document of docs/, and no header cites NOTES.md;
#  - the numbers README states that the tree decides: the tests ctest
#    lists, the copies a map keeps, the bytes of a name, the SONAME, and
#    the options it lists for dch-analysis.
#
# Usage: test_docs.sh SOURCE_DIR BUILD_DIR DCHCTL WORK_DIR
set -uo pipefail

src=${1:?source dir}
build=${2:?build dir}
tool=${3:?dchctl}
work=${4:?work dir}

failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# ---- The blocks and what happens to each -----------------------------------

# A block is named by its file and its first line. "run": run here, line
# by line. "script": run here as one script (its lines share variables and
# background jobs; whatever it leaves running is stopped after it), when the
# programs it names besides the project's are installed. Anything else is
# the reason it is skipped.
declare -A disposition=(
    ["README.md: bash analysis/run"]="runs the whole default analysis and writes report/ at the top of the tree; the analysis test and report_page run dch-analysis"
    ["README.md: bash explorer/run            # then open http://127.0.0.1:8018/"]="serves the page until stopped; the browser tests build and drive it"
    ["README.md: export PATH=\$PWD/build/tools/dchctl:\$PATH     # from the source folder: the Quick start built build/"]="run"
    ["README.md: E=http://127.0.0.1:2379,http://127.0.0.1:22379   # any number of members"]="needs etcd members at \$E; the etcd-labelled tests run these commands against members they start"
    ["docs/etcd.md: ETCD_DATA=\$(mktemp -d)                        # thrown away at the end"]="script"
    ["docs/map-format.md: dchctl init cluster.dchmap --units 4 --slots 4 --key 000102030405060708090a0b0c0d0e0f"]="run"
)
# Files whose blocks are not checked here, and why.
declare -A skip_file=()

# A line runs a program of the project.
project_re='(^|[[:space:];&|(])(dchctl|dch-analysis|dch-bench|(bash +)?[A-Za-z0-9_./-]*/run|(bash +)?[A-Za-z0-9_./-]*\.sh|build/[A-Za-z0-9_./-]+)([[:space:]]|$)'

# Print each fenced block of $1 as "FIRST-LINE<TAB>index", its lines in
# $work/blocks/<file>.<index>.
split_blocks() {
    local file=$1 name=$2
    awk -v out="$work/blocks/$name" '
        /^ *```/ { if (inb) { inb = 0; close(f); next }
                   inb = 1; n++; f = out "." n; printf "" > f; first = 1; next }
        inb { print > f; if (first) { print $0 "\t" n > "/dev/stderr"; first = 0 } }
    ' "$file" 2>&1 >/dev/null
}

run_block() {
    local lines=$1 label=$2 dir=$work/run-$RANDOM
    mkdir -p "$dir"
    local n=0 line
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        n=$((n + 1))
        (cd "$dir" && PATH="$bindir:$PATH" bash -c "set -euo pipefail; $line") \
            >"$dir/.out" 2>&1 || {
            cat "$dir/.out"
            fail "$label: line $n fails: $line"
            return
        }
    done <"$lines"
    echo "ran:     $label ($n lines)"
}

# Run the block as one bash script in its own session, so that what it
# starts in the background (an etcd) is stopped after it, whatever happens.
run_script() {
    local lines=$1 label=$2 dir=$work/run-$RANDOM prog missing=()
    for prog in etcd etcdctl; do
        if grep -qE "(^|[[:space:];&|(])$prog([[:space:]]|$)" "$lines" &&
            ! command -v "$prog" >/dev/null; then
            missing+=("$prog")
        fi
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "skipped: $label: ${missing[*]} not installed"
        return
    fi
    mkdir -p "$dir"
    cp "$lines" "$dir/.block.sh"
    (cd "$dir" && PATH="$bindir:$PATH" exec setsid timeout 180 bash -euo pipefail .block.sh) \
        >"$dir/.out" 2>&1 &
    local pid=$! status=0
    wait "$pid" || status=$?
    pkill -KILL -s "$pid" 2>/dev/null || true
    if [ "$status" -ne 0 ]; then
        cat "$dir/.out"
        fail "$label: the block fails as a script (status $status)"
        return
    fi
    echo "ran:     $label (as one script)"
}

rm -rf "$work"
mkdir -p "$work/blocks" "$work/bin"
bindir=$work/bin
ln -s "$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")" "$bindir/dchctl"

declare -A seen=()
for file in "$src/README.md" "$src"/docs/*.md; do
    rel=${file#"$src"/}
    if [ -n "${skip_file[$rel]+set}" ]; then
        echo "skipped: $rel: ${skip_file[$rel]}"
        continue
    fi
    name=$(tr '/' '_' <<<"$rel")
    # Whole before it is read: the block files are complete only then.
    split_blocks "$file" "$name" >"$work/blocks/$name.list"
    while IFS=$'\t' read -r first index; do
        [ -n "$index" ] || continue
        lines=$work/blocks/$name.$index
        grep -qE -- "$project_re" "$lines" || continue
        key="$rel: $first"
        seen[$key]=1
        what=${disposition[$key]:-}
        if [ -z "$what" ]; then
            fail "$key: a block that runs a program of the project; run it or give a reason to skip it in ${BASH_SOURCE[0]}"
        elif [ "$what" = run ]; then
            run_block "$lines" "$key"
        elif [ "$what" = script ]; then
            run_script "$lines" "$key"
        else
            echo "skipped: $key: $what"
        fi
    done <"$work/blocks/$name.list"
done
for key in "${!disposition[@]}"; do
    [ -n "${seen[$key]:-}" ] || fail "listed block no longer in the documentation: $key"
done

# ---- The front door ------------------------------------------------------

# NOTES.md's map of docs/ lists every document there, and the headers cite
# the documents that hold proofs and specifications, not NOTES.md, which
# only points at them.
for file in "$src"/docs/*.md; do
    rel=${file#"$src"/}
    grep -qF "]($rel)" "$src/NOTES.md" ||
        fail "NOTES.md (\"A map of docs/\") does not link $rel"
done
cited=$(grep -n 'NOTES\.md' "$src"/include/dch/*.h || true)
[ -z "$cited" ] || fail "headers cite NOTES.md rather than a document under docs/: $cited"
echo "checked: NOTES.md maps every document of docs/; no header cites NOTES.md"

# ---- Numbers README states -----------------------------------------------

readme=$src/README.md
# The tests: README gives the count of build/, the tree tests/run makes
# with every part whose packages it installs; another build tree may hold
# fewer parts and so fewer tests.
said=$(grep -oE 'the [0-9]+ tests' "$readme" | grep -oE '[0-9]+' | head -n 1)
if [ -z "$said" ]; then
    fail "README.md gives no number of tests (\"the N tests\")"
elif [ "$(cd "$build" && pwd -P)" = "$(cd "$src" && pwd -P)/build" ]; then
    have=$(ctest --test-dir "$build" -N | sed -n 's/^Total Tests: //p')
    [ "$said" = "$have" ] || fail "README.md says the $said tests, ctest -N lists $have"
    echo "checked: README.md's $said tests are ctest's"
else
    echo "skipped: the number of tests ($said): README gives build/'s, and this tree is $build"
fi

header() {
    sed -n "s/^#define $1 \([0-9]*\)u\{0,1\}.*/\1/p" "$src/include/dch/$2"
}
replicas=$(header DCH_MAP_MAX_REPLICAS map.h)
grep -q "up to $replicas copies" "$readme" ||
    fail "README.md does not say \"up to $replicas copies\" (DCH_MAP_MAX_REPLICAS)"
name_max=$(header DCH_NAME_MAX common.h)
grep -q "1 to $name_max bytes" "$readme" ||
    fail "README.md does not say names have \"1 to $name_max bytes\" (DCH_NAME_MAX)"
if [ -n "${DCH_SOVERSION:-}" ]; then
    grep -q "libdch.so.$DCH_SOVERSION\b" "$readme" ||
        fail "README.md does not name libdch.so.$DCH_SOVERSION"
    stale=$(grep -oE 'libdch\.so\.[0-9]+(\.[0-9]+)?' "$readme" | sort -u |
        grep -vx "libdch.so.$DCH_SOVERSION")
    [ -z "$stale" ] || fail "README.md names another SONAME: $stale"
fi

# The options README lists for dch-analysis are the ones its --help gives.
analysis=$build/analysis/dch-analysis
if [ -x "$analysis" ]; then
    listed=$(tr '\n' ' ' <"$readme" | grep -oE '`--help` lists `[^`]*`' | head -n 1 |
        grep -oE -- '--[a-z-]+' |
        grep -vx -- --help)
    [ -n "$listed" ] || fail "README.md lists no options of dch-analysis"
    help=$("$analysis" --help)
    for opt in $listed; do
        grep -qE -- "^ +$opt( |$)" <<<"$help" ||
            fail "README.md lists $opt, which dch-analysis --help does not give"
    done
    for opt in $(grep -oE -- '^ +--[a-z-]+' <<<"$help" | tr -d ' ' | grep -vx -- --help); do
        grep -qx -- "$opt" <<<"$listed" ||
            fail "dch-analysis --help gives $opt, which README.md does not list"
    done
    echo "checked: README.md's options of dch-analysis"
else
    echo "skipped: dch-analysis's options (not built in $build)"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "the documentation's blocks and numbers match the tree"
