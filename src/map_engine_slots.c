/* SPDX-License-Identifier: MIT */
/*
 * Phase 2 of the placement engine (map_engine.c): which slots carry the
 * quotas phase 1 planned. x's count in each unit is water-filled towards an
 * even level; in each unit the slot comes from the donor most above its
 * per-unit share S*w/W (goes to the receiver most below it), ties to the
 * larger quota left beyond what later units force, then the lower id. Where
 * no counterparty fits a unit's band, a chain of trades is looked for
 * (map_engine_chains.c); quotas are met exactly whatever the units allow.
 */
#include "map_engine.h"

#include "map_internal.h"

#include <string.h>

/* A member's band in a unit, [floor(s), ceil(s)] with s = S*w/W. */
static void band(const dch__engine *g, uint32_t id, uint32_t *lo, uint32_t *hi)
{
    *lo = g->mv->band_lo[id];
    *hi = g->mv->band_hi[id];
}

/* Every member's band; one division per run of equal weights in id order. */
static void plan_bands(const dch__engine *g)
{
    const dch__map_view *v = g->v;
    uint32_t last_w = 0, lo = 0, hi = 0;
    g->mv->max_band_lo = g->mv->max_band_hi = 0;
    for (uint32_t id = 0; id < v->id_limit; id++) {
        const uint32_t w = v->members[id].weight;
        if (w != last_w) {
            const int64_t share = (int64_t)v->spu * w;
            lo = (uint32_t)(share / g->W);
            hi = lo + (share % g->W != 0);
            last_w = w;
        } else if (w == 0) {
            lo = hi = 0;
        }
        g->mv->band_lo[id] = lo;
        g->mv->band_hi[id] = hi;
        if (id != g->x && lo > g->mv->max_band_lo)
            g->mv->max_band_lo = lo;
        if (id != g->x && hi > g->mv->max_band_hi)
            g->mv->max_band_hi = hi;
    }
}

/*
 * Phase 2's order of the counterparties with quota: members whose per-unit
 * share is at least one slot (floor(S*w/W) >= 1) first, then the larger
 * quota, then the lower id; packed into key[], which follows each change
 * of a quota (set_key), so that the heap compares one word.
 */
static void set_key(const dch__engine *g, uint32_t id)
{
    const dch__move *mv = g->mv;
    mv->key[id] = (uint64_t)(mv->band_lo[id] == 0) << 48 |
                  (uint64_t)(UINT32_MAX - mv->quota[id]) << 16 | id;
}

static int before_key(const dch__engine *g, uint32_t a, uint32_t b)
{
    return g->mv->key[a] < g->mv->key[b];
}

/*
 * How many of o[0 .. n) equal id, four entries a word: a lane of t is 0
 * exactly where the entry is id, and ((t & low) + low) | t sets the lane's
 * top bit exactly where it is not. The clear top bits, shifted to the
 * bottom of their lanes, are summed lane by lane and the four lanes added
 * at the end of each round. Lanes are whole
 * 16-bit fields in either byte order.
 */
uint32_t dch__count_of(const uint16_t *o, uint32_t n, uint32_t id)
{
    const uint64_t ones = UINT64_C(0x0001000100010001);
    const uint64_t low = UINT64_C(0x7FFF7FFF7FFF7FFF), pattern = ones * id;
    uint32_t c = 0, i = 0;
    while (i + 4 <= n) {
        /* At most 2^16 - 1 words a round, so that no lane overflows. */
        const uint32_t end = n - i > UINT32_C(0x3FFFC) ? i + UINT32_C(0x3FFFC) : n;
        uint64_t lanes = 0;
        for (; i + 4 <= end; i += 4) {
            uint64_t w;
            memcpy(&w, o + i, sizeof w);
            const uint64_t t = w ^ pattern;
            lanes += (~(((t & low) + low) | t) & ~low) >> 15;
        }
        c += (uint32_t)((lanes & 0xFFFF) + (lanes >> 16 & 0xFFFF) +
                        (lanes >> 32 & 0xFFFF) + (lanes >> 48));
    }
    for (; i < n; i++)
        c += o[i] == id;
    return c;
}

