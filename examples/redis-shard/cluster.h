/* SPDX-License-Identifier: MIT */
/*
 * The cluster's state directory: who the shards are, where they listen, how
 * keys are routed, and what the data set holds.
 *
 *   DIR/cluster     text: the scheme, the hash key, the number of keys
 *                   loaded, the address book, one `member NAME HOST:PORT`
 *                   line per shard, and `pending join|leave NAME` while a
 *                   step has not been published;
 *   DIR/map.dchmap  the DCH map (scheme map), written by dch_map_save_file;
 *   DIR/gens        text: `I G` for every key whose generation G is not 0.
 *
 * Every file is replaced atomically (a new file, flushed, renamed over the
 * old one), so a reader sees the old or the new version, never a mix.
 *
 * What routes keys: with the map, the map file, whose members are a subset
 * of the address book; with the ring, the book's members but a pending
 * joiner, since a ring is a function of its member set (every member has
 * weight 1).
 *
 * A step writes the book with its `pending` line (and a joiner's address)
 * before any key moves, and clears it when it publishes the new router
 * (for the ring, in the same write). So every shard that may hold keys has
 * an address, and a step that stopped part-way is known: until it is run
 * again to its end, no other step may start, since the keys are split
 * between the two routers.
 */
#ifndef REDIS_SHARD_CLUSTER_H
#define REDIS_SHARD_CLUSTER_H

#include "dch/dch.h"

#include <stddef.h>
#include <stdint.h>

typedef enum scheme { SCHEME_MAP, SCHEME_RING } scheme;

/** Longest host name or address kept. */
#define HOST_CAP 64u

typedef struct member {
    char name[DCH_NAME_MAX + 1];
    char host[HOST_CAP];
    int port;
} member;

typedef enum step_op { STEP_NONE, STEP_JOIN, STEP_LEAVE } step_op;

typedef struct cluster {
    scheme scheme;
    uint8_t hash_key[16];
    /** Keys k:0 .. k:keys-1 were loaded. */
    uint32_t keys;
    /** The address book. */
    member *book;
    size_t nbook;
    /** The router: map for SCHEME_MAP, ring for SCHEME_RING (the other NULL). */
    dch_map *map;
    dch_ring *ring;
    /** Generation of each key, `keys` entries (NULL when keys is 0). */
    uint32_t *gens;
    /** The step not yet published, if any, and its member. */
    step_op pending;
    char pending_name[DCH_NAME_MAX + 1];
} cluster;

/** Scheme names as written in the state file: "map", "ring". */
const char *scheme_name(scheme s);

/**
 * Parse "NAME=HOST:PORT" (for init) or, with name already known, "HOST:PORT".
 * Names are 1 .. DCH_NAME_MAX printable bytes without spaces, '=' or ':'.
 * Returns 0 or -1 (reported on stderr).
 */
int member_parse(member *m, const char *name, const char *addr);

/**
 * Create a new state directory (it may exist, but must not hold a cluster)
 * with an empty data set and the given members, each of weight 1.
 */
int cluster_create(const char *dir, scheme s, const uint8_t hash_key[16],
                   const member *members, size_t n);

/** Read a state directory. On failure *c is left empty (cluster_free-able). */
int cluster_load(cluster *c, const char *dir);

/** Free everything a cluster holds and empty it. */
void cluster_free(cluster *c);

/** The book index of a name, or -1. */
int cluster_find(const cluster *c, const char *name);

/** Append to the address book (the name must not be there). */
int cluster_add_member(cluster *c, const member *m);

/** Remove a name from the address book (a no-op when it is not there). */
void cluster_drop_member(cluster *c, const char *name);

/** Write DIR/cluster from c. */
int cluster_save_book(const cluster *c, const char *dir);

/** Write DIR/map.dchmap. */
int cluster_save_map(const dch_map *m, const char *dir);

/** Write DIR/gens from c. */
int cluster_save_gens(const cluster *c, const char *dir);

/** A map or ring config carrying the cluster's hash key. */
void cluster_map_config(const cluster *c, dch_map_config *cfg);
void cluster_ring_config(const cluster *c, dch_ring_config *cfg);

#endif /* REDIS_SHARD_CLUSTER_H */
