/* SPDX-License-Identifier: MIT */
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
 * This file holds phase 1, the heaps and the repair; phase 2 is in
 * map_engine_slots.c and its chain search in map_engine_chains.c.
 *
 * Deviations are compared as integers, held*W - P*w (below 2^57 in size),
 * and every tie falls to the lower id, so the table is a pure function of
 * the config and the call sequence.
 */
#include "map_engine.h"

#include "dch/error.h"

#include "alloc.h"
#include "map_internal.h"

#include <stdlib.h>
#include <string.h>

int dch__move_alloc(dch__move *mv, const dch_allocator *a, uint32_t id_limit,
                    uint32_t units, uint32_t spu, uint32_t max_moves)
{
    /* One block of 32-bit words: a deviation and two keys (two words each)
     * and 16 arrays per id, the chain search's table (4 words per id), 2 per
     * unit, 2 per slot of a unit (and one), 3 per move it can make. Sizes
     * stay far below SIZE_MAX (ids < 2^16, units and moves <= 2^24). */
    const size_t n = 26 * (size_t)id_limit + 2 * (size_t)units + 2 * (size_t)spu + 1 +
                     3 * (size_t)(max_moves ? max_moves : 1);
    uint32_t *p = dch__alloc_array(a, n, sizeof *p);
    memset(mv, 0, sizeof *mv);
    if (p == NULL)
        return DCH_ENOMEM;
    mv->alloc = a;
    mv->dev = (int64_t *)(void *)p; /* the block is aligned for any type */
    p += 2 * (size_t)id_limit;
    mv->key = (uint64_t *)(void *)p;
    p += 2 * (size_t)id_limit;
    mv->ukey = (uint64_t *)(void *)p;
    p += 2 * (size_t)id_limit;
    uint32_t **per_id[] = {&mv->quota, &mv->heap,  &mv->cnt,   &mv->slot,    &mv->forced,
                           &mv->par,   &mv->via,   &mv->entry, &mv->mark,    &mv->queue,
                           &mv->pool,  &mv->band_lo, &mv->band_hi, &mv->rec_head, &mv->rec_tail, &mv->uheap};
    for (size_t i = 0; i < sizeof per_id / sizeof per_id[0]; i++, p += id_limit)
        *per_id[i] = p;
    mv->table = p;
    p += 4 * (size_t)id_limit;
    mv->xcnt = p;
    mv->target = p + units;
    mv->present = p + 2 * (size_t)units;
    mv->xs = mv->present + spu;
    mv->rec_slot = mv->xs + spu + 1;
    mv->rec_who = mv->rec_slot + (max_moves ? max_moves : 1);
    mv->rec_next = mv->rec_who + (max_moves ? max_moves : 1);
    memset(mv->quota, 0, (size_t)id_limit * sizeof *mv->quota);
    memset(mv->cnt, 0, (size_t)id_limit * sizeof *mv->cnt);
    memset(mv->mark, 0, (size_t)id_limit * sizeof *mv->mark);
    memset(mv->rec_head, 0xFF, (size_t)id_limit * sizeof *mv->rec_head);
    return DCH_OK;
}

/* The most picks a raise can make: x's deviation ex rises a slot (W) a
 * pick and stops within a slot of the greatest, top, which no pick raises
 * (candidates() and dch__move_bound share this bound). */
static uint64_t raise_picks(int64_t top, int64_t ex, int64_t W)
{
    return top > ex ? (uint64_t)((top - ex) / W) + 1 : 0;
}

uint32_t dch__move_bound(const dch__member *members, uint32_t id_limit, uint32_t slots,
                         uint32_t x, uint32_t w, uint32_t total)
{
    const uint32_t held = x < id_limit ? members[x].slots : 0;
    const uint32_t before = x < id_limit ? members[x].weight : 0;
    if (w <= before)
        return held;
    /* candidates()'s k with x's new weight: the picks of a raise. */
    const int64_t W = (int64_t)total - before + w;
    const int64_t ex = (int64_t)held * W - (int64_t)slots * w;
    int64_t top = INT64_MIN;
    for (uint32_t id = 0; id < id_limit; id++) {
        const int64_t d = (int64_t)members[id].slots * W - (int64_t)slots * members[id].weight;
        if (id != x && members[id].slots > 0 && d > top)
            top = d;
    }
    const uint64_t k = raise_picks(top, ex, W);
    return k < slots - held ? (uint32_t)k : slots - held;
}

void dch__move_release(dch__move *mv)
{
    dch__free(mv->alloc, mv->dev); /* the block */
    memset(mv, 0, sizeof *mv);
}


_Thread_local int64_t dch__search_work;

