#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run redis-shard against real Redis servers: start K+1 servers on free
# loopback ports, then, for the DCH map and for the classic ring in turn,
# load N keys on K shards, join a (K+1)th shard, have one of the first shards
# leave, and verify the store after every step. Prints each step's report
# for people, then a side-by-side table of both schemes: the keys each shard
# sent and received, the keys moved, the plan's ranges and the migration's
# time.
#
# Usage: bash examples/redis-shard/run.sh [--keys N] [--shards K]
#            [--program PATH] [--work DIR] [--hash-key HEX32] [--check]
#            [--machine FILE]
#
#   --machine  write the programs' machine-readable '@' lines (key=value
#              pairs, which the report leaves out) of both schemes to FILE
#   --program  the redis-shard executable (default: build it in build/)
#   --work     scratch directory for server files and state (default: a
#              new temporary directory, removed at the end)
#   --check    also assert what the integration test asserts (below) and
#              exit non-zero when any assertion fails
#
# The servers listen on 127.0.0.1 only, keep nothing on disk, and are
# stopped when the script exits for any reason. Every wait is bounded.
#
# With --check, beyond every command succeeding (each checks its own exact
# invariants: nothing lost, misplaced, stale or left behind, and the keys
# moved are exactly the keys hashing into the plan's ranges):
#   - DCH moves within 1% of the plan's prediction (moved fraction of the
#     hash space x keys) and within 1% of keys/(K+1), at each step;
#   - every DCH donor of the join sends, and every DCH receiver of the leave
#     receives, within 15% of the mean of its group;
#   - under both schemes the concurrent client met every case of its rule;
#   - the checks can fail: verify catches a damaged value, a misplaced copy
#     and a key left on the shard that left; a join stopped part-way is
#     reported, blocks other steps and completes when run again; a client
#     that ignores the migration makes its join fail.
# The damage checks use the ring's final store; the others a store of 20000
# keys of their own.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

keys=100000
shards=4
check=0
machine=""
# shellcheck source=servers.sh
. "$here/servers.sh"

parse_options "check! machine" "$@"
case $keys$shards in *[!0-9]*) echo "run.sh: --keys and --shards take numbers" >&2; exit 2 ;; esac
[ "$shards" -ge 2 ] || { echo "run.sh: --shards must be at least 2" >&2; exit 2; }
[ "$keys" -ge 8 ] || { echo "run.sh: --keys must be at least 8" >&2; exit 2; }

# ---- servers ---------------------------------------------------------------
prepare_example redis-shard

for _ in $(seq $((shards + 1))); do
    start_server
done
echo "redis servers on 127.0.0.1: ${ports[*]} ($(redis-server --version | cut -d' ' -f3))"

# ---- the scenario ------------------------------------------------------------
joiner=s$((shards + 1))
leaver=s2
port_of() { echo "${ports[$((${1#s} - 1))]}"; }

run_scheme() {
    local scheme=$1 state=$work/state-$1 log=$work/$1.log members=() i flag=()
    rm -rf "$state"
    for p in "${ports[@]}"; do
        redis-cli -h 127.0.0.1 -p "$p" flushall >/dev/null
    done
    for i in $(seq "$shards"); do
        members+=("s$i=127.0.0.1:$(port_of "s$i")")
    done
    [ "$scheme" = ring ] && flag=(--ring)
    # The first command that fails ends the run (errexit does not apply in
    # a function called under ||, hence the &&).
    {
        "$program" -d "$state" init "${flag[@]}" --hash-key "$hash_key" "${members[@]}" &&
        "$program" -d "$state" load "$keys" &&
        "$program" -d "$state" verify &&
        "$program" -d "$state" join "$joiner" "127.0.0.1:$(port_of "$joiner")" &&
        "$program" -d "$state" verify &&
        "$program" -d "$state" leave "$leaver" &&
        "$program" -d "$state" verify "127.0.0.1:$(port_of "$leaver")"
    } 2>&1 | tee "$log" | { grep -v '^@' || true; }
}

status=0
for scheme in map ring; do
    echo
    echo "######## $scheme"
    run_scheme "$scheme" || { status=1; echo "run.sh: the $scheme run failed" >&2; }
done
[ "$status" -eq 0 ] || exit 1
[ -z "$machine" ] || grep -h '^@' "$work/map.log" "$work/ring.log" >"$machine"

