/*
 * The placement engine of the DCH map: which slots move when one member's
 * weight changes (add is a raise from 0, remove a lowering to 0).
 *
 * A move has two phases.
 *
 * 1. Counts (global). With W the new weight sum and P the slots, a member of
 *    weight w has the share t = P*w/W and the deviation d = held - t. Only
 *    the changing member x and the others trade: on a raise, x takes one
 *    slot at a time from the other member of greatest deviation while that
 *    deviation exceeds x's by more than one slot; on a lowering, x gives one
 *    slot at a time to the member of least deviation while x's exceeds it
 *    by more than one slot (every slot, when x's weight becomes 0). The
 *    result is a quota per counterparty: how many slots it gives or gets.
 *    This phase alone decides every member's count, so the global bounds of
 *    map.h are properties of this rule (NOTES.md, "The placement engine").
 *
 * 2. Slots (per unit). Which slots carry the quotas is free, and is chosen
 *    for the per-unit slices: x's count in each unit is water-filled towards
 *    an even level, and in each unit the slot comes from the donor most above
 *    its per-unit share S*w/W (goes to the receiver most below it), ties to
 *    the larger remaining quota, then the lower id. Quotas are met exactly,
 *    whatever the units allow: a donor that found no room in the first pass
 *    gives in later, looser passes.
 *
 * Deviations are compared as integers, held*W - P*w (below 2^57 in size),
 * and every tie falls to the lower id, so the table is a pure function of
 * the config and the call sequence.
 */
#include "map_engine.h"

#include "dch/error.h"

#include "alloc.h"
#include "map_internal.h"

#include <string.h>

typedef struct engine {
    const dch__map_view *v;
    dch__move *mv;
    uint32_t x;
    int grow; /* 1: x's weight rises, slots flow to x */
    int equal; /* every positive weight is equal */
    int64_t W; /* weight sum after the change */
} engine;

int dch__move_alloc(dch__move *mv, const dch_allocator *a, uint32_t id_limit,
                    uint32_t units, uint32_t spu, uint32_t max_moves)
{
    /* One block of 32-bit words: a deviation (two words) and 13 arrays per
     * id, 2 per unit, 2 per slot of a unit (and one), 2 per slot that can move. Sizes
     * stay far below SIZE_MAX (ids < 2^16, units and moves <= 2^24). */
    const size_t n = 15 * (size_t)id_limit + 2 * (size_t)units + 2 * (size_t)spu + 1 +
                     2 * (size_t)(max_moves ? max_moves : 1);
    uint32_t *p = dch__alloc_array(a, n, sizeof *p);
    memset(mv, 0, sizeof *mv);
    if (p == NULL)
        return DCH_ENOMEM;
    mv->alloc = a;
    mv->dev = (int64_t *)(void *)p; /* the block is aligned for any type */
    p += 2 * (size_t)id_limit;
    uint32_t **per_id[] = {&mv->quota, &mv->heap,  &mv->cnt,   &mv->slot,    &mv->forced,
                           &mv->par,   &mv->via,   &mv->entry, &mv->mark,    &mv->queue,
                           &mv->pool,  &mv->band_lo, &mv->band_hi};
    for (size_t i = 0; i < sizeof per_id / sizeof per_id[0]; i++, p += id_limit)
        *per_id[i] = p;
    mv->xcnt = p;
    mv->target = p + units;
    mv->present = p + 2 * (size_t)units;
    mv->park = mv->present + spu;
    mv->rec_slot = mv->park + spu + 1;
    mv->rec_who = mv->rec_slot + (max_moves ? max_moves : 1);
    memset(mv->quota, 0, (size_t)id_limit * sizeof *mv->quota);
    memset(mv->cnt, 0, (size_t)id_limit * sizeof *mv->cnt);
    memset(mv->mark, 0, (size_t)id_limit * sizeof *mv->mark);
    return DCH_OK;
}

void dch__move_release(dch__move *mv)
{
    dch__free(mv->alloc, mv->dev); /* the block */
    memset(mv, 0, sizeof *mv);
}

/* ---- Heaps ------------------------------------------------------------ */

typedef int (*before_fn)(const engine *g, uint32_t a, uint32_t b);

/*
 * held*W - P*w for a member once its remaining quota is carried: in phase 1
 * the quota planned so far, in phase 2 what is left of it. Kept in dev[],
 * which every change of a planned count updates by W.
 */
static int64_t deviation(const engine *g, uint32_t id)
{
    return g->mv->dev[id];
}

