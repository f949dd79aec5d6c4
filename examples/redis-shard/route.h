/* SPDX-License-Identifier: MIT */
/*
 * Routing a key to a shard: a view puts one version of the router (a
 * dch_map or a dch_ring) over the address book, so that a lookup gives the
 * book index of the owning shard in O(1) after the library's own lookup.
 *
 * A view only reads its map or ring, and the library allows any number of
 * threads to read an object nobody changes (dch.h), so the migrator and the
 * concurrent client share views without locks.
 */
#ifndef REDIS_SHARD_ROUTE_H
#define REDIS_SHARD_ROUTE_H

#include "cluster.h"

typedef struct view {
    const dch_map *map;   /* exactly one of map and ring is set */
    const dch_ring *ring;
    int *book_of_id;      /* member id -> book index, -1 for a free id */
    uint32_t nid;
} view;

/**
 * A view of `map` or `ring` (the other NULL) over c's address book. Fails
 * (reported) when a member has no address.
 */
int view_init(view *v, const cluster *c, const dch_map *map,
              const dch_ring *ring);

void view_free(view *v);

/** The key's hash under the router's hash key. */
uint64_t view_hash(const view *v, const char *key, size_t len);

/** Book index of the shard owning `hash`, or -1 when nobody owns it. */
int view_owner(const view *v, uint64_t hash);

/** Member name of a router id (for plans), or NULL. */
const char *view_name(const view *v, uint32_t id);

#endif /* REDIS_SHARD_ROUTE_H */
