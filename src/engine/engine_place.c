/* SPDX-License-Identifier: MIT */
/*
 * Stages 2 to 4 (docs/placement.md, "The stages, in order"): which slots
 * carry the quotas stage 1 planned. x's count in each unit is water-filled
 * towards an even level; in each unit the slot comes from the donor most
 * above its per-unit share S*w/W (goes to the receiver most below it),
 * ties to the larger quota left beyond what later units force, then the
 * lower id.
 * Where no counterparty fits a unit's band, a chain of trades is looked
 * for; quotas are met exactly whatever the units allow.
 */
#include "engine.h"

#include <string.h>

/* Stages 2 to 4: carry the quotas in slots chosen unit by unit. */
void dch__place(const dch__engine *g, uint32_t moved)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    /* docs/placement.md, "Stage 2: levels" */
    dch__count_x(g);
    dch__plan_targets(g, moved);
    /* docs/placement.md, "Stage 3: bands and forced moves" */
    dch__plan_bands(g);
    /* Forced moves are surveyed when a raise's x has a share of at least
     * a slot a unit (a cost shortcut: a donor above its ceiling is forced,
     * tier 0, either way, but with fewer slots than members little is and
     * the survey would cost a pass; skipped, forced[] is zero), and for a
     * lowering whenever some receiver's band starts above 0 (else nothing
     * can be forced). */
    mv->surveyed = g->grow ? mv->band_lo[g->x] > 0 : mv->max_band_lo > 0;
    if (mv->surveyed)
        dch__survey_forced(g);
    else
        memset(mv->forced, 0, (size_t)v->id_limit * sizeof *mv->forced);
    if (g->grow) {
        /* docs/placement.md, "Stage 4: the passes" (raise, steps 1 to 6;
         * slack UINT32_MAX - 1 is the ceiling, UINT32_MAX every slot):
         * up to x's target per unit; chains where x is below its level;
         * then anywhere up to its ceiling where donors with quota are, by
         * chains again, and out of band last (the last pass meets every
         * quota, I3). */
        uint32_t left = dch__take_pass(g, 0, 1, moved);
        for (uint32_t u = 0; u < v->units && left > 0; u++)
            while (left > 0 && mv->xcnt[u] < mv->level && dch__search_chain(g, u, 0)) {
                mv->xcnt[u]++;
                left--;
            }
        if (left > 0)
            left = dch__take_pass(g, UINT32_MAX - 1, 1, left);
        for (uint32_t u = 0; u < v->units && left > 0; u++)
            while (left > 0 && mv->xcnt[u] < mv->level + 1 && dch__search_chain(g, u, 0)) {
                mv->xcnt[u]++;
                left--;
            }
        if (left > 0)
            left = dch__take_pass(g, 0, 2, left);
        if (left > 0)
            (void)dch__take_pass(g, UINT32_MAX, 2, left);
        return;
    }
    /* docs/placement.md, "Stage 4: the passes" (lowering) */
    (void)dch__quota_heap(g);
    dch__give_pass(g);
}
