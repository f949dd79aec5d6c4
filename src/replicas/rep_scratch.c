/* SPDX-License-Identifier: MIT */
/*
 * The replica engine's scratch (map_replicas.h): allocated before a map
 * changes, so that applying a change cannot fail, and freed after.
 */
#include "map_replicas.h"

#include "dch/error.h"

#include "alloc.h"

#include <string.h>

int dch__rep_alloc(dch__rep_move *rm, const dch_allocator *a, uint32_t id_limit,
                   uint32_t entries, uint32_t moves)
{
    /* Three 64-bit and thirteen 32-bit arrays per id, two per move, then
     * the rows. */
    const size_t L = id_limit ? id_limit : 1;
    const size_t R = moves ? moves : 1;
    uint32_t *p = dch__alloc_array(a, 19 * L + 2 * R + (size_t)entries, sizeof *p);
    memset(rm, 0, sizeof *rm);
    if (p == NULL)
        return DCH_ENOMEM;
    rm->alloc = a;
    rm->dev = (int64_t *)(void *)p; /* the block is aligned for any type */
    rm->pdev = rm->dev + L;
    rm->share = rm->pdev + L;
    p += 6 * L;
    uint32_t **per_id[] = {&rm->quota, &rm->heap, &rm->pos,   &rm->pair,
                           &rm->zone,  &rm->stuck, &rm->from, &rm->mark,
                           &rm->queue, &rm->avail, &rm->cap,  &rm->rowof, &rm->col};
    for (size_t i = 0; i < sizeof per_id / sizeof per_id[0]; i++, p += L)
        *per_id[i] = p;
    rm->rec_at = p;
    rm->rec_from = p + R;
    rm->maxrec = moves;
    rm->rows = p + 2 * R;
    rm->entries = entries;
    return DCH_OK;
}

/* Keyed by members of positive weight only: ids of weight 0 hold no copy
 * and cost nothing (the rows once had a column per id, and 2,916 members
 * of weight 0 beside 300 took a removal's rows away: docs/replicas.md,
 * "Diversity bookkeeping"). K counts x whatever its weight, as
 * dch__rep_build_rows does once x's weight has changed. */
uint32_t dch__rep_rows(const dch__member *members, uint32_t limit, uint32_t x,
                       uint32_t replicas, uint32_t copies, int grow)
{
    uint64_t K = 0;
    for (uint32_t id = 0; id < limit; id++)
        K += id == x || (members[id].name != NULL && members[id].weight > 0);
    K += x >= limit;
    const uint64_t coholders = (uint64_t)(replicas - 1) * copies;
    const uint64_t rows = grow ? K : coholders < K - 1 ? coholders : K - 1;
    return rows * K <= DCH__REP_ROWS_MAX ? (uint32_t)(rows * K) : 0;
}

void dch__rep_release(dch__rep_move *rm)
{
    dch__free(rm->alloc, rm->dev); /* the block */
    memset(rm, 0, sizeof *rm);
}
