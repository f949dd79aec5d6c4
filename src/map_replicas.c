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
 *    is left out and the counts are planned again without it. Only x's
 *    copies change, so movement is minimal by construction.
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
 *    than one slot from it, the chain is applied. NOTES.md proves why that
 *    keeps every member within 2 slots of its share.
 *
 * Deviations are integers (copies scaled by 2^32, primaries by W), ties
 * fall to the lower id and slots are visited in a fixed order, so the
 * result is a pure function of the map and the call.
 */
#include "map_replicas.h"

#include "dch/error.h"

#include "alloc.h"
#include "map_internal.h"

#include <stdlib.h>
#include <string.h>

#define NONE16 DCH__MAP_UNOWNED
#define ONE ((int64_t)1 << 32) /* one copy, in share units */

int dch__rep_alloc(dch__rep_move *rm, const dch_allocator *a, uint32_t id_limit,
                   uint32_t slots, uint32_t replicas)
{
    (void)slots;
    (void)replicas;
    /* Three 64-bit and nine 32-bit arrays per id, in one block. */
    const size_t L = id_limit ? id_limit : 1;
    uint32_t *p = dch__alloc_array(a, 15 * L, sizeof *p);
    memset(rm, 0, sizeof *rm);
    if (p == NULL)
        return DCH_ENOMEM;
    rm->alloc = a;
    rm->dev = (int64_t *)(void *)p; /* the block is aligned for any type */
    rm->pdev = rm->dev + L;
    rm->share = rm->pdev + L;
    p += 6 * L;
    uint32_t **per_id[] = {&rm->quota, &rm->heap, &rm->pos,  &rm->pair, &rm->zone,
                           &rm->stuck, &rm->from, &rm->mark, &rm->queue};
    for (size_t i = 0; i < sizeof per_id / sizeof per_id[0]; i++, p += L)
        *per_id[i] = p;
    return DCH_OK;
}

void dch__rep_release(dch__rep_move *rm)
{
    dch__free(rm->alloc, rm->dev); /* the block */
    memset(rm, 0, sizeof *rm);
}

/* ---- One call in progress ---------------------------------------------- */

typedef struct eng {
    const dch__rep_view *v;
    dch__rep_move *rm;
    uint32_t x;
    uint32_t n; /* copies a slot holds after the call */
    uint32_t zones; /* distinct zones among members of positive weight, after */
    uint32_t M; /* members of positive weight, after */
    int64_t W; /* weight sum, after */
} eng;

static uint16_t *block(const eng *e, uint32_t s)
{
    return e->v->copies + (size_t)s * e->v->stride;
}

static int positive(const eng *e, uint32_t id)
{
    return id < e->v->id_limit && e->v->members[id].name != NULL &&
           e->v->members[id].weight > 0;
}

/* Where id sits in the n copies of b; -1 when it does not. */
static int place_of(const uint16_t *b, uint32_t n, uint32_t id)
{
    for (uint32_t k = 0; k < n; k++)
        if (b[k] == id)
            return (int)k;
    return -1;
}

/*
 * Whether the slot b holds the zones it must once position k holds id
 * (k == n: id is added): min(n', zones) distinct zones, n' the copies it
 * then has. The caller ensures id is not in b.
 */
