#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fault tests of dchctl's etcd commands, one scenario per run, each against
# etcd members started here on loopback (etcd_ctl.sh) and a small map
# (64 units of 16 slots; a join of two members to six, in steps of K):
#
#   kill    3 members. The rollout is killed with SIGKILL while the migrator
#           of step 3 sleeps 4 s, and resumed at once: the resume must wait
#           for that migrator, never run a second one beside it, and never
#           publish a step or delete its files while it runs.
#   twins   3 members. Two identical rollouts started together: exactly one
#           wins, the other exits 3 naming the owner; every step's migrator
#           runs exactly once.
#   frozen  3 members. A publish, and later a rollout's step, sent while
#           both followers are stopped (SIGSTOP): exit status 4 (unknown),
#           not 1 ("nothing written"), with what to run next; after SIGCONT
#           the same command again succeeds and the key's history has no
#           extra write.
#   slow    1 member behind a proxy that delays every request by 2.6 s
#           (slow_proxy.py): the rollout with the default deadline
#           finishes (a fixed 2.5 s attempt never would).
#   compact 1 member. The rollout is killed in step 3's migrator and etcd
#           compacted: a resume without the step's maps in the folder
#           exits 1 and publishes nothing; with them it migrates step 3
#           again from the folder's maps, then goes on.
#   adopt   1 member. The stopped rollout's folder belongs to another user
#           (needs root), or the record names a folder outside $TMPDIR: the
#           resume exits 1, runs no migrator and touches nothing.
#   unfinished  1 member. A rollout whose last migrator fails; a rollout to
#           another target then exits 3 ("finish the rollout to X first"),
#           and the first rollout run again migrates its last step again.
#
# Every scenario checks: the migrators' log (each logs "start" and "end"
# with its step, epoch, pid and time) has no two migrators at once, every
# start has its end, and no migrator saw its step files gone or a later
# step published while it ran; etcd's history of the key, revision by
# revision, is the first map then exactly the steps `dchctl plan
# --write-dir` makes, byte for byte; the final map routes like the target.
#
# compact, adopt and unfinished cannot check the history at each revision
# (compacted, or a second target) and check the stored map instead.
#
# Usage: test_faults.sh DCH CHECK_STEPS SCENARIO   Environment: ETCD, ETCDCTL.
scenario=${3:?usage: test_faults.sh DCH CHECK_STEPS kill|twins|frozen|slow|compact|adopt|unfinished}
. "$(dirname "${BASH_SOURCE[0]}")/tool_test.sh" "$1" "$2" "faults-$scenario"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
key=/dch/test/faults
K=24
bg=()
stopped=()
# Everything this script started, also on failure: SIGCONT first, so that
# a stopped member can die.
cleanup_faults() {
    local p
    for p in "${stopped[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
    for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${bg[@]}"; do wait "$p" 2>/dev/null || true; done
    stop_all
}
trap cleanup_faults EXIT

command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

# orig.map: n1 .. n6 at 64 x 16 slots; target.map: n7 and n8 too; the
# steps the rollout must publish, in plan/.
make_maps() {
    "$dchctl" init orig.map --units 64 --slots 16 --force >/dev/null
    for i in 1 2 3 4 5 6; do "$dchctl" add orig.map "n$i" >/dev/null; done
    cp orig.map target.map
    "$dchctl" add target.map n7 >/dev/null
    "$dchctl" add target.map n8 >/dev/null
    rm -rf plan
    "$dchctl" plan orig.map target.map --max-slots $K --write-dir plan >/dev/null
}