/* A member's band in a unit, [floor(s), ceil(s)] with s = S*w/W. */
static void band(const engine *g, uint32_t id, uint32_t *lo, uint32_t *hi)
{
    *lo = g->mv->band_lo[id];
    *hi = g->mv->band_hi[id];
}

/* Every member's band; one division per run of equal weights in id order. */
static void plan_bands(const engine *g)
{
    const dch__map_view *v = g->v;
    uint32_t last_w = 0, lo = 0, hi = 0;
    g->mv->max_band_lo = 0;
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
    }
}

/* Phase 1 order: the donor of greatest, or receiver of least, deviation. */
static int before_global(const engine *g, uint32_t a, uint32_t b)
{
    const int64_t da = deviation(g, a), db = deviation(g, b);
    if (da != db)
        return g->grow ? da > db : da < db;
    return a < b;
}

/*
 * Phase 2 order of receivers holding nothing in the unit: tier 0 (a share
 * of at least one slot per unit) before tier 1, then the larger quota, then
 * the lower id; the same order pick_key() gives them.
 */
static int before_absent(const engine *g, uint32_t a, uint32_t b)
{
    const uint32_t *q = g->mv->quota;
    uint32_t lo_a, lo_b, hi;
    band(g, a, &lo_a, &hi);
    band(g, b, &lo_b, &hi);
    const int ta = lo_a == 0, tb = lo_b == 0;
    if (ta != tb)
        return ta < tb;
    if (q[a] != q[b])
        return q[a] > q[b];
    return a < b;
}

/* Binary heap over mv->heap; mv->slot[id] is id's position in it. */
static void heap_set(const engine *g, uint32_t i, uint32_t id)
{
    g->mv->heap[i] = id;
    g->mv->slot[id] = i;
}

static void sift_down(const engine *g, before_fn before, uint32_t n, uint32_t i)
{
    uint32_t *h = g->mv->heap;
    const uint32_t id = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(g, h[c + 1], h[c]))
            c++;
        if (!before(g, h[c], id))
            break;
        heap_set(g, i, h[c]);
        i = c;
    }
    heap_set(g, i, id);
}

