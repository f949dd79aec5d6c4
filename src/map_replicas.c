/* SPDX-License-Identifier: MIT */
/*
 * The replica engine (map_replicas.h): R copies of every slot.
 *
 * Every slot holds n = min(R, M) copies, M the members of positive weight,
 * in distinct zones while there are at least n zones (else in all of them).
 * A call changes one member x's weight, in two steps.
 *
 * 1. Copies. A member's copy share is its part of the n*P copies: zones
 *    are water-filled by weight between their bounds (at most P copies a
 *    zone, one a slot, while zones are at least n; at least P and at most
 *    (n - Z + 1) * P when there are Z < n zones), and a zone's share is
 *    split over its members by weight. On a raise x takes one copy at a
 *    time from the member furthest above its share while that member is
 *    more than one copy further above it than x; on a lowering x gives one
 *    copy at a time to the member furthest below its share while x is more
 *    than one copy further above it (every copy, when x's weight becomes
 *    0). These counts (quotas) are then placed: slots are visited in a
 *    fixed scattered order and x trades in a slot with the counterparty of
 *    largest remaining quota that the slot's rules allow (x absent, zones
 *    kept), first only where x would not share too many slots with any
 *    member (diversity), then anywhere. A counterparty that finds no slot
 *    is left out and the counts are planned again without it. Then pairs
 *    of members sharing more slots than promise 7 allows are split: a
 *    lowering trades receivers' new copies between x's slots, a raise moves
 *    x's takes to other slots. Only x's copies change, so movement is
 *    minimal by construction.
 *    Three changes of shape are forced and handled first: a member joining
 *    while M < R is added to every slot; one leaving while M <= R leaves
 *    every slot; one joining as the only member of a new zone while zones
 *    are at most n enters every slot, replacing a copy of a zone the slot
 *    holds twice.
 *
 * 2. Primaries. Position 0 of a slot is its primary; a replaced copy's
 *    position goes to its replacement. Then primaries are balanced against
 *    the shares P*w/W by promotions, which move no data: a slot's primary
 *    is swapped with one of its copies when that lowers the larger of the
 *    two deviations by more than a slot, and while the member furthest
 *    above its share (or below) has a chain of such swaps to a member more
 *    than one slot from it, the chain is applied. docs/replicas.md gives the
 *    argument that this keeps every member within 2 slots of its share.
 *    Then the copies after the primary are ordered by a key of (slot,
 *    member), so that a failed primary's reads spread over its co-holders.
 *
 * This file holds the shares, the forced shapes and the call; step 1's
 * placement is map_replicas_copies.c, with its reroutes in
 * map_replicas_reroute.c and its diversity repairs in map_replicas_pairs.c,
 * and step 2 is map_replicas_primaries.c.
 *
 * Deviations are integers (copies scaled by 2^32, primaries by W), ties
 * fall to the lower id and slots are visited in a fixed order, so the
 * result is a pure function of the map and the call.
 */
#include "map_replicas.h"

#include "dch/error.h"

#include "alloc.h"

#include <stdlib.h>
#include <string.h>

int dch__rep_alloc(dch__rep_move *rm, const dch_allocator *a, uint32_t id_limit,
                   uint32_t rows, uint32_t moves)
{
    /* Three 64-bit and twelve 32-bit arrays per id, two per move, then the
     * rows. */
    const size_t L = id_limit ? id_limit : 1;
    const size_t R = moves ? moves : 1;
    uint32_t *p = dch__alloc_array(a, 18 * L + 2 * R + (size_t)rows * L, sizeof *p);
    memset(rm, 0, sizeof *rm);
    if (p == NULL)
        return DCH_ENOMEM;
    rm->alloc = a;
    rm->dev = (int64_t *)(void *)p; /* the block is aligned for any type */
    rm->pdev = rm->dev + L;
    rm->share = rm->pdev + L;
    p += 6 * L;
    uint32_t **per_id[] = {&rm->quota, &rm->heap, &rm->pos,   &rm->pair,
                           &rm->zone,  &rm->stuck, &rm->from, &rm->mark,
                           &rm->queue, &rm->avail, &rm->cap,  &rm->rowof};
    for (size_t i = 0; i < sizeof per_id / sizeof per_id[0]; i++, p += L)
        *per_id[i] = p;
    rm->rec_at = p;
    rm->rec_from = p + R;
    rm->maxrec = moves;
    rm->rows = p + 2 * R;
    rm->nrows = rows;
    return DCH_OK;
}

uint32_t dch__rep_rows(uint32_t id_limit, uint32_t replicas, uint32_t copies, int grow)
{
    const uint64_t want = grow ? id_limit : (uint64_t)(replicas - 1) * copies;
    const uint64_t rows = want < id_limit ? want : id_limit;
    return rows * id_limit <= DCH__REP_ROWS_MAX ? (uint32_t)rows : 0;
}