static int zones_ok(const eng *e, const uint16_t *b, uint32_t n, uint32_t k, uint32_t id)
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
static void plan_shares(eng *e)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    const uint64_t P = v->slots;
    uint64_t *keys = (uint64_t *)(void *)rm->pdev;
    uint32_t nk = 0;
    for (uint32_t id = 0; id < v->id_limit; id++) {
        const uint32_t z = v->members[id].name ? v->members[id].zone : 0;
        rm->zone[id] = z ? z - 1 : DCH_MAP_MAX_NODES + id;
        rm->share[id] = 0;
        if (positive(e, id))
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

/* ---- Heaps of ids by deviation ----------------------------------------- */

/* Whether a comes first: the larger dev (max heap) or the smaller (min
 * heap), ties to the lower id. */
static int first(const eng *e, int max, uint32_t a, uint32_t b)
{
    const int64_t da = e->rm->dev[a], db = e->rm->dev[b];
    if (da != db)
        return max ? da > db : da < db;
    return a < b;
}

static void sift_down(const eng *e, int max, uint32_t n, uint32_t i)
{
    uint32_t *h = e->rm->heap;
    for (;;) {
        uint32_t best = i;
        const uint32_t l = 2 * i + 1, r = l + 1;
        if (l < n && first(e, max, h[l], h[best]))
            best = l;
        if (r < n && first(e, max, h[r], h[best]))
            best = r;
        if (best == i)
            return;
        const uint32_t t = h[i];
        h[i] = h[best];
        h[best] = t;
        i = best;
    }
}

/* Heap of the members of positive weight other than x that are not stuck. */
static uint32_t build_heap(const eng *e, int max)
{
    uint32_t n = 0;
    for (uint32_t id = 0; id < e->v->id_limit; id++)
        if (id != e->x && positive(e, id) && !e->rm->stuck[id])
            e->rm->heap[n++] = id;
    for (uint32_t i = n / 2; i-- > 0;)
        sift_down(e, max, n, i);
    return n;
}

/* Slot k of the visiting order: a fixed odd stride from an offset that
 * depends on x, so that consecutive visits land far apart. */
static uint32_t visit(const eng *e, uint32_t k)
{
    const uint32_t mask = e->v->slots - 1;
    const uint32_t stride = (UINT32_C(0x9E3779B1) & mask) | 1u;
    return (k * stride + e->x * UINT32_C(0x85EBCA6B)) & mask;
}

/* Move one copy at position k of slot s from `from` to `to`. */
static void trade(const eng *e, uint32_t s, uint32_t k, uint32_t to)
{
    uint16_t *b = block(e, s);
    const uint32_t from = b[k];
    b[k] = (uint16_t)to;
    e->v->members[from].copies--;
    e->v->members[to].copies++;
}

/* ---- Forced changes of shape ------------------------------------------- */

/* M was below R: x joins every slot as its n-th copy. */
static void append_everywhere(const eng *e)
{
    for (uint32_t s = 0; s < e->v->slots; s++)
        block(e, s)[e->n - 1] = (uint16_t)e->x;
    e->v->members[e->x].copies = e->v->slots;
}

/* M was at most R: x leaves every slot, the copies after it move up. */
static void drop_everywhere(const eng *e)
{
    const uint32_t n0 = e->n + 1;
    for (uint32_t s = 0; s < e->v->slots; s++) {
        uint16_t *b = block(e, s);
        const int k = place_of(b, n0, e->x);
        for (uint32_t i = (uint32_t)k; i + 1 < n0; i++)
            b[i] = b[i + 1];
        b[n0 - 1] = NONE16;
    }
    e->v->members[e->x].copies = 0;
}

/* x is the only member of a new zone and zones are at most n: every slot
 * must now hold that zone. x replaces, in each slot, the copy furthest
 * above its share among those whose zone the slot holds twice. */
static void force_everywhere(const eng *e)
{
    const uint32_t n = e->n;
    for (uint32_t s = 0; s < e->v->slots; s++) {
        uint16_t *b = block(e, s);
        int best = -1;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t same = 0;
            for (uint32_t j = 0; j < n; j++)
                same += e->rm->zone[b[j]] == e->rm->zone[b[k]];
            if (same >= 2 && (best < 0 || first(e, 1, b[k], b[best])))
                best = (int)k;
        }
        if (best >= 0) { /* always, by the pigeonhole principle */
            e->rm->dev[b[best]] -= ONE;
            trade(e, s, (uint32_t)best, e->x);
        }
    }
}

/* ---- Raise: x takes copies --------------------------------------------- */

