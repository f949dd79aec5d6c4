#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes the golden map files of tests/golden/ and the fuzz seed corpus of
# tests/fuzz/corpus_map_load/ with the dchctl tool, and next to each golden map
# NAME.dchmap its expectations NAME.expect: epoch, fingerprint, members, and
# the owner of 100 keys, as this version computes them.
#
# Golden files pin the format: every later version must load them and route
# exactly as recorded (tests/test_map_file.c checks). So they are written
# once and committed; existing files are never rewritten (a new case gets a
# new name, and only new cases are written) unless --force is given, which is
# only right while the format version they belong to has not been released.
#
# The version 3 seeds (maps with replicas or zones, which the tool does not
# build) are written by tests/test_map_file_replicas.c: run it with
# DCH_WRITE_SEEDS=1; without it, it checks that they are current.
#
# Usage: bash tests/golden/generate.sh [--force] [path/to/dchctl]
#        (default: build/tools/dchctl/dchctl, built by tests/run)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

force=0
if [ "${1:-}" = "--force" ]; then
    force=1
    shift
fi
dchctl=${1:-build/tools/dchctl/dchctl}
[ -x "$dchctl" ] || { echo "generate.sh: no dchctl tool at $dchctl (build first)" >&2; exit 1; }

golden=tests/golden
corpus=tests/fuzz/corpus_map_load
key=000102030405060708090a0b0c0d0e0f
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Build one map in $work/NAME.dchmap from "init ARGS" and a list of changes
# ("add NAME W", "remove NAME", "weight NAME W").
build() {
    local name=$1 init=$2
    shift 2
    # shellcheck disable=SC2086
    "$dchctl" init "$work/$name.dchmap" $init >/dev/null
    local change
    for change in "$@"; do
        # shellcheck disable=SC2086
        set -- $change
        case $1 in
        add) "$dchctl" add "$work/$name.dchmap" "$2" --weight "$3" >/dev/null ;;
        remove) "$dchctl" remove "$work/$name.dchmap" "$2" >/dev/null ;;
        weight) "$dchctl" weight "$work/$name.dchmap" "$2" "$3" >/dev/null ;;
        esac
    done
}

expect() {
    local map=$1
    echo "# Expectations for $(basename "$map"), written by tests/golden/generate.sh"
    echo "# with $("$dchctl" --version). Do not edit: later versions must match."
    "$dchctl" show "$map" | awk '$1 == "epoch:" { print "epoch", $2 }'
    echo "fingerprint $("$dchctl" fingerprint "$map")"
    # Member rows of `dchctl show`: id name weight slots ...
    "$dchctl" show "$map" | awk 'NF >= 4 && $1 ~ /^[0-9]+$/ { print "member", $1, $3, $4, $2 }'
    local keys=()
    for i in $(seq 0 89); do keys+=("key-$i"); done
    keys+=(user:1 user:42 order/2024/17 a b z 0 "~" session-ffee 9999999999)
    "$dchctl" lookup "$map" "${keys[@]}" | awk -F'\t' '{ print "route", $1, $2 }'
}

build default-5 "--key $key" "add node-1 1" "add node-2 1" "add node-3 1" \
    "add node-4 1" "add node-5 1"
build small-4x4-weighted "--units 4 --slots 4 --key $key" "add a 1" "add b 2" \
    "add c 3"
build empty "--units 16 --slots 8 --key $key"
build drained "--units 64 --slots 16 --key $key" "add alpha 2" "add beta 1" \
    "add gamma 1" "add delta 3" "weight gamma 0"
build holes "--units 32 --slots 32 --key $key" "add a 1" "add b 1" "add c 1" \
    "add d 1" "add e 1" "remove b" "remove d" "weight c 5" "add f 2"
build weightless "--units 8 --slots 8" "add idle 0" "add spare 0"
# A map in transition (format version 2): step 2 of a join staged in steps of
# 16 slots.
build stage-old "--units 16 --slots 16 --key $key" "add a 1" "add b 1" "add c 1"
cp "$work/stage-old.dchmap" "$work/stage-new.dchmap"
"$dchctl" add "$work/stage-new.dchmap" d --weight 1 >/dev/null
mkdir "$work/steps"
"$dchctl" plan "$work/stage-old.dchmap" "$work/stage-new.dchmap" --max-slots 16 \
    --write-dir "$work/steps" >/dev/null
cp "$work/steps/step-0002.dchmap" "$work/join-step-2.dchmap"

for name in default-5 small-4x4-weighted empty drained holes weightless join-step-2; do
    if [ "$force" -eq 0 ] && { [ -e "$golden/$name.dchmap" ] || [ -e "$golden/$name.expect" ]; }; then
        echo "generate.sh: $golden/$name.* exist; golden files are never rewritten" >&2
        continue
    fi
    cp "$work/$name.dchmap" "$golden/$name.dchmap"
    expect "$golden/$name.dchmap" >"$golden/$name.expect"
done

# Seeds for the fuzzer: small valid maps, both table encodings.
build one-slot "--units 1 --slots 1" "add only 1"
build runs "--units 32 --slots 32 --key $key" "add left 1" "add right 1"
for name in small-4x4-weighted empty drained holes weightless one-slot runs join-step-2; do
    cp "$work/$name.dchmap" "$corpus/$name.dchmap"
done
echo "generate.sh: golden files in $golden, fuzz seeds in $corpus"