void dch__rep_release(dch__rep_move *rm)
{
    dch__free(rm->alloc, rm->dev); /* the block */
    memset(rm, 0, sizeof *rm);
}

/* ---- Zones and shares ---------------------------------------------------- */

/*
 * Whether the slot b holds the zones it must once position k holds id
 * (k == n: id is added): min(n', zones) distinct zones, n' the copies it
 * then has. The caller ensures id is not in b.
 */
int dch__rep_zones_check(const dch__rep_call *e, const uint16_t *b, uint32_t n, uint32_t k,
                         uint32_t id)
{
    uint32_t keys[DCH_MAP_MAX_REPLICAS + 1], nk = 0, distinct = 0;
    const uint32_t count = k == n ? n + 1 : n;
    for (uint32_t i = 0; i < count; i++) {
        const uint32_t key = e->rm->zone[i == k ? id : b[i]];
        int seen = 0;
        for (uint32_t j = 0; j < nk; j++)
            seen |= keys[j] == key;
        keys[nk++] = key;
        distinct += !seen;
    }
    return distinct == (count < e->zones ? count : e->zones);
}

/* floor(a * b / c) for a < 2^32, b < 2^64, 0 < c < 2^32, when the result
 * is below 2^64: long division in 32-bit limbs. */
static uint64_t muldiv(uint64_t a, uint64_t b, uint64_t c)
{
    const uint64_t M32 = 0xffffffffu;
    const uint64_t lo = a * (b & M32), hi = a * (b >> 32);
    uint64_t limb[4];
    limb[0] = lo & M32;
    uint64_t t = (lo >> 32) + (hi & M32);
    limb[1] = t & M32;
    t = (t >> 32) + (hi >> 32);
    limb[2] = t & M32;
    limb[3] = t >> 32;
    uint64_t r = 0, q = 0;
    for (int i = 3; i >= 0; i--) {
        const uint64_t cur = (r << 32) | limb[i];
        q = (q << 32) | (cur / c);
        r = cur % c;
    }
    return q;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/*
 * Zone keys, the zone count and every member's copy share (share[], scaled
 * by 2^32; see the top of the file). Uses pdev[] and queue[] as scratch.
 */
static void plan_shares(dch__rep_call *e)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    const uint64_t P = v->slots;
    uint64_t *keys = (uint64_t *)(void *)rm->pdev;
    uint32_t nk = 0;
    for (uint32_t id = 0; id < v->id_limit; id++) {
        const uint32_t z = v->members[id].name ? v->zone[id] : 0;
        rm->zone[id] = z ? z - 1 : DCH_MAP_MAX_NODES + id;
        rm->share[id] = 0;
        if (rep_positive(e, id))
            keys[nk++] = ((uint64_t)rm->zone[id] << 16) | id;
    }
    qsort(keys, nk, sizeof *keys, cmp_u64);
    /* Zones as runs of keys: queue[] holds each run's start, then weight
     * sums are recomputed per run below (zones <= members). */
    uint32_t nz = 0;
    for (uint32_t i = 0; i < nk; i++)
        if (i == 0 || (keys[i] >> 16) != (keys[i - 1] >> 16))
            rm->queue[nz++] = i;
    e->zones = nz;
    const uint64_t n = e->n;
    const uint64_t lo = nz >= n ? 0 : P, hi = nz >= n ? P : (n - nz + 1) * P;
    /* Zone weights, in from[] (a zone's runs are consecutive keys). */
    for (uint32_t z = 0; z < nz; z++) {
        const uint32_t end = z + 1 < nz ? rm->queue[z + 1] : nk;
        uint64_t w = 0;
        for (uint32_t i = rm->queue[z]; i < end; i++)
            w += v->members[keys[i] & 0xffff].weight;
        rm->from[z] = (uint32_t)w; /* the weight sum fits in 32 bits */
        rm->mark[z] = 0;
    }
    /* Water-filling: a zone fixed at a bound keeps it, the free ones share
     * the rest by weight. mark[z]: 0 free, 1 at lo, 2 at hi. A zone over hi
     * is fixed first, then one under lo; shares are rest * w / wfree,
     * compared exactly (products stay below 2^60). */
    uint64_t rest, wfree;
    for (;;) {
        rest = n * P;
        wfree = 0;
        for (uint32_t z = 0; z < nz; z++) {
            if (rm->mark[z] == 1)
                rest -= lo;
            else if (rm->mark[z] == 2)
                rest -= hi;
            else
                wfree += rm->from[z];
        }
        int changed = 0;
        for (uint32_t z = 0; z < nz && !changed; z++)
            if (rm->mark[z] == 0 && rest * rm->from[z] > hi * wfree)
                rm->mark[z] = 2, changed = 1;
        for (uint32_t z = 0; z < nz && !changed; z++)
            if (rm->mark[z] == 0 && rest * rm->from[z] < lo * wfree)
                rm->mark[z] = 1, changed = 1;
        if (!changed)
            break;
    }
    for (uint32_t z = 0; z < nz; z++) {
        const uint32_t end = z + 1 < nz ? rm->queue[z + 1] : nk;
        for (uint32_t i = rm->queue[z]; i < end; i++) {
            const uint32_t id = (uint32_t)(keys[i] & 0xffff);
            const uint64_t wi = (uint64_t)v->members[id].weight << 32;
            uint64_t t;
            if (rm->mark[z] == 0)
                t = muldiv(rest, wi, wfree);
            else
                t = muldiv(rm->mark[z] == 1 ? lo : hi, wi, rm->from[z]);
            if (t > (P << 32))
                t = P << 32; /* one copy a slot at most */
            rm->share[id] = (int64_t)t;
        }
    }
}