static int before_global(const dch__engine *g, uint32_t a, uint32_t b)
{
    const int64_t da = dch__deviation(g, a), db = dch__deviation(g, b);
    if (da != db)
        return g->grow ? da > db : da < db;
    return a < b;
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
static int after_global(const dch__engine *g, uint32_t a, uint32_t b)
{
    return before_global(g, b, a);
}

static int id_order(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static uint32_t candidates(const dch__engine *g, int64_t ex)
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
        k = raise_picks(top, ex, g->W);
    }
    uint32_t n = 0;
    for (uint32_t id = 0; id < v->id_limit && k > 0; id++) {
        if (id == x || (g->grow ? v->members[id].slots == 0 : v->members[id].weight == 0))
            continue;
        if (n < k) {
            h[n] = id;
            dch__sift_up(g, after_global, n++);
        } else if (before_global(g, id, h[0])) {
            h[0] = id;
            dch__sift_down(g, after_global, n, 0);
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
static uint32_t plan_counts(const dch__engine *g)
{
    const dch__map_view *v = g->v;
    uint32_t *a = g->mv->heap, *q = g->mv->queue, *quota = g->mv->quota;
    const uint32_t x = g->x;
    int64_t ex = (int64_t)v->members[x].slots * g->W - (int64_t)v->slots * v->members[x].weight;
    const uint32_t n = candidates(g, ex);
    /* partner()'s pool: the candidates (every member that can get a quota),
     * in id order. */
    memcpy(g->mv->pool, a, (size_t)n * sizeof *a);
    qsort(g->mv->pool, n, sizeof *a, id_order);
    g->mv->npool = n;
    /* candidates() left a heap whose root comes last: sorting it down puts
     * a[0 .. n) in before_global order. */
    for (uint32_t end = n; end > 1;) {
        const uint32_t last = a[0];
        a[0] = a[--end];
        a[end] = last;
        dch__sift_down(g, after_global, end, 0);
    }
    /* Each pick moves its member's deviation by one slot, the same step for
     * every member, so the members picked, in the order picked and with
     * their new deviations, are themselves in before_global order: the next
     * pick is the first of a[] (not picked yet) or of the queue q[] (picked
     * before, and not spent), and each pick costs O(1). */
    uint32_t ai = 0, qh = 0, qn = 0, moved = 0;
    for (;;) {
        uint32_t top;
        const int queued = qn > 0 && (ai == n || before_global(g, q[qh], a[ai]));
        if (queued)
            top = q[qh];
        else if (ai < n)
            top = a[ai];
        else
            break;
        if (g->grow) {
            if (dch__deviation(g, top) - ex <= g->W)
                break;
            g->mv->dev[top] -= g->W;
            ex += g->W;
        } else {
            if (moved == v->members[x].slots ||
                (v->members[x].weight > 0 && ex - dch__deviation(g, top) <= g->W))
                break;
            g->mv->dev[top] += g->W;
            ex -= g->W;
        }
        quota[top]++;
        moved++;
        if (queued) {
            qh = qh + 1 == n ? 0 : qh + 1;
            qn--;
        } else {
            ai++;
        }
        if (!g->grow || quota[top] < v->members[top].slots) {
            const uint32_t tail = qh + qn; /* < 2n: a wrap, not a division */
            q[tail >= n ? tail - n : tail] = top;
            qn++;
        }
    }
    return moved;
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
static void repair(const dch__engine *g)
{
    const dch__map_view *v = g->v;
    for (;;) {
        uint32_t a = UINT32_MAX, b = UINT32_MAX;
        int64_t da = 0, db = 0;
        for (uint32_t id = 0; id < v->id_limit; id++) {
            if (v->members[id].weight == 0)
                continue;
            const int64_t d = dch__deviation(g, id);
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
            const int64_t ca = dch__count_of(o, v->spu, a);
            if (ca == 0 || ca <= best) /* ca - cb <= ca: b's count cannot win */
                continue;
            const int64_t cb = dch__count_of(o, v->spu, b);
            if (ca - cb > best) {
                best = ca - cb;
                best_u = u;
            }
        }
        v->owner[dch__slot_of(g, best_u, a)] = (uint16_t)b;
        v->members[a].slots--;
        v->members[b].slots++;
        g->mv->dev[a] -= g->W;
        g->mv->dev[b] += g->W;
    }
}

void dch__move_apply(dch__move *mv, const dch__map_view *v, uint32_t x,
                     uint32_t w)
{
    dch__engine g;
    g.v = v;
    g.mv = mv;
    g.x = x;
    g.grow = w > v->members[x].weight;
    const int64_t W = (int64_t)v->total_weight - v->members[x].weight + w;
    v->members[x].weight = w;
    g.W = W;
    g.equal = 1;
    for (uint32_t id = 0, first = 0; id < v->id_limit; id++) {
        const uint32_t wi = v->members[id].weight;
        first = first == 0 ? wi : first;
        g.equal &= wi == 0 || wi == first;
        mv->dev[id] = (int64_t)v->members[id].slots * W - (int64_t)v->slots * wi;
    }

    mv->nrec = 0;
    const int64_t budget = DCH__SEARCH_BUDGET * ((int64_t)v->slots + v->id_limit) + DCH__SEARCH_BASE;
    mv->budget = budget;
    const uint32_t moved = plan_counts(&g);
    mv->x_final = g.grow ? (int64_t)v->members[x].slots + moved
                         : (int64_t)v->members[x].slots - moved;
    if (moved > 0)
        dch__place(&g, moved);
    mv->dev[x] = (int64_t)v->members[x].slots * W - (int64_t)v->slots * w;
    dch__search_work = budget - mv->budget;
    if (!g.equal) /* with equal weights phase 1 keeps the bound (NOTES.md) */
        repair(&g);
}
