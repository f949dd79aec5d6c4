/* SPDX-License-Identifier: MIT */
/*
 * The concurrent client: a thread that keeps reading and writing a fixed set
 * of keys while the migrator runs, following the rule in flight.h, and
 * checks every answer against what it last wrote.
 *
 * It picks its keys from the data set with a seeded generator, half of them
 * from the moving ranges and half from the rest. Each operation reads or
 * writes one of them: a write stores the key's next generation, a read must
 * return exactly the generation last written (or loaded). A read that finds
 * the key on no shard is a miss; one that returns another value is stale.
 * After the step, client_check reads every key from its new owner: a key not
 * holding its last written value is a lost write.
 */
#ifndef REDIS_SHARD_CLIENT_H
#define REDIS_SHARD_CLIENT_H

#include "flight.h"
#include "plan.h"
#include "store.h"

#include <pthread.h>

typedef struct client_config {
    uint32_t keys;    /* keys to use, half moving and half staying */
    uint64_t max_ops; /* most operations in one step */
    uint64_t seed;
    /* Break the rule on purpose: until a donor finishes, read and write its
     * moving keys on the donor only, as if nothing were moving. For the test
     * that shows the checks catch a client that ignores the migration. */
    int naive;
} client_config;

typedef struct client_stats {
    uint64_t keys_moving, keys_staying;
    uint64_t reads, writes;
    uint64_t staying_ops;     /* on keys whose owner does not change */
    uint64_t donor_reads;     /* moving key, donor unfinished, found on the donor */
    uint64_t fallback_reads;  /* ... not on the donor, found on the receiver */
    uint64_t donor_writes;    /* ... still on the donor, written there */
    uint64_t receiver_writes; /* ... gone from the donor, written on the receiver */
    uint64_t finished_ops;    /* moving key whose donor had finished */
    uint64_t misses;          /* read found the key on no shard */
    uint64_t stale;           /* read returned another value than the last written */
    uint64_t lost;            /* after the step: last write not on the new owner */
    uint64_t doubled;         /* after the step: a moved key still on its donor */
} client_stats;

typedef struct client {
    const cluster *c;
    const plan *p;
    flight *f;
    client_config cfg;
    uint32_t *gens; /* the cluster's generations; only this thread writes them
                     * while it runs */
    uint32_t *picked;
    uint32_t npicked;
    redisContext **conns; /* the thread's own connections, per book index */
    client_stats st;
    int failed;
    int started;
    pthread_t thread;
} client;

/**
 * Pick the keys and start the thread, with connections of its own. gens is
 * c->gens, which the caller must leave alone until client_finish.
 */
int client_start(client *cl, const cluster *c, uint32_t *gens, const plan *p,
                 flight *f, const client_config *cfg);

/** Ask the thread to stop and wait for it. Returns -1 if it failed. */
int client_finish(client *cl);

/**
 * After the step: read each key from its owner under the new router
 * (conns per book index) and count lost writes and keys left on donors.
 */
int client_check(client *cl, redisContext **conns);

void client_free(client *cl);

#endif /* REDIS_SHARD_CLIENT_H */
