#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Rollouts through one etcd member with the dchctl tool: a join (8 -> 9 members)
# and a leave, at the default 65,536 slots with K = 512, checked step by step
# by check_steps; the operator killed with SIGKILL mid-rollout and resumed;
# the step folder the killed rollout left behind removed by the next one,
# but not a folder whose rollout still lives; a watcher that must see rising
# epochs up to the target, across an etcd restart; etcd down at publish
# time (a clear error, nothing changed); and a stale --expect (exit status 3).
#
# Usage: test_rollout.sh DCH CHECK_STEPS   Environment: ETCD, ETCDCTL.
. "$(dirname "${BASH_SOURCE[0]}")/tool_test.sh" "$@" rollout
key=/dch/test/map

etcd_start 1
url=${ETCD_URLS}

make_join_maps

# Usage errors: exit status 2, before any contact with etcd.
usage_case() {
    local status=0
    "$dchctl" "$@" >/dev/null 2>usage.err || status=$?
    [ "$status" = 2 ] || fail "dchctl $* exited with $status, not 2"
}
usage_case publish --etcd "$url" orig.map
usage_case publish --etcd ftp://127.0.0.1:1 --key $key orig.map
usage_case publish --etcd "$url" --key $key orig.map --expect -1
usage_case rollout --etcd "$url" --key $key orig.map
usage_case rollout --etcd "$url" --key $key orig.map --max-slots 0
usage_case rollout --etcd "$url" --key $key orig.map --max-slots 8 --json
usage_case watch --etcd "$url" --key $key --count 0
usage_case fetch --etcd "$url" --key $key a.map b.map
# As for every dchctl command, a leading '-' is an option before -- only.
usage_case fetch --etcd "$url" --key $key -x.map

"$dchctl" publish --etcd "$url" --key $key orig.map --expect 0 >/dev/null
"$dchctl" fetch --etcd "$url" --key $key -- -x.map >/dev/null
cmp -s ./-x.map orig.map || fail "fetch -- -x.map did not write the stored map to -x.map"
orig_epoch=$("$dchctl" show orig.map --json | sed -n 's/.*"epoch": *\([0-9]*\).*/\1/p' | head -1)
[ "$orig_epoch" = 8 ] || fail "orig epoch is $orig_epoch"

start_watcher "$url" $key 90000

# The migrator: keeps each step's map, checks that the step it is called for
# is the one stored in etcd, and kills its rollout once at step 5.
cat >migrator.sh <<'SH'
set -e
cp "$DCH_TO" "$STEPS/step-$(printf %04d "$DCH_STEP").map"
test -s "$DCH_PLAN"
"$DCH" fetch --etcd "$URL" --key "$KEY" stored.map >/dev/null
cmp -s stored.map "$DCH_TO" || { echo "step $DCH_STEP is not the stored map" >&2; exit 1; }
if [ "$DCH_STEP" = "${KILL_AT:-0}" ] && [ ! -e killed ]; then
    touch killed
    # The rollout is our parent, or the parent of the shell that runs us.
    pid=$PPID
    [ "$(cat /proc/$pid/comm)" = dchctl ] || pid=$(awk '{ print $4 }' /proc/$pid/stat)
    [ "$(cat /proc/$pid/comm)" = dchctl ] || { echo "no dchctl above the migrator" >&2; exit 1; }
    kill -KILL "$pid"
    sleep 5
fi
SH
export URL=$url KEY=$key

# Join, killed at step 5, then resumed.
export STEPS=$work/steps/join KILL_AT=5
mkdir -p "$STEPS"
set +e
"$dchctl" rollout --etcd "$url" --key $key join.map --max-slots $K --exec "bash $work/migrator.sh" \
    >join1.out 2>join1.err &
wait $! 2>/dev/null
status=$?
set -e
[ "$status" = 137 ] || fail "the killed rollout exited with $status: $(cat join1.err)"
"$dchctl" fetch --etcd "$url" --key $key mid.map >mid.out
grep -q "^epoch $((orig_epoch + 5)) .* step 5/" mid.out || fail "after the kill etcd holds: $(cat mid.out)"
# The killed rollout's step folder is still here, unlocked; a folder a live
# rollout holds (its flock taken) must survive the sweep of the next one.
left=$(find . -maxdepth 1 -name 'dch-rollout-*' | wc -l)
[ "$left" = 1 ] || fail "the killed rollout left $left step folders, not 1"
mkdir dch-rollout-live
# One process that holds the lock and is the one killed below.
(exec 9<dch-rollout-live && flock 9 && touch live.held && exec sleep 120) >/dev/null 2>&1 &
holder=$!
for _ in $(seq 1 100); do [ -e live.held ] && break; sleep 0.1; done
[ -e live.held ] || fail "no lock on dch-rollout-live"
"$dchctl" rollout --etcd "$url" --key $key join.map --max-slots $K --exec "bash $work/migrator.sh" \
    >join2.out 2>join2.err || fail "the resumed rollout: $(cat join2.err)"