static void sift_up(const engine *g, before_fn before, uint32_t i)
{
    uint32_t *h = g->mv->heap;
    const uint32_t id = h[i];
    while (i > 0 && before(g, id, h[(i - 1) / 2])) {
        heap_set(g, i, h[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(g, i, id);
}

static void heapify(const engine *g, before_fn before, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        heap_set(g, i, g->mv->heap[i]);
    for (uint32_t i = n / 2; i-- > 0;)
        sift_down(g, before, n, i);
}

/* Remove the entry at position i; returns the new size. */
static uint32_t heap_remove(const engine *g, before_fn before, uint32_t n, uint32_t i)
{
    n--;
    if (i < n) {
        const uint32_t last = g->mv->heap[n];
        heap_set(g, i, last);
        sift_up(g, before, i);
        sift_down(g, before, n, g->mv->slot[last]);
    }
    return n;
}

/* ---- Phase 1: counts --------------------------------------------------- */

/*
 * The counterparties phase 1 can pick, into heap[0 .. n). A member ranked
 * k-th by before_global is picked only after the k - 1 ahead of it have each
 * been picked at least once (each stays ahead until then), so with at most
 * k picks only the first k can be: those are kept, found in one pass with a
 * bounded heap whose root is the last kept (order reversed). k bounds the
 * picks: a lowering moves at most x's slots; a raise stops once x's
 * deviation is within a slot of the greatest, which no pick raises.
 */
static int after_global(const engine *g, uint32_t a, uint32_t b)
{
    return before_global(g, b, a);
}

static uint32_t candidates(const engine *g, int64_t ex)
{
    const dch__map_view *v = g->v;
    uint32_t *h = g->mv->heap;
    const uint32_t x = g->x;
    uint64_t k = v->members[x].slots;
    if (g->grow) {
        int64_t top = INT64_MIN;
        for (uint32_t id = 0; id < v->id_limit; id++)
            if (id != x && v->members[id].slots > 0 && g->mv->dev[id] > top)
                top = g->mv->dev[id];
        k = top > ex ? (uint64_t)((top - ex) / g->W) + 1 : 0;
    }
    uint32_t n = 0;
    for (uint32_t id = 0; id < v->id_limit && k > 0; id++) {
        if (id == x || (g->grow ? v->members[id].slots == 0 : v->members[id].weight == 0))
            continue;
        if (n < k) {
            h[n] = id;
            sift_up(g, after_global, n++);
        } else if (before_global(g, id, h[0])) {
            h[0] = id;
            sift_down(g, after_global, n, 0);
        }
    }
    return n;
}

/*
 * Quotas of the counterparties; returns how many slots move. A raise moves
 * while the top donor's deviation exceeds x's by more than one slot (W in
 * these units); a lowering while x's exceeds the bottom receiver's by more
 * than one slot, or always when x's new weight is 0.
 */
static uint32_t plan_counts(const engine *g)
{
    const dch__map_view *v = g->v;
    uint32_t *h = g->mv->heap, *quota = g->mv->quota;
    const uint32_t x = g->x;
    int64_t ex = (int64_t)v->members[x].slots * g->W - (int64_t)v->slots * v->members[x].weight;
    const uint32_t n = candidates(g, ex);
    heapify(g, before_global, n);
    uint32_t moved = 0;
    for (uint32_t left = n; left > 0;) {
        const uint32_t top = h[0];
        if (g->grow) {
            if (deviation(g, top) - ex <= g->W)
                break;
            quota[top]++;
            g->mv->dev[top] -= g->W;
            ex += g->W;
            if (quota[top] == v->members[top].slots) {
                left = heap_remove(g, before_global, left, 0);
                moved++;
                continue;
            }
        } else {
            if (moved == v->members[x].slots ||
                (v->members[x].weight > 0 && ex - deviation(g, top) <= g->W))
                break;
            quota[top]++;
            g->mv->dev[top] += g->W;
            ex -= g->W;
        }
        sift_down(g, before_global, left, 0);
        moved++;
    }
    /* partner()'s pool: the members with a quota, in id order. */
    g->mv->npool = 0;
    for (uint32_t id = 0; id < v->id_limit; id++)
        if (quota[id] > 0)
            g->mv->pool[g->mv->npool++] = id;
    return moved;
}

/* ---- Phase 2: slots ---------------------------------------------------- */

/*
 * How many of o[0 .. n) equal id, four entries a word: a lane of t is 0
 * exactly where the entry is id, and ((t & low) + low) | t sets the lane's
 * top bit exactly where it is not. The clear top bits, shifted to the
 * bottom of their lanes, are summed lane by lane and the four lanes added
 * at the end of each round. Lanes are whole
 * 16-bit fields in either byte order.
 */
static uint32_t count_of(const uint16_t *o, uint32_t n, uint32_t id)
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
static void count_x(const engine *g)
{
    const dch__map_view *v = g->v;
    uint32_t *xcnt = g->mv->xcnt;
    if (v->members[g->x].slots == 0) {
        memset(xcnt, 0, (size_t)v->units * sizeof *xcnt);
        return;
    }
    for (uint32_t u = 0; u < v->units; u++)
        xcnt[u] = count_of(v->owner + (size_t)u * v->spu, v->spu, g->x);
}

/* Slots x would gain (raise) or lose (lowering) with every unit levelled at L. */
static uint64_t fill_to(const engine *g, uint32_t L)
{
    uint64_t f = 0;
    for (uint32_t u = 0; u < g->v->units; u++) {
        const uint32_t c = g->mv->xcnt[u];
        if (g->grow ? c < L : c > L)
            f += g->grow ? L - c : c - L;
    }
    return f;
}

/*
 * x's target count per unit: levelled so that its per-unit counts are as even
 * as `moved` slots allow. A raise lifts the lowest units to a level L and one
 * more slot into R of the units at L; a lowering cuts the highest down to L
 * and R of them one further. The R are spread evenly round the ring.
 */
static void plan_targets(const engine *g, uint32_t moved)
{
    const dch__map_view *v = g->v;
    /* Raise: the largest L with fill_to(L) <= moved; lowering: the smallest. */
    uint32_t lo = 0, hi = v->spu;
    while (lo < hi) {
        const uint32_t mid = g->grow ? lo + (hi - lo + 1) / 2 : lo + (hi - lo) / 2;
        const int fits = fill_to(g, mid) <= moved;
        if (g->grow)
            *(fits ? &lo : &hi) = fits ? mid : mid - 1;
        else
            *(fits ? &hi : &lo) = fits ? mid : mid + 1;
    }
    const uint32_t L = lo;
    g->mv->level = L; /* used by raises only */
    const uint64_t extra = moved - fill_to(g, L);
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
static int tier(const engine *g, uint32_t id, uint32_t c)
{
    uint32_t lo, hi;
    band(g, id, &lo, &hi);
    if (g->grow) /* after giving: c - 1 */
        return c > hi ? 0 : c > lo ? 1 : 2;
    return c < lo ? 0 : c < hi ? 1 : 2; /* after receiving: c + 1 */
}

/* Moves the band forces on a member holding c slots of a unit. */
static uint32_t forced_in_unit(const engine *g, uint32_t id, uint32_t c)
{
    uint32_t lo, hi;
    band(g, id, &lo, &hi);
    if (g->grow)
        return c > hi ? c - hi : 0;
    return c < lo ? lo - c : 0;
}


/* Quota left beyond the moves the bands force in units still to come. */
static int64_t free_quota(const engine *g, uint32_t id)
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
static uint64_t pick_key(const engine *g, uint32_t id, int t)
{
    const uint64_t fq = (uint64_t)((INT64_C(1) << 25) - free_quota(g, id));
    return (uint64_t)t << 60 | fq << 16 | id;
}
/* Count unit u's owners other than x into cnt/present; slot[id] is the last
 * slot of the unit id holds. Only donors with quota left, on a raise. */
static uint32_t count_unit(const engine *g, const uint16_t *base, int all)
{
    uint32_t *cnt = g->mv->cnt, *present = g->mv->present, *slot = g->mv->slot;
    const uint32_t *quota = g->mv->quota;
    const uint32_t spu = g->v->spu, x = g->x;
    const int donors = g->grow && !all, grow = g->grow;
    uint32_t np = 0;
    for (uint32_t i = 0; i < spu; i++) {
        const uint32_t o = base[i];
        if (o == DCH__MAP_UNOWNED || o == x || (donors && quota[o] == 0))
            continue;
        if (cnt[o]++ == 0)
            present[np++] = o;
        if (grow)
            slot[o] = i; /* on a lowering slot[] holds heap positions */
    }
    return np;
}

/*
 * The moves the bands force on the members present in unit u: added to
 * forced[] by the survey before the first pass (sign +1), and taken off as
 * the first pass reaches u (sign -1), so that forced[] holds what later
 * units will force.
 */
static void tally_forced(const engine *g, uint32_t np, int sign)
{
    for (uint32_t k = 0; k < np; k++) {
        const uint32_t id = g->mv->present[k];
        const uint32_t f = forced_in_unit(g, id, g->mv->cnt[id]);
        g->mv->forced[id] = sign > 0 ? g->mv->forced[id] + f : g->mv->forced[id] - f;
    }
}

static void clear_unit(const engine *g, uint32_t np)
{
    for (uint32_t i = 0; i < np; i++)
        g->mv->cnt[g->mv->present[i]] = 0;
}

/* forced[] of every member over every unit where x changes. */
static void survey_forced(const engine *g)
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

/* Slots member id holds in unit u. */
static uint32_t held_in_unit(const engine *g, uint32_t u, uint32_t id)
{
    return count_of(g->v->owner + (size_t)u * g->v->spu, g->v->spu, id);
}

/* A slot of unit u that id holds (it holds one). */
static uint32_t slot_of(const engine *g, uint32_t u, uint32_t id)
{
    uint32_t s = u * g->v->spu;
    while (g->v->owner[s] != id)
        s++;
    return s;
}

/*
 * Whether id can undo one of its moves in a unit where it holds c slots
 * (take a slot back on a raise, hand one back on a lowering) and stay in its
 * band.
 */
static int can_undo(const engine *g, uint32_t id, uint32_t c)
{
    uint32_t lo, hi;
    band(g, id, &lo, &hi);
    if (g->grow)
        return c + 1 <= hi;
    return c > 0 && c - 1 >= lo;
}

/* Record a move of slot s with counterparty id. */
static void record(const engine *g, uint32_t s, uint32_t id)
{
    dch__move *mv = g->mv;
    mv->rec_slot[mv->nrec] = s;
    mv->rec_who[mv->nrec] = id;
    mv->nrec++;
}

/* The count id ends with once its remaining quota is carried. */
static int64_t final_count(const engine *g, uint32_t id)
{
    const int64_t q = g->mv->quota[id], c = g->v->members[id].slots;
    return g->grow ? c - q : c + q;
}

/*
 * A member whose remaining quota id can carry in its place (id itself when
 * its quota is not spent). Preferred: one whose final deviation is exactly
 * one slot below id's (raise; above, lowering), so that swapping one move
 * between them leaves the multiset of final deviations as phase 1 planned.
 * Else one for which the swap keeps both within the global bound and, with
 * equal weights, every final count within 2 of every other (the invariant
 * NOTES.md uses to show that equal weights never need a repair move).
 * UINT32_MAX if none.
 */
static uint32_t partner(const engine *g, uint32_t id)
{
    dch__move *mv = g->mv;
    if (mv->quota[id] > 0)
        return id;
    const int64_t W = g->W, step = g->grow ? -1 : 1;
    const int64_t mine = deviation(g, id) + step * W; /* after the extra move */
    const int64_t my_count = final_count(g, id) + step;
    uint32_t fit = UINT32_MAX;
    for (uint32_t k = 0; k < mv->npool; k++) {
        const uint32_t y = mv->pool[k];
        if (mv->quota[y] == 0)
            continue;
        const int64_t theirs = deviation(g, y) - step * W; /* one move short */
        if (theirs == mine - step * W)
            return y;
        if (!mv->allow_fit || fit != UINT32_MAX || mine <= -2 * W || mine >= 2 * W ||
            theirs <= -2 * W || theirs >= 2 * W)
            continue;
        /* With equal weights: every final count within 2 of every other. */
        const int64_t their_count = final_count(g, y) - step;
        const int64_t lo = my_count < their_count ? my_count : their_count;
        const int64_t hi = my_count < their_count ? their_count : my_count;
        if (!g->equal || (hi > mv->hi_count ? hi : mv->hi_count) -
                                 (lo < mv->lo_count ? lo : mv->lo_count) <= 2)
            fit = y;
    }
    return fit;
}

/* Put id on the search's frontier, reached through record r in unit u. */
static void visit(const engine *g, uint32_t id, uint32_t from, uint32_t r, uint32_t u)
{
    dch__move *mv = g->mv;
    mv->mark[id] = mv->stamp;
    mv->par[id] = from;
    mv->via[id] = r;
    mv->entry[id] = u;
    mv->queue[mv->qlen++] = id;
}

/*
 * Enqueue the counterparties that can carry one more move in the unit
 * counted into cnt/present (np of them): present ones within their band and,
 * on a lowering, receivers holding nothing there (at most `absent` of
 * those). Returns one with quota left or a partner, or UINT32_MAX.
 */
static uint32_t frontier(const engine *g, uint32_t np, uint32_t from, uint32_t r,
                         uint32_t u, uint32_t absent)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    for (uint32_t k = 0; k < np; k++) {
        const uint32_t id = mv->present[k];
        if (mv->mark[id] == mv->stamp || tier(g, id, mv->cnt[id]) > 1)
            continue;
        visit(g, id, from, r, u);
        if (partner(g, id) != UINT32_MAX)
            return id;
    }
    for (uint32_t id = 0; !g->grow && id < v->id_limit && absent > 0; id++) {
        if (id == g->x || v->members[id].weight == 0 || mv->cnt[id] > 0 ||
            mv->mark[id] == mv->stamp)
            continue;
        visit(g, id, from, r, u);
        absent--;
        if (partner(g, id) != UINT32_MAX)
            return id;
    }
    return UINT32_MAX;
}

/*
 * Apply the chain that ends at z: z carries a new move in its entry unit,
 * and every member before it in the chain trades a recorded move for one in
 * its own entry unit, until the first, whose entry is the unit the search
 * started from (a new move there: a slot x takes, or x's slot s0 given).
 */
static void apply_chain(const engine *g, uint32_t z, uint32_t s0)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    const uint32_t x = g->x;
    const uint32_t y = partner(g, z);
    mv->quota[y]--;
    if (y != z) { /* z carries one move more than planned, y one fewer */
        const int64_t step = g->grow ? g->W : -g->W;
        mv->dev[z] -= step;
        mv->dev[y] += step;
    }
    for (uint32_t cur = z;;) {
        const uint32_t r = mv->via[cur], p = mv->par[cur];
        uint32_t s;
        if (g->grow) { /* cur gives a slot of its entry unit to x */
            s = slot_of(g, mv->entry[cur], cur);
            v->owner[s] = (uint16_t)x;
            v->members[cur].slots--;
            v->members[x].slots++;
        } else { /* cur receives: x's slot s0, or p's recorded slot */
            s = r == UINT32_MAX ? s0 : mv->rec_slot[r];
            v->owner[s] = (uint16_t)cur;
            v->members[cur].slots++;
            v->members[r == UINT32_MAX ? x : p].slots--;
        }
        if (r == UINT32_MAX) {
            record(g, s, cur);
            return;
        }
        if (g->grow) { /* p takes its recorded slot back */
            v->owner[mv->rec_slot[r]] = (uint16_t)p;
            v->members[p].slots++;
            v->members[x].slots--;
        }
        mv->rec_slot[r] = s;
        mv->rec_who[r] = cur;
        cur = p;
    }
}

/*
 * Breadth-first search for a chain of trades that lets one more move happen
 * in unit u0 within every band: the move goes to a counterparty in its band
 * there; if its quota is spent, it undoes one of its recorded moves in
 * another unit (staying in its band), where another counterparty takes the
 * move over, and so on until one with quota left, or one that can carry
 * the quota of a partner (see partner()). The multiset of final deviations,
 * and so every global bound, comes out exactly as phase 1 planned. At most DCH__SEARCH members are
 * visited. Returns 1 when a chain was applied.
 */
#define DCH__SEARCH 256u
static int search_once(const engine *g, uint32_t u0, uint32_t s0)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    mv->stamp++;
    mv->qlen = 0;
    const uint16_t *base0 = v->owner + (size_t)u0 * v->spu;
    uint32_t np = count_unit(g, base0, 1);
    uint32_t z = frontier(g, np, UINT32_MAX, UINT32_MAX, u0, DCH__SEARCH);
    clear_unit(g, np);
    for (uint32_t head = 0; z == UINT32_MAX && head < mv->qlen && mv->qlen < DCH__SEARCH;
         head++) {
        const uint32_t k = mv->queue[head];
        for (uint32_t r = 0; r < mv->nrec && z == UINT32_MAX; r++) {
            if (mv->rec_who[r] != k)
                continue;
            const uint32_t u = mv->rec_slot[r] / v->spu;
            if (u == u0 || !can_undo(g, k, held_in_unit(g, u, k)))
                continue;
            np = count_unit(g, v->owner + (size_t)u * v->spu, 1);
            mv->cnt[k] = 0; /* k cannot take its own move over */
            z = frontier(g, np, k, r, u, DCH__SEARCH - mv->qlen);
            clear_unit(g, np);
        }
    }
    if (z == UINT32_MAX)
        return 0;
    apply_chain(g, z, s0);
    return 1;
}

/* A chain that keeps phase 1's final deviations exactly, else one that
 * keeps them within the bounds partner() allows. */
static int search_chain(const engine *g, uint32_t u0, uint32_t s0)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    mv->allow_fit = 0;
    if (search_once(g, u0, s0))
        return 1;
    /* The looser search: with equal weights partner() needs the least and
     * most final count, which the failed search left as they were. */
    mv->allow_fit = 1;
    mv->lo_count = INT64_MAX;
    mv->hi_count = INT64_MIN;
    for (uint32_t id = 0; g->equal && id < v->id_limit; id++) {
        if (v->members[id].weight == 0)
            continue;
        /* x ends with what phase 1 planned */
        const int64_t c = id == g->x ? mv->x_final : final_count(g, id);
        mv->lo_count = c < mv->lo_count ? c : mv->lo_count;
        mv->hi_count = c > mv->hi_count ? c : mv->hi_count;
    }
    return search_once(g, u0, s0);
}