# ---- side by side --------------------------------------------------------------
# Per step, both schemes: each shard's net keys, then the keys moved against
# the plan's prediction, the plan's number of hash ranges (what a migration
# tool must walk: the map cuts every unit, the ring moves whole arcs) and
# the migration's wall time, read from the '@' lines of both runs.
table() {
    local op=$1
    echo
    echo "$op: keys each shard sent (-) or received (+); DCH map | ring"
    awk -v op="$op" '
        function val(name,   i, kv) {
            for (i = 2; i <= NF; i++) {
                split($i, kv, "=")
                if (kv[1] == name) return kv[2]
            }
            return ""
        }
        $1 == "@shard" && val("op") == op {
            s = val("scheme"); n = val("name")
            if (!(n in seen)) { seen[n] = 1; order[++count] = n }
            net[s, n] = val("received") - val("sent")
        }
        $1 == "@step" && val("op") == op {
            s = val("scheme")
            moved[s] = val("moved"); pred[s] = val("predicted"); secs[s] = val("seconds")
            ranges[s] = val("ranges")
        }
        END {
            printf "  %-16s %12s %12s\n", "shard", "DCH map", "ring"
            for (i = 1; i <= count; i++)
                printf "  %-16s %+12d %+12d\n", order[i], net["map", order[i]], net["ring", order[i]]
            printf "  %-16s %12d %12d\n", "keys moved", moved["map"], moved["ring"]
            printf "  %-16s %12.1f %12.1f\n", "predicted", pred["map"], pred["ring"]
            printf "  %-16s %12d %12d\n", "plan ranges", ranges["map"], ranges["ring"]
            printf "  %-16s %12.3f %12.3f\n", "migration (s)", secs["map"], secs["ring"]
        }' "$work/map.log" "$work/ring.log"
}
table join
table leave

[ "$check" -eq 1 ] || exit 0

# ---- the checks can fail (--check) -----------------------------------------------
# Damage the ring's final store in three ways, each of which verify must
# report, then repair it; stop a join part-way, as a crash would, and run it
# again; and run a join whose client ignores the migration, which the step
# must report as failed.
echo
echo "checks that must fail:"
state=$work/state-ring
live=()
for p in "${ports[@]}"; do
    [ "$p" = "$(port_of "$leaver")" ] || live+=("$p")
done
cli() { redis-cli -h 127.0.0.1 -p "$@"; }
owner=""
for p in "${live[@]}"; do
    [ "$(cli "$p" exists k:7)" = 1 ] && owner=$p
done
[ -n "$owner" ] || { echo "run.sh: k:7 is on no shard"; exit 1; }
other=${live[0]}
[ "$other" != "$owner" ] || other=${live[1]}
good=$(cli "$owner" get k:7)
neg_ok=0
neg_failed=0
expect_failure() {
    local what=$1 pattern=$2 out
    shift 2
    if out=$("$@" 2>&1); then
        echo "  FAIL $what: the command succeeded"
        neg_failed=$((neg_failed + 1))
    elif ! grep -Eq "$pattern" <<<"$out"; then
        echo "  FAIL $what: no /$pattern/ in its output:"
        sed 's/^/    /' <<<"$out"
        neg_failed=$((neg_failed + 1))
    else
        echo "  ok   $what:"
        grep -E "$pattern" <<<"$out" | head -3 | sed 's/^/         /'
        neg_ok=$((neg_ok + 1))
    fi
}
cli "$owner" set k:7 "$good-damaged" >/dev/null
expect_failure "verify reports a damaged value" ' damaged=1 ' \
    "$program" -d "$state" verify
cli "$owner" set k:7 "$good" >/dev/null
cli "$other" set k:7 "$good" >/dev/null
expect_failure "verify reports a copy on a shard that does not own the key" \
    ' misplaced=1 ' "$program" -d "$state" verify
cli "$other" del k:7 >/dev/null
cli "$(port_of "$leaver")" set k:7 "$good" >/dev/null
expect_failure "verify reports a key left on the shard that left" \
    ' misplaced=1 ' "$program" -d "$state" verify "127.0.0.1:$(port_of "$leaver")"
cli "$(port_of "$leaver")" del k:7 >/dev/null
if "$program" -d "$state" verify "127.0.0.1:$(port_of "$leaver")" >/dev/null; then
    echo "  ok   verify passes again once repaired"
    neg_ok=$((neg_ok + 1))
else
    echo "  FAIL verify fails after the repair"
    neg_failed=$((neg_failed + 1))
