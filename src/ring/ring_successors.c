/* SPDX-License-Identifier: MIT */
/*
 * The ring's successor walk (dch_ring_successors_hash): the distinct members
 * met going clockwise from a hash, the owner first. It is the replica
 * placement of Dynamo-style stores ("the next R distinct members"), and the
 * walk a zone-aware placement filters.
 *
 * The walk starts at the entry a lookup finds (dch__points_first), so its
 * first member is always dch_ring_lookup_hash's answer, and follows the
 * sorted entry array, wrapping once; entries at one position are met in the
 * array's tie order, the order the lookup settles ties by. Members already
 * met are skipped by a scan of what was written, which is cheap for the
 * small counts replica placement asks for.
 */
#include "dch/ring.h"

#include "ring_points.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static bool written(const uint32_t *ids, size_t n, uint32_t id)
{
    for (size_t k = 0; k < n; k++)
        if (ids[k] == id)
            return true;
    return false;
}

size_t dch_ring_successors_hash(const dch_ring *r, uint64_t hash, uint32_t *ids,
                                size_t cap)
{
    if (r == NULL || ids == NULL || cap == 0)
        return 0;
    const dch__ring_points *p = dch__ring_points_of(r);
    if (p->npoints == 0)
        return 0;
    uint32_t i = dch__points_first(p, hash);
    size_t n = 0;
    for (uint32_t k = 0; k < p->npoints && n < cap; k++) {
        const uint32_t id = (uint32_t)(p->points[i] & DCH__RING_ID_MASK);
        if (!written(ids, n, id))
            ids[n++] = id;
        i = i + 1 == p->npoints ? 0 : i + 1;
    }
    return n;
}
