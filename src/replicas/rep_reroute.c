/* SPDX-License-Identifier: MIT */
/*
 * Augmenting reroutes (rep_reroute.h; docs/replicas.md, "Augmenting
 * reroutes"): paths through the slots a call already used, for a member
 * whose quota no remaining slot admits.
 */
#include "rep_reroute.h"

#include <string.h>

/*
 * A member d with quota left that no remaining slot admits can often still
 * trade through slots this call already used. On a lowering, x's copy in
 * slot s1 went to c1: d takes it instead, and c1 takes another of x's
 * slots, or in turn displaces c2 from a slot x gave it, and so on until
 * someone takes a fresh slot. On a raise, x took c1's copy in s1 where d
 * also sits: x takes d's copy there instead (c1 keeps its own), and c1
 * gives in a fresh slot or displaces the same way. A path changes only d's
 * and x's counts, by one, so the counts phase 1 planned stay exact. The
 * search is breadth-first over members, each reached through one used
 * slot, and gives up after AUG_NODES members.
 */
#define AUG_NODES 64u

/* Whether ids[0 .. count) are distinct and hold min(count, zones) zones. */
static int set_ok(const dch__rep_call *e, const uint16_t *ids, uint32_t count)
{
    uint32_t distinct = 0;
    for (uint32_t i = 0; i < count; i++) {
        int seen = 0;
        for (uint32_t j = 0; j < i; j++) {
            if (ids[j] == ids[i])
                return 0;
            seen |= e->rm->zone[ids[j]] == e->rm->zone[ids[i]];
        }
        distinct += !seen;
    }
    return distinct == (count < e->zones ? count : e->zones);
}

/* A slot where x may take a copy from c on a raise (grow) or give one to
 * c on a lowering; its position in *k; -1 if none. */
static int find_slot(const dch__rep_call *e, int grow, uint32_t c, uint32_t *k)
{
    for (uint32_t i = 0; i < e->v->slots; i++) {
        const uint32_t s = dch__rep_visit(e, i);
        const uint16_t *b = rep_block(e, s);
        const int xat = rep_place_of(b, e->n, e->x);
        if (grow) {
            const int at = rep_place_of(b, e->n, c);
            if (xat < 0 && at >= 0 && rep_zones_ok(e, b, e->n, (uint32_t)at, e->x)) {
                *k = (uint32_t)at;
                return (int)s;
            }
        } else if (xat >= 0 && rep_place_of(b, e->n, c) < 0 &&
                   rep_zones_ok(e, b, e->n, (uint32_t)xat, c)) {
            *k = (uint32_t)xat;
            return (int)s;
        }
    }
    return -1;
}

/*
 * Whether u can take over used slot j (see above): the member it displaces
 * in *c, and on a raise u's position there in *q.
 */
static int can_displace(const dch__rep_call *e, int grow, uint32_t u, uint32_t j, uint32_t *c,
                        uint32_t *q)
{
    const dch__rep_move *rm = e->rm;
    const uint32_t s1 = rm->rec_at[j] >> 3, k1 = rm->rec_at[j] & 7, n = e->n;
    const uint16_t *b = rep_block(e, s1);
    uint16_t t[DCH_MAP_MAX_REPLICAS];
    memcpy(t, b, n * sizeof *t);
    if (grow) { /* x sits at k1 in place of c; u must sit here too */
        *c = rm->rec_from[j];
        const int at = rep_place_of(b, n, u);
        if (at < 0 || *c == u)
            return 0;
        *q = (uint32_t)at;
        t[k1] = (uint16_t)*c;
        t[*q] = (uint16_t)e->x;
    } else { /* c sits at k1 in place of x; u takes it instead */
        *c = b[k1];
        if (*c == u || *c == e->x)
            return 0;
        t[k1] = (uint16_t)u;
    }
    return set_ok(e, t, n);
}

/* One augmenting path for member d; 1 when applied. Uses heap[] as the
 * queue, pos[] for the used slot a member was reached through and avail[]
 * for the member it was reached from. */
int dch__rep_augment(const dch__rep_call *e, int grow, uint32_t d)
{
    dch__rep_move *rm = e->rm;
    const uint32_t stamp = ++rm->stamp;
    uint32_t head = 0, tail = 0;
    rm->heap[tail++] = d;
    rm->mark[d] = stamp;
    while (head < tail && head < AUG_NODES) {
        const uint32_t u = rm->heap[head++];
        uint32_t k2;
        /* d's own fresh slots are not searched: the last pass, neither
         * capped nor paced, ran before and left none that admits d. */
        const int s2 = u == d ? -1 : find_slot(e, grow, u, &k2);
        if (s2 >= 0) {
            /* u trades in the fresh slot; each member on the path back to d
             * takes over the used slot it was reached through. */
            if (grow) {
                dch__rep_record(e, (uint32_t)s2, k2, u);
                dch__rep_trade(e, (uint32_t)s2, k2, e->x);
            } else {
                dch__rep_record(e, (uint32_t)s2, k2, e->x);
                dch__rep_trade(e, (uint32_t)s2, k2, u);
            }
            /* On a lowering a record keeps its slot, position and previous
             * holder (x): only who received changes, so rec_at[] stays.
             * On a raise x moves to prev's position in the slot and prev
             * becomes the previous holder, so the record is rewritten. */
            for (uint32_t cur = u; cur != d;) {
                const uint32_t j = rm->pos[cur], prev = rm->avail[cur];
                const uint32_t s1 = rm->rec_at[j] >> 3, k1 = rm->rec_at[j] & 7;
                uint16_t *b = rep_block(e, s1);
                if (grow) { /* cur's copy comes back; x takes prev's */
                    const uint32_t q = (uint32_t)rep_place_of(b, e->n, prev);
                    b[k1] = (uint16_t)cur;
                    b[q] = (uint16_t)e->x;
                    rm->rec_at[j] = s1 << 3 | q;
                    rm->rec_from[j] = prev;
                    e->v->held[cur]++;
                    e->v->held[prev]--;
                } else { /* prev takes the copy cur had */
                    b[k1] = (uint16_t)prev;
                    e->v->held[cur]--;
                    e->v->held[prev]++;
                }
                cur = prev;
            }
            rm->exact = 0; /* the path moved copies without counting */
            return 1;
        }
        for (uint32_t j = 0; j < rm->nrec && tail < e->v->id_limit; j++) {
            uint32_t c, q;
            if (!can_displace(e, grow, u, j, &c, &q) || rm->mark[c] == stamp)
                continue;
            rm->mark[c] = stamp;
            rm->pos[c] = j;
            rm->avail[c] = u;
            rm->heap[tail++] = c;
        }
    }
    return 0;
}

