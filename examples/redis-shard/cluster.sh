#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The cluster mode of redis-shard: the map in etcd, changed in bounded steps.
#
# Starts one etcd member and five Redis servers on free loopback ports
# (temporary data, everything stopped and removed on exit), publishes a map
# of shards s1..s4, loads a data set, starts two routers that follow the map
# in etcd while their clients read and write, then rolls out a join of s5
# and a leave of s2 with `dchctl rollout --max-slots K`, whose migrator
# (`redis-shard-cluster migrate`) waits for every router to route by each
# step before it moves that step's keys. Fails unless: every router saw its
# epochs rise and never went back, read nothing stale, missed nothing, lost
# no write; every data-set key is on its owner under the final map with its
# value and nothing else is anywhere (s2 empty).
#
# With `naive` as fifth argument the routers ignore the map before the
# newest (no fallback), and the script passes only if the checks catch them.
#
# Usage: cluster.sh DCH REDIS_SHARD_CLUSTER [KEYS [K [naive]]]
# Environment: ETCD, ETCDCTL (defaults: etcd, etcdctl from PATH).
set -euo pipefail
dchctl=$(readlink -f "$1")
prog=$(readlink -f "$2")
keys=${3:-20000}
K=${4:-1024}
naive=0
[ "${5:-}" = naive ] && naive=1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=etcd_servers.sh
. "$here/etcd_servers.sh"
key=/redis-shard/map
start_etcd_redis 5
mkdir -p acks
# A rollout keeps its step files in $TMPDIR; a killed one leaves them there.
export TMPDIR=$work

"$dchctl" init map0 >/dev/null
for i in 1 2 3 4; do "$dchctl" add map0 "s$i" >/dev/null; done
"$dchctl" publish --etcd "$url" --key $key map0 >/dev/null
"$prog" load --shards "$shards" --map map0 --keys "$keys" >load.out

for r in ra rb; do
    "$prog" router --shards "$shards" --etcd "$url" --key $key --name $r --acks "$work/acks" \
        --keys 300 --seconds 100 --stop "$work/stop" --naive $naive >"$r.out" 2>"$r.err" &
    router_pids+=($!)
done

migrator="'$prog' migrate --shards '$shards' --acks '$work/acks' --routers ra,rb"
cp map0 join
"$dchctl" add join s5 >/dev/null
start=$SECONDS
rollout_failed=0
if "$dchctl" rollout --etcd "$url" --key $key join --max-slots "$K" --exec "$migrator" \
    >join.out 2>join.err; then
    "$dchctl" fetch --etcd "$url" --key $key leave >/dev/null
    "$dchctl" remove leave s2 >/dev/null
    "$dchctl" rollout --etcd "$url" --key $key leave --max-slots "$K" --exec "$migrator" \
        >leave.out 2>leave.err || rollout_failed=1
else
    rollout_failed=1
fi
[ "$naive" = 1 ] || [ "$rollout_failed" = 0 ] || fail "rollout: $(tail -n 3 join.err leave.err 2>/dev/null)"
took=$((SECONDS - start))
touch stop
status=0
for i in 0 1; do
    wait "${router_pids[$i]}" || status=1
done
router_pids=()
cat ra.out rb.out
if [ "$naive" = 1 ]; then
    # Caught either by a router's checks or by the migrator, which finds a
    # key written on its new owner while the old owner still held it.
    if [ "$status" = 1 ] && grep -qE "(misses|stale|lost)=[1-9]" ra.out rb.out; then
        echo "cluster mode: routers that ignore the previous map are caught by their reads"
    elif [ "$rollout_failed" = 1 ] && grep -q BUSYKEY join.err leave.err 2>/dev/null; then
        echo "cluster mode: routers that ignore the previous map are caught by the migrator"
    else
        fail "routers without the fallback were not caught"
    fi
    exit 0
fi
[ "$status" = 0 ] || fail "a router failed: $(cat ra.err rb.err)"
for r in ra rb; do
    sort -n -c "acks/$r.epochs" 2>/dev/null && [ -z "$(uniq -d "acks/$r.epochs")" ] ||
        fail "router $r went back an epoch"
    grep -q "fallback_reads=[1-9]" "$r.out" || fail "router $r never read through the fallback"
done
"$dchctl" fetch --etcd "$url" --key $key final >/dev/null
[ "$("$dchctl" fingerprint final)" = "$("$dchctl" fingerprint leave)" ] || fail "etcd does not hold the target"
"$prog" check --shards "$shards" --map final --keys "$keys" | tee check.out || fail "the data set"
steps=$(grep -c '^@ step=' join.out leave.out | awk -F: '{ s += $2 } END { print s }')
moved=$(sed -n 's/^@ step=.* moved=\([0-9]*\).*/\1/p' join.out leave.out | awk '{ s += $1 } END { print s }')
echo "cluster mode: join s5 and leave s2 in $steps steps of at most $K slots, $moved keys moved in ${took}s"