/* x's count in every unit into xcnt. */
static void count_x(const dch__engine *g)
{
    const dch__map_view *v = g->v;
    uint32_t *xcnt = g->mv->xcnt;
    if (v->members[g->x].slots == 0) {
        memset(xcnt, 0, (size_t)v->units * sizeof *xcnt);
        return;
    }
    for (uint32_t u = 0; u < v->units; u++)
        xcnt[u] = dch__count_of(v->owner + (size_t)u * v->spu, v->spu, g->x);
}

/*
 * The level L of x's water-filling, in one pass over the histogram of x's
 * counts (xs[c]: units holding c slots): on a raise the largest L whose
 * fill f(L) = sum over c < L of hist[c] * (L - c) is at most `moved`, on a
 * lowering the smallest L whose cut, the sum over c > L of hist[c] * (c - L),
 * is. f grows by the units at or below L with each step of L (falls by those
 * at or above it), so stepping L by one from the empty fill costs O(S) in
 * all; *filled gets the fill at L.
 */
static uint32_t level_of(const dch__engine *g, uint32_t moved, uint64_t *filled)
{
    const uint32_t *hist = g->mv->xs, spu = g->v->spu;
    uint64_t f = 0, units = 0;
    uint32_t L;
    if (g->grow) {
        for (L = 0; L < spu; L++) {
            units += hist[L];
            if (f + units > moved)
                break;
            f += units;
        }
    } else {
        for (L = spu; L > 0; L--) {
            units += hist[L];
            if (f + units > moved)
                break;
            f += units;
        }
    }
    *filled = f;
    return L;
}

/*
 * x's target count per unit: levelled so that its per-unit counts are as even
 * as `moved` slots allow. A raise lifts the lowest units to a level L and one
 * more slot into R of the units at L; a lowering cuts the highest down to L
 * and R of them one further. The R are spread evenly round the ring.
 */
static void plan_targets(const dch__engine *g, uint32_t moved)
{
    const dch__map_view *v = g->v;
    memset(g->mv->xs, 0, ((size_t)v->spu + 1) * sizeof *g->mv->xs);
    for (uint32_t u = 0; u < v->units; u++)
        g->mv->xs[g->mv->xcnt[u]]++;
    uint64_t filled;
    const uint32_t L = level_of(g, moved, &filled);
    g->mv->level = L; /* used by raises only */
    const uint64_t extra = moved - filled;
    uint64_t at_level = 0, acc = 0;
    for (uint32_t u = 0; u < v->units; u++)
        at_level += g->grow ? g->mv->xcnt[u] <= L : g->mv->xcnt[u] >= L;
    for (uint32_t u = 0; u < v->units; u++) {
        const uint32_t c = g->mv->xcnt[u];
        uint32_t t = c;
        if (g->grow ? c <= L : c >= L) {
            t = L;
            acc += extra;
            if (acc >= at_level) {
                acc -= at_level;
                t = g->grow ? L + 1 : L - 1;
            }
        }
        g->mv->target[u] = t;
    }
}

/*
 * How welcome a pick is in a unit, for a member holding c slots there with
 * the per-unit share s = S*w/W: 0 when the band [floor(s), ceil(s)] forces
 * it (a donor above ceil(s), a receiver below floor(s)), 1 when the band
 * allows it, 2 when it leaves the band.
 */
/* tier() from the values: c slots held, band [lo, hi]. */
static int tier_of(int grow, uint32_t c, uint32_t lo, uint32_t hi)
{
    if (grow) /* after giving: c - 1 */
        return c > hi ? 0 : c > lo ? 1 : 2;
    return c < lo ? 0 : c < hi ? 1 : 2; /* after receiving: c + 1 */
}

static int tier(const dch__engine *g, uint32_t id, uint32_t c)
{
    uint32_t lo, hi;
    band(g, id, &lo, &hi);
    return tier_of(g->grow, c, lo, hi);
}

/* Moves the band forces on a member holding c slots of a unit. */
static uint32_t forced_in_unit(const dch__engine *g, uint32_t id, uint32_t c)
{
    uint32_t lo, hi;
    band(g, id, &lo, &hi);
    if (g->grow)
        return c > hi ? c - hi : 0;
    return c < lo ? lo - c : 0;
}


/* Quota left beyond the moves the bands force in units still to come. */
static int64_t free_quota(const dch__engine *g, uint32_t id)
{
    return (int64_t)g->mv->quota[id] - g->mv->forced[id];
}

