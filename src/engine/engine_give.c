/* SPDX-License-Identifier: MIT */
/*
 * The give pass of a lowering (docs/placement.md, "Stage 4: the passes").
 */
#include "engine.h"

/*
 * Lowering: x gives slots in every unit above its target, each to the
 * receiver (quota left) most below its per-unit share. The receivers with
 * quota are in the heap of quotas (engine_quotas.c).
 *
 * When no receiver's share passes one slot a unit and nothing is forced,
 * an absent receiver is of tier 0 or 1 and every present one of tier 2, so
 * while some absent receiver has quota the pick is dch__quota_absent()'s
 * and the unit's counts are not needed: its owners are only marked, and the
 * unit is counted when every receiver with quota is present. (With more
 * members than slots a unit, x holds about one slot of each unit it
 * leaves, and counting each such unit cost more than the rest of the
 * removal.)
 */
/* Lowering: x's slots xs[k .. k + n) of unit u go to receiver id. */
static void give_run(const dch__engine *g, uint32_t u, uint32_t k, uint32_t id, uint32_t n)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    const uint32_t first = u * v->spu;
    for (uint32_t j = 0; j < n; j++) {
        v->owner[first + mv->xs[k + j]] = (uint16_t)id;
        mv->rec_slot[mv->nrec + j] = first + mv->xs[k + j];
    }
    dch__record_run(g, id, n);
    v->members[id].slots += n;
    v->members[g->x].slots -= n;
    mv->xcnt[u] -= n;
    mv->quota[id] -= n;
    dch__quota_spent(g, id);
}

/*
 * The receiver of x's next slot of the unit at base: the first absent
 * receiver in the order of quotas (lazy give) or the best present one by
 * pick key, whichever key is less; *absent_key gets the absent one's key
 * (or UINT64_MAX). Counts the unit (*counted, *np, *nh) when the marks no
 * longer do. UINT32_MAX when there is no receiver.
 */
static uint32_t receiver(const dch__engine *g, const uint16_t *base, int *counted,
                         uint32_t *np, uint32_t *nh, uint64_t *absent_key)
{
    dch__move *mv = g->mv;
    /* when the unit's heap holds every receiver with quota, none is absent */
    uint32_t best = *counted && *nh == mv->qlive ? UINT32_MAX : dch__quota_absent(g, *counted);
    if (best == UINT32_MAX && !*counted) {
        *np = dch__count_unit(g, base, 1);
        *counted = 1;
        *nh = dch__unit_heap(g, *np);
    }
    uint64_t best_key =
        best == UINT32_MAX ? UINT64_MAX : dch__pick_key(g, best, dch__tier(g, best, 0));
    *absent_key = best_key;
    /* A receiver present holds a slot of the unit, so where no band
     * passes one slot each present one would leave its band (tier
     * 2), and an absent one of tier 0 or 1 comes first. */
    if (best_key >> 60 > 1 || mv->max_band_hi > 1) {
        const uint64_t present_key = dch__unit_best(g, *nh, 2, 0);
        best_key = present_key < best_key ? present_key : best_key;
    }
    return best_key == UINT64_MAX ? UINT32_MAX : (uint32_t)(best_key & 0xFFFF);
}

void dch__give_pass(const dch__engine *g)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    /* docs/placement.md, "Fast paths": lazy give */
    const int lazy = !mv->surveyed && mv->max_band_hi <= 1;
    for (uint32_t u = 0; u < v->units && mv->qlive > 0; u++) {
        if (mv->xcnt[u] <= mv->target[u])
            continue;
        uint16_t *base = v->owner + (size_t)u * v->spu;
        int counted = !lazy;
        uint32_t np = 0;
        /* x's slots of the unit, in order, into xs[0 .. nx) */
        const uint32_t nx = counted ? dch__x_slots(g, base) : dch__mark_unit(g, base);
        if (counted)
            np = dch__count_unit(g, base, 1);
        if (mv->surveyed)
            dch__tally_forced(g, np, -1);
        uint32_t nh = counted ? dch__unit_heap(g, np) : 0, last = UINT32_MAX;
        for (uint32_t k = 0; k < nx && mv->xcnt[u] > mv->target[u]; k++) {
            uint64_t absent_key;
            const uint32_t best = receiver(g, base, &counted, &np, &nh, &absent_key);
            if (dch__tier(g, best, mv->cnt[best]) == 2) {
                /* No receiver with quota fits here: trade moves along a
                 * chain, or else leave the band. */
                dch__clear_unit(g, np);
                const int chained = dch__search_chain(g, u, u * v->spu + mv->xs[k]);
                np = dch__count_unit(g, base, 1);
                counted = 1;
                nh = dch__unit_heap(g, np);
                dch__quota_rekey(g);
                if (chained) {
                    mv->xcnt[u]--;
                    continue;
                }
            }
            const int was_present = counted && mv->cnt[best] > 0; /* the heap's top */
            /* A present receiver keeps being picked while its key stays
             * below the others', present or absent (whose pick does not
             * change): once it is picked twice in a row, those picks,
             * within its band, are given at once. */
            const uint32_t room = nx - k < mv->xcnt[u] - mv->target[u] ? nx - k
                                                                       : mv->xcnt[u] - mv->target[u];
            const uint32_t n =
                was_present && best == last ? dch__unit_run(g, 1, 0, room, absent_key) : 1;
            last = best;
            if (!counted)
                mv->mark[best] = mv->stamp;
            else if (mv->cnt[best] == 0)
                mv->present[np++] = best;
            mv->cnt[best] += counted ? n : 0;
            give_run(g, u, k, best, n);
            k += n - 1;
            if (was_present)
                nh = dch__unit_fix_top(g, nh);
            else if (counted && mv->quota[best] > 0)
                nh = dch__unit_push(g, nh, best);
        }
        dch__clear_unit(g, np);
        dch__quota_restore(g);
    }
}