# The migrator: logs start and end; checks at both ends that etcd stores
# its step and that its files are there; sleeps SLOW_SECS the first time it
# runs for SLOW_STEP (after touching at-slow), SLEEP every time; stops the
# FREEZE pids (the followers) at the end of step FREEZE_AT; exits 2 the
# first time it runs for FAIL_STEP (after logging its end).
cat >migrator.sh <<'SH'
log() { echo "$1 $DCH_STEP $DCH_EPOCH $$ $(date +%s%N)" >>"$MWORK/migrators.log"; }
bad() { echo "bad $DCH_STEP $DCH_EPOCH $$ $1" >>"$MWORK/migrators.log"; exit 1; }
stored_is_mine() {
    "$DCH" fetch --etcd "$MURL" --key "$KEY" "$MWORK/seen.$$.map" >/dev/null 2>&1 &&
        cmp -s "$MWORK/seen.$$.map" "$DCH_TO"
}
log start
stored_is_mine || bad "etcd does not store the step at the start"
"$DCH" verify "$DCH_TO" >/dev/null || bad "the step map does not verify"
if [ "$DCH_STEP" = "${SLOW_STEP:-}" ] && [ ! -e "$MWORK/slow.done" ]; then
    touch "$MWORK/slow.done" "$MWORK/at-slow"
    sleep "$SLOW_SECS"
fi
[ -z "${SLEEP:-}" ] || sleep "$SLEEP"
test -s "$DCH_TO" && test -s "$DCH_FROM" && test -s "$DCH_PLAN" || bad "the step files are gone"
stored_is_mine || bad "a later step was published while this migrator ran"
if [ "$DCH_STEP" = "${FREEZE_AT:-}" ] && [ ! -e "$MWORK/frozen.done" ]; then
    touch "$MWORK/frozen.done"
    kill -STOP $FREEZE
fi
log end
if [ "$DCH_STEP" = "${FAIL_STEP:-}" ] && [ ! -e "$MWORK/fail.done" ]; then
    touch "$MWORK/fail.done"
    exit 2
fi
rm -f "$MWORK/seen.$$.map"
SH
export MWORK=$work KEY=$key
: >migrators.log

# The log: no "bad" line, never two migrators at once, every start ended.
check_log() {
    grep '^bad' migrators.log && fail "a migrator found a fault (above)"
    awk '$1 == "start" { if (open != "") { print "migrator " $4 " (step " $2 ") started while " open " ran"; bad = 1 } open = $4 " (step " $2 ")" }
         $1 == "end" { open = "" }
         END { if (open != "") { print "migrator " open " never ended"; bad = 1 } exit bad }' \
        migrators.log || fail "migrators overlapped"
    local n step
    n=$(ls plan | wc -l)
    for ((step = 1; step <= n; step++)); do
        grep -q "^end $step " migrators.log || fail "the migrator of step $step never ended"
    done
}

# history URL KEY: every revision of the key, oldest first, in hist/.
history() {
    local url=$1 k=$2 json mod i=0 revs=()
    rm -rf hist
    mkdir hist
    json=$("$ETCDCTL" --endpoints="$url" get "$k" -w json)
    while mod=$(jq -r '.kvs[0].mod_revision // empty' <<<"$json") && [ -n "$mod" ]; do
        jq -r '.kvs[0].value' <<<"$json" | base64 -d >"hist/r$mod"
        revs=("$mod" "${revs[@]}")
        [ "$mod" -gt 1 ] || break
        json=$("$ETCDCTL" --endpoints="$url" get "$k" --rev=$((mod - 1)) -w json)
    done
    for mod in "${revs[@]}"; do
        i=$((i + 1))
        mv "hist/r$mod" "hist/$(printf %04d $i).map"
    done
}

