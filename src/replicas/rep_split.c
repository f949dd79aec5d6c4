/* SPDX-License-Identifier: MIT */
/*
 * Pair splitting after a lowering (rep_pairs.h; docs/replicas.md, "Pair
 * splitting").
 */
#include "rep_pairs.h"

#include "rep_rows.h"

/* Whether a, placed at position k of block b, shares more slots with a
 * co-holder than dch__rep_pair_limit() allows. */
static int over_limit(const dch__rep_call *e, const uint16_t *b, uint32_t k)
{
    for (uint32_t i = 0; i < e->n; i++) {
        const uint32_t *c = i == k ? NULL : rep_pair_cell(e, b[k], b[i]);
        if (c != NULL && *c > dch__rep_pair_limit(e, e->v->held[b[k]], e->v->held[b[i]]))
            return 1;
    }
    return 0;
}

/*
 * After a lowering placed x's copies, a receiver may share more slots with
 * a co-holder than dch__rep_pair_limit() allows (the last copies can have one place
 * left). Where it does, its new copy is traded for another receiver's new
 * copy in another of x's slots, if neither is already in the other's slot,
 * the zones allow it, and every pair the trade adds stays within its limit.
 * Counts do not change, and both copies stay on slots x held, so the call
 * still moves only x's copies; which copy of such a slot is its primary is
 * chosen afterwards (hand_over_primaries).
 */
void dch__rep_split_pairs(const dch__rep_call *e)
{
    const dch__rep_move *rm = e->rm;
    const uint32_t n = e->n;
    /* Trades looked at, over the call: at most 4 a record and 4,096 more,
     * so the step stays linear in the copies moved. */
    uint64_t budget = 4 * (uint64_t)rm->nrec + 4096;
    if (!rm->exact) /* a reroute or the last resort moved copies */
        dch__rep_recount_rows(e);
    for (uint32_t j = 0; j < rm->nrec && budget > 0; j++) {
        const uint32_t s = rm->rec_at[j] >> 3, k = rm->rec_at[j] & 7;
        uint16_t *b = rep_block(e, s);
        if (b[k] == e->x || !over_limit(e, b, k))
            continue;
        const uint32_t a = b[k];
        for (uint32_t j2 = 0; j2 < rm->nrec && budget > 0; j2++, budget--) {
            const uint32_t s2 = rm->rec_at[j2] >> 3, k2 = rm->rec_at[j2] & 7;
            uint16_t *b2 = rep_block(e, s2);
            const uint32_t a2 = b2[k2];
            if (s2 == s || a2 == e->x || a2 == a || rep_place_of(b2, n, a) >= 0 ||
                rep_place_of(b, n, a2) >= 0 || !rep_zones_ok(e, b2, n, k2, a) ||
                !rep_zones_ok(e, b, n, k, a2) ||
                !dch__rep_joins_within(e, b2, k2, a, dch__rep_share_limit(e, e->v->held[a])) ||
                !dch__rep_joins_within(e, b, k, a2, dch__rep_share_limit(e, e->v->held[a2])))
                continue;
            dch__rep_count_pairs(e, b, k, 0);
            dch__rep_count_pairs(e, b2, k2, 0);
            b[k] = (uint16_t)a2;
            b2[k2] = (uint16_t)a;
            dch__rep_count_pairs(e, b, k, 1);
            dch__rep_count_pairs(e, b2, k2, 1);
            break;
        }
    }
}
