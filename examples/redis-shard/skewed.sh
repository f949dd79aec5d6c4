#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The skewed scenario of redis-shard: keys with Zipf popularity, one round of
# balancing by load, the map shared through etcd.
#
# Starts one etcd member and SHARDS Redis servers on free loopback ports
# (temporary data, everything stopped and removed on exit), publishes a map
# of shards s1..sSHARDS (`dchctl publish`), and runs `redis-shard-skewed`
# (skewed.c): routers that count per-slot load while serving a Zipf
# workload, one balancing round published through etcd, the routers picking
# the new map up, the moved slots' keys migrated, and the same workload
# again. Fails unless Redis's own per-shard counts match the load counters
# in both phases, the hottest shard's share of operations does not rise,
# and every key is on its owner with its last value.
#
# Usage: skewed.sh DCHCTL REDIS_SHARD_SKEWED [KEYS [OPS [SHARDS]]]
#   KEYS 20000, OPS (operations a router, two routers) 20000, SHARDS 8
# Environment: ETCD, ETCDCTL (defaults: etcd, etcdctl from PATH).
# Exit status 77 (skipped) when redis-server or redis-cli is missing.
set -euo pipefail
dchctl=$(readlink -f "$1")
prog=$(readlink -f "$2")
keys=${3:-20000}
ops=${4:-20000}
nshards=${5:-8}
for p in redis-server redis-cli; do
    command -v "$p" >/dev/null || { echo "SKIP: $p is not installed"; exit 77; }
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=etcd_servers.sh
. "$here/etcd_servers.sh"
key=/redis-shard/skewed
start_etcd_redis "$nshards"

"$dchctl" init map0 >/dev/null
for i in $(seq "$nshards"); do "$dchctl" add map0 "s$i" --force >/dev/null; done
"$dchctl" publish --etcd "$url" --key $key map0 >/dev/null

start=$SECONDS
"$prog" --shards "$shards" --etcd "$url" --key $key --keys "$keys" --ops "$ops" \
    --routers 2 --loads-out loads.txt >skewed.out 2>skewed.err || {
    cat skewed.out
    fail "redis-shard-skewed: $(cat skewed.err)"
}
took=$((SECONDS - start))
grep -v '^@' skewed.out

# The map etcd holds now is the balanced one; dchctl reads it, and the loads
# the routers counted, and its members' loads must be what Redis counted.
"$dchctl" fetch --etcd "$url" --key $key balanced >/dev/null
echo
echo "dchctl show with the routers' loads, before and after the balancing round:"
for m in map0 balanced; do
    "$dchctl" show $m loads.txt >$m.show || fail "dchctl show $m loads.txt"
    sed -n 's/^load: *//p' $m.show
    awk '/^ *id name/ { on = 1 } on && NF' $m.show | awk '{ print "  " $2, $(NF-3), $NF }'
done
for m in map0 balanced; do
    "$dchctl" show $m loads.txt --json >$m.json
done
# Redis's operations after balancing, shard by shard, are the balanced map's
# loads as dchctl computes them.
while read -r name ops; do
    got=$(grep -o "\"name\": \"$name\", [^}]*" balanced.json | grep -o '"load": [0-9]*' |
        grep -o '[0-9]*$')
    [ "$got" = "$ops" ] || fail "dchctl show gives $name a load of $got, Redis counted $ops"
done < <(awk '/^shard +before/ { on = 1; next } on && NF == 0 { exit } on { print $1, $4 }' skewed.out)
before=$(sed -n 's/^@ hottest_before=\([0-9.]*\).*/\1/p' skewed.out)
after=$(sed -n 's/^@ .*hottest_after=\([0-9.]*\).*/\1/p' skewed.out)
[ -n "$before" ] && [ -n "$after" ] || fail "no shares in the output"
awk -v b="$before" -v a="$after" 'BEGIN { exit !(a <= b) }' ||
    fail "the hottest shard's share rose: $before -> $after"
echo "skewed: the hottest shard's share of operations went from $before to $after in ${took}s"