/*
 * How good a pick is in the unit, smaller first: its tier, then the larger
 * quota left beyond what later units force on it (largest-remaining-first,
 * the order that meets every quota when the units allow it), then the lower
 * id; packed as tier (2 bits), free quota descending (|free quota| < 2^25)
 * and id (16 bits).
 */
static uint64_t key_of(int t, int64_t spare, uint32_t id)
{
    return (uint64_t)t << 60 | (uint64_t)((INT64_C(1) << 25) - spare) << 16 | id;
}

static uint64_t pick_key(const dch__engine *g, uint32_t id, int t)
{
    return key_of(t, free_quota(g, id), id);
}
/*
 * The unit's picks. The members counted in a unit (cnt/present) that hold a
 * slot there and have quota left sit in a binary heap over uheap[], ordered
 * by their pick_key(), kept in ukey[]. A pick changes only the picked
 * member's count and quota (forced[] changes only as a unit starts), so only
 * its key changes, and it is the heap's top: each pick costs O(log S) where
 * a scan of the members present cost O(min(S, N)) (docs/placement.md,
 * "Complexity").
 */
static void unit_sift_down(dch__move *mv, uint32_t n, uint32_t i)
{
    uint32_t *h = mv->uheap;
    const uint32_t id = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && mv->ukey[h[c + 1]] < mv->ukey[h[c]])
            c++;
        if (mv->ukey[h[c]] >= mv->ukey[id])
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = id;
}

static uint32_t unit_push(const dch__engine *g, uint32_t n, uint32_t id)
{
    dch__move *mv = g->mv;
    uint32_t *h = mv->uheap, i = n;
    mv->ukey[id] = pick_key(g, id, tier(g, id, mv->cnt[id]));
    while (i > 0 && mv->ukey[id] < mv->ukey[h[(i - 1) / 2]]) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = id;
    return n + 1;
}

/* The heap of the np members counted in the unit; returns its size. */
static uint32_t unit_heap(const dch__engine *g, uint32_t np)
{
    dch__move *mv = g->mv;
    uint32_t n = 0;
    for (uint32_t k = 0; k < np; k++) {
        const uint32_t id = mv->present[k];
        if (mv->cnt[id] == 0 || mv->quota[id] == 0)
            continue;
        mv->ukey[id] = pick_key(g, id, tier(g, id, mv->cnt[id]));
        mv->uheap[n++] = id;
    }
    for (uint32_t i = n / 2; i-- > 0;)
        unit_sift_down(mv, n, i);
    return n;
}

/*
 * The least pick_key() in the heap of n if its tier is at most max_tier
 * and, on the first pass of a raise, a tier-1 pick leaves quota beyond what
 * later units force; else UINT64_MAX. (When the least fails, all fail: a
 * larger key has a larger tier, or the same tier and less spare quota.)
 */
static uint64_t unit_best(const dch__engine *g, uint32_t n, int max_tier, int first)
{
    if (n == 0)
        return UINT64_MAX;
    const uint32_t id = g->mv->uheap[0];
    const uint64_t key = g->mv->ukey[id];
    const int t = (int)(key >> 60);
    if (t > max_tier || (t == 1 && first && free_quota(g, id) <= 0))
        return UINT64_MAX;
    return key;
}

/* After the top's count or quota changed: re-key it, or drop it when it
 * holds nothing there or has no quota left. Returns the new size. */
static uint32_t unit_fix_top(const dch__engine *g, uint32_t n)
{
    dch__move *mv = g->mv;
    const uint32_t id = mv->uheap[0];
    if (mv->cnt[id] == 0 || mv->quota[id] == 0) {
        mv->uheap[0] = mv->uheap[--n];
        if (n == 0)
            return 0;
    } else {
        mv->ukey[id] = pick_key(g, id, tier(g, id, mv->cnt[id]));
    }
    unit_sift_down(mv, n, 0);
    return n;
}

/* Count unit u's owners other than x into cnt/present; slot[id] is the last
 * slot of the unit id holds. Only donors with quota left, on a raise, and
 * then xs[i] links slot i to the slot before it of the same donor (xs is
 * free on a raise once plan_targets is done), so that a donor's next slot
 * costs O(1), not a scan of the unit. */