/*
 * Raise: x takes slots in every unit below `limit` (target + slack; x's
 * ceiling, the level plus one, when slack is UINT32_MAX - 1; every slot when
 * it is UINT32_MAX) from the donors present there whose tier is at most
 * max_tier; returns the slots still to take.
 */
static uint32_t take_pass(const engine *g, uint32_t slack, int max_tier, uint32_t left)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    for (uint32_t u = 0; u < v->units && left > 0; u++) {
        const uint32_t limit = slack == UINT32_MAX       ? v->spu
                               : slack == UINT32_MAX - 1 ? mv->level + 1
                                                         : mv->target[u] + slack;
        if (mv->xcnt[u] >= limit)
            continue;
        uint16_t *base = v->owner + (size_t)u * v->spu;
        const uint32_t np = count_unit(g, base, 0);
        const int first = slack == 0 && max_tier == 1;
        if (first)
            if (mv->surveyed)
                tally_forced(g, np, -1);
        while (mv->xcnt[u] < limit && left > 0) {
            uint64_t best_key = UINT64_MAX;
            for (uint32_t k = 0; k < np; k++) {
                const uint32_t id = mv->present[k];
                if (mv->cnt[id] == 0 || mv->quota[id] == 0)
                    continue;
                const int t = tier(g, id, mv->cnt[id]);
                /* A free pick must not spend what later units force. */
                if (t > max_tier || (t == 1 && first && free_quota(g, id) <= 0))
                    continue;
                const uint64_t key = pick_key(g, id, t);
                best_key = key < best_key ? key : best_key;
            }
            if (best_key == UINT64_MAX)
                break;
            const uint32_t best = (uint32_t)(best_key & 0xFFFF);
            uint32_t s = mv->slot[best];
            base[s] = (uint16_t)g->x;
            mv->cnt[best]--;
            mv->quota[best]--;
            record(g, u * v->spu + s, best);
            v->members[best].slots--;
            v->members[g->x].slots++;
            mv->xcnt[u]++;
            left--;
            if (mv->cnt[best] > 0) { /* its next slot, below the one taken */
                while (base[--s] != best) {
                }
                mv->slot[best] = s;
            }
        }
        clear_unit(g, np);
    }
    return left;
}

