/* SPDX-License-Identifier: MIT */
/*
 * The migrator: carries out a plan, donor after donor.
 *
 * For each donor it walks the donor's keyspace with SCAN and keeps the keys
 * whose hash lies in one of its outgoing ranges (plan_find), checking that
 * the new router sends each to the same receiver. The keys are sorted and
 * deduplicated (SCAN may return a key twice), then moved to their receivers
 * with MIGRATE in batches. A second SCAN must find none of them left; only
 * then is the donor marked finished for the concurrent client (flight.h).
 *
 * Between batches the migrator waits, for at most a bounded time, until the
 * client has completed a few more operations, so that the client's reads and
 * writes are interleaved with every part of the migration rather than
 * depending on thread scheduling.
 */
#ifndef REDIS_SHARD_MIGRATE_H
#define REDIS_SHARD_MIGRATE_H

#include "flight.h"
#include "plan.h"
#include "store.h"

typedef struct migrate_config {
    unsigned batch;      /* keys per MIGRATE */
    unsigned interleave; /* client operations to wait for after each batch */
    /* Stop with a failure after this many batches (0: never), as a crash
     * would; for the test that runs a step again after it stopped. */
    uint64_t stop_after;
} migrate_config;

typedef struct migrate_result {
    uint64_t *sent, *received; /* per book index */
    uint64_t moved;            /* keys moved in all */
    uint64_t batches;          /* MIGRATE commands */
    uint64_t left_behind;      /* moving keys a donor still held after its pass */
    uint64_t strays;           /* keys on a donor that the old router places elsewhere */
    uint64_t disagreements;    /* keys the plan and the new router send apart */
    uint64_t waits_timed_out;  /* interleaving waits that gave up */
} migrate_result;

/**
 * Move every key in the plan's ranges from its donor to its receiver.
 * conns[i] is a connection to book member i. res is filled even on failure
 * (so far as the step got) and must be freed with migrate_result_free.
 * Returns 0 or -1 (a command failed; reported).
 */
int migrate_run(const cluster *c, const plan *p, flight *f,
                redisContext **conns, const migrate_config *cfg,
                migrate_result *res);

void migrate_result_free(migrate_result *res);

#endif /* REDIS_SHARD_MIGRATE_H */