static uint32_t count_unit(const dch__engine *g, const uint16_t *base, int all)
{
    uint32_t *cnt = g->mv->cnt, *present = g->mv->present, *slot = g->mv->slot;
    const uint32_t *quota = g->mv->quota;
    const uint32_t spu = g->v->spu, x = g->x, ids = g->v->id_limit;
    uint32_t np = 0;
    /* DCH__MAP_UNOWNED is at least id_limit, and x's quota is 0. */
    if (g->grow && !all) {
        for (uint32_t i = 0; i < spu; i++) {
            const uint32_t o = base[i];
            if (o >= ids || quota[o] == 0)
                continue;
            present[np] = o;
            np += cnt[o]++ == 0;
            g->mv->xs[i] = slot[o]; /* followed only while cnt[o] > 0 */
            slot[o] = i;
        }
    } else {
        for (uint32_t i = 0; i < spu; i++) {
            const uint32_t o = base[i];
            if (o >= ids || o == x)
                continue;
            present[np] = o;
            np += cnt[o]++ == 0;
            slot[o] = i;
        }
    }
    return np;
}

/*
 * The moves the bands force on the members present in unit u: added to
 * forced[] by the survey before the first pass (sign +1), and taken off as
 * the first pass reaches u (sign -1), so that forced[] holds what later
 * units will force.
 */
static void tally_forced(const dch__engine *g, uint32_t np, int sign)
{
    for (uint32_t k = 0; k < np; k++) {
        const uint32_t id = g->mv->present[k];
        const uint32_t f = forced_in_unit(g, id, g->mv->cnt[id]);
        g->mv->forced[id] = sign > 0 ? g->mv->forced[id] + f : g->mv->forced[id] - f;
    }
}

static void clear_unit(const dch__engine *g, uint32_t np)
{
    for (uint32_t i = 0; i < np; i++)
        g->mv->cnt[g->mv->present[i]] = 0;
}

/* forced[] of every member over every unit where x changes. */
static void survey_forced(const dch__engine *g)
{
    const dch__map_view *v = g->v;
    memset(g->mv->forced, 0, (size_t)v->id_limit * sizeof *g->mv->forced);
    for (uint32_t u = 0; u < v->units; u++) {
        if (g->mv->xcnt[u] == g->mv->target[u])
            continue;
        const uint32_t np = count_unit(g, v->owner + (size_t)u * v->spu, 0);
        tally_forced(g, np, 1);
        clear_unit(g, np);
    }
}

/*
 * Where the bands leave a unit's pick to the order of quotas alone, phase 2
 * keeps the counterparties with quota left in heap[0 .. n) sorted by
 * before_key, and a unit's owners are marked (mark_unit) rather than
 * counted: the pick is the first counterparty present (raise) or absent
 * (lowering) there.
 */

/* The first of heap[0 .. n) present in the marked unit (present 1) or
 * absent from it (present 0), or n. */
static uint32_t first_marked(const dch__engine *g, uint32_t n, int present)
{
    const dch__move *mv = g->mv;
    uint32_t p = 0;
    while (p < n && (mv->mark[mv->heap[p]] == mv->stamp) != present)
        p++;
    return p;
}

/*
 * The first of heap[0 .. n) holding nothing in the unit, from cnt[] when
 * it was counted, else from mark[]; or n. *lead is a count of leading
 * entries known to be present (each pick keeps all but one of them where
 * they were), so the scan resumes there; and when the unit's heap of present
 * receivers (nh of them) holds every receiver with quota, none is absent.
 */
static uint32_t best_absent(const dch__engine *g, uint32_t n, int counted, uint32_t nh,
                            uint32_t *lead)
{
    const dch__move *mv = g->mv;
    if (counted && nh == n)
        return n;
    uint32_t p = *lead < n ? *lead : n;
    if (!counted) {
        while (p < n && mv->mark[mv->heap[p]] == mv->stamp)
            p++;
    } else {
        while (p < n && mv->cnt[mv->heap[p]] > 0)
            p++;
    }
    *lead = p;
    return p;
}

/* Where id is in heap[0 .. n) (it is there). */
static uint32_t position_of(const dch__engine *g, uint32_t id)
{
    uint32_t p = 0;
    while (g->mv->heap[p] != id)
        p++;
    return p;
}

static int after_key(const dch__engine *g, uint32_t a, uint32_t b)
{
    return before_key(g, b, a);
}

