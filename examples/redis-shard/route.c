/* SPDX-License-Identifier: MIT */
/*
 * Views of a map or a ring over the address book (see route.h).
 */
#include "route.h"

#include <stdio.h>
#include <stdlib.h>

const char *view_name(const view *v, uint32_t id)
{
    return v->map ? dch_map_node_name(v->map, id) : dch_ring_node_name(v->ring, id);
}

int view_init(view *v, const cluster *c, const dch_map *map,
              const dch_ring *ring)
{
    v->map = map;
    v->ring = ring;
    v->nid = map ? dch_map_id_limit(map) : dch_ring_id_limit(ring);
    v->book_of_id = malloc((v->nid ? v->nid : 1) * sizeof *v->book_of_id);
    if (v->book_of_id == NULL) {
        fprintf(stderr, "redis-shard: out of memory\n");
        return -1;
    }
    for (uint32_t id = 0; id < v->nid; id++) {
        const char *name = view_name(v, id);

        v->book_of_id[id] = name ? cluster_find(c, name) : -1;
        if (name != NULL && v->book_of_id[id] < 0) {
            fprintf(stderr, "redis-shard: member %s has no address\n", name);
            view_free(v);
            return -1;
        }
    }
    return 0;
}

void view_free(view *v)
{
    free(v->book_of_id);
    v->book_of_id = NULL;
    v->nid = 0;
}

uint64_t view_hash(const view *v, const char *key, size_t len)
{
    return v->map ? dch_map_hash(v->map, key, len)
                  : dch_ring_hash(v->ring, key, len);
}

int view_owner(const view *v, uint64_t hash)
{
    uint32_t id = v->map ? dch_map_lookup_hash(v->map, hash)
                         : dch_ring_lookup_hash(v->ring, hash);

    return id < v->nid ? v->book_of_id[id] : -1;
}
