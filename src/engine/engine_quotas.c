/* SPDX-License-Identifier: MIT */
/*
 * The order of quotas (docs/placement.md, "Fast paths", and "Complexity",
 * "The quota order"). Where the bands leave a unit's pick to the order of
 * quotas alone, the pick is the counterparty with quota left that comes
 * first in that order among those present in the unit (a raise's banded
 * take) or absent from it (a lowering's lazy give). Each such counterparty
 * carries its place in the order as a key (key[]), and:
 *
 *   - a raise finds the first present one among the unit's owners, a scan
 *     of the unit it marks anyway (dch__mark_unit_slots), O(S);
 *   - a lowering keeps them in a binary min-heap of keys (heap[0 .. qn),
 *     qpos[] the place of each): the first absent one is the top once the
 *     tops present in the unit are set aside; a receiver only gains slots
 *     in the unit being given, so one set aside stays present until the
 *     unit ends, and goes back then. A pick re-keys one member: O(log n).
 *
 * Both give the pick a sorted list of the order gave (the first present or
 * absent entry), at O(log n) a pick where keeping the list sorted cost a
 * move of up to n entries.
 */
#include "engine.h"

#define QPOS_NONE UINT32_MAX /* in neither the heap nor aside */
#define QPOS_ASIDE (UINT32_MAX - 1) /* set aside as present in the unit */

/*
 * The order: members whose per-unit share is at least one slot
 * (floor(S*w/W) >= 1) first, then the larger quota, then the lower id;
 * packed into key[], which follows each change of a quota, so that the
 * order compares one word.
 */
void dch__set_key(const dch__engine *g, uint32_t id)
{
    const dch__move *mv = g->mv;
    mv->key[id] = (uint64_t)(mv->band_lo[id] == 0) << 48 |
                  (uint64_t)(UINT32_MAX - mv->quota[id]) << 16 | id;
}

/* Keys for every counterparty with quota (pool holds every one that can
 * have quota); returns how many have quota. */
uint32_t dch__key_quotas(const dch__engine *g)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < g->mv->npool; k++) {
        const uint32_t id = g->mv->pool[k];
        if (g->mv->quota[id] > 0) {
            dch__set_key(g, id);
            n++;
        }
    }
    return n;
}

static void put(dch__move *mv, uint32_t i, uint32_t id)
{
    mv->heap[i] = id;
    mv->qpos[id] = i;
}

static void down(dch__move *mv, uint32_t i)
{
    const uint32_t id = mv->heap[i], n = mv->qn;
    const uint64_t k = mv->key[id];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && mv->key[mv->heap[c + 1]] < mv->key[mv->heap[c]])
            c++;
        if (mv->key[mv->heap[c]] >= k)
            break;
        put(mv, i, mv->heap[c]);
        i = c;
    }
    put(mv, i, id);
}

static void up(dch__move *mv, uint32_t i)
{
    const uint32_t id = mv->heap[i];
    while (i > 0 && mv->key[id] < mv->key[mv->heap[(i - 1) / 2]]) {
        put(mv, i, mv->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    put(mv, i, id);
}

/* Take heap[i] out of the heap (its qpos is left to the caller). */
static void cut(dch__move *mv, uint32_t i)
{
    const uint32_t last = mv->heap[--mv->qn];
    if (i < mv->qn) {
        put(mv, i, last);
        down(mv, i);
        up(mv, mv->qpos[last]);
    }
}

/* The heap of ids[0 .. n) with quota left, keyed; n may count them twice
 * over heap and aside (dch__quota_rekey passes both). */
static void build(const dch__engine *g, const uint32_t *ids, uint32_t n)
{
    dch__move *mv = g->mv;
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t id = ids[k];
        mv->qpos[id] = QPOS_NONE;
        if (mv->quota[id] > 0) {
            dch__set_key(g, id);
            mv->heap[mv->qn] = id;
            mv->qpos[id] = mv->qn++;
        }
    }
    for (uint32_t i = mv->qn / 2; i-- > 0;)
        down(mv, i);
    mv->qlive = mv->qn;
}

/* The lowering's heap of receivers with quota; returns how many. */
uint32_t dch__quota_heap(const dch__engine *g)
{
    g->mv->qn = g->mv->naside = 0;
    build(g, g->mv->pool, g->mv->npool);
    return g->mv->qlive;
}

/*
 * The receiver with quota first in the order that holds nothing in the
 * unit (from cnt[] when it was counted, else from mark[]), or UINT32_MAX.
 * The tops present are set aside until dch__quota_restore.
 */
uint32_t dch__quota_absent(const dch__engine *g, int counted)
{
    dch__move *mv = g->mv;
    while (mv->qn > 0) {
        const uint32_t id = mv->heap[0];
        if (counted ? mv->cnt[id] == 0 : mv->mark[id] != mv->stamp)
            return id;
        cut(mv, 0);
        mv->qpos[id] = QPOS_ASIDE;
        mv->aside[mv->naside++] = id;
    }
    return UINT32_MAX;
}

/* After id's quota fell by one: re-key it, or drop it when spent. */
void dch__quota_spent(const dch__engine *g, uint32_t id)
{
    dch__move *mv = g->mv;
    const uint32_t at = mv->qpos[id];
    if (at == QPOS_NONE) /* not in the order (a chain gave it quota) */
        return;
    if (mv->quota[id] == 0) {
        mv->qlive--;
        if (at != QPOS_ASIDE) /* one spent aside is dropped on its return */
            cut(mv, at);
        mv->qpos[id] = at == QPOS_ASIDE ? at : QPOS_NONE;
        return;
    }
    dch__set_key(g, id);
    if (at != QPOS_ASIDE)
        down(mv, at); /* its key grew */
}

/* The unit is done: those set aside with quota left go back. */
void dch__quota_restore(const dch__engine *g)
{
    dch__move *mv = g->mv;
    for (uint32_t k = 0; k < mv->naside; k++) {
        const uint32_t id = mv->aside[k];
        mv->qpos[id] = QPOS_NONE;
        if (mv->quota[id] > 0) {
            mv->heap[mv->qn] = id;
            mv->qpos[id] = mv->qn++;
            up(mv, mv->qpos[id]);
        }
    }
    mv->naside = 0;
}

/* After a chain, which may change any quota: rebuild the heap from those
 * in it or aside (the spent ones leave). */
void dch__quota_rekey(const dch__engine *g)
{
    dch__move *mv = g->mv;
    for (uint32_t k = 0; k < mv->naside; k++)
        mv->heap[mv->qn + k] = mv->aside[k];
    const uint32_t n = mv->qn + mv->naside;
    mv->qn = mv->naside = 0;
    /* build() reads heap[k] before it writes heap[qn], qn <= k */
    build(g, mv->heap, n);
}