/*
 * The best receiver holding nothing in the unit, found without changing the
 * heap: a best-first walk down from its root, with the positions still to
 * look at in a small heap of their own (park), stops at the first receiver
 * not present in the unit. Every position it expands holds a present
 * receiver, so park holds at most one more than those (S + 1).
 */
static int park_before(const engine *g, uint32_t a, uint32_t b)
{
    return before_absent(g, g->mv->heap[a], g->mv->heap[b]);
}

static uint32_t best_absent(const engine *g, uint32_t n)
{
    dch__move *mv = g->mv;
    uint32_t *q = mv->park, len = 0;
    if (n > 0)
        q[len++] = 0;
    while (len > 0) {
        const uint32_t p = q[0];
        if (mv->cnt[mv->heap[p]] == 0)
            return mv->heap[p];
        /* Replace the root by p's first child, or by the last entry. */
        const uint32_t c1 = 2 * p + 1, c2 = 2 * p + 2;
        uint32_t i = 0, item = c1 < n ? c1 : q[--len];
        for (;;) { /* sift item down from the root */
            uint32_t c = 2 * i + 1;
            if (c >= len)
                break;
            if (c + 1 < len && park_before(g, q[c + 1], q[c]))
                c++;
            if (!park_before(g, q[c], item))
                break;
            q[i] = q[c];
            i = c;
        }
        if (len > 0)
            q[i] = item;
        if (c2 < n) { /* and sift p's second child up */
            i = len++;
            while (i > 0 && park_before(g, c2, q[(i - 1) / 2])) {
                q[i] = q[(i - 1) / 2];
                i = (i - 1) / 2;
            }
            q[i] = c2;
        }
    }
    return UINT32_MAX;
}

