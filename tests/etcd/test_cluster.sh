#!/usr/bin/env bash
# A rollout through a 3-member etcd cluster whose leader is stopped in the
# middle of it: the rollout carries on through the other members and its
# steps pass check_steps; a watcher following all three members sees rising
# epochs up to the target; the stopped member, started again, catches up.
#
# Usage: test_cluster.sh DCH CHECK_STEPS   Environment: ETCD, ETCDCTL.
set -euo pipefail
dch=$(readlink -f "$1")
check=$(readlink -f "$2")
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/etcd_ctl.sh"
watcher=
stop_all() {
    [ -n "$watcher" ] && kill "$watcher" 2>/dev/null || true
    [ -n "$watcher" ] && wait "$watcher" 2>/dev/null || true
    etcd_cleanup
}
trap stop_all EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

work=$ETCD_WORK/cluster
mkdir -p "$work/steps"
cd "$work"
# A rollout keeps its step files in $TMPDIR; a killed one leaves them there.
export TMPDIR=$work
K=512
key=/dch/test/cluster-map

etcd_start 3
leader=$(etcd_leader) || fail "no leader"
# Clients list the leader first, so the stop hits the member in use.
urls=${ETCD_URL[$leader]}
for i in 0 1 2; do [ "$i" = "$leader" ] || urls+=",${ETCD_URL[$i]}"; done

"$dch" init orig.map >/dev/null
for i in 1 2 3 4 5 6 7 8; do "$dch" add orig.map "n$i" >/dev/null; done
cp orig.map join.map
"$dch" add join.map n9 >/dev/null
"$dch" publish --etcd "$urls" --key $key orig.map >/dev/null

"$dch" watch --etcd "$urls" --key $key --timeout 60000 >watch.out 2>watch.err &
watcher=$!

# The migrator keeps each step's map and stops the leader at step 4.
cat >migrator.sh <<'SH'
set -e
cp "$DCH_TO" "$STEPS/step-$(printf %04d "$DCH_STEP").map"
if [ "$DCH_STEP" = 4 ]; then
    kill "$LEADER_PID"
    while kill -0 "$LEADER_PID" 2>/dev/null; do sleep 0.05; done
fi
SH
export STEPS=$work/steps LEADER_PID=${ETCD_PID[$leader]}
start=$SECONDS
"$dch" rollout --etcd "$urls" --key $key join.map --max-slots $K --exec "bash $work/migrator.sh" \
    >rollout.out 2>rollout.err || fail "the rollout with its leader stopped: $(cat rollout.err)"
wait "${ETCD_PID[$leader]}" 2>/dev/null || true
ETCD_PID[$leader]=
grep -q "^done:" rollout.out || fail "the rollout did not finish"
"$check" orig.map join.map $K $(ls steps/step-*.map | sort) || fail "the steps"
last=$(ls steps/step-*.map | sort | tail -n 1)
"$dch" fetch --etcd "$urls" --key $key final.map >/dev/null
cmp -s final.map "$last" || fail "etcd does not hold the last step"
new_leader=$(etcd_leader) || fail "no leader after the stop"
[ "$new_leader" != "$leader" ] || fail "the leader did not change"

final_fp=$("$dch" fingerprint join.map)
for _ in $(seq 1 100); do
    tail -n 1 watch.out | grep -q "fingerprint $final_fp" && break
    sleep 0.1
done
kill "$watcher"
wait "$watcher" 2>/dev/null || true
watcher=
tail -n 1 watch.out | grep -q "fingerprint $final_fp" || fail "the watcher missed the last map"
awk '{ if (NR > 1 && $2 <= last) { print "epoch " $2 " after " last; bad = 1 } last = $2 }
     END { exit bad }' watch.out || fail "the watcher stepped back"

# The old leader, back, serves the map the cluster agreed on.
etcd_restart "$leader" || fail "the old leader did not restart"
for _ in $(seq 1 50); do
    "$dch" fetch --etcd "${ETCD_URL[$leader]}" --key $key back.map >/dev/null 2>&1 &&
        cmp -s back.map final.map && break
    sleep 0.1
done
cmp -s back.map final.map || fail "the restarted member serves another map"
echo "cluster: $(ls steps | wc -l) steps in $((SECONDS - start)) s with the leader stopped at step 4;" \
    "the watcher saw $(wc -l <watch.out) epochs"
