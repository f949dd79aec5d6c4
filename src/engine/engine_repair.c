/* SPDX-License-Identifier: MIT */
/*
 * Stage 5 (docs/placement.md, "Stage 5: repair"): the backstop that makes
 * the global bound unconditional.
 */
#include "engine.h"

/*
 * The backstop that makes the global bound unconditional: while some member
 * is 2 or more slots from its share, move one slot from the member furthest
 * above its share to the member of positive weight furthest below (ties to
 * the lower id), in the unit where the first most outnumbers the second.
 * Each move lowers the sum of squared deviations, so the loop ends, and it
 * ends only inside the bound (docs/placement.md, "Global balance"). These
 * are the only moves between two members other than x. With equal weights
 * stage 1 leaves every member inside the bound, so nothing is left to
 * repair and dch__move_apply does not call this ("Equal weights: no
 * repair, counts within 2"); with unequal weights it runs after a raise
 * as after a lowering ("Stage 5: repair" says when a raise can need it).
 */
void dch__repair(const dch__engine *g)
{
    const dch__map_view *v = g->v;
    for (;;) {
        uint32_t a = UINT32_MAX, b = UINT32_MAX;
        int64_t da = 0, db = 0;
        for (uint32_t id = 0; id < v->id_limit; id++) {
            if (v->members[id].weight == 0)
                continue;
            const int64_t d = dch__deviation(g, id);
            if (a == UINT32_MAX || d > da) {
                a = id;
                da = d;
            }
            if (b == UINT32_MAX || d < db) {
                b = id;
                db = d;
            }
        }
        if (a == UINT32_MAX || (da < 2 * g->W && -db < 2 * g->W))
            return;
        uint32_t best_u = 0;
        int64_t best = INT64_MIN;
        for (uint32_t u = 0; u < v->units; u++) {
            const uint16_t *o = v->owner + (size_t)u * v->spu;
            const int64_t ca = dch__count_of(o, v->spu, a);
            if (ca == 0 || ca <= best) /* ca - cb <= ca: b's count cannot win */
                continue;
            const int64_t cb = dch__count_of(o, v->spu, b);
            if (ca - cb > best) {
                best = ca - cb;
                best_u = u;
            }
        }
        v->owner[dch__slot_of(g, best_u, a)] = (uint16_t)b;
        v->members[a].slots--;
        v->members[b].slots++;
        g->mv->dev[a] -= g->W;
        g->mv->dev[b] += g->W;
    }
}
