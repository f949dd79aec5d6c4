# SPDX-License-Identifier: MIT
# What the dchctl tool's etcd tests (test_rollout.sh, test_cluster.sh) share,
# sourced with their arguments and the name of their work directory:
#   . tool_test.sh DCHCTL CHECK_STEPS NAME
# Sets dchctl and check (absolute paths) and K (the slots a step may move),
# makes $ETCD_WORK/NAME the current directory and $TMPDIR (a rollout keeps
# its step files in $TMPDIR; a killed one leaves them there), and stops the
# watcher, the holder of a rollout's lock and every etcd member on exit.
set -euo pipefail
dchctl=$(readlink -f "$1")
check=$(readlink -f "$2")
. "$(dirname "${BASH_SOURCE[0]}")/etcd_ctl.sh"
watcher=
holder=
stop_all() {
    local pid
    for pid in "$watcher" "$holder"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
        [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
    done
    etcd_cleanup
}
trap stop_all EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

work=$ETCD_WORK/$3
mkdir -p "$work/steps"
cd "$work"
export TMPDIR=$work
K=512

# orig.map: members n1 .. n8 at the default 65,536 slots; join.map: n9 too.
make_join_maps() {
    "$dchctl" init orig.map >/dev/null
    for i in 1 2 3 4 5 6 7 8; do "$dchctl" add orig.map "n$i" >/dev/null; done
    cp orig.map join.map
    "$dchctl" add join.map n9 >/dev/null
}

# start_watcher URLS KEY TIMEOUT_MS: `dchctl watch` in the background, its
# lines in watch.out.
start_watcher() {
    "$dchctl" watch --etcd "$1" --key "$2" --timeout "$3" >watch.out 2>watch.err &
    watcher=$!
}

# finish_watcher MAP: within 10 s the watcher's last line is MAP's
# fingerprint; then it is stopped, and the epochs it saw must rise.
finish_watcher() {
    local fp
    fp=$("$dchctl" fingerprint "$1")
    for _ in $(seq 1 100); do
        tail -n 1 watch.out | grep -q "fingerprint $fp" && break
        sleep 0.1
    done
    kill "$watcher"
    wait "$watcher" 2>/dev/null || true
    watcher=
    tail -n 1 watch.out | grep -q "fingerprint $fp" || fail "the watcher missed the last map"
    awk '{ if (NR > 1 && $2 <= last) { print "epoch " $2 " after " last; bad = 1 } last = $2 }
         END { exit bad }' watch.out || fail "the watcher stepped back"
}