fi
expect_success() {
    local what=$1 out
    shift
    if out=$("$@" 2>&1); then
        echo "  ok   $what"
        neg_ok=$((neg_ok + 1))
    else
        echo "  FAIL $what:"
        sed 's/^/    /' <<<"$out"
        neg_failed=$((neg_failed + 1))
    fi
}
# A fresh store of 20000 keys on the first shards, under scheme $1, in $2.
fresh_store() {
    local members=() i flag=()
    for p in "${ports[@]}"; do
        cli "$p" flushall >/dev/null
    done
    rm -rf "$2"
    for i in $(seq "$shards"); do
        members+=("s$i=127.0.0.1:$(port_of "s$i")")
    done
    [ "$1" = ring ] && flag=(--ring)
    "$program" -d "$2" init "${flag[@]}" --hash-key "$hash_key" "${members[@]}" >/dev/null
    "$program" -d "$2" load 20000 >/dev/null
}
join_args=("$joiner" "127.0.0.1:$(port_of "$joiner")")
for scheme in map ring; do
    state=$work/state-$scheme-resumed
    fresh_store "$scheme" "$state"
    expect_failure "$scheme: a join that stops part-way says so" 'did not finish' \
        "$program" -d "$state" join "${join_args[@]}" --stop-after 20
    expect_failure "$scheme: verify then finds keys away from the published router" \
        ' lost=[1-9][0-9]* damaged=0 misplaced=[1-9]' "$program" -d "$state" verify
    expect_failure "$scheme: no other step may start meanwhile" \
        'the join of s5 did not finish' \
        "$program" -d "$state" leave s1
    expect_success "$scheme: the same join, run again, completes" \
        "$program" -d "$state" join "${join_args[@]}"
    expect_success "$scheme: verify then passes" "$program" -d "$state" verify
done
state=$work/state-naive
fresh_store map "$state"
expect_failure "a join whose client ignores the migration fails" \
    'client reads that found the key nowhere|keys left on a donor' \
    "$program" -d "$state" join "${join_args[@]}" --naive-client

# ---- assertions (--check) ------------------------------------------------------
echo
awk -v keys="$keys" -v members=$((shards + 1)) '
    function val(name,   i, kv) {
        for (i = 2; i <= NF; i++) {
            split($i, kv, "=")
            if (kv[1] == name) return kv[2]
        }
        return ""
    }
    function abs(x) { return x < 0 ? -x : x }
    function check(ok, what) {
        printf "  %s %s\n", ok ? "ok  " : "FAIL", what
        if (ok) passed++; else failed++
    }
    # The concurrent client must have met every case of its rule, so that
    # its zero misses and zero lost writes mean something.
    $1 == "@client" {
        check(val("donor_reads") > 0 && val("fallback_reads") > 0 &&
              val("donor_writes") > 0 && val("receiver_writes") > 0 &&
              val("misses") == 0 && val("stale") == 0 && val("lost") == 0 && val("doubled") == 0,
              sprintf("%s %s client: reads on donor %d, on receiver after a miss %d; writes on donor %d, on receiver %d; misses %d, stale %d, lost %d",
                      val("scheme"), val("op"), val("donor_reads"), val("fallback_reads"),
                      val("donor_writes"), val("receiver_writes"), val("misses"), val("stale"), val("lost")))
    }
    # The bounds below are on DCH; the ring is measured, not bounded.
    ($1 == "@step" || $1 == "@shard") && val("scheme") != "map" { next }
    # Which keys fall in the moved ranges is a sample: its count alone varies
    # by sigma = sqrt(keys f (1 - f)) around keys f, shown beside each bound.
    $1 == "@step" {
        op = val("op"); m = val("moved"); p = val("predicted"); share = keys / members
        f = p / keys; sigma = 100 * sqrt(keys * f * (1 - f)) / p
        check(abs(m - p) <= 0.01 * p,
              sprintf("DCH %s moved %d keys, within 1%% of the plan'"'"'s %.1f (%+.2f%%, sampling sigma %.2f%%)",
                      op, m, p, 100 * (m - p) / p, sigma))
        check(abs(m - share) <= 0.01 * share,
              sprintf("DCH %s moved %d keys, within 1%% of keys/%d = %.1f (%+.2f%%)",
                      op, m, members, share, 100 * (m - share) / share))
    }
    $1 == "@shard" && val("op") == "join" && val("sent") > 0 { js[++nj] = val("sent"); jn[nj] = val("name") }
    $1 == "@shard" && val("op") == "leave" && val("received") > 0 { lr[++nl] = val("received"); ln[nl] = val("name") }
    END {
        for (i = 1; i <= nj; i++) mj += js[i] / nj
        for (i = 1; i <= nj; i++)
            check(abs(js[i] - mj) <= 0.15 * mj,
                  sprintf("DCH join: donor %s sent %d, within 15%% of the mean %.1f", jn[i], js[i], mj))
        for (i = 1; i <= nl; i++) ml += lr[i] / nl
        for (i = 1; i <= nl; i++)
            check(abs(lr[i] - ml) <= 0.15 * ml,
                  sprintf("DCH leave: receiver %s got %d, within 15%% of the mean %.1f", ln[i], lr[i], ml))
        check(nj == members - 1 && nl == members - 1, sprintf("DCH: %d donors on join, %d receivers on leave", nj, nl))
        printf "%d passed, %d failed\n", passed + negpassed, failed + negfailed
        exit failed + negfailed > 0
    }' negpassed=$neg_ok negfailed=$neg_failed "$work/map.log" "$work/ring.log"