# check_history URL KEY FIRST: the history is FIRST then the plan's steps.
check_history() {
    history "$1" "$2"
    local want=("$3") got=(hist/*.map) i
    for f in plan/step-*.dchmap; do want+=("$f"); done
    [ "${#got[@]}" = "${#want[@]}" ] ||
        fail "etcd holds ${#got[@]} versions of $2, the plan ${#want[@]} (first map included)"
    for i in "${!want[@]}"; do
        cmp -s "${got[$i]}" "${want[$i]}" || fail "version $((i + 1)) of $2 is not ${want[$i]}"
    done
    [ "$("$dchctl" fingerprint "${got[-1]}")" = "$("$dchctl" fingerprint target.map)" ] ||
        fail "the final map does not route like the target"
    "$check" orig.map target.map $K "${got[@]:1}" >/dev/null || fail "check_steps"
}

# wait_for FILE SECONDS
wait_for() {
    for _ in $(seq 1 $(($2 * 10))); do
        [ -e "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

# rollout_cmd URLS [OPTION...]: the rollout, as dchctl itself (exec), so
# that `rollout_cmd ... &` gives dchctl's pid.
rollout_cmd() {
    exec "$dchctl" rollout --etcd "$1" --key "$key" target.map --max-slots $K \
        --exec "bash $work/migrator.sh" "${@:2}"
}

scenario_kill() {
    etcd_start 3
    export MURL=$ETCD_URLS SLOW_STEP=3 SLOW_SECS=4
    "$dchctl" publish --etcd "$ETCD_URLS" --key $key orig.map >/dev/null
    rollout_cmd "$ETCD_URLS" >first.out 2>first.err &
    local pid=$! status=0
    bg+=("$pid")
    wait_for at-slow 40 || fail "the rollout did not reach step 3: $(cat first.err)"
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null || status=$?
    [ "$status" = 137 ] || fail "the killed rollout exited with $status"
    (rollout_cmd "$ETCD_URLS") >second.out 2>second.err ||
        fail "the resumed rollout: $(cat second.err)"
    check_log
    check_history "$ETCD_URLS" $key orig.map
    grep -q "waiting for the migrator of step 3" second.err ||
        fail "the resume did not wait for the migrator of step 3: $(cat second.err)"
    grep -q "^done:" second.out || fail "the resumed rollout did not finish"
    [ "$(grep -c '^start 3 ' migrators.log)" -le 2 ] || fail "step 3 migrated more than twice"
    # Run again when done: says so, runs nothing.
    local before
    before=$(wc -l <migrators.log)
    (rollout_cmd "$ETCD_URLS") >third.out 2>third.err || fail "a finished rollout run again"
    grep -q "^done already" third.out || fail "a finished rollout run again: $(cat third.out)"
    [ "$(wc -l <migrators.log)" = "$before" ] || fail "a finished rollout ran a migrator again"
    echo "kill: resumed after a SIGKILL at step 3, $(grep -c '^start' migrators.log) migrator runs"
}

scenario_twins() {
    etcd_start 3
    export MURL=$ETCD_URLS SLEEP=0.3
    "$dchctl" publish --etcd "$ETCD_URLS" --key $key orig.map >/dev/null
    rollout_cmd "$ETCD_URLS" >a.out 2>a.err &
    local a=$! sa=0 sb=0
    rollout_cmd "$ETCD_URLS" >b.out 2>b.err &
    local b=$!
    bg+=("$a" "$b")
    wait "$a" || sa=$?
    wait "$b" || sb=$?
    local loser
    if [ "$sa" = 0 ] && [ "$sb" = 3 ]; then
        loser=b
    elif [ "$sa" = 3 ] && [ "$sb" = 0 ]; then
        loser=a
    else
        fail "two identical rollouts exited with $sa and $sb, not 0 and 3: $(cat a.err b.err)"
    fi
    grep -q "conflict" $loser.err && grep -qE "rollout [0-9a-f]{16} \(pid [0-9]+ on " $loser.err ||
        fail "the loser does not name the owner: $(cat $loser.err)"
    grep -qE "epoch [0-9]+ fingerprint" $loser.err || fail "the loser does not say where the key is"
    check_log
    local n step
    n=$(ls plan | wc -l)
    for ((step = 1; step <= n; step++)); do
        [ "$(grep -c "^start $step " migrators.log)" = 1 ] || fail "step $step migrated twice"
    done
    check_history "$ETCD_URLS" $key orig.map
    echo "twins: one winner, the other exited 3: $(head -n 1 $loser.err)"
}

# The followers of the current leader stop; sets leader_url and FREEZE.
pick_leader() {
    local leader i
    leader=$(etcd_leader) || fail "no leader"
    leader_url=${ETCD_URL[$leader]}
    FREEZE=
    for i in 0 1 2; do [ "$i" = "$leader" ] || FREEZE+="${FREEZE:+ }${ETCD_PID[$i]}"; done
    export FREEZE
    stopped=($FREEZE)
}

thaw() {
    kill -CONT $FREEZE
    stopped=()
    local i
    for _ in $(seq 1 100); do
        "$ETCDCTL" --endpoints="$ETCD_URLS" --command-timeout=2s endpoint health >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    fail "etcd is not healthy after SIGCONT"
}

scenario_frozen() {
    etcd_start 3
    export MURL=$ETCD_URLS
    pick_leader
    # A publish by hand, sent to the leader while its followers are stopped.
    local mk=$key/manual status=0 took
    "$dchctl" publish --etcd "$ETCD_URLS" --key $mk orig.map >/dev/null
    cp orig.map n7.map
    "$dchctl" add n7.map n7 >/dev/null
    kill -STOP $FREEZE
    took=$SECONDS
    "$dchctl" publish --etcd "$leader_url" --key $mk n7.map --expect 6 --deadline 3000 \
        >pub.out 2>pub.err || status=$?
    took=$((SECONDS - took))
    thaw
    [ "$status" = 4 ] || fail "a publish in flight with no quorum exited $status: $(cat pub.err)"
    grep -q "outcome is unknown" pub.err && grep -qi "run the same command again" pub.err ||
        fail "the unknown outcome is not explained: $(cat pub.err)"
    grep -q "reached etcd at $leader_url" pub.err || fail "the member is not named: $(cat pub.err)"
    [ "$took" -le 15 ] || fail "the publish took $took s"
    "$dchctl" publish --etcd "$ETCD_URLS" --key $mk n7.map --expect 6 >/dev/null 2>pub2.err ||
        fail "the same publish again: $(cat pub2.err)"
    history "$ETCD_URLS" $mk
    [ "$(ls hist | wc -l)" = 2 ] && cmp -s hist/0001.map orig.map && cmp -s hist/0002.map n7.map ||
        fail "the manual key's history is not orig then n7 ($(ls hist | wc -l) versions)"
    # A rollout whose step 3 goes out while the followers are stopped.
    pick_leader
    export FREEZE_AT=2
    "$dchctl" publish --etcd "$ETCD_URLS" --key $key orig.map >/dev/null
    status=0
    (rollout_cmd "$leader_url" --deadline 3000) >r1.out 2>r1.err || status=$?
    thaw
    [ "$status" = 4 ] || fail "a rollout step in flight with no quorum exited $status: $(cat r1.err)"
    grep -q "run the same rollout again" r1.err || fail "no hint to resume: $(cat r1.err)"
    (rollout_cmd "$ETCD_URLS") >r2.out 2>r2.err || fail "the resumed rollout: $(cat r2.err)"
    grep -q "migrating step 2" r2.out && fail "the resume ran step 2 again though it ended well"
    check_log
    check_history "$ETCD_URLS" $key orig.map
    echo "frozen: exit 4 in $took s, then the same publish succeeded; rollout resumed: $(grep '^resume' r2.out || echo 'no re-run')"
}

scenario_slow() {
    command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
    etcd_start 1
    export MURL=$ETCD_URLS
    local port target_port
    port=$(free_port)
    target_port=${ETCD_URL[0]##*:}
    python3 "$here/slow_proxy.py" "$port" "$target_port" 2.6 &
    bg+=("$!")
    for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    K=32
    make_maps
    "$dchctl" publish --etcd "$ETCD_URLS" --key $key orig.map >/dev/null
    local start=$SECONDS
    (rollout_cmd "http://127.0.0.1:$port") >slow.out 2>slow.err ||
        fail "the rollout through a slow member: $(cat slow.err)"
    grep -q "^done:" slow.out || fail "the rollout did not finish"
    check_log
    check_history "$ETCD_URLS" $key orig.map
    echo "slow: $(ls plan | wc -l) steps through a member 2.6 s slow in $((SECONDS - start)) s"
}

# kill_at_step3: a rollout killed while step 3's migrator sleeps 4 s, then
# that migrator waited for; sets folder (the stopped rollout's step folder).
kill_at_step3() {
    export MURL=$ETCD_URLS SLOW_STEP=3 SLOW_SECS=4
    "$dchctl" publish --etcd "$ETCD_URLS" --key $key orig.map >/dev/null
    rollout_cmd "$ETCD_URLS" >first.out 2>first.err &
    local pid=$!
    bg+=("$pid")
    wait_for at-slow 40 || fail "the rollout did not reach step 3: $(cat first.err)"
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null || true
    folder=$("$ETCDCTL" --endpoints="$ETCD_URLS" get "$key.owner" --print-value-only |
        sed -n 's/.* folder=//p')
    [ -d "$folder" ] || fail "no step folder in the owner record: $folder"
    for _ in $(seq 1 100); do grep -q '^end 3 ' migrators.log && break; sleep 0.1; done
    grep -q '^end 3 ' migrators.log || fail "the migrator of step 3 did not end"
}

# stored_is FILE: etcd stores FILE's map, byte for byte; stored_is_target:
# a map that routes like the target.
stored_is() {
    "$dchctl" fetch --etcd "$ETCD_URLS" --key $key now.map >/dev/null 2>&1 && cmp -s now.map "$1"
}
stored_is_target() {
    "$dchctl" fetch --etcd "$ETCD_URLS" --key $key now.map >/dev/null 2>&1 &&
        [ "$("$dchctl" fingerprint now.map)" = "$("$dchctl" fingerprint target.map)" ]
}

scenario_compact() {
    etcd_start 1
    kill_at_step3
    local rev step3 status=0
    step3=plan/$(ls plan | sed -n 3p)
    rev=$("$ETCDCTL" --endpoints="$ETCD_URLS" get "$key" -w json | jq -r .header.revision)
    "$ETCDCTL" --endpoints="$ETCD_URLS" compact "$rev" >/dev/null || fail "etcdctl compact"
    # Neither etcd's history nor the folder holds step 3's maps.
    mv "$folder/to.dchmap" saved-to.dchmap
    (rollout_cmd "$ETCD_URLS") >r1.out 2>r1.err || status=$?
    [ "$status" = 1 ] || fail "a resume without step 3's maps exited $status: $(cat r1.err)"
    grep -q "gone from etcd's history" r1.err && grep -q "run the same rollout again" r1.err ||
        fail "the resume does not say what to do: $(cat r1.err)"
    stored_is "$step3" || fail "a step after 3 was published though step 3 did not migrate"
    [ "$(grep -c '^start 3 ' migrators.log)" = 1 ] || fail "step 3 migrated without its maps"
    # The folder has them again: step 3 migrates from them, then the rest.
    mv saved-to.dchmap "$folder/to.dchmap"
    (rollout_cmd "$ETCD_URLS") >r2.out 2>r2.err || fail "the resume with the folder: $(cat r2.err)"
    grep -q "come from the step folder" r2.out && grep -q "migrating step 3/" r2.out ||
        fail "step 3 did not migrate again from the folder: $(cat r2.out)"
    grep -q "^done:" r2.out || fail "the resumed rollout did not finish"
    check_log
    [ "$(grep -c '^start 3 ' migrators.log)" = 2 ] || fail "step 3 did not migrate twice"
    stored_is_target || fail "etcd does not store the target"
    echo "compact: exit 1 without the step's maps, then resumed from the folder"
}

scenario_adopt() {
    etcd_start 1
    kill_at_step3
    local status=0 text runs
    runs=$(grep -c '^start' migrators.log)
    if [ "$(id -u)" = 0 ]; then # a folder of another user
        chown 65534 "$folder"
        (rollout_cmd "$ETCD_URLS") >r1.out 2>r1.err || status=$?
        chown 0 "$folder"
        [ "$status" = 1 ] || fail "a resume with another user's folder exited $status: $(cat r1.err)"
        grep -q "cannot be adopted: another user owns it; resume as its user" r1.err ||
            fail "the resume does not say why: $(cat r1.err)"
        [ "$(grep -c '^start' migrators.log)" = "$runs" ] || fail "a migrator ran"
        [ -z "$(find . -maxdepth 1 -name 'dch-rollout-*' ! -path "./${folder##*/}")" ] ||
            fail "the resume made a new step folder"
    fi
    # A record that names a folder outside $TMPDIR: nothing in it is touched.
    mkdir -p elsewhere/dch-rollout-x
    echo keep >elsewhere/dch-rollout-x/to.dchmap
    text=$("$ETCDCTL" --endpoints="$ETCD_URLS" get "$key.owner" --print-value-only)
    "$ETCDCTL" --endpoints="$ETCD_URLS" put "$key.owner" \
        "${text% folder=*} folder=$work/elsewhere/dch-rollout-x" >/dev/null
    status=0
    (rollout_cmd "$ETCD_URLS") >r2.out 2>r2.err || status=$?
    [ "$status" = 1 ] || fail "a resume with a folder outside TMPDIR exited $status: $(cat r2.err)"
    grep -q "cannot be adopted: it is not TMP/dch-rollout-" r2.err || fail "no reason: $(cat r2.err)"
    [ "$(cat elsewhere/dch-rollout-x/to.dchmap)" = keep ] || fail "the resume touched the folder"
    [ "$(grep -c '^start' migrators.log)" = "$runs" ] || fail "a migrator ran"
    # The record again as it was: the resume goes on.
    "$ETCDCTL" --endpoints="$ETCD_URLS" put "$key.owner" "${text% folder=*} folder=$folder" >/dev/null
    (rollout_cmd "$ETCD_URLS") >r3.out 2>r3.err || fail "the resume: $(cat r3.err)"
    grep -q "^done:" r3.out || fail "the resumed rollout did not finish"
    check_log
    stored_is_target || fail "etcd does not store the target"
    echo "adopt: refused another user's folder and one outside TMPDIR, then resumed"
}