/* The counterparties with quota left, sorted (a heap sort, in place). */
static uint32_t sort_quotas(const dch__engine *g)
{
    uint32_t *h = g->mv->heap, n = 0;
    for (uint32_t k = 0; k < g->mv->npool; k++) {
        const uint32_t id = g->mv->pool[k];
        if (g->mv->quota[id] > 0) {
            set_key(g, id);
            h[n++] = id;
        }
    }
    dch__heapify(g, after_key, n);
    for (uint32_t end = n; end > 1;) {
        const uint32_t top = h[0];
        h[0] = h[--end];
        h[end] = top;
        dch__sift_down(g, after_key, end, 0);
    }
    return n;
}

/*
 * After heap[p]'s quota fell by one: it leaves when spent, else moves back
 * past those its new key follows (found by bisection). Returns the new n.
 */
static uint32_t resort_one(const dch__engine *g, uint32_t n, uint32_t p)
{
    uint32_t *h = g->mv->heap;
    const uint32_t id = h[p];
    if (g->mv->quota[id] == 0) {
        memmove(h + p, h + p + 1, (size_t)(n - p - 1) * sizeof *h);
        return n - 1;
    }
    set_key(g, id);
    uint32_t lo = p + 1, hi = n;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (before_key(g, h[mid], id))
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(h + p, h + p + 1, (size_t)(lo - p - 1) * sizeof *h);
    h[lo - 1] = id;
    return n;
}

/* After a chain, which spends one quota of some counterparty: the spent
 * ones leave and the one whose key changed moves to its place. */
static uint32_t resort_all(const dch__engine *g, uint32_t n)
{
    uint32_t *h = g->mv->heap, kept = 0;
    for (uint32_t p = 0; p < n; p++) {
        const uint32_t id = h[p];
        if (g->mv->quota[id] == 0)
            continue;
        set_key(g, id);
        uint32_t q = kept++;
        for (; q > 0 && before_key(g, id, h[q - 1]); q--)
            h[q] = h[q - 1];
        h[q] = id;
    }
    return kept;
}

/* x's slots of a unit, in order, into xs[]; returns how many. */
static uint32_t x_slots(const dch__engine *g, const uint16_t *base)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->v->spu; i++)
        if (base[i] == g->x)
            g->mv->xs[n++] = i;
    return n;
}

/*
 * Mark the owners of a unit with a new stamp, so that mark[id] == stamp
 * exactly for those present, and list x's slots as x_slots() does. (The
 * chain search draws its stamps from the same counter, so no mark of one
 * use is taken for the other's.)
 */
static uint32_t mark_unit(const dch__engine *g, const uint16_t *base)
{
    dch__move *mv = g->mv;
    const uint32_t stamp = ++mv->stamp, ids = g->v->id_limit, x = g->x;
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->v->spu; i++) {
        const uint32_t o = base[i];
        if (o >= ids)
            continue;
        mv->mark[o] = stamp;
        if (o == x)
            mv->xs[n++] = i;
    }
    return n;
}

/* mark_unit() that also sets slot[id] to the last slot id holds in the
 * unit, and returns whether some member holds two slots of it. */
static int mark_unit_slots(const dch__engine *g, const uint16_t *base)
{
    dch__move *mv = g->mv;
    const uint32_t stamp = ++mv->stamp, ids = g->v->id_limit;
    uint32_t twice = 0;
    for (uint32_t i = 0; i < g->v->spu; i++) {
        const uint32_t o = base[i];
        if (o >= ids)
            continue;
        twice |= mv->mark[o] == stamp;
        mv->mark[o] = stamp;
        mv->slot[o] = i;
    }
    return twice != 0;
}

/* Whether a member with quota left holds a slot of the unit (x's is 0). */
static int has_donor(const dch__engine *g, const uint16_t *base)
{
    const uint32_t *quota = g->mv->quota, ids = g->v->id_limit;
    uint32_t any = 0;
    for (uint32_t i = 0; i < g->v->spu; i++)
        any |= base[i] < ids && quota[base[i]] > 0;
    return any != 0;
}

/* Raise: x takes slot s of unit u from donor id. */
static void take(const dch__engine *g, uint32_t u, uint32_t id, uint32_t s)
{
    const dch__map_view *v = g->v;
    v->owner[(size_t)u * v->spu + s] = (uint16_t)g->x;
    g->mv->quota[id]--;
    dch__record(g, u * v->spu + s, id);
    v->members[id].slots--;
    v->members[g->x].slots++;
    g->mv->xcnt[u]++;
}

