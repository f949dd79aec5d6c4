#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A rollout through a 3-member etcd cluster whose leader is stopped in the
# middle of it: the rollout carries on through the other members and its
# steps pass check_steps; a watcher following all three members sees rising
# epochs up to the target; the stopped member, started again, catches up.
#
# Usage: test_cluster.sh DCH CHECK_STEPS   Environment: ETCD, ETCDCTL.
. "$(dirname "${BASH_SOURCE[0]}")/tool_test.sh" "$@" cluster
key=/dch/test/cluster-map

etcd_start 3
leader=$(etcd_leader) || fail "no leader"
# Clients list the leader first, so the stop hits the member in use.
urls=${ETCD_URL[$leader]}
for i in 0 1 2; do [ "$i" = "$leader" ] || urls+=",${ETCD_URL[$i]}"; done

make_join_maps
"$dchctl" publish --etcd "$urls" --key $key orig.map >/dev/null

start_watcher "$urls" $key 60000

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
"$dchctl" rollout --etcd "$urls" --key $key join.map --max-slots $K --exec "bash $work/migrator.sh" \
    >rollout.out 2>rollout.err || fail "the rollout with its leader stopped: $(cat rollout.err)"
wait "${ETCD_PID[$leader]}" 2>/dev/null || true
ETCD_PID[$leader]=
grep -q "^done:" rollout.out || fail "the rollout did not finish"
"$check" orig.map join.map $K $(ls steps/step-*.map | sort) || fail "the steps"
last=$(ls steps/step-*.map | sort | tail -n 1)
"$dchctl" fetch --etcd "$urls" --key $key final.map >/dev/null
cmp -s final.map "$last" || fail "etcd does not hold the last step"
new_leader=$(etcd_leader) || fail "no leader after the stop"
[ "$new_leader" != "$leader" ] || fail "the leader did not change"

finish_watcher join.map

# The old leader, back, serves the map the cluster agreed on.
etcd_restart "$leader" || fail "the old leader did not restart"
for _ in $(seq 1 50); do
    "$dchctl" fetch --etcd "${ETCD_URL[$leader]}" --key $key back.map >/dev/null 2>&1 &&
        cmp -s back.map final.map && break
    sleep 0.1
done
cmp -s back.map final.map || fail "the restarted member serves another map"
echo "cluster: $(ls steps | wc -l) steps in $((SECONDS - start)) s with the leader stopped at step 4;" \
    "the watcher saw $(wc -l <watch.out) epochs"
