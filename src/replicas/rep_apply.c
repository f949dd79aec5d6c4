/* SPDX-License-Identifier: MIT */
/*
 * The replica engine (map_replicas.h): R copies of every slot, in distinct
 * zones. docs/replicas.md states the rule, the invariants and the proofs;
 * each stage below names its section there.
 *
 * A call changes one member x's weight, in two steps. Step 1 moves copies,
 * only to x on a raise and only from x on a lowering: three forced shapes
 * are handled outright (rep_shapes.c), anything else is planned by the
 * single-copy rule on copies and placed slot by slot (rep_raise.c and its
 * mirror rep_lower.c, over rep_place.c and rep_reroute.c), then the
 * diversity passes move only what the call moved (rep_relieve.c after a
 * raise, rep_split.c after a lowering). Step 2 chooses the primaries by
 * promotions, which move no data (rep_primaries.c).
 *
 * Layers, each file using only those below it:
 *   rep_apply.c                                 the call
 *   rep_shapes.c rep_relieve.c rep_split.c rep_primaries.c   passes
 *   rep_raise.c rep_lower.c                     the steps
 *   rep_place.c rep_reroute.c rep_shares.c      what the steps share
 *   rep_rows.c                                  diversity bookkeeping
 *   rep_book.c rep_scratch.c                    replica bookkeeping
 *
 * Deviations are integers (copies scaled by 2^32, primaries by W), ties
 * fall to the lower id and slots are visited in an order keyed by the
 * call, so the result is a pure function of the map and the call.
 */
#include "map_replicas.h"

#include "rep_book.h"
#include "rep_lower.h"
#include "rep_pairs.h"
#include "rep_primaries.h"
#include "rep_raise.h"
#include "rep_shapes.h"
#include "rep_shares.h"

/* The call's counts after it (docs/replicas.md, "The call"); the copies a
 * slot held before in *n0. Sets x's weight to w: the map relies on it
 * (map_replicas.h, dch__rep_apply), and everything after reads it. */
static void call_begin(dch__rep_call *e, uint32_t old, uint32_t w, uint32_t *n0)
{
    const dch__rep_view *v = e->v;
    uint32_t before = 0;
    for (uint32_t id = 0; id < v->id_limit; id++)
        before += v->members[id].name != NULL && v->members[id].weight > 0;
    v->members[e->x].weight = w;
    e->W = 0;
    for (uint32_t id = 0; id < v->id_limit; id++)
        e->W += v->members[id].name ? v->members[id].weight : 0;
    e->M = before + (old == 0) - (w == 0);
    *n0 = before < v->replicas ? before : v->replicas;
    e->n = e->M < v->replicas ? e->M : v->replicas;
    e->bits = 0;
    while ((UINT32_C(1) << e->bits) < v->slots)
        e->bits++;
    /* The order's key: a mix of the call (member, weights, counts). */
    uint64_t h = ((uint64_t)e->x << 32) ^ ((uint64_t)e->M << 16) ^ v->held[e->x] ^
                 ((uint64_t)w << 40) ^ ((uint64_t)old << 8) ^ (uint64_t)e->W;
    h ^= h >> 33;
    h *= UINT64_C(0xFF51AFD7ED558CCD);
    h ^= h >> 33;
    h *= UINT64_C(0xC4CEB9FE1A85EC53);
    h ^= h >> 33;
    e->key = (uint32_t)h;
}

/* Whether x is the only member of its zone among members of positive
 * weight once it has weight. */
static int alone_in_zone(const dch__rep_call *e)
{
    int alone = 1;
    for (uint32_t id = 0; id < e->v->id_limit && alone; id++)
        alone = !(id != e->x && rep_positive(e, id) && e->rm->zone[id] == e->rm->zone[e->x]);
    return alone;
}

void dch__rep_apply(dch__rep_move *rm, const dch__rep_view *v, uint32_t x, uint32_t w)
{
    dch__rep_call e;
    e.v = v;
    e.rm = rm;
    e.x = x;
    const uint32_t old = v->members[x].weight;
    uint32_t n0;
    call_begin(&e, old, w, &n0);
    rm->nrec = 0;
    rm->stamp = 0;
    dch__rep_plan_shares(&e); /* "Shares" */
    for (uint32_t id = 0; id < v->id_limit; id++)
        rm->mark[id] = 0;
    for (uint32_t id = 0; id < v->id_limit; id++)
        rm->dev[id] = (int64_t)v->held[id] * DCH__REP_ONE - rm->share[id];
    const int alone = alone_in_zone(&e);

    /* Step 1: the copies. */
    if (old == 0 && e.n > n0) { /* "Forced shapes" */
        dch__rep_append_everywhere(&e);
    } else if (w == 0 && e.n < n0) {
        dch__rep_drop_everywhere(&e);
    } else if (old == 0 && alone && e.zones <= e.n) {
        /* Only with zones: without them Z == M, so Z <= n means M <= R,
         * and that join took the first branch. */
        dch__rep_force_everywhere(&e);
    } else if (w > old) { /* "Raise and lowering", then "Pair relieving" */
        dch__rep_raise(&e);
        dch__rep_relieve_pairs(&e);
    } else { /* "Raise and lowering", then "Pair splitting" */
        /* Splitting runs whenever the rows exist, whatever the weights
         * and zones: its trades change no count and stay within both
         * members' bounds, so they cannot cost any promise; its
         * reassignment, which moves a count, runs only where promise 7
         * is made ("Pair splitting"). */
        if (dch__rep_lower(&e))
            dch__rep_split_pairs(&e);
        dch__rep_hand_over_primaries(&e); /* "Primaries": hand-over */
    }

    /* Step 2: the primaries ("Primaries"). */
    dch__rep_balance_primaries(&e);
    dch__rep_order_secondaries(&e);
    for (uint32_t s = 0; s < v->slots; s++)
        v->owner[s] = e.n > 0 ? rep_block(&e, s)[0] : DCH__REP_NONE;
}
