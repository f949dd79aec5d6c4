/* SPDX-License-Identifier: MIT */
/*
 * The take passes of a raise (docs/placement.md, "Stage 4: the passes").
 */
#include "engine.h"

/* Raise: x takes slot s of unit u from donor id. */
static void take(const dch__engine *g, uint32_t u, uint32_t id, uint32_t s)
{
    const dch__map_view *v = g->v;
    v->owner[(size_t)u * v->spu + s] = (uint16_t)g->x;
    g->mv->quota[id]--;
    dch__record(g, u * v->spu + s, id);
    v->members[id].slots--;
    v->members[g->x].slots++;
    g->mv->xcnt[u]++;
}

/* Raise: x takes n slots of unit u from donor id, its highest n left (the
 * end of its segment of xs[], group_slots). */
static void take_run(const dch__engine *g, uint32_t u, uint32_t id, uint32_t n)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    const uint32_t base = u * v->spu;
    uint32_t end = mv->slot[id];
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t s = base + mv->xs[--end];
        v->owner[s] = (uint16_t)g->x;
        mv->rec_slot[mv->nrec + k] = s;
    }
    mv->slot[id] = end;
    dch__record_run(g, id, n);
    mv->quota[id] -= n;
    mv->cnt[id] -= n;
    v->members[id].slots -= n;
    v->members[g->x].slots += n;
    mv->xcnt[u] += n;
}

/*
 * Raise: x takes slots in every unit below its limit (target + slack; its
 * ceiling, the level plus one, when slack is UINT32_MAX - 1; every slot
 * when it is UINT32_MAX) from the donors present whose tier is at most
 * max_tier, the best by dch__pick_key() first; returns the slots still to take.
 * Step 1 of docs/placement.md, "Stage 4: the passes" is the call with slack 0
 * and max_tier 1 (`first`); steps 3, 5 and 6 are the others.
 *
 * On the first pass, when nothing is forced and no other member's share
 * reaches a slot a unit, every donor's band is [0, 1]: one present once is
 * of tier 1 and one present twice of tier 0. So in a unit where no member
 * holds two slots the pick is the first donor present in the order of
 * quotas, and the unit is only marked; where one does, or a second pick is
 * due, the unit is counted. (With more members than slots a unit, a raise
 * takes about one slot of each unit it visits.)
 */
uint32_t dch__take_pass(const dch__engine *g, uint32_t slack, int max_tier, uint32_t left)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    const int first = slack == 0 && max_tier == 1;
    /* docs/placement.md, "Fast paths": banded take */
    const int banded = first && !mv->surveyed && mv->max_band_lo == 0;
    if (banded)
        (void)dch__key_quotas(g);
    for (uint32_t u = 0; u < v->units && left > 0; u++) {
        const uint32_t limit = slack == UINT32_MAX       ? v->spu
                               : slack == UINT32_MAX - 1 ? mv->level + 1
                                                         : mv->target[u] + slack;
        if (mv->xcnt[u] >= limit)
            continue;
        uint16_t *base = v->owner + (size_t)u * v->spu;
        if (!first && !dch__has_donor(g, base)) /* later passes look far for a few donors */
            continue;
        uint32_t lead = UINT32_MAX;
        if (banded && !dch__mark_unit_slots(g, base, &lead)) {
            if (lead == UINT32_MAX) /* no donor with quota is present */
                continue;
            take(g, u, lead, mv->slot[lead]);
            dch__set_key(g, lead);
            if (--left == 0 || mv->xcnt[u] >= limit)
                continue;
        }
        const uint32_t np = dch__count_unit(g, base, 0);
        if (first && mv->surveyed)
            dch__tally_forced(g, np, -1);
        uint32_t nh = dch__unit_heap(g, np), last = UINT32_MAX;
        while (mv->xcnt[u] < limit && left > 0) {
            const uint64_t best_key = dch__unit_best(g, nh, max_tier, first);
            if (best_key == UINT64_MAX)
                break;
            const uint32_t best = (uint32_t)(best_key & 0xFFFF);
            /* once it is picked twice in a row, the picks it makes in a
             * row are taken at once (looked for only then, since most
             * picks among many donors are runs of one) */
            const uint32_t room = limit - mv->xcnt[u] < left ? limit - mv->xcnt[u] : left;
            const uint32_t n =
                best == last ? dch__unit_run(g, max_tier, first, room, UINT64_MAX) : 1;
            last = best;
            take_run(g, u, best, n);
            left -= n;
            if (banded)
                dch__set_key(g, best);
            nh = dch__unit_fix_top(g, nh);
        }
        dch__clear_unit(g, np);
    }
    return left;
}
