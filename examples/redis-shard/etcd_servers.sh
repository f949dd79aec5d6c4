# SPDX-License-Identifier: MIT
# etcd and Redis servers for the scenarios that keep the map in etcd
# (sourced by cluster.sh and skewed.sh): one etcd member and Redis servers
# on random free loopback ports from 20000 up (free_port, as the etcd tests
# take theirs), with their data in a temporary folder. Sourcing it sets the
# EXIT trap that stops every process the script started, by pid (its
# routers in router_pids, the Redis servers, etcd), and removes the folder.
#
#   start_etcd_redis N   start etcd ($url, the client URL) and Redis servers
#                        s1..sN, each in $work/rI; cd to $work; sets
#                        $shards to s1=127.0.0.1:PORT,...
#   fail MESSAGE         print FAIL: MESSAGE and exit 1
#
# Environment: ETCD, ETCDCTL (defaults: etcd, etcdctl from PATH).
ETCD=${ETCD:-etcd}
ETCDCTL=${ETCDCTL:-etcdctl}
# shellcheck source=../../tests/etcd/etcd_ctl.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/etcd/etcd_ctl.sh"
work=$ETCD_WORK/redis
redis_pids=()
router_pids=()
stop_all() {
    local p
    for p in "${router_pids[@]}" "${redis_pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${router_pids[@]}" "${redis_pids[@]}"; do wait "$p" 2>/dev/null || true; done
    etcd_cleanup
}
trap stop_all EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# One server on a free port; a port taken between the check and the bind
# (tests run in parallel) makes the server exit, and another port is tried.
start_redis() {
    local i=$1 port pid
    mkdir -p "r$i"
    for _ in 1 2 3 4 5; do
        port=$(free_port)
        redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
            --dir "$work/r$i" --logfile "$work/r$i/log" &
        pid=$!
        for _ in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            # Ours only if it answers with our pid (another test's server
            # could hold the port).
            if [ "$(redis-cli -p "$port" info server 2>/dev/null | tr -d '\r' |
                sed -n 's/^process_id://p')" = "$pid" ]; then
                redis_pids+=("$pid")
                shards+="${shards:+,}s$i=127.0.0.1:$port"
                return 0
            fi
            sleep 0.05
        done
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    fail "redis server s$i did not start: $(tail -n 3 "$work/r$i/log")"
}

start_etcd_redis() {
    local i
    mkdir -p "$work"
    cd "$work" || exit
    etcd_start 1
    url=$ETCD_URLS
    shards=
    for i in $(seq "$1"); do
        start_redis "$i"
    done
}
