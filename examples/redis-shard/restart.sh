#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A rolling restart against real Redis servers: start K servers on free
# loopback ports and run `redis-shard restart` over them (R = 2 copies of
# every key; each shard in turn drained as a primary, stopped with SHUTDOWN
# SAVE, started again on its data file by this script's launcher, caught
# up with the writes it missed, and undrained; a client reading and
# writing between every two steps), then the same restarts by weight 0 and
# back, counted on the map. Passes when the drains migrate no key, no read
# fails or is stale, every copy of every key is in place at the end, and
# the weights migrate keys (the comparison the scenario is for); then the
# same run without the catch-up of missed writes must fail with stale reads.
#
# Usage: bash examples/redis-shard/restart.sh [--keys N] [--shards K]
#            [--replicas R] [--ops N] [--program PATH] [--work DIR]
#            [--hash-key HEX32]
#
# The servers listen on 127.0.0.1 only, keep their data files in the work
# folder, and are stopped when the script exits for any reason.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

keys=20000
shards=4
replicas=2
ops=2000
# shellcheck source=servers.sh
. "$here/servers.sh"

parse_options "replicas ops" "$@"
case $keys$shards$replicas$ops in
*[!0-9]*) echo "restart.sh: --keys, --shards, --replicas and --ops take numbers" >&2; exit 2 ;;
esac
[ "$shards" -gt "$replicas" ] ||
    { echo "restart.sh: --shards must exceed --replicas" >&2; exit 2; }

prepare_example redis-shard-restart

start_members

echo "######## rolling restart: $replicas copies of every key, $shards shards, $keys keys"
"$program" restart --replicas "$replicas" --keys "$keys" --ops "$ops" --hash-key "$hash_key" \
    --restart "bash $here/servers.sh restart $work" "${members[@]}" | tee "$work/run.log"

# The numbers, from the @ lines: the program already fails on a migrated
# key or a failed or stale read; the script checks that the client ran and
# that the weights, which the drains are compared with, did migrate keys.
awk '$1 == "@restart" && $2 == "drain" {
        for (i = 3; i <= NF; i++) { split($i, kv, "="); d[kv[1]] = kv[2] }
     }
     $1 == "@restart" && $2 == "weight" {
        for (i = 3; i <= NF; i++) { split($i, kv, "="); w[kv[1]] = kv[2] }
     }
     END {
        bad = d["migrated"] != 0 || d["failed"] != 0 || d["stale"] != 0
        bad = bad || d["reads"] == 0 || d["writes"] == 0 || d["noted"] == 0
        bad = bad || w["migrated"] == 0
        printf "%s drains: %d keys migrated, %d reads (%d failed, %d stale), %d writes, %d missed and caught up; weights: %d keys migrated\n",
               bad ? "FAIL" : "ok  ", d["migrated"], d["reads"], d["failed"], d["stale"],
               d["writes"], d["caught_up"], w["migrated"]
        exit bad
     }' "$work/run.log"

# The check can fail: without the catch-up, a shard undrained after its
# restart serves the values it held before it stopped.
echo
echo "######## the same without the catch-up: the check must fail"
stop_servers
start_members
if "$program" restart --replicas "$replicas" --keys "$keys" --ops "$ops" --hash-key "$hash_key" \
    --no-catch-up --restart "bash $here/servers.sh restart $work" "${members[@]}" \
    >"$work/no-catch-up.log" 2>&1; then
    cat "$work/no-catch-up.log"
    echo "FAIL: without the catch-up, the check passed"
    exit 1
fi
if ! grep -Eq '^@restart drain .* stale=[1-9]' "$work/no-catch-up.log"; then
    cat "$work/no-catch-up.log"
    echo "FAIL: without the catch-up, no stale read was reported"
    exit 1
fi
grep -E '^(drains|after):' "$work/no-catch-up.log"
echo "ok: without the catch-up the client reads stale values"