scenario_unfinished() {
    etcd_start 1
    export MURL=$ETCD_URLS
    local n status=0
    n=$(ls plan | wc -l)
    export FAIL_STEP=$n
    "$dchctl" publish --etcd "$ETCD_URLS" --key $key orig.map >/dev/null
    (rollout_cmd "$ETCD_URLS") >x1.out 2>x1.err || status=$?
    [ "$status" = 1 ] || fail "a rollout whose last migrator fails exited $status"
    stored_is plan/$(ls plan | tail -n 1) || fail "the last step is not stored"
    # A rollout to another target, from the half-migrated last step.
    "$dchctl" fetch --etcd "$ETCD_URLS" --key $key other.map >/dev/null 2>&1
    "$dchctl" add other.map n9 >/dev/null
    status=0
    "$dchctl" rollout --etcd "$ETCD_URLS" --key $key other.map --max-slots $K \
        --exec "bash $work/migrator.sh" >y.out 2>y.err || status=$?
    [ "$status" = 3 ] || fail "a rollout to another target exited $status: $(cat y.err)"
    grep -q "finish the rollout to" y.err || fail "no hint to finish the first: $(cat y.err)"
    stored_is plan/$(ls plan | tail -n 1) || fail "the rollout to another target published"
    # The first rollout again: its last step migrates again, and it is done.
    (rollout_cmd "$ETCD_URLS") >x2.out 2>x2.err || fail "the first rollout again: $(cat x2.err)"
    grep -q "migrating step $n/$n" x2.out || fail "the last step did not migrate again: $(cat x2.out)"
    grep -q "^done:" x2.out || fail "the first rollout did not finish"
    check_log
    echo "unfinished: the rollout to another target exited 3; the first one finished"
}

make_maps
case $scenario in
kill | twins | frozen | slow | compact | adopt | unfinished) "scenario_$scenario" ;;
*) fail "unknown scenario $scenario" ;;
esac