/* ---- Forced changes of shape ------------------------------------------- */

/* M was below R: x joins every slot as its n-th copy. */
static void append_everywhere(const dch__rep_call *e)
{
    for (uint32_t s = 0; s < e->v->slots; s++)
        rep_block(e, s)[e->n - 1] = (uint16_t)e->x;
    e->v->held[e->x] = e->v->slots;
}

/* M was at most R: x leaves every slot, the copies after it move up. */
static void drop_everywhere(const dch__rep_call *e)
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
static void force_everywhere(const dch__rep_call *e)
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
            const int spare = e->v->held[b[k]] > rep_keep(e, b[k]);
            const int best_spare =
                best >= 0 && e->v->held[b[best]] > rep_keep(e, b[best]);
            if (best < 0 || spare > best_spare ||
                (spare == best_spare && rep_first(e, 1, b[k], b[best])))
                best = (int)k;
        }
        if (best >= 0) { /* always, by the pigeonhole principle */
            e->rm->dev[b[best]] -= DCH__REP_ONE;
            rep_trade(e, s, (uint32_t)best, e->x);
        }
    }
}

/* ---- The call ---------------------------------------------------------- */

void dch__rep_apply(dch__rep_move *rm, const dch__rep_view *v, uint32_t x, uint32_t w)
{
    dch__rep_call e;
    e.v = v;
    e.rm = rm;
    e.x = x;
    const uint32_t old = v->members[x].weight;
    uint32_t before = 0;
    for (uint32_t id = 0; id < v->id_limit; id++)
        before += v->members[id].name != NULL && v->members[id].weight > 0;
    v->members[x].weight = w;
    e.W = 0;
    for (uint32_t id = 0; id < v->id_limit; id++)
        e.W += v->members[id].name ? v->members[id].weight : 0;
    e.M = before + (old == 0) - (w == 0);
    const uint32_t n0 = before < v->replicas ? before : v->replicas;
    e.n = e.M < v->replicas ? e.M : v->replicas;
    e.bits = 0;
    while ((UINT32_C(1) << e.bits) < v->slots)
        e.bits++;
    {
        /* The order's key: a mix of the call (member, weights, counts). */
        uint64_t h = ((uint64_t)x << 32) ^ ((uint64_t)e.M << 16) ^ v->held[x] ^
                     ((uint64_t)w << 40) ^ ((uint64_t)old << 8) ^ (uint64_t)e.W;
        h ^= h >> 33;
        h *= UINT64_C(0xFF51AFD7ED558CCD);
        h ^= h >> 33;
        h *= UINT64_C(0xC4CEB9FE1A85EC53);
        h ^= h >> 33;
        e.key = (uint32_t)h;
    }
    rm->nrec = 0;
    rm->stamp = 0;
    plan_shares(&e);
    for (uint32_t id = 0; id < v->id_limit; id++)
        rm->mark[id] = 0;
    for (uint32_t id = 0; id < v->id_limit; id++)
        rm->dev[id] = (int64_t)v->held[id] * DCH__REP_ONE - rm->share[id];

    /* Whether x is the only member of its zone among members of positive
     * weight once it has weight. */
    int alone = 1;
    for (uint32_t id = 0; id < v->id_limit && alone; id++)
        alone = !(id != x && rep_positive(&e, id) && rm->zone[id] == rm->zone[x]);

    if (old == 0 && e.n > n0)
        append_everywhere(&e);
    else if (w == 0 && e.n < n0)
        drop_everywhere(&e);
    else if (old == 0 && alone && e.zones <= e.n)
        force_everywhere(&e);
    else if (w > old)
        dch__rep_grow(&e);
    else
        dch__rep_shrink(&e);

    dch__rep_balance_primaries(&e);
    dch__rep_order_secondaries(&e);
    for (uint32_t s = 0; s < v->slots; s++)
        v->owner[s] = e.n > 0 ? rep_block(&e, s)[0] : DCH__REP_NONE;
}