grep -q "^resume: migrating step 5/" join2.out || fail "the resumed rollout did not migrate step 5 again"
grep -q "^step 6/" join2.out || fail "the resumed rollout did not go on at step 6"
grep -q "^done:" join2.out || fail "the resumed rollout did not finish"
left=$(find . -maxdepth 1 -name 'dch-rollout-*' -printf '%f ')
[ "$left" = "dch-rollout-live " ] || fail "step folders after the resumed rollout: $left"
kill "$holder"
wait "$holder" 2>/dev/null || true
holder=
rmdir dch-rollout-live
# shellcheck disable=SC2012
"$check" orig.map join.map $K $(ls "$STEPS"/step-*.map | sort) || fail "join steps"
nsteps=$(ls "$STEPS" | wc -l)
[ "$nsteps" -ge 15 ] || fail "a join of 1/9 with K = $K took $nsteps steps"

# Leave: n3 goes, from the map the join ended on.
"$dchctl" fetch --etcd "$url" --key $key joined.map >/dev/null
cmp -s joined.map "$STEPS/step-$(printf %04d "$nsteps").map" || fail "etcd does not hold the last step"
cp joined.map leave.map
"$dchctl" remove leave.map n3 >/dev/null
export STEPS=$work/steps/leave KILL_AT=0
mkdir -p "$STEPS"
"$dchctl" rollout --etcd "$url" --key $key leave.map --max-slots $K --exec "bash $work/migrator.sh" \
    >leave.out 2>leave.err || fail "leave rollout: $(cat leave.err)"
"$check" joined.map leave.map $K $(ls "$STEPS"/step-*.map | sort) || fail "leave steps"
# A rollout to where the cluster already is does nothing.
"$dchctl" rollout --etcd "$url" --key $key leave.map --max-slots $K >again.out
grep -q "^step" again.out && fail "a finished rollout published again"

# Stale expectation: exit status 3, nothing written.
cp leave.map stale.map
"$dchctl" weight stale.map n1 5 >/dev/null
set +e
"$dchctl" publish --etcd "$url" --key $key stale.map --expect "$orig_epoch" 2>stale.err
status=$?
set -e
[ "$status" = 3 ] || fail "a stale publish exited with $status"
grep -q "stored epoch" stale.err || fail "the conflict message: $(cat stale.err)"

# etcd down at publish time: a clear error in bounded time, nothing changed.
"$dchctl" fetch --etcd "$url" --key $key before.map >/dev/null
etcd_stop 0
before_epoch=$("$dchctl" show before.map --json | sed -n 's/.*"epoch": *\([0-9]*\).*/\1/p' | head -1)
cp before.map down.map
"$dchctl" add down.map n10 >/dev/null
set +e
start=$SECONDS
"$dchctl" publish --etcd "$url" --key $key down.map --expect "$before_epoch" --timeout 1500 \
    2>down.err
status=$?
"$dchctl" rollout --etcd "$url" --key $key orig.map --max-slots $K --timeout 1500 2>down2.err
status2=$?
took=$((SECONDS - start))
set -e
[ "$status" = 1 ] && [ "$status2" = 1 ] || fail "with etcd down: exit $status and $status2"
grep -q "input/output error: etcd at $url" down.err || fail "the error says: $(cat down.err)"
[ "$took" -le 8 ] || fail "with etcd down the two commands took $took s"
etcd_restart 0
"$dchctl" fetch --etcd "$url" --key $key after.map >/dev/null
cmp -s before.map after.map || fail "the stored map changed while etcd was down"

# The watcher lived through the restart: a map published now reaches it.
"$dchctl" publish --etcd "$url" --key $key down.map --expect "$before_epoch" >/dev/null
finish_watcher down.map
echo "rollout: join $nsteps steps, leave $(ls "$work/steps/leave" | wc -l) steps, watcher saw $(wc -l <watch.out) epochs"
