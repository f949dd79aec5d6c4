/* SPDX-License-Identifier: MIT */
/*
 * Placement shared by a raise and a lowering (rep_place.h).
 */
#include "rep_place.h"

/* The slack schedule (docs/replicas.md, "The slack schedule"): two passes
 * at the caps, then one, two and four slots over them, then anywhere.
 * Slack 0 comes twice because pass 0 is also paced (dch__rep_ahead): it
 * skips slots while ahead of its pace, and pass 1 offers those slots at
 * the same caps before any cap is loosened. */
uint32_t dch__rep_slack(uint32_t pass)
{
    static const uint32_t slack[DCH__REP_PASSES] = {0, 0, 1, 2, 4, UINT32_MAX / 2};
    return slack[pass];
}

int dch__rep_ahead(const dch__rep_pace *p, uint32_t k, uint32_t slots)
{
    return (p->total - p->left) * slots >= (uint64_t)(k + 1) * p->total;
}

int dch__rep_step_next(const dch__rep_call *e, uint32_t pass, const dch__rep_pace *p,
                       dch__rep_step *st)
{
    if (st->next >= e->v->slots || p->left == 0)
        return 0;
    st->k = st->next++;
    st->s = dch__rep_visit(e, st->k);
    st->b = rep_block(e, st->s);
    st->at = rep_place_of(st->b, e->n, e->x);
    st->ahead = pass == 0 && dch__rep_ahead(p, st->k, e->v->slots);
    return 1;
}

uint32_t dch__rep_wants(const dch__rep_move *rm, uint32_t r)
{
    if (rm->quota[r] > 0)
        return rm->quota[r];
    return rm->from[r] != UINT32_MAX && rm->pool_budget[rm->from[r]] > 0;
}

int dch__rep_urgent(const dch__rep_move *rm, uint32_t a, uint32_t b)
{
    const uint64_t l = (uint64_t)dch__rep_wants(rm, a) * rm->avail[b],
                   r = (uint64_t)dch__rep_wants(rm, b) * rm->avail[a];
    return l != r ? l > r : a < b;
}
