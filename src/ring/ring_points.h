/* SPDX-License-Identifier: MIT */
/*
 * The ring's points: the sorted entry array and its bucket index, how points
 * are placed, merged in and dropped, and how a hash or the whole ring is
 * read from them. Internal to libdch; ring_points.c states the layout.
 */
#ifndef DCH_SRC_RING_POINTS_H
#define DCH_SRC_RING_POINTS_H

#include "dch/common.h"
#include "dch/range.h"
#include "dch/ring.h"

#include "members.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DCH__RING_BUCKET_BITS 16u
#define DCH__RING_BUCKETS (1u << DCH__RING_BUCKET_BITS)
#define DCH__RING_LOW_BITS 48u
#define DCH__RING_ID_MASK UINT64_C(0xffff)

/** Every point of a ring, as ring_points.c lays them out. */
typedef struct dch__ring_points {
    uint64_t *points; /* sorted entries, room for cap */
    uint32_t npoints;
    uint32_t cap;
    uint32_t *index; /* DCH__RING_BUCKETS + 1 offsets; NULL exactly when npoints == 0 */
} dch__ring_points;

/** Deep copy; DCH_OK or DCH_ENOMEM with *dst empty and nothing allocated. */
int dch__points_clone(const dch_allocator *a, dch__ring_points *dst,
                      const dch__ring_points *src);

/** Free the array and the index; p is then empty. */
void dch__points_free(const dch_allocator *a, dch__ring_points *p);

/** Bytes held through the allocator. */
size_t dch__points_memory(const dch__ring_points *p);

/**
 * Everything an insertion of k > 0 points j0 .. j0 + k - 1 of `name` (of
 * length len, under hash key `key`) needs: on success their sorted positions
 * are in *pos_out (the caller frees them), the index exists and the array
 * has room. On failure (DCH_ENOMEM) p is as it was.
 */
int dch__points_prepare(const dch_allocator *a, dch__ring_points *p,
                        const uint8_t key[16], const char *name, size_t len,
                        uint32_t j0, uint32_t k, uint64_t **pos_out);

/**
 * Merge k sorted positions of member `id` (its name in `mt` when it is a
 * member, else `name`) into the array prepared for them. Entries of other
 * members at the same position are ordered by name, through `mt`.
 */
void dch__points_merge(dch__ring_points *p, const dch__members *mt,
                       const uint64_t *pos, uint32_t k, uint32_t id,
                       const char *name);

/** Drop points j0 .. j1 - 1 of member `id` named name/len; never allocates. */
void dch__points_drop(const dch_allocator *a, dch__ring_points *p,
                      const uint8_t key[16], uint32_t id, const char *name,
                      size_t len, uint32_t j0, uint32_t j1);

/** Install `built` (from dch__ketama_build) in place of p's points. */
void dch__points_replace(const dch_allocator *a, dch__ring_points *p,
                         dch__ring_points *built);

/** The index of the entry owning a hash: the first at or after it, wrapping
 *  to 0. Only for npoints > 0. */
uint32_t dch__points_first(const dch__ring_points *p, uint64_t hash);

/** The id owning a hash; DCH_NODE_NONE when there are no points. */
uint32_t dch__points_lookup(const dch__ring_points *p, uint64_t hash);

/** Walks a ring's arcs in ascending order, one per point that owns any
 *  hashes, without merging arcs of one owner; allocates nothing. */
typedef struct dch__points_cursor {
    const dch__ring_points *p;
    uint32_t i; /* the next entry */
    uint32_t b; /* its bucket */
    uint64_t lo; /* where the next arc starts */
    uint64_t last; /* the last position seen */
    bool started, done;
} dch__points_cursor;

void dch__points_cursor_init(dch__points_cursor *c, const dch__ring_points *p);

/** The next arc; false after the last (the first call always gives one). */
bool dch__points_cursor_next(dch__points_cursor *c, dch_range *arc);

/** The points of a ring (ring.c). */
const dch__ring_points *dch__ring_points_of(const dch_ring *r);

/** The ranges of dch_ring_foreach_range. */
int dch__points_foreach_range(const dch__ring_points *p,
                              int (*fn)(const dch_range *rg, void *ctx),
                              void *ctx);

#endif /* DCH_SRC_RING_POINTS_H */
