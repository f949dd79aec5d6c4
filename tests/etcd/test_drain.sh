#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A maintenance drain through etcd with the dchctl tool: a full drain of one
# of eight members rolled out in steps of K slots, then its undrain rolled
# out the same way, each checked step by step by check_steps; the cluster
# ends routing every key as before the drain (the fingerprint), and a
# watcher sees rising epochs up to it. A map with two copies and a primary
# drain goes through publish and fetch byte for byte (format version 4).
#
# Usage: test_drain.sh DCH CHECK_STEPS   Environment: ETCD, ETCDCTL.
. "$(dirname "${BASH_SOURCE[0]}")/tool_test.sh" "$@" drain
key=/dch/test/drain-map

etcd_start 1
url=${ETCD_URLS}

make_join_maps
"$dchctl" publish --etcd "$url" --key $key orig.map --expect 0 >/dev/null
start_watcher "$url" $key 60000

cat >migrator.sh <<'SH'
set -e
cp "$DCH_TO" "$STEPS/step-$(printf %04d "$DCH_STEP").map"
test -s "$DCH_PLAN"
SH

# roll NAME TARGET: a rollout to TARGET whose steps land in steps/NAME.
roll() {
    export STEPS=$work/steps/$1
    mkdir -p "$STEPS"
    "$dchctl" rollout --etcd "$url" --key $key "$2" --max-slots $K --exec "bash $work/migrator.sh" \
        >"$1.out" 2>"$1.err" || fail "$1 rollout: $(cat "$1.err")"
}

cp orig.map drained.map
"$dchctl" drain drained.map n3 >drain.out
grep -q "^drained n3 (full" drain.out || fail "drain says: $(cat drain.out)"
roll drain drained.map
# shellcheck disable=SC2012
"$check" orig.map drained.map $K $(ls "$work/steps/drain"/step-*.map | sort) || fail "drain steps"
ndrain=$(ls "$work/steps/drain" | wc -l)
# n3 held 1/8 of 65,536 slots, all of which leave it: ceil(8192 / K) steps.
[ "$ndrain" = 16 ] || fail "the drain took $ndrain steps, not 16"
"$dchctl" fetch --etcd "$url" --key $key stored.map >/dev/null
[ "$("$dchctl" fingerprint stored.map)" = "$("$dchctl" fingerprint drained.map)" ] ||
    fail "etcd does not hold the drained map"
"$dchctl" show stored.map | grep "^drains:        n3 (full)" >/dev/null || fail "the stored map lost its drain"

cp stored.map back.map
"$dchctl" undrain back.map n3 >/dev/null
roll undrain back.map
# shellcheck disable=SC2012
"$check" stored.map back.map $K $(ls "$work/steps/undrain"/step-*.map | sort) || fail "undrain steps"
"$dchctl" fetch --etcd "$url" --key $key final.map >/dev/null
[ "$("$dchctl" fingerprint final.map)" = "$("$dchctl" fingerprint orig.map)" ] ||
    fail "after the undrain the cluster does not route as before the drain"
"$dchctl" diff orig.map final.map | grep "^plan: 0 of 65536 slots move" >/dev/null ||
    fail "orig -> final moves slots: $("$dchctl" diff orig.map final.map | head -3)"
finish_watcher final.map

# Two copies, a primary drain: publish and fetch keep it byte for byte.
"$dchctl" init r2.map --replicas 2 >/dev/null
for i in 1 2 3 4 5; do "$dchctl" add r2.map "m$i" --force >/dev/null; done
"$dchctl" drain r2.map m2 --primary >/dev/null
"$dchctl" publish --etcd "$url" --key $key-r2 r2.map --expect 0 >/dev/null
"$dchctl" fetch --etcd "$url" --key $key-r2 r2.back >/dev/null
cmp -s r2.map r2.back || fail "a map with a primary drain came back from etcd changed"
echo "drain: $ndrain steps out, $(ls "$work/steps/undrain" | wc -l) back, watcher saw $(wc -l <watch.out) epochs"
