#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The replica scenario against real Redis servers: start K servers on free
# loopback ports, run `redis-shard replicas` over them (R copies of every
# key, every write to every copy; one shard stopped and removed, its copies
# filled from the survivors before the new map is published; every copy of
# every key read back; the survivors receive within 15% of their mean),
# then check that the check can fail: the same run without the fill must
# report missing copies.
#
# Usage: bash examples/redis-shard/replicas.sh [--keys N] [--shards K]
#            [--replicas R] [--program PATH] [--work DIR] [--hash-key HEX32]
#
#   --program  the redis-shard executable (default: build it in build/)
#   --work     scratch directory for server files (default: a new
#              temporary directory, removed at the end)
#
# Exit status 0 only when the scenario passes and the run without the fill
# fails as it must. The servers listen on 127.0.0.1 only, keep nothing on
# disk, and are stopped when the script exits for any reason.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

keys=20000
shards=4
replicas=2
# shellcheck source=servers.sh
. "$here/servers.sh"

parse_options "replicas" "$@"
case $keys$shards$replicas in
*[!0-9]*) echo "replicas.sh: --keys, --shards and --replicas take numbers" >&2; exit 2 ;;
esac
[ "$replicas" -ge 2 ] && [ "$replicas" -le 8 ] ||
    { echo "replicas.sh: --replicas takes 2 .. 8" >&2; exit 2; }
[ "$shards" -gt "$replicas" ] ||
    { echo "replicas.sh: --shards must exceed --replicas" >&2; exit 2; }

prepare_example redis-shard-replicas

# The scenario stops its leaver (s2), so each run gets servers of its own
# (start_members).
scenario() {
    "$program" replicas --replicas "$replicas" --keys "$keys" --hash-key "$hash_key" \
        --leave s2 "$@" "${members[@]}"
}

echo "######## $replicas copies of every key, $shards shards, $keys keys; s2 fails"
start_members
scenario | tee "$work/run.log"
# Even recovery: every survivor receives within 15% of the mean of the
# copies filled (a sample of keys per slot: at 20,000 keys and R = 2 over
# three survivors, one sigma is about 1.7%).
awk '$1 == "@replicas" && $2 == "shard" {
        split($5, r, "="); got[++n] = r[2]; sum += r[2]; split($3, nm, "="); name[n] = nm[2]
     }
     END {
        if (n == 0) { print "FAIL: no survivor reported"; exit 1 }
        mean = sum / n
        for (i = 1; i <= n; i++) {
            dev = (got[i] - mean) / mean
            bad += dev > 0.15 || dev < -0.15
            printf "  %s %s received %d copies, %+.2f%% from the mean %.1f\n",
                   (dev > 0.15 || dev < -0.15) ? "FAIL" : "ok  ", name[i], got[i], 100 * dev, mean
        }
        exit bad > 0
     }' "$work/run.log"
echo
echo "######## the same without the fill: the check must fail"
start_members
if scenario --no-fill >"$work/no-fill.log" 2>&1; then
    cat "$work/no-fill.log"
    echo "FAIL: without the fill, the check passed"
    exit 1
fi
if ! grep -Eq '^@replicas check=after .* lost=[1-9]' "$work/no-fill.log"; then
    cat "$work/no-fill.log"
    echo "FAIL: without the fill, no missing copies were reported"
    exit 1
fi
grep -E '^after:' "$work/no-fill.log"
echo "ok: without the fill the check reports missing copies"
