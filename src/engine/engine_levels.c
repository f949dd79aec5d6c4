/* SPDX-License-Identifier: MIT */
/*
 * Stage 2 (docs/placement.md, "Stage 2: levels"): x's count per unit and
 * the targets its water-filling sets.
 */
#include "engine.h"

#include <string.h>

/* x's count in every unit into xcnt. */
void dch__count_x(const dch__engine *g)
{
    const dch__map_view *v = g->v;
    uint32_t *xcnt = g->mv->xcnt;
    if (v->members[g->x].slots == 0) {
        memset(xcnt, 0, (size_t)v->units * sizeof *xcnt);
        return;
    }
    for (uint32_t u = 0; u < v->units; u++)
        xcnt[u] = dch__count_of(v->owner + (size_t)u * v->spu, v->spu, g->x);
}

/*
 * The level L of x's water-filling, in one pass over the histogram of x's
 * counts (xs[c]: units holding c slots): on a raise the largest L whose
 * fill f(L) = sum over c < L of hist[c] * (L - c) is at most `moved`, on a
 * lowering the smallest L whose cut, the sum over c > L of hist[c] * (c - L),
 * is. f grows by the units at or below L with each step of L (falls by those
 * at or above it), so stepping L by one from the empty fill costs O(S) in
 * all; *filled gets the fill at L.
 */
static uint32_t level_of(const dch__engine *g, uint32_t moved, uint64_t *filled)
{
    const uint32_t *hist = g->mv->xs, spu = g->v->spu;
    uint64_t f = 0, units = 0;
    uint32_t L;
    if (g->grow) {
        for (L = 0; L < spu; L++) {
            units += hist[L];
            if (f + units > moved)
                break;
            f += units;
        }
    } else {
        for (L = spu; L > 0; L--) {
            units += hist[L];
            if (f + units > moved)
                break;
            f += units;
        }
    }
    *filled = f;
    return L;
}

/*
 * x's target count per unit: levelled so that its per-unit counts are as even
 * as `moved` slots allow. A raise lifts the lowest units to a level L and one
 * more slot into R of the units at L; a lowering cuts the highest down to L
 * and R of them one further. The R are spread evenly round the ring.
 */
void dch__plan_targets(const dch__engine *g, uint32_t moved)
{
    const dch__map_view *v = g->v;
    memset(g->mv->xs, 0, ((size_t)v->spu + 1) * sizeof *g->mv->xs);
    for (uint32_t u = 0; u < v->units; u++)
        g->mv->xs[g->mv->xcnt[u]]++;
    uint64_t filled;
    const uint32_t L = level_of(g, moved, &filled);
    g->mv->level = L; /* used by raises only */
    const uint64_t extra = moved - filled;
    uint64_t at_level = 0, acc = 0;
    for (uint32_t u = 0; u < v->units; u++)
        at_level += g->grow ? g->mv->xcnt[u] <= L : g->mv->xcnt[u] >= L;
    for (uint32_t u = 0; u < v->units; u++) {
        const uint32_t c = g->mv->xcnt[u];
        uint32_t t = c;
        if (g->grow ? c <= L : c >= L) {
            t = L;
            acc += extra;
            if (acc >= at_level) {
                acc -= at_level;
                t = g->grow ? L + 1 : L - 1;
            }
        }
        g->mv->target[u] = t;
    }
}