/*
 * Raise: x takes slots in every unit below its limit (target + slack; its
 * ceiling, the level plus one, when slack is UINT32_MAX - 1; every slot
 * when it is UINT32_MAX) from the donors present whose tier is at most
 * max_tier, the best by pick_key() first; returns the slots still to take.
 *
 * On the first pass, when nothing is forced and no other member's share
 * reaches a slot a unit, every donor's band is [0, 1]: one present once is
 * of tier 1 and one present twice of tier 0. So in a unit where no member
 * holds two slots the pick is the first donor present in the order of
 * quotas, and the unit is only marked; where one does, or a second pick is
 * due, the unit is counted. (With more members than slots a unit, a raise
 * takes about one slot of each unit it visits.)
 */
static uint32_t take_pass(const dch__engine *g, uint32_t slack, int max_tier, uint32_t left)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    const int first = slack == 0 && max_tier == 1;
    const int banded = first && !mv->surveyed && mv->max_band_lo == 0;
    uint32_t nq = banded ? sort_quotas(g) : 0;
    for (uint32_t u = 0; u < v->units && left > 0; u++) {
        const uint32_t limit = slack == UINT32_MAX       ? v->spu
                               : slack == UINT32_MAX - 1 ? mv->level + 1
                                                         : mv->target[u] + slack;
        if (mv->xcnt[u] >= limit)
            continue;
        uint16_t *base = v->owner + (size_t)u * v->spu;
        if (!first && !has_donor(g, base)) /* later passes look far for a few donors */
            continue;
        if (banded && !mark_unit_slots(g, base)) {
            const uint32_t at = first_marked(g, nq, 1);
            if (at == nq) /* no donor with quota is present */
                continue;
            take(g, u, mv->heap[at], mv->slot[mv->heap[at]]);
            nq = resort_one(g, nq, at);
            if (--left == 0 || mv->xcnt[u] >= limit)
                continue;
        }
        const uint32_t np = count_unit(g, base, 0);
        if (first && mv->surveyed)
            tally_forced(g, np, -1);
        uint32_t nh = unit_heap(g, np);
        for (; mv->xcnt[u] < limit && left > 0; left--) {
            const uint64_t best_key = unit_best(g, nh, max_tier, first);
            if (best_key == UINT64_MAX)
                break;
            const uint32_t best = (uint32_t)(best_key & 0xFFFF);
            uint32_t s = mv->slot[best];
            take(g, u, best, s);
            if (banded)
                nq = resort_one(g, nq, position_of(g, best));
            if (--mv->cnt[best] > 0) /* its next slot, below the one taken */
                mv->slot[best] = mv->xs[s];
            nh = unit_fix_top(g, nh);
        }
        clear_unit(g, np);
    }
    return left;
}

/*
 * Lowering: x gives slots in every unit above its target, each to the
 * receiver (quota left) most below its per-unit share. `n` receivers with
 * quota are in heap[0 .. n), sorted by before_key.
 *
 * When no receiver's share passes one slot a unit and nothing is forced,
 * an absent receiver is of tier 0 or 1 and every present one of tier 2, so
 * while some absent receiver has quota the pick is best_absent()'s and the
 * unit's counts are not needed: its owners are only marked, and the unit
 * is counted when every receiver with quota is present. (With more members
 * than slots a unit, x holds about one slot of each unit it leaves, and
 * counting each such unit cost more than the rest of the removal.)
 */
