# SPDX-License-Identifier: MIT
# etcd members for the tests, sourced by the test scripts: started on
# 127.0.0.1 on free ports with data in a temporary directory, stopped and
# removed by etcd_cleanup (the scripts set it as their EXIT trap).
#
#   etcd_start N        start an N-member cluster (1 or 3); sets ETCD_URLS
#                       (all client URLs, comma-separated) and ETCD_URL[i]
#   etcd_stop I         stop member I (SIGTERM, waits for it)
#   etcd_restart I      start member I again on its ports and data
#   etcd_leader         the index of the current leader
#   etcd_cleanup        stop everything and remove the data
#
# Needs $ETCD (the etcd-server binary) and $ETCDCTL.

ETCD_WORK=$(mktemp -d "${TMPDIR:-/tmp}/dch-etcd-test.XXXXXX")
ETCD_PID=()
ETCD_URL=()
ETCD_PEER=()
ETCD_URLS=
ETCD_CLUSTER=

etcd_cleanup() {
    local p
    for p in "${ETCD_PID[@]}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null || true
    done
    for p in "${ETCD_PID[@]}"; do
        [ -n "$p" ] && wait "$p" 2>/dev/null || true
    done
    rm -rf "$ETCD_WORK"
}

# A loopback port nobody listens on (checked by connecting to it).
free_port() {
    local p
    for _ in $(seq 1 200); do
        p=$((20000 + RANDOM % 40000))
        if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

etcd_launch() {
    local i=$1 state=$2
    "$ETCD" --name "m$i" --data-dir "$ETCD_WORK/m$i" \
        --listen-client-urls "${ETCD_URL[$i]}" --advertise-client-urls "${ETCD_URL[$i]}" \
        --listen-peer-urls "${ETCD_PEER[$i]}" --initial-advertise-peer-urls "${ETCD_PEER[$i]}" \
        --initial-cluster "$ETCD_CLUSTER" --initial-cluster-state "$state" \
        --initial-cluster-token "dch-test-$$" \
        --heartbeat-interval 50 --election-timeout 500 \
        --logger zap --log-outputs stderr --log-level error \
        >"$ETCD_WORK/m$i.log" 2>&1 &
    ETCD_PID[$i]=$!
}

# Wait (at most 15 s) until member i answers a linearizable read.
etcd_wait() {
    local i=$1
    for _ in $(seq 1 150); do
        kill -0 "${ETCD_PID[$i]}" 2>/dev/null || break
        # Ready, and ours: the member behind the URL has our peer URL (a
        # port taken by another test's etcd would answer too).
        if "$ETCDCTL" --endpoints="${ETCD_URL[$i]}" --dial-timeout=1s --command-timeout=1s \
            get /dch-test-ready >/dev/null 2>&1 &&
            "$ETCDCTL" --endpoints="${ETCD_URL[$i]}" --dial-timeout=1s --command-timeout=1s \
                member list 2>/dev/null | grep -F "${ETCD_PEER[$i]}" >/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    echo "etcd member $i did not start; its log:" >&2
    cat "$ETCD_WORK/m$i.log" >&2
    return 1
}

# Start n members on fresh ports; a port taken between free_port and the
# bind (tests run in parallel) fails the start, which is tried again on
# other ports with fresh data, three times at most.
etcd_start() {
    local n=$1 i try ok
    for try in 1 2 3; do
        ETCD_CLUSTER=
        ETCD_URLS=
        for ((i = 0; i < n; i++)); do
            ETCD_URL[$i]="http://127.0.0.1:$(free_port)"
            ETCD_PEER[$i]="http://127.0.0.1:$(free_port)"
            ETCD_CLUSTER+="${ETCD_CLUSTER:+,}m$i=${ETCD_PEER[$i]}"
            ETCD_URLS+="${ETCD_URLS:+,}${ETCD_URL[$i]}"
        done
        for ((i = 0; i < n; i++)); do
            rm -rf "$ETCD_WORK/m$i"
            etcd_launch "$i" new
        done
        ok=1
        for ((i = 0; i < n; i++)); do
            etcd_wait "$i" || { ok=0; break; }
        done
        [ "$ok" = 1 ] && return 0
        for ((i = 0; i < n; i++)); do
            etcd_stop "$i"
        done
        echo "etcd_start: attempt $try failed; trying other ports" >&2
    done
    return 1
}

etcd_stop() {
    local i=$1
    kill "${ETCD_PID[$i]}" 2>/dev/null || true
    wait "${ETCD_PID[$i]}" 2>/dev/null || true
    ETCD_PID[$i]=
}

etcd_restart() {
    local i=$1
    etcd_launch "$i" existing
    etcd_wait "$i"
}

etcd_leader() {
    local i
    for i in "${!ETCD_URL[@]}"; do
        [ -n "${ETCD_PID[$i]}" ] || continue
        # simple output: URL, ID, version, db size, is leader, ...
        if "$ETCDCTL" --endpoints="${ETCD_URL[$i]}" --dial-timeout=1s --command-timeout=2s \
            endpoint status 2>/dev/null | awk -F', ' '{ exit !($5 == "true") }'; then
            echo "$i"
            return 0
        fi
    done
    return 1
}