/* Copies x takes from the heap's members by the rule; their quotas. */
static uint64_t plan_raise(const eng *e)
{
    dch__rep_move *rm = e->rm;
    uint32_t n = build_heap(e, 1);
    uint64_t total = 0;
    const uint64_t room = e->v->slots - e->v->members[e->x].copies;
    while (n > 0 && total < room) {
        const uint32_t d = rm->heap[0];
        if (rm->dev[d] <= rm->dev[e->x] + ONE)
            break;
        rm->quota[d]++;
        rm->dev[d] -= ONE;
        rm->dev[e->x] += ONE;
        total++;
        sift_down(e, 1, n, 0);
    }
    return total;
}

static void grow(const eng *e)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    const uint32_t n = e->n, P = v->slots, x = e->x;
    for (uint32_t id = 0; id < v->id_limit; id++)
        rm->pair[id] = rm->quota[id] = rm->stuck[id] = 0;
    for (uint32_t s = 0; s < P && v->members[x].copies > 0; s++) {
        const uint16_t *b = block(e, s);
        if (place_of(b, n, x) >= 0)
            for (uint32_t k = 0; k < n; k++)
                rm->pair[b[k]] += b[k] != x;
    }
    for (;;) {
        uint64_t left = plan_raise(e);
        if (left == 0)
            return;
        /* Diversity: x should share at most about its mean with anyone. */
        const uint64_t final = v->members[x].copies + left;
        const uint64_t cap = e->M > 1 ? (final * (n - 1) + e->M - 2) / (e->M - 1) + 1 : UINT64_MAX;
        for (int strict = 1; strict >= 0 && left > 0; strict--)
            for (uint32_t k = 0; k < P && left > 0; k++) {
                const uint32_t s = visit(e, k);
                uint16_t *b = block(e, s);
                if (place_of(b, n, x) >= 0)
                    continue;
                int best = -1;
                for (uint32_t i = 0; i < n; i++) {
                    const uint32_t d = b[i];
                    if (rm->quota[d] == 0 || !zones_ok(e, b, n, i, x))
                        continue;
                    if (strict) {
                        int crowded = 0;
                        for (uint32_t j = 0; j < n; j++)
                            crowded |= j != i && rm->pair[b[j]] >= cap;
                        if (crowded)
                            continue;
                    }
                    if (best < 0 || rm->quota[d] > rm->quota[b[best]] ||
                        (rm->quota[d] == rm->quota[b[best]] && d < b[best]))
                        best = (int)i;
                }
                if (best < 0)
                    continue;
                rm->quota[b[best]]--;
                trade(e, s, (uint32_t)best, x);
                for (uint32_t j = 0; j < n; j++)
                    rm->pair[b[j]] += b[j] != x;
                left--;
            }
        if (left == 0)
            continue; /* plan again: the rule may want more */
        /* Members that found no slot give back their quota and sit out. */
        for (uint32_t id = 0; id < v->id_limit; id++)
            if (rm->quota[id] > 0) {
                rm->dev[id] += (int64_t)rm->quota[id] * ONE;
                rm->dev[x] -= (int64_t)rm->quota[id] * ONE;
                rm->quota[id] = 0;
                rm->stuck[id] = 1;
            }
    }
}

/* ---- Lowering: x gives copies ------------------------------------------ */

/* Copies x gives to the heap's members by the rule (all of them when its
 * weight becomes 0); their quotas. */
static uint64_t plan_lower(const eng *e, uint64_t held)
{
    dch__rep_move *rm = e->rm;
    uint32_t n = build_heap(e, 0);
    uint64_t total = 0;
    const int all = e->v->members[e->x].weight == 0;
    while (n > 0 && total < held) {
        const uint32_t r = rm->heap[0];
        if (!all && rm->dev[e->x] <= rm->dev[r] + ONE)
            break;
        rm->quota[r]++;
        rm->dev[r] += ONE;
        rm->dev[e->x] -= ONE;
        total++;
        sift_down(e, 0, n, 0);
    }
    return total;
}

