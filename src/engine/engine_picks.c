/* SPDX-License-Identifier: MIT */
/*
 * The unit heap (docs/placement.md, "Fast paths"): the members counted in a
 * unit that hold a slot there and have quota left, by pick key.
 */
#include "engine.h"

/*
 * The unit's picks. The members counted in a unit (cnt/present) that hold a
 * slot there and have quota left sit in a binary heap over uheap[], ordered
 * by their dch__pick_key(), kept in ukey[]. A pick changes only the picked
 * member's count and quota (forced[] changes only as a unit starts), so only
 * its key changes, and it is the heap's top: each pick costs O(log S) where
 * a scan of the members present cost O(min(S, N)) (docs/placement.md,
 * "Complexity").
 */
static void unit_sift_down(dch__move *mv, uint32_t n, uint32_t i)
{
    uint32_t *h = mv->uheap;
    const uint32_t id = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && mv->ukey[h[c + 1]] < mv->ukey[h[c]])
            c++;
        if (mv->ukey[h[c]] >= mv->ukey[id])
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = id;
}

uint32_t dch__unit_push(const dch__engine *g, uint32_t n, uint32_t id)
{
    dch__move *mv = g->mv;
    uint32_t *h = mv->uheap, i = n;
    mv->ukey[id] = dch__pick_key(g, id, dch__tier(g, id, mv->cnt[id]));
    while (i > 0 && mv->ukey[id] < mv->ukey[h[(i - 1) / 2]]) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = id;
    return n + 1;
}

/* The heap of the np members counted in the unit; returns its size. */
uint32_t dch__unit_heap(const dch__engine *g, uint32_t np)
{
    dch__move *mv = g->mv;
    uint32_t n = 0;
    for (uint32_t k = 0; k < np; k++) {
        const uint32_t id = mv->present[k];
        if (mv->cnt[id] == 0 || mv->quota[id] == 0)
            continue;
        mv->ukey[id] = dch__pick_key(g, id, dch__tier(g, id, mv->cnt[id]));
        mv->uheap[n++] = id;
    }
    for (uint32_t i = n / 2; i-- > 0;)
        unit_sift_down(mv, n, i);
    return n;
}

/*
 * The least dch__pick_key() in the heap of n if its tier is at most max_tier
 * and, on the first pass of a raise, a tier-1 pick leaves quota beyond what
 * later units force; else UINT64_MAX. (When the least fails, all fail: a
 * larger key has a larger tier, or the same tier and less spare quota.)
 */
uint64_t dch__unit_best(const dch__engine *g, uint32_t n, int max_tier, int first)
{
    if (n == 0)
        return UINT64_MAX;
    const uint32_t id = g->mv->uheap[0];
    const uint64_t key = g->mv->ukey[id];
    const int t = (int)(key >> 60);
    if (t > max_tier || (t == 1 && first && dch__free_quota(g, id) <= 0))
        return UINT64_MAX;
    return key;
}

/* After the top's count or quota changed: re-key it, or drop it when it
 * holds nothing there or has no quota left. Returns the new size. */
uint32_t dch__unit_fix_top(const dch__engine *g, uint32_t n)
{
    dch__move *mv = g->mv;
    const uint32_t id = mv->uheap[0];
    if (mv->cnt[id] == 0 || mv->quota[id] == 0) {
        mv->uheap[0] = mv->uheap[--n];
        if (n == 0)
            return 0;
    } else {
        mv->ukey[id] = dch__pick_key(g, id, dch__tier(g, id, mv->cnt[id]));
    }
    unit_sift_down(mv, n, 0);
    return n;
}
