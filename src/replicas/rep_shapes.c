/* SPDX-License-Identifier: MIT */
/*
 * Forced shapes (docs/replicas.md, "Forced shapes"): the three calls whose
 * result the slots' rules fix outright, handled before any plan.
 */
#include "rep_shapes.h"

/* M was below R: x joins every slot as its n-th copy. */
void dch__rep_append_everywhere(const dch__rep_call *e)
{
    for (uint32_t s = 0; s < e->v->slots; s++)
        rep_block(e, s)[e->n - 1] = (uint16_t)e->x;
    e->v->held[e->x] = e->v->slots;
}

/* M was at most R: x leaves every slot, the copies after it move up. */
void dch__rep_drop_everywhere(const dch__rep_call *e)
{
    const uint32_t n0 = e->n + 1;
    for (uint32_t s = 0; s < e->v->slots; s++) {
        uint16_t *b = rep_block(e, s);
        const int k = rep_place_of(b, n0, e->x);
        for (uint32_t i = (uint32_t)k; i + 1 < n0; i++)
            b[i] = b[i + 1];
        b[n0 - 1] = DCH__REP_NONE;
    }
    e->v->held[e->x] = 0;
}

/* x is the only member of a new zone and zones are at most n: every slot
 * must now hold that zone. x replaces, in each slot, the copy furthest
 * above its share among those whose zone the slot holds twice. */
void dch__rep_force_everywhere(const dch__rep_call *e)
{
    const uint32_t n = e->n;
    for (uint32_t s = 0; s < e->v->slots; s++) {
        uint16_t *b = rep_block(e, s);
        int best = -1;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t same = 0;
            for (uint32_t j = 0; j < n; j++)
                same += e->rm->zone[b[j]] == e->rm->zone[b[k]];
            if (same < 2)
                continue;
            /* Members with copies to spare over their primaries' need
             * first, then the one furthest above its copy share. */
            const int spare = e->v->held[b[k]] > dch__rep_keep(e, b[k]);
            const int best_spare =
                best >= 0 && e->v->held[b[best]] > dch__rep_keep(e, b[best]);
            if (best < 0 || spare > best_spare ||
                (spare == best_spare && rep_first(e, 1, b[k], b[best])))
                best = (int)k;
        }
        if (best >= 0) { /* always, by the pigeonhole principle */
            e->rm->dev[b[best]] -= DCH__REP_ONE;
            dch__rep_trade(e, s, (uint32_t)best, e->x);
        }
    }
}