/* Whether r may take x's copy at position k of slot b. */
static int may_receive(const eng *e, const uint16_t *b, uint32_t k, uint32_t r)
{
    return place_of(b, e->n, r) < 0 && zones_ok(e, b, e->n, k, r);
}

static void shrink(const eng *e)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    const uint32_t n = e->n, P = v->slots, x = e->x;
    for (uint32_t id = 0; id < v->id_limit; id++)
        rm->quota[id] = rm->stuck[id] = 0;
    for (;;) {
        uint64_t left = plan_lower(e, v->members[x].copies);
        if (left == 0)
            break;
        /* The receivers with quota, in queue[]. */
        uint32_t np = 0;
        for (uint32_t id = 0; id < v->id_limit; id++)
            if (rm->quota[id] > 0)
                rm->queue[np++] = id;
        for (uint32_t k = 0; k < P && left > 0; k++) {
            const uint32_t s = visit(e, k);
            const uint16_t *b = block(e, s);
            const int at = place_of(b, n, x);
            if (at < 0)
                continue;
            uint32_t best = NONE16;
            for (uint32_t i = 0; i < np; i++) {
                const uint32_t r = rm->queue[i];
                if (rm->quota[r] == 0 || !may_receive(e, b, (uint32_t)at, r))
                    continue;
                if (best == NONE16 || rm->quota[r] > rm->quota[best] ||
                    (rm->quota[r] == rm->quota[best] && r < best))
                    best = r;
            }
            if (best == NONE16)
                continue;
            rm->quota[best]--;
            trade(e, s, (uint32_t)at, best);
            left--;
        }
        if (left == 0)
            continue;
        for (uint32_t i = 0; i < np; i++) {
            const uint32_t r = rm->queue[i];
            if (rm->quota[r] > 0) {
                rm->dev[r] -= (int64_t)rm->quota[r] * ONE;
                rm->dev[x] += (int64_t)rm->quota[r] * ONE;
                rm->quota[r] = 0;
                rm->stuck[r] = 1;
            }
        }
    }
    if (v->members[x].weight > 0 || v->members[x].copies == 0)
        return;
    /* Leaving, with copies no planned receiver could take: each goes to the
     * member furthest below its share that the slot allows (one always
     * does: NOTES.md, "Replicas"). */
    for (uint32_t s = 0; s < P; s++) {
        const uint16_t *b = block(e, s);
        const int at = place_of(b, n, x);
        if (at < 0)
            continue;
        uint32_t best = NONE16;
        for (uint32_t r = 0; r < v->id_limit; r++)
            if (r != x && positive(e, r) && may_receive(e, b, (uint32_t)at, r) &&
                (best == NONE16 || first(e, 0, r, best)))
                best = r;
        if (best != NONE16) {
            rm->dev[best] += ONE;
            trade(e, s, (uint32_t)at, best);
        }
    }
}

/* ---- Primaries --------------------------------------------------------- */

