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

/* ---- One call in progress ---------------------------------------------- */

typedef struct eng {
    const dch__rep_view *v;
    dch__rep_move *rm;
    uint32_t x;
    uint32_t n; /* copies a slot holds after the call */
    uint32_t zones; /* distinct zones among members of positive weight, after */
    uint32_t M; /* members of positive weight, after */
    int64_t W; /* weight sum, after */
    unsigned bits; /* log2(P) */
    uint32_t key; /* keys the visiting order */
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
static int zones_check(const eng *e, const uint16_t *b, uint32_t n, uint32_t k, uint32_t id)
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

static inline int zones_ok(const eng *e, const uint16_t *b, uint32_t n, uint32_t k,
                           uint32_t id)
{
    /* Every member a zone of its own: distinct members are enough. */
    return e->zones == e->M || zones_check(e, b, n, k, id);
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

/*
 * Slot k of the call's visiting order: a permutation of the P slots mixed
 * by odd multiplications and xor-shifts on log2(P) bits (each step is a
 * bijection), keyed by the call. Consecutive calls must not visit in
 * rotations of one sequence: a member takes its copies in the first part
 * of the order, and shared orders would make the members' slot sets
 * correlated, which is what diversity forbids.
 */
static uint32_t visit(const eng *e, uint32_t k)
{
    const uint32_t mask = e->v->slots - 1;
    const unsigned r = (e->bits + 1) / 2;
    uint32_t h = k;
    h = (h * UINT32_C(0x9E3779B1) + e->key) & mask;
    h ^= h >> r;
    h = (h * UINT32_C(0x85EBCA6B) + (e->key >> 16)) & mask;
    h ^= h >> r;
    h = (h * UINT32_C(0xC2B2AE35)) & mask;
    return h;
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

/* Note that this call moved the copy at position k of slot s, which
 * `from` held: augment() may still reroute it. */
static void record(const eng *e, uint32_t s, uint32_t k, uint32_t from)
{
    dch__rep_move *rm = e->rm;
    if (rm->nrec < rm->maxrec) {
        rm->rec_at[rm->nrec] = s << 3 | k;
        rm->rec_from[rm->nrec] = from;
        rm->nrec++;
    }
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

/* ---- Shared-slot rows (diversity) ------------------------------------ */

/* The count of slots member a shares with member c in the rows; NULL when
 * neither has a row (then neither shares a slot with x, so the question
 * does not arise). */
static uint32_t *pair_cell(const eng *e, uint32_t a, uint32_t c)
{
    const dch__rep_move *rm = e->rm;
    if (rm->rowof[a] != UINT32_MAX)
        return rm->rows + (size_t)rm->rowof[a] * e->v->id_limit + c;
    if (rm->rowof[c] != UINT32_MAX)
        return rm->rows + (size_t)rm->rowof[c] * e->v->id_limit + a;
    return NULL;
}

/*
 * Rows of slots shared: for every id (all) or for every member that shares
 * a slot with x (the only ones a receiver of x's copies can be paired
 * with), if the scratch has room; 0 when it has not.
 */
static int build_rows(const eng *e, int all)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    const uint32_t n = e->n, L = v->id_limit;
    uint32_t rows = 0;
    for (uint32_t id = 0; id < L; id++)
        rm->rowof[id] = UINT32_MAX;
    if (rm->nrows == 0)
        return 0;
    for (uint32_t id = 0; all && id < L; id++) {
        if (rows == rm->nrows)
            return 0;
        rm->rowof[id] = rows++;
    }
    for (uint32_t s = 0; !all && s < v->slots; s++) {
        const uint16_t *b = block(e, s);
        if (place_of(b, n, e->x) < 0)
            continue;
        for (uint32_t k = 0; k < n; k++)
            if (b[k] != e->x && rm->rowof[b[k]] == UINT32_MAX) {
                if (rows == rm->nrows)
                    return 0;
                rm->rowof[b[k]] = rows++;
            }
    }
    memset(rm->rows, 0, (size_t)rows * L * sizeof *rm->rows);
    for (uint32_t s = 0; s < v->slots; s++) {
        const uint16_t *b = block(e, s);
        for (uint32_t i = 0; i < n; i++) {
            if (rm->rowof[b[i]] == UINT32_MAX)
                continue;
            uint32_t *row = rm->rows + (size_t)rm->rowof[b[i]] * L;
            for (uint32_t j = 0; j < n; j++)
                row[b[j]] += j != i;
        }
    }
    return 1;
}

/* ---- Rerouting moves of this call (augmenting paths) ------------------- */

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
static int set_ok(const eng *e, const uint16_t *ids, uint32_t count)
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
static int find_slot(const eng *e, int grow, uint32_t c, uint32_t *k)
{
    for (uint32_t i = 0; i < e->v->slots; i++) {
        const uint32_t s = visit(e, i);
        const uint16_t *b = block(e, s);
        const int xat = place_of(b, e->n, e->x);
        if (grow) {
            const int at = place_of(b, e->n, c);
            if (xat < 0 && at >= 0 && zones_ok(e, b, e->n, (uint32_t)at, e->x)) {
                *k = (uint32_t)at;
                return (int)s;
            }
        } else if (xat >= 0 && place_of(b, e->n, c) < 0 &&
                   zones_ok(e, b, e->n, (uint32_t)xat, c)) {
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
static int can_displace(const eng *e, int grow, uint32_t u, uint32_t j, uint32_t *c,
                        uint32_t *q)
{
    const dch__rep_move *rm = e->rm;
    const uint32_t s1 = rm->rec_at[j] >> 3, k1 = rm->rec_at[j] & 7, n = e->n;
    const uint16_t *b = block(e, s1);
    uint16_t t[DCH_MAP_MAX_REPLICAS];
    memcpy(t, b, n * sizeof *t);
    if (grow) { /* x sits at k1 in place of c; u must sit here too */
        *c = rm->rec_from[j];
        const int at = place_of(b, n, u);
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
static int augment(const eng *e, int grow, uint32_t d)
{
    dch__rep_move *rm = e->rm;
    const uint32_t stamp = ++rm->stamp;
    uint32_t head = 0, tail = 0;
    rm->heap[tail++] = d;
    rm->mark[d] = stamp;
    while (head < tail && head < AUG_NODES) {
        const uint32_t u = rm->heap[head++];
        uint32_t k2;
        const int s2 = u == d ? -1 : find_slot(e, grow, u, &k2);
        if (s2 >= 0) {
            /* u trades in the fresh slot; each member on the path back to d
             * takes over the used slot it was reached through. */
            if (grow) {
                record(e, (uint32_t)s2, k2, u);
                trade(e, (uint32_t)s2, k2, e->x);
            } else {
                record(e, (uint32_t)s2, k2, e->x);
                trade(e, (uint32_t)s2, k2, u);
            }
            for (uint32_t cur = u; cur != d;) {
                const uint32_t j = rm->pos[cur], prev = rm->avail[cur];
                const uint32_t s1 = rm->rec_at[j] >> 3, k1 = rm->rec_at[j] & 7;
                uint16_t *b = block(e, s1);
                if (grow) { /* cur's copy comes back; x takes prev's */
                    const uint32_t q = (uint32_t)place_of(b, e->n, prev);
                    b[k1] = (uint16_t)cur;
                    b[q] = (uint16_t)e->x;
                    rm->rec_at[j] = s1 << 3 | q;
                    rm->rec_from[j] = prev;
                    e->v->members[cur].copies++;
                    e->v->members[prev].copies--;
                } else { /* prev takes the copy cur had */
                    b[k1] = (uint16_t)prev;
                    e->v->members[cur].copies--;
                    e->v->members[prev].copies++;
                }
                cur = prev;
            }
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

/*
 * How many slots two members holding ca and cb copies share on average
 * when copies are spread without bias: ca * (n - 1) * cb / (n*P - max),
 * rounded up (the smaller member's co-holders are the others' copies in
 * proportion). With equal counts c this is c * (n - 1) / (M - 1).
 */
static uint64_t pair_mean(const eng *e, uint64_t ca, uint64_t cb)
{
    const uint64_t T = (uint64_t)e->n * e->v->slots, mx = ca > cb ? ca : cb;
    if (e->n < 2 || T <= mx)
        return 0;
    return (ca * cb * (e->n - 1) + T - mx - 1) / (T - mx);
}

/* Diversity passes: the caps of pass p are loosened by slack_of(p); the
 * last pass has no cap. */
#define PASSES 6u

static uint32_t slack_of(uint32_t pass)
{
    static const uint32_t slack[PASSES] = {0, 0, 1, 2, 4, UINT32_MAX / 2};
    return slack[pass];
}

/* What member r may still trade: its quota, or 1 from its pool (pools
 * exist only during a lowering; from[] is UINT32_MAX otherwise). */
static uint32_t wants(const dch__rep_move *rm, uint32_t r)
{
    if (rm->quota[r] > 0)
        return rm->quota[r];
    return rm->from[r] != UINT32_MAX && rm->pool_budget[rm->from[r]] > 0;
}

/* Which of a and b, both with quota left, is more urgent: the larger share
 * of its quota in the slots it can still use, then the lower id. */
static int urgent(const dch__rep_move *rm, uint32_t a, uint32_t b)
{
    const uint64_t l = (uint64_t)wants(rm, a) * rm->avail[b],
                   r = (uint64_t)wants(rm, b) * rm->avail[a];
    return l != r ? l > r : a < b;
}

/* Slots where x may still take a copy from each member with quota; kept
 * as x takes slots. */
static void count_donor_room(const eng *e)
{
    dch__rep_move *rm = e->rm;
    for (uint32_t id = 0; id < e->v->id_limit; id++)
        rm->avail[id] = 0;
    for (uint32_t s = 0; s < e->v->slots; s++) {
        const uint16_t *b = block(e, s);
        if (place_of(b, e->n, e->x) >= 0)
            continue;
        for (uint32_t i = 0; i < e->n; i++)
            if (rm->quota[b[i]] > 0 && zones_ok(e, b, e->n, i, e->x))
                rm->avail[b[i]]++;
    }
}

static void grow(const eng *e)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    const uint32_t n = e->n, P = v->slots, x = e->x;
    for (uint32_t id = 0; id < v->id_limit; id++) {
        rm->pair[id] = rm->quota[id] = rm->stuck[id] = 0;
        rm->from[id] = UINT32_MAX; /* no pools */
    }
    for (uint32_t s = 0; s < P && v->members[x].copies > 0; s++) {
        const uint16_t *b = block(e, s);
        if (place_of(b, n, x) >= 0)
            for (uint32_t k = 0; k < n; k++)
                rm->pair[b[k]] += b[k] != x;
    }
    const int rows = build_rows(e, 1);
    for (;;) {
        uint64_t left = plan_raise(e);
        const uint64_t total = left;
        if (left == 0)
            return;
        /* cap[]: every member's count once the planned copies moved. */
        for (uint32_t id = 0; id < v->id_limit; id++)
            rm->cap[id] = v->members[id].copies - rm->quota[id];
        const uint64_t fx = v->members[x].copies + left;
        /* Passes under looser and looser caps: first only where no member
         * would share more than about the mean of x's slots, at last
         * anywhere. */
        count_donor_room(e);
        for (uint32_t pass = 0; pass < PASSES && left > 0; pass++) {
            const uint32_t slack = slack_of(pass);
            for (uint32_t k = 0; k < P && left > 0; k++) {
                const uint32_t s = visit(e, k);
                uint16_t *b = block(e, s);
                if (place_of(b, n, x) >= 0)
                    continue;
                /* The first pass spreads x's takes over the whole order,
                 * but for slots where a pair of members shares more than its
                 * mean: taking one of them there lowers it. */
                const int ahead = pass == 0 && (total - left) * P >= (uint64_t)(k + 1) * total;
                int best = -1;
                int64_t best_hot = 0;
                /* Pacing: after t of `total` takes, x should share about
                 * t/total of its final count with each member. */
                const uint64_t t = total - left + 1;
                for (uint32_t i = 0; i < n; i++) {
                    const uint32_t d = b[i];
                    if (rm->quota[d] == 0 || !zones_ok(e, b, n, i, x))
                        continue;
                    int crowded = 0;
                    for (uint32_t j = 0; j < n; j++) {
                        if (j == i)
                            continue;
                        const uint64_t cap = pair_mean(e, fx, rm->cap[b[j]]) + 1;
                        const uint64_t paced = (cap * t + total - 1) / total;
                        crowded |= rm->pair[b[j]] >= paced + slack;
                    }
                    if (crowded)
                        continue;
                    int64_t hot = 0;
                    for (uint32_t j = 0; rows && j < n; j++) {
                        if (j == i)
                            continue;
                        const uint64_t mean = pair_mean(e, rm->cap[d], rm->cap[b[j]]);
                        const int64_t over = (int64_t)*pair_cell(e, d, b[j]) - (int64_t)mean;
                        hot = over > hot ? over : hot;
                    }
                    if (best < 0 || hot > best_hot || (hot == best_hot && urgent(rm, d, b[best]))) {
                        best = (int)i;
                        best_hot = hot;
                    }
                }
                if (best < 0 || (ahead && best_hot == 0))
                    continue;
                const uint32_t d = b[best];
                for (uint32_t i = 0; i < n; i++) /* the slot is used up */
                    if (rm->quota[b[i]] > 0 && zones_ok(e, b, n, i, x))
                        rm->avail[b[i]]--;
                rm->quota[d]--;
                record(e, s, (uint32_t)best, d);
                trade(e, s, (uint32_t)best, x);
                for (uint32_t j = 0; j < n; j++) {
                    rm->pair[b[j]] += b[j] != x;
                    if (rows && b[j] != x) {
                        (*pair_cell(e, d, b[j]))--;
                        (*pair_cell(e, b[j], d))--;
                    }
                }
                left--;
            }
        }
        for (uint32_t id = 0; id < v->id_limit && left > 0; id++)
            while (rm->quota[id] > 0 && augment(e, 1, id)) {
                rm->quota[id]--;
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

/*
 * Pools: the plan gives one copy each to the first members of a class tied
 * in deviation (ties to the lower id), but any member of the class could
 * take it with the same counts as a result. Turning such a class into a
 * pool of that many copies lets the slots choose among all its members,
 * which is what diversity needs when a removal gives one copy each to a
 * few of many equal members. Only up to 8 classes (equal weights give at
 * most three); none when weights make every class a single member.
 */
static void make_pools(const eng *e)
{
    dch__rep_move *rm = e->rm;
    const uint32_t L = e->v->id_limit;
    rm->npools = 0;
    for (uint32_t id = 0; id < L; id++)
        rm->from[id] = UINT32_MAX;
    for (uint32_t id = 0; id < L; id++) {
        if (rm->quota[id] != 1)
            continue;
        const int64_t pre = rm->dev[id] - ONE;
        uint32_t p = 0;
        while (p < rm->npools && rm->pool_pre[p] != pre)
            p++;
        if (p == rm->npools) {
            if (p == 8) {
                rm->npools = 0;
                return;
            }
            rm->pool_pre[rm->npools] = pre;
            rm->pool_budget[rm->npools++] = 0;
        }
    }
    for (uint32_t id = 0; id < L; id++) {
        if (id == e->x || !positive(e, id) || rm->stuck[id] || rm->quota[id] > 1)
            continue;
        const int64_t pre = rm->dev[id] - (int64_t)rm->quota[id] * ONE;
        for (uint32_t p = 0; p < rm->npools; p++)
            if (rm->pool_pre[p] == pre) {
                rm->from[id] = p;
                if (rm->quota[id] == 1) {
                    rm->quota[id] = 0;
                    rm->dev[id] -= ONE;
                    rm->pool_budget[p]++;
                }
            }
    }
}

/* Pool copies nobody took go back to the first members of each pool, as
 * the plan had them. */
static void unpool(const eng *e)
{
    dch__rep_move *rm = e->rm;
    for (uint32_t id = 0; id < e->v->id_limit; id++) {
        const uint32_t p = rm->from[id];
        if (p != UINT32_MAX && rm->pool_budget[p] > 0) {
            rm->pool_budget[p]--;
            rm->quota[id] = 1;
            rm->dev[id] += ONE;
        }
        rm->from[id] = UINT32_MAX;
    }
    rm->npools = 0;
}

static void shrink(const eng *e)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    const uint32_t n = e->n, P = v->slots, x = e->x;
    for (uint32_t id = 0; id < v->id_limit; id++)
        rm->quota[id] = rm->stuck[id] = 0;
    const int rows = build_rows(e, 0);
    for (;;) {
        uint64_t left = plan_lower(e, v->members[x].copies);
        if (left == 0)
            break;
        /* The receivers with quota or in a pool, in queue[], and their
         * counts once the plan is carried (for the diversity caps). */
        for (uint32_t id = 0; id < v->id_limit; id++)
            rm->cap[id] = v->members[id].copies + rm->quota[id];
        make_pools(e);
        uint32_t np = 0;
        for (uint32_t id = 0; id < v->id_limit; id++)
            if (wants(rm, id) > 0)
                rm->queue[np++] = id;
        const uint64_t total = left;
        const uint32_t first_pass = rows ? 0 : PASSES - 1;
        /* avail[]: x's slots each receiver may still take; kept as x gives. */
        for (uint32_t i = 0; i < np; i++)
            rm->avail[rm->queue[i]] = 0;
        for (uint32_t s = 0; s < P; s++) {
            const uint16_t *b = block(e, s);
            const int at = place_of(b, n, x);
            for (uint32_t i = 0; at >= 0 && i < np; i++)
                if (may_receive(e, b, (uint32_t)at, rm->queue[i]))
                    rm->avail[rm->queue[i]]++;
        }
        for (uint32_t pass = first_pass; pass < PASSES && left > 0; pass++) {
            const uint32_t slack = slack_of(pass);
            for (uint32_t k = 0; k < P && left > 0; k++) {
                const uint32_t s = visit(e, k);
                const uint16_t *b = block(e, s);
                const int at = place_of(b, n, x);
                if (at < 0)
                    continue;
                /* The first pass spreads x's gifts over the whole order. */
                if (pass == first_pass && (total - left) * P >= (uint64_t)(k + 1) * total)
                    continue;
                uint32_t best = NONE16;
                for (uint32_t i = 0; i < np; i++) {
                    const uint32_t r = rm->queue[i];
                    if (wants(rm, r) == 0 || !may_receive(e, b, (uint32_t)at, r))
                        continue;
                    int crowded = 0;
                    for (uint32_t j = 0; rows && j < n; j++) {
                        if (j == (uint32_t)at)
                            continue;
                        const uint32_t *c = pair_cell(e, b[j], r);
                        const uint64_t cap = pair_mean(e, rm->cap[b[j]], rm->cap[r]);
                        crowded |= c != NULL && *c >= cap + slack;
                    }
                    if (!crowded && (best == NONE16 || urgent(rm, r, best)))
                        best = r;
                }
                if (best == NONE16)
                    continue;
                for (uint32_t i = 0; i < np; i++) /* the slot is used up */
                    if (wants(rm, rm->queue[i]) > 0 &&
                        may_receive(e, b, (uint32_t)at, rm->queue[i]))
                        rm->avail[rm->queue[i]]--;
                if (rm->quota[best] > 0) {
                    rm->quota[best]--;
                } else { /* from its pool */
                    rm->pool_budget[rm->from[best]]--;
                    rm->from[best] = UINT32_MAX;
                    rm->dev[best] += ONE;
                }
                record(e, s, (uint32_t)at, x);
                trade(e, s, (uint32_t)at, best);
                for (uint32_t j = 0; rows && j < n; j++) {
                    if (j == (uint32_t)at)
                        continue;
                    if (rm->rowof[b[j]] != UINT32_MAX)
                        rm->rows[(size_t)rm->rowof[b[j]] * v->id_limit + best]++;
                    if (rm->rowof[best] != UINT32_MAX)
                        rm->rows[(size_t)rm->rowof[best] * v->id_limit + b[j]]++;
                }
                left--;
            }
        }
        unpool(e);
        for (uint32_t i = 0; i < np && left > 0; i++)
            while (rm->quota[rm->queue[i]] > 0 && augment(e, 0, rm->queue[i])) {
                rm->quota[rm->queue[i]]--;
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
    e.bits = 0;
    while ((UINT32_C(1) << e.bits) < v->slots)
        e.bits++;
    {
        /* The order's key: a mix of the call (member, weights, counts). */
        uint64_t h = ((uint64_t)x << 32) ^ ((uint64_t)e.M << 16) ^ v->members[x].copies ^
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
