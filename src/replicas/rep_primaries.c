/* SPDX-License-Identifier: MIT */
/*
 * Primaries and the order of copies (rep_primaries.h; docs/replicas.md,
 * "Primaries"): which copy of each slot is the primary, and the order of
 * the others. Promotions move no data.
 */
#include "rep_primaries.h"

/* A fixed pseudo-random key of member id in slot s. */
uint32_t dch__rep_order_key(uint32_t s, uint32_t id)
{
    uint32_t h = s * UINT32_C(0x9E3779B1) ^ (id + 1) * UINT32_C(0x85EBCA6B);
    h ^= h >> 15;
    h *= UINT32_C(0x2C1B3C6D);
    h ^= h >> 12;
    return h;
}

/* ---- Primaries ("Primaries": hand-over, promotions, promotion swap
 * chains) */

/*
 * Where x was a primary, its place goes to one of the slot's copies picked
 * by a key of (slot, member) rather than to the member that took x's copy:
 * a leaving member's primaries then spread over all its co-holders, not
 * over the few that could take its copies (with as many zones as copies,
 * only members of its own zone). Counts are balanced afterwards anyway.
 */
void dch__rep_hand_over_primaries(const dch__rep_call *e)
{
    const dch__rep_move *rm = e->rm;
    for (uint32_t j = 0; j < rm->nrec; j++) {
        if ((rm->rec_at[j] & 7) != 0)
            continue;
        uint16_t *b = rep_block(e, rm->rec_at[j] >> 3);
        uint32_t best = 0;
        for (uint32_t k = 1; k < e->n; k++)
            if (dch__rep_order_key(rm->rec_at[j] >> 3, b[k]) <
                dch__rep_order_key(rm->rec_at[j] >> 3, b[best]))
                best = k;
        const uint16_t t = b[0];
        b[0] = b[best];
        b[best] = t;
    }
}


/* Make b[k] the primary of slot s (its old primary takes position k). */
static void promote(const dch__rep_call *e, uint32_t s, uint32_t k)
{
    uint16_t *b = rep_block(e, s);
    const uint16_t p = b[0];
    b[0] = b[k];
    b[k] = p;
    e->rm->pdev[b[0]] += e->W;
    e->rm->pdev[p] -= e->W;
    e->v->members[b[0]].slots++;
    e->v->members[p].slots--;
}

/*
 * Search from member a along promotions: forward (a's primaries to their
 * other copies) or backward (members whose primaries hold a copy of a
 * reached member). Marks what it reaches with rm->stamp, from[] its slot
 * and pos[] the member it came from. Returns the member of least
 * (forward) or greatest (backward) pdev reached, a itself if no other.
 */
static uint32_t search(const dch__rep_call *e, uint32_t a, int forward, uint32_t holders)
{
    dch__rep_move *rm = e->rm;
    const uint32_t n = e->n;
    rm->stamp++;
    rm->mark[a] = rm->stamp;
    uint32_t best = a, marked = e->v->held[a] > 0; /* holders marked */
    /* Once every holder of a copy is marked nothing more can change, so
     * the scans stop there (what they find is the same). */
    for (int grew = 1; grew && marked < holders;) {
        grew = 0;
        for (uint32_t s = 0; s < e->v->slots && marked < holders; s++) {
            const uint16_t *b = rep_block(e, s);
            if (forward) {
                if (rm->mark[b[0]] != rm->stamp)
                    continue;
                for (uint32_t k = 1; k < n; k++) {
                    if (rm->mark[b[k]] == rm->stamp)
                        continue;
                    rm->mark[b[k]] = rm->stamp;
                    rm->from[b[k]] = s;
                    rm->pos[b[k]] = b[0];
                    grew = 1;
                    marked++;
                    if (rm->pdev[b[k]] < rm->pdev[best] ||
                        (rm->pdev[b[k]] == rm->pdev[best] && b[k] < best))
                        best = b[k];
                }
            } else {
                if (rm->mark[b[0]] == rm->stamp)
                    continue;
                for (uint32_t k = 1; k < n; k++) {
                    if (rm->mark[b[k]] != rm->stamp)
                        continue;
                    const uint32_t p = b[0];
                    rm->mark[p] = rm->stamp;
                    rm->from[p] = s;
                    rm->pos[p] = b[k];
                    grew = 1;
                    marked++;
                    if (rm->pdev[p] > rm->pdev[best] ||
                        (rm->pdev[p] == rm->pdev[best] && p < best))
                        best = p;
                    break;
                }
            }
        }
    }
    return best;
}

