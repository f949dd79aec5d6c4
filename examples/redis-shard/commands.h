/* SPDX-License-Identifier: MIT */
/*
 * The commands of redis-shard, one file each (main.c holds init and the
 * dispatch), and the little they share.
 */
#ifndef REDIS_SHARD_COMMANDS_H
#define REDIS_SHARD_COMMANDS_H

#include "cluster.h"
#include "keys.h"
#include "number.h"
#include "route.h"
#include "store.h"

#include <stddef.h>
#include <stdint.h>

/** Exit status of a usage error (0 is success, 1 any other failure). */
#define EXIT_USAGE 2
/** Commands per pipeline when loading and verifying. */
#define PIPELINE 1000u

/** Each command takes the state directory and its own arguments and
 * returns the program's exit status. */
int cmd_init(const char *dir, int argc, char **argv);
int cmd_load(const char *dir, int argc, char **argv);
int cmd_join(const char *dir, int argc, char **argv);
int cmd_leave(const char *dir, int argc, char **argv);
int cmd_verify(const char *dir, int argc, char **argv);
/** The replica scenario (replicas.c): no state directory, the map in memory. */
int cmd_replicas(int argc, char **argv);
/** The rolling restart by primary drains (restart.c): no state directory. */
int cmd_restart(int argc, char **argv);

/** Print why (if not NULL) and the usage; returns EXIT_USAGE. */
int usage(const char *why);


/** Seconds on a monotonic clock. */
double now_seconds(void);

/** A connection to every member of the book, by book index; NULL on failure
 * (reported). */
redisContext **connect_all(const cluster *c);

/** Close what connect_all opened; NULL is a no-op. */
void close_all(redisContext **conns, size_t n);

/** Whether the published router has a member of this name. */
int member_of_router(const cluster *c, const char *name);

/** The view of the published router. */
int current_view(view *v, const cluster *c);

/** PIPELINE keys (and values) gathered for one shard: about 100 KB, so
 *  batches live on the heap. */
typedef struct key_batch {
    char keys[PIPELINE][KEY_CAP];
    char vals[PIPELINE][VALUE_CAP];
    const char *kp[PIPELINE], *vp[PIPELINE];
    size_t klen[PIPELINE], vlen[PIPELINE];
    uint32_t idx[PIPELINE];
    size_t n;
} key_batch;

/** One empty batch for each of n shards, in one block (free it with
 *  free), or NULL (reported) when memory runs out. */
key_batch *key_batches_new(size_t n);

/** The end of a command that sent key batches to every shard: frees the
 *  batches and connections (one per member of c's book; NULL allowed), the
 *  view and the book. */
void shards_free(cluster *c, view *v, redisContext **conns, key_batch *bufs);

#endif /* REDIS_SHARD_COMMANDS_H */