/* The heap of receivers with quota left, ordered by before_absent. */
static uint32_t rebuild_receivers(const engine *g)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < g->mv->npool; k++)
        if (g->mv->quota[g->mv->pool[k]] > 0)
            g->mv->heap[n++] = g->mv->pool[k];
    heapify(g, before_absent, n);
    return n;
}

/*
 * Lowering: x gives slots in every unit above its target, each to the
 * receiver (quota left) most below its per-unit share. `n` receivers with
 * quota are in the heap ordered by before_absent.
 */
static void give_pass(const engine *g, uint32_t n)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    for (uint32_t u = 0; u < v->units && n > 0; u++) {
        if (mv->xcnt[u] <= mv->target[u])
            continue;
        uint16_t *base = v->owner + (size_t)u * v->spu;
        uint32_t np = count_unit(g, base, 1);
        if (mv->surveyed)
            tally_forced(g, np, -1);
        for (uint32_t i = 0; i < v->spu && mv->xcnt[u] > mv->target[u]; i++) {
            if (base[i] != g->x)
                continue;
            uint32_t best = best_absent(g, n);
            uint64_t best_key = best == UINT32_MAX ? UINT64_MAX
                                                   : pick_key(g, best, tier(g, best, 0));
            for (uint32_t k = 0; k < np; k++) {
                const uint32_t id = mv->present[k];
                if (mv->quota[id] == 0)
                    continue;
                const uint64_t key = pick_key(g, id, tier(g, id, mv->cnt[id]));
                best_key = key < best_key ? key : best_key;
            }
            best = best_key == UINT64_MAX ? UINT32_MAX : (uint32_t)(best_key & 0xFFFF);
            if (tier(g, best, mv->cnt[best]) == 2) {
                /* No receiver with quota fits here: trade moves along a
                 * chain, or else leave the band. */
                clear_unit(g, np);
                const int chained = search_chain(g, u, u * v->spu + i);
                np = count_unit(g, base, 1);
                if (chained) {
                    mv->xcnt[u]--;
                    n = rebuild_receivers(g);
                    continue;
                }
            }
            base[i] = (uint16_t)best;
            if (mv->cnt[best]++ == 0)
                mv->present[np++] = best;
            v->members[best].slots++;
            v->members[g->x].slots--;
            mv->xcnt[u]--;
            record(g, u * v->spu + i, best);
            mv->quota[best]--;
            const uint32_t at = mv->slot[best];
            if (mv->quota[best] == 0)
                n = heap_remove(g, before_absent, n, at);
            else
                sift_down(g, before_absent, n, at);
        }
        clear_unit(g, np);
    }
}

