/* SPDX-License-Identifier: MIT */
/*
 * The report of a balancing call (balance.h, dch_balance_report): what the
 * call found before it moved anything, and where every member ended.
 */
#include "balance_report.h"

/* Largest C_i / T_i over the members that balance: C_i W' / (Λ w_i). */
static double max_ratio(const dch__bal *b)
{
    double best = 0;
    if (b->t.total == 0)
        return 0;
    for (uint32_t id = 0; id < b->limit; id++) {
        const dch__bal_member *e = &b->mb[id];
        if (e->weight == 0)
            continue;
        const double r = ((double)e->load * (double)b->t.wsum) /
                         ((double)b->t.total * (double)e->weight);
        if (r > best)
            best = r;
    }
    return best;
}

void dch__bal_report_before(const dch__bal *b, dch_balance_report *r)
{
    dch_balance_left *left = r->left;
    const uint32_t cap = r->left_cap;
    *r = (dch_balance_report){0};
    r->left = left;
    r->left_cap = cap;
    r->total_load = b->t.total;
    r->heaviest_load = b->t.lmax;
    r->second_load = b->t.l2;
    uint32_t wmax = 0;
    for (uint32_t id = 0; id < b->limit; id++) {
        const dch__bal_member *e = &b->mb[id];
        if (e->weight == 0)
            continue;
        r->members++;
        wmax = e->weight > wmax ? e->weight : wmax;
        if (e->role != BAL_GIVER)
            continue;
        r->above_before++;
        r->moved_load_floor += e->load - dch__bal_bound_floor(&b->t, e->weight, e->heavy_load);
    }
    for (uint32_t s = b->P; s-- > 0;) {
        if (b->load[s] == b->t.lmax)
            r->heaviest_slot = s;
        /* Heavier than every target: L(s) W' > Λ wmax. */
        if (r->members > 0 && dch__wide_cmp(dch__wide_mul(b->load[s], b->t.wsum),
                                            dch__wide_mul(b->t.total, wmax)) > 0)
            r->too_heavy++;
    }
    r->max_ratio_before = max_ratio(b);
}

void dch__bal_report_after(dch__bal *b, dch_balance_report *r)
{
    dch__bal_read_heaviest(b); /* a receiver's may have changed */
    r->moves = b->moves;
    r->promotions = b->promotions;
    r->moved_load = b->moved_load;
    r->promoted_load = b->promoted_load;
    r->max_ratio_after = max_ratio(b);
    for (uint32_t id = 0; id < b->limit; id++) {
        const dch__bal_member *e = &b->mb[id];
        if (e->weight == 0 || b->t.total == 0 ||
            !dch__bal_above_bound(&b->t, e->load, e->weight, e->heavy_load))
            continue;
        if (r->left != NULL && r->left_count < r->left_cap)
            r->left[r->left_count] = (dch_balance_left){
                id, e->why ? e->why : DCH_BALANCE_LEFT_PLACEMENT, e->load,
                dch__bal_bound_floor(&b->t, e->weight, e->heavy_load)};
        r->left_count++;
        r->above_after++;
    }
}