static void give_pass(const dch__engine *g, uint32_t n)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    const int lazy = !mv->surveyed && mv->max_band_hi <= 1;
    for (uint32_t u = 0; u < v->units && n > 0; u++) {
        if (mv->xcnt[u] <= mv->target[u])
            continue;
        uint16_t *base = v->owner + (size_t)u * v->spu;
        int counted = !lazy;
        uint32_t np = 0;
        /* x's slots of the unit, in order, into xs[0 .. nx) */
        const uint32_t nx = counted ? x_slots(g, base) : mark_unit(g, base);
        if (counted)
            np = count_unit(g, base, 1);
        if (mv->surveyed)
            tally_forced(g, np, -1);
        uint32_t nh = counted ? unit_heap(g, np) : 0, lead = 0;
        for (uint32_t k = 0; k < nx && mv->xcnt[u] > mv->target[u]; k++) {
            const uint32_t i = mv->xs[k];
            uint32_t at = best_absent(g, n, counted, nh, &lead);
            if (at == n && !counted) {
                np = count_unit(g, base, 1);
                counted = 1;
                nh = unit_heap(g, np);
            }
            uint32_t best = at < n ? mv->heap[at] : UINT32_MAX;
            uint64_t best_key =
                best == UINT32_MAX ? UINT64_MAX : pick_key(g, best, tier(g, best, 0));
            /* A receiver present holds a slot of the unit, so where no band
             * passes one slot each present one would leave its band (tier
             * 2), and an absent one of tier 0 or 1 comes first. */
            if (best_key >> 60 > 1 || mv->max_band_hi > 1) {
                const uint64_t present_key = unit_best(g, nh, 2, 0);
                best_key = present_key < best_key ? present_key : best_key;
            }
            best = best_key == UINT64_MAX ? UINT32_MAX : (uint32_t)(best_key & 0xFFFF);
            if (tier(g, best, mv->cnt[best]) == 2) {
                /* No receiver with quota fits here: trade moves along a
                 * chain, or else leave the band. */
                clear_unit(g, np);
                const int chained = dch__search_chain(g, u, u * v->spu + i);
                np = count_unit(g, base, 1);
                counted = 1;
                nh = unit_heap(g, np);
                lead = 0;
                if (chained) {
                    mv->xcnt[u]--;
                    n = resort_all(g, n);
                    continue;
                }
            }
            const int was_present = counted && mv->cnt[best] > 0; /* the heap's top */
            base[i] = (uint16_t)best;
            if (!counted)
                mv->mark[best] = mv->stamp;
            else if (mv->cnt[best]++ == 0)
                mv->present[np++] = best;
            v->members[best].slots++;
            v->members[g->x].slots--;
            mv->xcnt[u]--;
            dch__record(g, u * v->spu + i, best);
            mv->quota[best]--;
            if (was_present)
                nh = unit_fix_top(g, nh);
            else if (counted && mv->quota[best] > 0)
                nh = unit_push(g, nh, best);
            if (at >= n || mv->heap[at] != best) /* a present receiver was picked */
                at = position_of(g, best);
            lead -= at < lead; /* the entries behind it move up by one */
            n = resort_one(g, n, at);
        }
        clear_unit(g, np);
    }
}

/* Phase 2: carry the quotas in slots chosen unit by unit. */
void dch__place(const dch__engine *g, uint32_t moved)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    count_x(g);
    plan_targets(g, moved);
    plan_bands(g);
    /* Forced moves are planned for when a raise's x has a share of at least
     * a slot a unit (with fewer slots than members almost nothing is forced
     * and the survey would cost a pass), and for a lowering whenever some
     * receiver's band starts above 0 (else nothing can be forced). */
    mv->surveyed = g->grow ? mv->band_lo[g->x] > 0 : mv->max_band_lo > 0;
    if (mv->surveyed)
        survey_forced(g);
    else
        memset(mv->forced, 0, (size_t)v->id_limit * sizeof *mv->forced);
    if (g->grow) {
        /* Up to x's target per unit; chains where x is below its level;
         * then anywhere up to its ceiling where donors with quota are, by
         * chains again, and out of band last. */
        uint32_t left = take_pass(g, 0, 1, moved);
        for (uint32_t u = 0; u < v->units && left > 0; u++)
            while (left > 0 && mv->xcnt[u] < mv->level && dch__search_chain(g, u, 0)) {
                mv->xcnt[u]++;
                left--;
            }
        if (left > 0)
            left = take_pass(g, UINT32_MAX - 1, 1, left);
        for (uint32_t u = 0; u < v->units && left > 0; u++)
            while (left > 0 && mv->xcnt[u] < mv->level + 1 && dch__search_chain(g, u, 0)) {
                mv->xcnt[u]++;
                left--;
            }
        if (left > 0)
            left = take_pass(g, 0, 2, left);
        if (left > 0)
            (void)take_pass(g, UINT32_MAX, 2, left);
        return;
    }
    give_pass(g, sort_quotas(g));
}


uint32_t dch__count_unit(const dch__engine *g, const uint16_t *base, int all)
{
    return count_unit(g, base, all);
}

void dch__clear_unit(const dch__engine *g, uint32_t np)
{
    clear_unit(g, np);
}

void dch__band(const dch__engine *g, uint32_t id, uint32_t *lo, uint32_t *hi)
{
    band(g, id, lo, hi);
}
