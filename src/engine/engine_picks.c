/* SPDX-License-Identifier: MIT */
/*
 * The unit heap (docs/placement.md, "Fast paths"): the members counted in a
 * unit that hold a slot there and have quota left, by pick key.
 */
#include "engine.h"

/*
 * The unit's picks. The members counted in a unit (cnt/present) that hold a
 * slot there and have quota left sit in a binary heap of their
 * dch__pick_key()s, ukey[0 .. n): a key ends with its id, so the heap holds
 * keys alone and compares them in place. A pick changes only the picked
 * member's count and quota (forced[] changes only as a unit starts), so only
 * its key changes, and it is the heap's top: each pick costs O(log S) where
 * a scan of the members present cost O(min(S, N)) (docs/placement.md,
 * "Complexity").
 */
static void unit_sift_down(uint64_t *h, uint32_t n, uint32_t i)
{
    const uint64_t key = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1] < h[c])
            c++;
        if (h[c] >= key)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = key;
}

static uint64_t key_now(const dch__engine *g, uint32_t id)
{
    return dch__pick_key(g, id, dch__tier(g, id, g->mv->cnt[id]));
}

uint32_t dch__unit_push(const dch__engine *g, uint32_t n, uint32_t id)
{
    uint64_t *h = g->mv->ukey;
    const uint64_t key = key_now(g, id);
    uint32_t i = n;
    while (i > 0 && key < h[(i - 1) / 2]) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = key;
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
        mv->ukey[n++] = key_now(g, id);
    }
    for (uint32_t i = n / 2; i-- > 0;)
        unit_sift_down(mv->ukey, n, i);
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
    const uint64_t key = g->mv->ukey[0];
    const int t = (int)(key >> 60);
    if (t > max_tier || (t == 1 && first && dch__free_quota(g, (uint32_t)(key & 0xFFFF)) <= 0))
        return UINT64_MAX;
    return key;
}

/* After the top's count or quota changed: re-key it, or drop it when it
 * holds nothing there or has no quota left. Returns the new size. */
uint32_t dch__unit_fix_top(const dch__engine *g, uint32_t n)
{
    dch__move *mv = g->mv;
    const uint32_t id = (uint32_t)(mv->ukey[0] & 0xFFFF);
    if (mv->cnt[id] == 0 || mv->quota[id] == 0) {
        mv->ukey[0] = mv->ukey[--n];
        if (n == 0)
            return 0;
    } else {
        mv->ukey[0] = key_now(g, id);
    }
    unit_sift_down(mv->ukey, n, 0);
    return n;
}
