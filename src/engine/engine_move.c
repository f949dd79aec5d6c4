/* SPDX-License-Identifier: MIT */
/*
 * The placement engine of the DCH map: which slots move when one member's
 * weight changes (add is a raise from 0, remove a lowering to 0); the
 * design, its proofs and its cost are in docs/placement.md. This file, the
 * top of src/engine/, allocates the scratch and runs the stages in order:
 * counts (engine_counts.c), levels, bands and passes (engine_place.c),
 * repair (engine_repair.c).
 *
 * Deviations are compared as integers, held*W - P*w (below 2^57 in size),
 * and every tie falls to the lower id, so the table is a pure function of
 * the config and the call sequence.
 */
#include "engine.h"

#include "dch/error.h"

#include "alloc.h"

#include <string.h>

_Thread_local int64_t dch__search_work;

int dch__move_alloc(dch__move *mv, const dch_allocator *a, uint32_t id_limit,
                    uint32_t units, uint32_t spu, uint32_t max_moves)
{
    /* One block of 32-bit words: a deviation and two keys (two words each),
     * two queues of keys (four words each)
     * and 17 arrays per id, the chain search's table (4 words per id), 2 per
     * unit, 2 per slot of a unit (and one), 2 per move it can make. Sizes
     * stay far below SIZE_MAX (ids < 2^16, units and moves <= 2^24). */
    const size_t n = 35 * (size_t)id_limit + 2 * (size_t)units + 2 * (size_t)spu + 1 +
                     2 * (size_t)(max_moves ? max_moves : 1);
    uint32_t *p = dch__alloc_array(a, n, sizeof *p);
    memset(mv, 0, sizeof *mv);
    if (p == NULL)
        return DCH_ENOMEM;
    mv->alloc = a;
    mv->dev = (int64_t *)(void *)p; /* the block is aligned for any type */
    p += 2 * (size_t)id_limit;
    mv->key = (uint64_t *)(void *)p;
    p += 2 * (size_t)id_limit;
    mv->ukey = (uint64_t *)(void *)p;
    p += 2 * (size_t)id_limit;
    mv->qq = (uint64_t *)(void *)p;
    mv->qcap = 2 * id_limit;
    p += 4 * (size_t)id_limit;
    mv->uq = (uint64_t *)(void *)p; /* also qcap entries */
    p += 4 * (size_t)id_limit;
    uint32_t **per_id[] = {&mv->quota, &mv->heap,  &mv->cnt,   &mv->slot,    &mv->forced,
                           &mv->par,   &mv->via,   &mv->entry, &mv->mark,    &mv->queue,
                           &mv->pool,  &mv->band_lo, &mv->band_hi, &mv->rec_head, &mv->rec_tail,
                           &mv->qpos,  &mv->aside};
    for (size_t i = 0; i < sizeof per_id / sizeof per_id[0]; i++, p += id_limit)
        *per_id[i] = p;
    mv->table = p;
    p += 4 * (size_t)id_limit;
    mv->xcnt = p;
    mv->target = p + units;
    mv->present = p + 2 * (size_t)units;
    mv->xs = mv->present + spu;
    mv->rec_slot = mv->xs + spu + 1;
    mv->rec_next = mv->rec_slot + (max_moves ? max_moves : 1);
    memset(mv->quota, 0, (size_t)id_limit * sizeof *mv->quota);
    memset(mv->cnt, 0, (size_t)id_limit * sizeof *mv->cnt);
    memset(mv->mark, 0, (size_t)id_limit * sizeof *mv->mark);
    memset(mv->rec_head, 0xFF, (size_t)id_limit * sizeof *mv->rec_head);
    return DCH_OK;
}

uint32_t dch__move_bound(const dch__member *members, uint32_t id_limit, uint32_t slots,
                         uint32_t x, uint32_t w, uint32_t total)
{
    const uint32_t held = x < id_limit ? members[x].slots : 0;
    const uint32_t before = x < id_limit ? members[x].weight : 0;
    if (w <= before)
        return held;
    /* candidates()'s k with x's new weight: the picks of a raise. */
    const int64_t W = (int64_t)total - before + w;
    const int64_t ex = (int64_t)held * W - (int64_t)slots * w;
    int64_t top = INT64_MIN;
    for (uint32_t id = 0; id < id_limit; id++) {
        const int64_t d = (int64_t)members[id].slots * W - (int64_t)slots * members[id].weight;
        if (id != x && members[id].slots > 0 && d > top)
            top = d;
    }
    const uint64_t k = dch__raise_picks(top, ex, W);
    return k < slots - held ? (uint32_t)k : slots - held;
}

void dch__move_release(dch__move *mv)
{
    dch__free(mv->alloc, mv->dev); /* the block */
    memset(mv, 0, sizeof *mv);
}

void dch__move_apply(dch__move *mv, const dch__map_view *v, uint32_t x,
                     uint32_t w)
{
    dch__engine g;
    g.v = v;
    g.mv = mv;
    g.x = x;
    g.grow = w > v->members[x].weight;
    const int64_t W = (int64_t)v->total_weight - v->members[x].weight + w;
    v->members[x].weight = w;
    g.W = W;
    g.equal = 1;
    for (uint32_t id = 0, first = 0; id < v->id_limit; id++) {
        const uint32_t wi = v->members[id].weight;
        first = first == 0 ? wi : first;
        g.equal &= wi == 0 || wi == first;
        mv->dev[id] = (int64_t)v->members[id].slots * W - (int64_t)v->slots * wi;
    }

    mv->nrec = 0;
    mv->donors_seen = 0;
    dch__units_counted = 0;
    dch__order_work = 0;
    /* docs/placement.md, "Complexity": the chain search's budget (I4) */
    const int64_t budget = DCH__SEARCH_BUDGET * ((int64_t)v->slots + v->id_limit) + DCH__SEARCH_BASE;
    mv->budget = budget;
    /* docs/placement.md, "Stage 1: counts" */
    const uint32_t moved = dch__plan_counts(&g);
    mv->x_final = g.grow ? (int64_t)v->members[x].slots + moved
                         : (int64_t)v->members[x].slots - moved;
    if (moved > 0)
        dch__place(&g, moved);
    mv->dev[x] = (int64_t)v->members[x].slots * W - (int64_t)v->slots * w;
    dch__search_work = budget - mv->budget;
    /* docs/placement.md, "Stage 5: repair"; with equal weights stage 1
     * keeps the bound ("Equal weights: no repair, counts within 2") */
    if (!g.equal)
        dch__repair(&g);
}