/* Phase 2: carry the quotas in slots chosen unit by unit. */
static void place(const engine *g, uint32_t moved)
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
            while (left > 0 && mv->xcnt[u] < mv->level && search_chain(g, u, 0)) {
                mv->xcnt[u]++;
                left--;
            }
        if (left > 0)
            left = take_pass(g, UINT32_MAX - 1, 1, left);
        for (uint32_t u = 0; u < v->units && left > 0; u++)
            while (left > 0 && mv->xcnt[u] < mv->level + 1 && search_chain(g, u, 0)) {
                mv->xcnt[u]++;
                left--;
            }
        if (left > 0)
            left = take_pass(g, 0, 2, left);
        if (left > 0)
            (void)take_pass(g, UINT32_MAX, 2, left);
        return;
    }
    give_pass(g, rebuild_receivers(g));
}

/* ---- Repair ------------------------------------------------------------ */

/*
 * The backstop that makes the global bound unconditional: while some member
 * is 2 or more slots from its share, move one slot from the member furthest
 * above its share to the member of positive weight furthest below (ties to
 * the lower id), in the unit where the first most outnumbers the second.
 * Each move lowers the sum of squared deviations, so the loop ends, and it
 * ends only inside the bound (NOTES.md). These are the only moves between
 * two members other than x; phase 1 never needs them with equal weights.
 */
