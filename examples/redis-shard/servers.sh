# SPDX-License-Identifier: MIT
# Redis servers for the scripts of this example (sourced by run.sh,
# replicas.sh and restart.sh): each on a free loopback port from 27000, with
# its files in $work/server-PORT and nothing written to disk unless a
# scenario asks (SHUTDOWN SAVE, restart.sh). The sourcing script calls
# prepare_example (below) first, which sets $work, stops every server at
# exit and starts the watchdog.
# Only servers started here are ever stopped, by pid, and only while that
# pid is still a redis-server (a shard a scenario shut down itself may have
# handed its pid on). Every wait is bounded.
#
# After start_server: ports+=(its port), pids+=(its pid).
ports=()
pids=()
# The repository, where prepare_example builds the program if none is given.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# parse_options OWN ARGS...: the options of a scenario, each setting the
# variable of its name (a dash in it is an underscore). Every scenario takes
# --keys N, --shards K, --program PATH, --work DIR and --hash-key HEX (the
# sourcing script sets the defaults of keys and shards); OWN lists the
# script's own: NAME for --NAME VALUE, NAME! for a flag --NAME (sets 1).
# Anything else, or an option without its value: a message, exit status 2.
program=""
work=""
# A fixed hash key makes runs repeatable; any key gives the same guarantees.
hash_key=7265646973207368617264206b657921
parse_options() {
    local own=$1 word var
    shift
    while [ $# -gt 0 ]; do
        for word in keys shards program work hash-key $own ""; do
            [ "$1" != "--${word%!}" ] || break
        done
        [ -n "$word" ] || { echo "${0##*/}: unknown argument $1" >&2; exit 2; }
        var=${word%!}
        var=${var//-/_}
        if [ "${word%!}" != "$word" ]; then
            printf -v "$var" 1
            shift
        else
            [ $# -ge 2 ] || { echo "${0##*/}: $1 takes a value" >&2; exit 2; }
            printf -v "$var" '%s' "$2"
            shift 2
        fi
    done
}

# Whether pid $1 is a redis-server.
is_redis() {
    [ "$(cat "/proc/$1/comm" 2>/dev/null)" = redis-server ]
}

# Only the servers this script started, by pid: TERM all, wait up to 5 s,
# then KILL any still there. Their pid files go too, so the watchdog below
# has nothing left to do.
stop_servers() {
    local pid alive f
    # A server started again (restart_server, run by a scenario's child
    # process) is ours too: its pid is in its folder's pid file.
    for f in "$work"/server-*/redis.pid; do
        [ -s "$f" ] && pids+=("$(cat "$f")")
    done
    rm -f "$work"/server-*/redis.pid
    [ ${#pids[@]} -gt 0 ] || return 0
    for pid in "${pids[@]}"; do
        if is_redis "$pid"; then kill -TERM "$pid" 2>/dev/null || true; fi
    done
    for _ in $(seq 50); do
        alive=0
        for pid in "${pids[@]}"; do
            if is_redis "$pid"; then alive=1; fi
        done
        [ "$alive" -eq 1 ] || break
        sleep 0.1
    done
    for pid in "${pids[@]}"; do
        if is_redis "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    done
    pids=()
}

# The servers daemonize, so a script killed outright (SIGKILL, as a test
# timeout may do) would leave them running. A watchdog in a session of its
# own outlives such a kill: once this script is gone (or after an hour), it
# stops every server whose pid file is still there and that is still a
# redis-server.
start_watchdog() {
    setsid bash -c '
    for _ in $(seq 3600); do
        kill -0 "$1" 2>/dev/null || break
        sleep 1
    done
    for f in "$2"/server-*/redis.pid; do
        [ -s "$f" ] || continue
        pid=$(cat "$f")
        [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = redis-server ] && kill -TERM "$pid"
    done' watchdog "$$" "$work" </dev/null >/dev/null 2>&1 &
}

port_busy() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Start one server on the first free port from $next_port; a port taken
# between the check and the bind is skipped. The server is ours only if it
# answers with the pid it wrote.
next_port=27000

# launch_server PORT: a server on PORT with its files in $work/server-PORT,
# which it writes its data file to only when told (SHUTDOWN SAVE) and loads
# it from when it starts; 0 once it answers with the pid it wrote (in
# $launched), 1 otherwise.
launch_server() {
    local p=$1 dir=$work/server-$1 pid answer
    rm -f "$dir/redis.pid"
    redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no \
        --daemonize yes --dir "$dir" --pidfile "$dir/redis.pid" \
        --logfile "$dir/redis.log" >/dev/null || return 1
    for _ in $(seq 100); do
        [ -s "$dir/redis.pid" ] && break
        sleep 0.05
    done
    [ -s "$dir/redis.pid" ] || return 1
    pid=$(cat "$dir/redis.pid")
    launched=$pid
    for _ in $(seq 100); do
        answer=$(redis-cli -h 127.0.0.1 -p "$p" info server 2>/dev/null |
            tr -d '\r' | sed -n 's/^process_id://p') || true
        [ -n "$answer" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    [ "$answer" = "$pid" ]
}

start_server() {
    local p dir
    while [ "$next_port" -lt 28000 ]; do
        p=$next_port
        next_port=$((next_port + 1))
        port_busy "$p" && continue
        dir=$work/server-$p
        rm -rf "$dir"
        mkdir -p "$dir"
        launched=
        if launch_server "$p"; then
            pids+=("$launched")
            ports+=("$p")
            return 0
        fi
        [ -n "$launched" ] && pids+=("$launched")
        echo "${0##*/}: port $p: server did not come up as ours; trying the next" >&2
    done
    echo "${0##*/}: no free port in 27000..27999" >&2
    return 1
}

# start_members: $shards servers on fresh ports (ports starts empty) and
# members=(s1=127.0.0.1:PORT ...), one for each. Run it in the script's own
# shell (not in a pipeline's subshell), so that stop_servers knows the pids.
members=()
start_members() {
    local i
    ports=()
    members=()
    for i in $(seq "$shards"); do
        start_server
        members+=("s$i=127.0.0.1:${ports[$((i - 1))]}")
    done
}

# restart_server PORT: start the server of $work/server-PORT again, on its
# folder and so on its data file, after the scenario stopped it. Run as
# `bash servers.sh restart WORK PORT` by a scenario (restart.sh gives that
# command to redis-shard restart); the pid file tells stop_servers and the
# watchdog about the new process.
restart_server() {
    [ -d "$work/server-$1" ] || { echo "servers.sh: no server folder for port $1" >&2; return 1; }
    port_busy "$1" && { echo "servers.sh: port $1 is still in use" >&2; return 1; }
    launch_server "$1"
}


# What both scenarios do first: install redis when it is missing, build the
# program unless $program names one, make the work folder $work (a fresh
# one under $TMPDIR named after $1, removed at exit, unless given), and
# stop every server at exit. Needs $root, $program and $work set (empty
# for the defaults).
prepare_example() {
    if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
        bash "$root/tests/deps.sh"
    fi
    if [ -z "$program" ]; then
        bash "$root/tests/deps.sh"
        cmake -S "$root" -B "$root/build" >/dev/null
        cmake --build "$root/build" -j2 --target redis-shard >/dev/null
        program=$root/build/examples/redis-shard/redis-shard
    fi
    own_work=0
    if [ -z "$work" ]; then
        work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
        own_work=1
    fi
    mkdir -p "$work"
    trap cleanup_example EXIT
    trap 'exit 130' INT TERM
    start_watchdog
}

cleanup_example() {
    local status=$?
    stop_servers
    [ "$own_work" -eq 1 ] && rm -rf "$work"
    exit "$status"
}

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = restart ] && [ $# -eq 3 ]; then
    work=$2
    restart_server "$3"
fi
