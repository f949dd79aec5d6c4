/* SPDX-License-Identifier: MIT */
/*
 * The order of quotas (docs/placement.md, "Fast paths", and "Complexity",
 * "The quota order"). Where the bands leave a unit's pick to the order of
 * quotas alone, phase 2 keeps the counterparties with quota left in
 * heap[0 .. n) sorted by before_key, and a unit's owners are marked
 * (dch__mark_unit) rather than counted: the pick is the first counterparty
 * present (raise) or absent (lowering) there.
 */
#include "engine.h"

#include <string.h>

/*
 * Phase 2's order of the counterparties with quota: members whose per-unit
 * share is at least one slot (floor(S*w/W) >= 1) first, then the larger
 * quota, then the lower id; packed into key[], which follows each change
 * of a quota (set_key), so that the heap compares one word.
 */
static void set_key(const dch__engine *g, uint32_t id)
{
    const dch__move *mv = g->mv;
    mv->key[id] = (uint64_t)(mv->band_lo[id] == 0) << 48 |
                  (uint64_t)(UINT32_MAX - mv->quota[id]) << 16 | id;
}

static int before_key(const dch__engine *g, uint32_t a, uint32_t b)
{
    return g->mv->key[a] < g->mv->key[b];
}

static int after_key(const dch__engine *g, uint32_t a, uint32_t b)
{
    return before_key(g, b, a);
}

/* The first of heap[0 .. n) present in the marked unit (present 1) or
 * absent from it (present 0), or n. */
uint32_t dch__first_marked(const dch__engine *g, uint32_t n, int present)
{
    const dch__move *mv = g->mv;
    uint32_t p = 0;
    while (p < n && (mv->mark[mv->heap[p]] == mv->stamp) != present)
        p++;
    return p;
}

/*
 * The first of heap[0 .. n) holding nothing in the unit, from cnt[] when
 * it was counted, else from mark[]; or n. *lead is a count of leading
 * entries known to be present (each pick keeps all but one of them where
 * they were), so the scan resumes there; and when the unit's heap of present
 * receivers (nh of them) holds every receiver with quota, none is absent.
 */
uint32_t dch__best_absent(const dch__engine *g, uint32_t n, int counted, uint32_t nh,
                            uint32_t *lead)
{
    const dch__move *mv = g->mv;
    if (counted && nh == n)
        return n;
    uint32_t p = *lead < n ? *lead : n;
    if (!counted) {
        while (p < n && mv->mark[mv->heap[p]] == mv->stamp)
            p++;
    } else {
        while (p < n && mv->cnt[mv->heap[p]] > 0)
            p++;
    }
    *lead = p;
    return p;
}

/* Where id is in heap[0 .. n) (it is there). */
uint32_t dch__position_of(const dch__engine *g, uint32_t id)
{
    uint32_t p = 0;
    while (g->mv->heap[p] != id)
        p++;
    return p;
}

/* The counterparties with quota left, sorted (a heap sort, in place). */
uint32_t dch__sort_quotas(const dch__engine *g)
{
    uint32_t *h = g->mv->heap, n = 0;
    for (uint32_t k = 0; k < g->mv->npool; k++) {
        const uint32_t id = g->mv->pool[k];
        if (g->mv->quota[id] > 0) {
            set_key(g, id);
            h[n++] = id;
        }
    }
    dch__heapify(g, after_key, n);
    for (uint32_t end = n; end > 1;) {
        const uint32_t top = h[0];
        h[0] = h[--end];
        h[end] = top;
        dch__sift_down(g, after_key, end, 0);
    }
    return n;
}

/*
 * After heap[p]'s quota fell by one: it leaves when spent, else moves back
 * past those its new key follows (found by bisection). Returns the new n.
 */
uint32_t dch__resort_one(const dch__engine *g, uint32_t n, uint32_t p)
{
    uint32_t *h = g->mv->heap;
    const uint32_t id = h[p];
    if (g->mv->quota[id] == 0) {
        memmove(h + p, h + p + 1, (size_t)(n - p - 1) * sizeof *h);
        return n - 1;
    }
    set_key(g, id);
    uint32_t lo = p + 1, hi = n;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (before_key(g, h[mid], id))
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(h + p, h + p + 1, (size_t)(lo - p - 1) * sizeof *h);
    h[lo - 1] = id;
    return n;
}

/* After a chain, which spends one quota of some counterparty: the spent
 * ones leave and the one whose key changed moves to its place. */
uint32_t dch__resort_all(const dch__engine *g, uint32_t n)
{
    uint32_t *h = g->mv->heap, kept = 0;
    for (uint32_t p = 0; p < n; p++) {
        const uint32_t id = h[p];
        if (g->mv->quota[id] == 0)
            continue;
        set_key(g, id);
        uint32_t q = kept++;
        for (; q > 0 && before_key(g, id, h[q - 1]); q--)
            h[q] = h[q - 1];
        h[q] = id;
    }
    return kept;
}
