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
                   uint32_t rows, uint32_t moves)
{
    /* Three 64-bit and twelve 32-bit arrays per id, two per move, then the
     * rows. */
    const size_t L = id_limit ? id_limit : 1;
    const size_t R = moves ? moves : 1;
    uint32_t *p = dch__alloc_array(a, 18 * L + 2 * R + (size_t)rows * L, sizeof *p);
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
                           &rm->queue, &rm->avail, &rm->cap,  &rm->rowof};
    for (size_t i = 0; i < sizeof per_id / sizeof per_id[0]; i++, p += L)
        *per_id[i] = p;
    rm->rec_at = p;
    rm->rec_from = p + R;
    rm->maxrec = moves;
    rm->rows = p + 2 * R;
    rm->nrows = rows;
    return DCH_OK;
}

uint32_t dch__rep_rows(uint32_t id_limit, uint32_t replicas, uint32_t copies, int grow)
{
    const uint64_t want = grow ? id_limit : (uint64_t)(replicas - 1) * copies;
    const uint64_t rows = want < id_limit ? want : id_limit;
    return rows * id_limit <= DCH__REP_ROWS_MAX ? (uint32_t)rows : 0;
}

void dch__rep_release(dch__rep_move *rm)
{
    dch__free(rm->alloc, rm->dev); /* the block */
    memset(rm, 0, sizeof *rm);
}
