/* SPDX-License-Identifier: MIT */
/*
 * What the migrator and a concurrent client share while one step runs, and
 * the rule by which the client reads and writes during it.
 *
 * The rule, for a key whose owner is `o` under the old router and `n` under
 * the new one:
 *
 *   - o == n: the key does not move; read and write it on o.
 *   - o != n and donor o is not finished: write with "set if the key
 *     exists" on o (one atomic script); when the key is not there, write
 *     it on n. Read on o; when the key is not there, read on n.
 *   - o != n and donor o is finished: read and write on n only.
 *
 * Why it loses nothing: the migrator moves keys with MIGRATE, which writes a
 * key on the receiver and deletes it from the donor with no other command
 * running on the donor in between. So a key missing on the donor is already
 * on the receiver (reads fall back and find it), and a write lands on the
 * donor only where the key still is, to be carried along when it moves.
 * Nothing ever writes a key onto a donor that lacks it, so once a key has
 * left, it cannot reappear there behind the migrator, and a write sent to the
 * receiver is never overwritten by an older copy. A donor is marked finished
 * only after a second scan finds none of its moving keys left on it.
 *
 * The client learns the two routers and the finished donors from here; in a
 * deployment the same facts would travel with the published map.
 */
#ifndef REDIS_SHARD_FLIGHT_H
#define REDIS_SHARD_FLIGHT_H

#include "route.h"

#include <pthread.h>
#include <stdint.h>

typedef struct flight {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const view *old, *new; /* fixed for the step, read without the lock */
    unsigned char *finished; /* per book index, under mu */
    uint64_t client_ops;     /* operations the client has completed, under mu */
    int client_stopped;      /* the client does no more operations, under mu */
    int stop;                /* the client is asked to stop, under mu */
} flight;

int flight_init(flight *f, const view *old, const view *new, size_t nbook);
void flight_destroy(flight *f);

/** Whether donor d is finished. */
int flight_finished(flight *f, int d);

#endif /* REDIS_SHARD_FLIGHT_H */
