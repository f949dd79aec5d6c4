/* SPDX-License-Identifier: MIT */
/*
 * Stage 3 (docs/placement.md, "Stage 3: bands and forced moves"): every
 * member's band [floor(s), ceil(s)] with s = S*w/W, a pick's tier, the
 * moves the bands force in units to come (forced[]) and the pick key.
 *
 * How welcome a pick is in a unit, for a member holding c slots there: tier
 * 0 when the band forces it (a donor above ceil(s), a receiver below
 * floor(s)), 1 when the band allows it, 2 when it leaves the band.
 */
#include "engine.h"

#include <string.h>

/* Every member's band; one division per run of equal weights in id order. */
void dch__plan_bands(const dch__engine *g)
{
    const dch__map_view *v = g->v;
    uint32_t last_w = 0, lo = 0, hi = 0;
    g->mv->max_band_lo = g->mv->max_band_hi = 0;
    for (uint32_t id = 0; id < v->id_limit; id++) {
        const uint32_t w = v->members[id].weight;
        if (w != last_w) {
            const int64_t share = (int64_t)v->spu * w;
            lo = (uint32_t)(share / g->W);
            hi = lo + (share % g->W != 0);
            last_w = w;
        } else if (w == 0) {
            lo = hi = 0;
        }
        g->mv->band_lo[id] = lo;
        g->mv->band_hi[id] = hi;
        if (id != g->x && lo > g->mv->max_band_lo)
            g->mv->max_band_lo = lo;
        if (id != g->x && hi > g->mv->max_band_hi)
            g->mv->max_band_hi = hi;
    }
}

/* dch__tier() from the values: c slots held, band [lo, hi]. */
int dch__tier_of(int grow, uint32_t c, uint32_t lo, uint32_t hi)
{
    if (grow) /* after giving: c - 1 */
        return c > hi ? 0 : c > lo ? 1 : 2;
    return c < lo ? 0 : c < hi ? 1 : 2; /* after receiving: c + 1 */
}

int dch__tier(const dch__engine *g, uint32_t id, uint32_t c)
{
    uint32_t lo, hi;
    dch__band(g, id, &lo, &hi);
    return dch__tier_of(g->grow, c, lo, hi);
}

/* Moves the band forces on a member holding c slots of a unit. */
static uint32_t forced_in_unit(const dch__engine *g, uint32_t id, uint32_t c)
{
    uint32_t lo, hi;
    dch__band(g, id, &lo, &hi);
    if (g->grow)
        return c > hi ? c - hi : 0;
    return c < lo ? lo - c : 0;
}

/* Quota left beyond the moves the bands force in units still to come. */
int64_t dch__free_quota(const dch__engine *g, uint32_t id)
{
    return (int64_t)g->mv->quota[id] - g->mv->forced[id];
}

/*
 * How good a pick is in the unit, smaller first: its tier, then the larger
 * quota left beyond what later units force on it (largest-remaining-first,
 * the order that meets every quota when the units allow it), then the lower
 * id; packed as tier (2 bits), free quota descending (|free quota| < 2^25)
 * and id (16 bits).
 */
static uint64_t key_of(int t, int64_t spare, uint32_t id)
{
    return (uint64_t)t << 60 | (uint64_t)((INT64_C(1) << 25) - spare) << 16 | id;
}

uint64_t dch__pick_key(const dch__engine *g, uint32_t id, int t)
{
    return key_of(t, dch__free_quota(g, id), id);
}

/*
 * How many picks in a row id makes in the unit being visited (at most
 * room), the first being its: pick j leaves it c - j slots of the unit on
 * a raise (c + j on a lowering; c = cnt[id]) and q - j of quota
 * (q = quota[id]), so its key grows with j and nothing else changes. id is
 * picked again while it still holds a slot there (a raise) and has quota,
 * its key stays below `bound` (the least key of the other picks), its tier
 * is at most max_tier and, on the first pass of a raise (`first`), a
 * tier-1 pick leaves free quota: the picks dch__unit_best() and
 * dch__unit_fix_top() would make one by one.
 */
uint32_t dch__pick_run(const dch__engine *g, uint32_t id, uint64_t bound, int max_tier,
                       int first, uint32_t room)
{
    const uint32_t c = g->mv->cnt[id], q = g->mv->quota[id];
    const int64_t forced = g->mv->forced[id];
    uint32_t lo, hi, j = 1;
    dch__band(g, id, &lo, &hi);
    for (; j < room && j < q && (!g->grow || j < c); j++) {
        const int t = dch__tier_of(g->grow, g->grow ? c - j : c + j, lo, hi);
        const int64_t spare = (int64_t)(q - j) - forced;
        if (t > max_tier || (t == 1 && first && spare <= 0) || key_of(t, spare, id) >= bound)
            break;
    }
    return j;
}

/*
 * The moves the bands force on the members present in unit u: added to
 * forced[] by the survey before the first pass (sign +1), and taken off as
 * the first pass reaches u (sign -1), so that forced[] holds what later
 * units will force.
 */
void dch__tally_forced(const dch__engine *g, uint32_t np, int sign)
{
    for (uint32_t k = 0; k < np; k++) {
        const uint32_t id = g->mv->present[k];
        const uint32_t f = forced_in_unit(g, id, g->mv->cnt[id]);
        g->mv->forced[id] = sign > 0 ? g->mv->forced[id] + f : g->mv->forced[id] - f;
    }
}

/* forced[] of every member over every unit where x changes. */
void dch__survey_forced(const dch__engine *g)
{
    const dch__map_view *v = g->v;
    memset(g->mv->forced, 0, (size_t)v->id_limit * sizeof *g->mv->forced);
    for (uint32_t u = 0; u < v->units; u++) {
        if (g->mv->xcnt[u] == g->mv->target[u])
            continue;
        const uint32_t np = dch__count_unit(g, v->owner + (size_t)u * v->spu, 2);
        dch__tally_forced(g, np, 1);
        dch__clear_unit(g, np);
    }
}