/* Apply the chain search() found ending at member t. */
static void apply_chain(const dch__rep_call *e, uint32_t t, uint32_t a, int forward)
{
    dch__rep_move *rm = e->rm;
    for (uint32_t cur = t; cur != a;) {
        const uint32_t s = rm->from[cur], prev = rm->pos[cur];
        const uint16_t *b = rep_block(e, s);
        if (forward) { /* prev is s's primary; cur takes over */
            promote(e, s, (uint32_t)rep_place_of(b, e->n, cur));
        } else { /* cur is s's primary; prev, a copy, takes over */
            promote(e, s, (uint32_t)rep_place_of(b, e->n, prev));
        }
        cur = prev;
    }
}

/*
 * Direct promotions, scan after scan in slot order until a scan finds
 * none. Scanned as one cycle over the slots, stopping after P slots in a
 * row without a promotion: pdev[] did not change over them, so a further
 * scan would find none either (the same promotions in the same order as
 * whole scans, without the last scan's confirming pass).
 */
static void direct_promotions(const dch__rep_call *e)
{
    dch__rep_move *rm = e->rm;
    const uint32_t n = e->n, P = e->v->slots;
    for (uint32_t s = 0, quiet = 0; quiet < P; s = s + 1 < P ? s + 1 : 0) {
        const uint16_t *b = rep_block(e, s);
        uint32_t k = 0;
        for (uint32_t i = 1; i < n; i++)
            if (rm->pdev[b[i]] < rm->pdev[b[k]] ||
                (rm->pdev[b[i]] == rm->pdev[b[k]] && b[i] < b[k]))
                k = i;
        if (k > 0 && rm->pdev[b[0]] - rm->pdev[b[k]] > e->W) {
            promote(e, s, k);
            quiet = 0;
        } else {
            quiet++;
        }
    }
}

void dch__rep_balance_primaries(const dch__rep_call *e)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    const uint32_t n = e->n, P = v->slots;
    for (uint32_t id = 0; id < v->id_limit; id++)
        v->members[id].slots = 0;
    for (uint32_t s = 0; s < P && n > 0; s++)
        v->members[rep_block(e, s)[0]].slots++;
    for (uint32_t id = 0; id < v->id_limit; id++)
        rm->pdev[id] = (int64_t)v->members[id].slots * e->W -
                       (int64_t)P * (v->members[id].name ? v->members[id].weight : 0);
    if (n < 2)
        return;
    direct_promotions(e);
    uint32_t holders = 0;
    for (uint32_t id = 0; id < v->id_limit; id++)
        holders += v->held[id] > 0;
    /* Chains from the member furthest above its share and to the one
     * furthest below, while either improves. */
    rm->stamp = 0;
    for (uint32_t id = 0; id < v->id_limit; id++)
        rm->mark[id] = 0;
    for (int changed = 1; changed;) {
        changed = 0;
        uint32_t hi = DCH__REP_NONE, lo = DCH__REP_NONE;
        for (uint32_t id = 0; id < v->id_limit; id++) {
            if (!rep_positive(e, id))
                continue;
            if (hi == DCH__REP_NONE || rm->pdev[id] > rm->pdev[hi])
                hi = id;
            if (lo == DCH__REP_NONE || rm->pdev[id] < rm->pdev[lo])
                lo = id;
        }
        if (hi == DCH__REP_NONE || rm->pdev[hi] - rm->pdev[lo] <= e->W)
            return;
        uint32_t t = search(e, hi, 1, holders);
        if (rm->pdev[hi] - rm->pdev[t] > e->W) {
            apply_chain(e, t, hi, 1);
            changed = 1;
            continue;
        }
        t = search(e, lo, 0, holders);
        if (rm->pdev[t] - rm->pdev[lo] > e->W) {
            apply_chain(e, t, lo, 0);
            changed = 1;
        }
    }
}

/* ---- The order of secondaries ------------------------------------------ */

/*
 * Positions 1 .. n-1 are where reads go when the primary fails, in order.
 * They are sorted by a key of (slot, member), so that the second copies of
 * a member's primaries are its co-holders in no particular order: its read
 * load spreads over them as evenly as diversity spreads the co-holders,
 * instead of following which member each copy replaced or was promoted
 * over. The order depends only on the slot's members, so it changes only
 * where copies or the primary change.
 */
void dch__rep_order_secondaries(const dch__rep_call *e)
{
    for (uint32_t s = 0; s < e->v->slots && e->n > 2; s++) {
        uint16_t *b = rep_block(e, s);
        for (uint32_t i = 2; i < e->n; i++) {
            const uint16_t id = b[i];
            const uint32_t key = dch__rep_order_key(s, id);
            uint32_t j = i;
            while (j > 1 && dch__rep_order_key(s, b[j - 1]) > key) {
                b[j] = b[j - 1];
                j--;
            }
            b[j] = id;
        }
    }
}