/* Make b[k] the primary of slot s (its old primary takes position k). */
static void promote(const eng *e, uint32_t s, uint32_t k)
{
    uint16_t *b = block(e, s);
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
static uint32_t search(const eng *e, uint32_t a, int forward)
{
    dch__rep_move *rm = e->rm;
    const uint32_t n = e->n;
    rm->stamp++;
    rm->mark[a] = rm->stamp;
    uint32_t best = a;
    for (int grew = 1; grew;) {
        grew = 0;
        for (uint32_t s = 0; s < e->v->slots; s++) {
            const uint16_t *b = block(e, s);
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
static void apply_chain(const eng *e, uint32_t t, uint32_t a, int forward)
{
    dch__rep_move *rm = e->rm;
    for (uint32_t cur = t; cur != a;) {
        const uint32_t s = rm->from[cur], prev = rm->pos[cur];
        const uint16_t *b = block(e, s);
        if (forward) { /* prev is s's primary; cur takes over */
            promote(e, s, (uint32_t)place_of(b, e->n, cur));
        } else { /* cur is s's primary; prev, a copy, takes over */
            promote(e, s, (uint32_t)place_of(b, e->n, prev));
        }
        cur = prev;
    }
}

static void balance_primaries(const eng *e)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    const uint32_t n = e->n, P = v->slots;
    for (uint32_t id = 0; id < v->id_limit; id++)
        v->members[id].slots = 0;
    for (uint32_t s = 0; s < P && n > 0; s++)
        v->members[block(e, s)[0]].slots++;
    for (uint32_t id = 0; id < v->id_limit; id++)
        rm->pdev[id] = (int64_t)v->members[id].slots * e->W -
                       (int64_t)P * (v->members[id].name ? v->members[id].weight : 0);
    if (n < 2)
        return;
    /* Direct promotions, until a scan finds none. */
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint32_t s = 0; s < P; s++) {
            const uint16_t *b = block(e, s);
            uint32_t k = 0;
            for (uint32_t i = 1; i < n; i++)
                if (rm->pdev[b[i]] < rm->pdev[b[k]] ||
                    (rm->pdev[b[i]] == rm->pdev[b[k]] && b[i] < b[k]))
                    k = i;
            if (k > 0 && rm->pdev[b[0]] - rm->pdev[b[k]] > e->W) {
                promote(e, s, k);
                changed = 1;
            }
        }
    }
    /* Chains from the member furthest above its share and to the one
     * furthest below, while either improves. */
    rm->stamp = 0;
    for (uint32_t id = 0; id < v->id_limit; id++)
        rm->mark[id] = 0;
    for (int changed = 1; changed;) {
        changed = 0;
        uint32_t hi = NONE16, lo = NONE16;
        for (uint32_t id = 0; id < v->id_limit; id++) {
            if (!positive(e, id))
                continue;
            if (hi == NONE16 || rm->pdev[id] > rm->pdev[hi])
                hi = id;
            if (lo == NONE16 || rm->pdev[id] < rm->pdev[lo])
                lo = id;
        }
        if (hi == NONE16 || rm->pdev[hi] - rm->pdev[lo] <= e->W)
            return;
        uint32_t t = search(e, hi, 1);
        if (rm->pdev[hi] - rm->pdev[t] > e->W) {
            apply_chain(e, t, hi, 1);
            changed = 1;
            continue;
        }
        t = search(e, lo, 0);
        if (rm->pdev[t] - rm->pdev[lo] > e->W) {
            apply_chain(e, t, lo, 0);
            changed = 1;
        }
    }
}

/* ---- The call ---------------------------------------------------------- */

void dch__rep_apply(dch__rep_move *rm, const dch__rep_view *v, uint32_t x, uint32_t w)
{
    eng e;
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
    plan_shares(&e);
    for (uint32_t id = 0; id < v->id_limit; id++)
        rm->dev[id] = (int64_t)v->members[id].copies * ONE - rm->share[id];

    /* Whether x is the only member of its zone among members of positive
     * weight once it has weight. */
    int alone = 1;
    for (uint32_t id = 0; id < v->id_limit && alone; id++)
        alone = !(id != x && positive(&e, id) && rm->zone[id] == rm->zone[x]);

    if (old == 0 && e.n > n0)
        append_everywhere(&e);
    else if (w == 0 && e.n < n0)
        drop_everywhere(&e);
    else if (old == 0 && alone && e.zones <= e.n)
        force_everywhere(&e);
    else if (w > old)
        grow(&e);
    else
        shrink(&e);

    balance_primaries(&e);
    for (uint32_t s = 0; s < v->slots; s++)
        v->owner[s] = e.n > 0 ? block(&e, s)[0] : NONE16;
}