static void repair(const engine *g)
{
    const dch__map_view *v = g->v;
    for (;;) {
        uint32_t a = UINT32_MAX, b = UINT32_MAX;
        int64_t da = 0, db = 0;
        for (uint32_t id = 0; id < v->id_limit; id++) {
            if (v->members[id].weight == 0)
                continue;
            const int64_t d = deviation(g, id);
            if (a == UINT32_MAX || d > da) {
                a = id;
                da = d;
            }
            if (b == UINT32_MAX || d < db) {
                b = id;
                db = d;
            }
        }
        if (a == UINT32_MAX || (da < 2 * g->W && -db < 2 * g->W))
            return;
        uint32_t best_u = 0;
        int64_t best = INT64_MIN;
        for (uint32_t u = 0; u < v->units; u++) {
            const uint16_t *o = v->owner + (size_t)u * v->spu;
            int64_t ca = 0, cb = 0;
            for (uint32_t i = 0; i < v->spu; i++) {
                ca += o[i] == a;
                cb += o[i] == b;
            }
            if (ca > 0 && ca - cb > best) {
                best = ca - cb;
                best_u = u;
            }
        }
        v->owner[slot_of(g, best_u, a)] = (uint16_t)b;
        v->members[a].slots--;
        v->members[b].slots++;
        g->mv->dev[a] -= g->W;
        g->mv->dev[b] += g->W;
    }
}

void dch__move_apply(dch__move *mv, const dch__map_view *v, uint32_t x,
                     uint32_t w)
{
    engine g;
    g.v = v;
    g.mv = mv;
    g.x = x;
    g.grow = w > v->members[x].weight;
    v->members[x].weight = w;
    int64_t W = 0;
    for (uint32_t id = 0; id < v->id_limit; id++)
        W += v->members[id].weight;
    g.W = W;
    g.equal = 1;
    for (uint32_t id = 0, first = 0; id < v->id_limit; id++) {
        const uint32_t wi = v->members[id].weight;
        if (wi > 0 && first == 0)
            first = wi;
        g.equal &= wi == 0 || wi == first;
        mv->dev[id] = (int64_t)v->members[id].slots * W - (int64_t)v->slots * wi;
    }

    mv->nrec = 0;
    const uint32_t moved = plan_counts(&g);
    mv->x_final = g.grow ? (int64_t)v->members[x].slots + moved
                         : (int64_t)v->members[x].slots - moved;
    if (moved > 0)
        place(&g, moved);
    mv->dev[x] = (int64_t)v->members[x].slots * W - (int64_t)v->slots * w;
    repair(&g);
}
