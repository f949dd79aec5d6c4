/* SPDX-License-Identifier: MIT */
/*
 * The replica scenario's parts (replicas.c runs it; the rolling restart,
 * restart.c, uses them too): the shards it holds, how they are opened and
 * freed, its pipelined writes, and the fill of the copies a leave creates
 * (replicas_fill.c).
 */
#ifndef REDIS_SHARD_REPLICAS_H
#define REDIS_SHARD_REPLICAS_H

#include "commands.h"

/** What the scenario holds: the shards, the connections (NULL for a
 * stopped shard) and one pipeline batch per shard. Shard i is map id i. */
typedef struct scenario {
    member *ms;
    size_t n;
    redisContext **conns;
    key_batch *batch;
    uint32_t keys, replicas;
    uint32_t *gens;   /* each key's last written generation */
    uint64_t *expect; /* per shard: keys it should hold under the map checked */
    uint64_t *sent, *received; /* per shard: key copies the fill read, wrote */
} scenario;

/** The start of a scenario's command (replicas.c, restart.c): s zeroed,
 * with room in s->ms for the members among argc arguments, which the
 * command's option parser fills (s->ms, s->n). 0, or -1 when memory runs
 * out. */
int scenario_start(scenario *s, int argc);

/** Take arg, NAME=HOST:PORT, as the next member (s->ms[s->n++]; arg's '='
 * becomes the end of NAME): 0, or EXIT_USAGE (reported; `why` when arg is
 * an option or has no '='). */
int scenario_add_member(scenario *s, char *arg, const char *why);

/**
 * The scenario of the s->n members in s->ms, for `keys` keys and R =
 * `replicas` copies: its per-shard and per-key arrays, a connection to
 * every shard, which must be empty (the scenarios count every key a shard
 * holds), and *m, a map with hash_key and R copies where shard i is map
 * id i. 0, or -1 (reported but when memory runs out); either way the
 * caller frees s with scenario_free and *m with dch_map_free.
 */
int scenario_open(scenario *s, uint32_t keys, uint32_t replicas, const uint8_t hash_key[16],
                  dch_map **m);

/** Free what scenario_start and scenario_open allocated, and close the
 * connections; s->ms too. */
void scenario_free(scenario *s);

/** What a read-back found. */
typedef struct tally {
    uint64_t reads, lost, damaged, extra;
} tally;

/** Write generation gen of every `every`-th key to every copy of its slot
 * under m (s->gens records it); *writes counts the copies written. 0 or -1. */
int write_all_copies(scenario *s, const dch_map *m, uint32_t every, uint32_t gen,
                     uint64_t *writes);

/**
 * Read every key from every copy under m: t->lost copies missing,
 * t->damaged holding another value than the key's last (s->gens), and
 * t->extra keys on a shard beyond the copies it should hold. 0 or -1.
 */
int read_all_copies(scenario *s, const dch_map *m, tally *t);

/** Stop shard: SHUTDOWN NOSAVE, or with `save` SHUTDOWN SAVE (it writes its
 * data file first); then wait (bounded) until its port refuses connections.
 * Its connection is closed and set to NULL. 0 or -1 (reported). */
int stop_shard(scenario *s, uint32_t shard, int save);

/** Sleep ms milliseconds. */
void sleep_ms(long ms);

/** Queue SET key value on shard, sending a full batch; 0 or -1. */
int queue_set(scenario *s, uint32_t shard, const char *key, size_t klen, const char *val,
              size_t vlen);

/** Send shard's queued SETs; 0 or -1. */
int flush_sets(scenario *s, uint32_t shard);

/** Per slot: the copies of `to` that `from` lacks, and the surviving copy of
 * `from` that fills them (DCH_NODE_NONE when nothing is created). */
typedef struct fill_plan {
    uint32_t P, R;
    uint32_t *source;  /* P entries */
    uint32_t *targets; /* P * R entries, ntargets[s] used per slot */
    uint8_t *ntargets;
    uint64_t created, dropped, dropped_elsewhere; /* copies, over all slots */
} fill_plan;

/**
 * The fill of a leave: from -> to, to a clone of from without `leaver`.
 * Fails (reported) when out of memory or when a slot that gains a copy
 * has no surviving one.
 */
int plan_fill(fill_plan *fp, const dch_map *from, const dch_map *to, uint32_t leaver);

void fill_plan_free(fill_plan *fp);

/**
 * Whether the library's own account of the change (dch_map_diff_copies:
 * copies gained and lost, summed over its ranges) agrees with the plan;
 * 0, or -1 (reported) when it does not.
 */
int fill_plan_check(const fill_plan *fp, const dch_map *from, const dch_map *to);

/**
 * Walk every live shard that sources a slot (SCAN), read the keys of the
 * slots it sources and write each to every new copy of its slot under m
 * (the new map); *written counts the copies written.
 */
int fill_all(scenario *s, const dch_map *m, const fill_plan *fp, uint64_t *written);

#endif /* REDIS_SHARD_REPLICAS_H */
