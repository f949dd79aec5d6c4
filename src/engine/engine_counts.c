/* SPDX-License-Identifier: MIT */
/*
 * Stage 1 (docs/placement.md, "Stage 1: counts"): with W the new weight
 * sum, on a raise x takes one slot at a time from the other member of
 * greatest deviation while that deviation exceeds x's by more than one
 * slot; on a lowering x gives one slot at a time to the member of least
 * deviation while x's exceeds it by more than one slot (every slot, when
 * x's weight becomes 0). The result is a quota per counterparty. This stage
 * alone decides every count, so the global bounds of map.h are properties
 * of this rule.
 */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

/* The most picks a raise can make: x's deviation ex rises a slot (W) a
 * pick and stops within a slot of the greatest, top, which no pick raises
 * (candidates() and dch__move_bound share this bound). */
uint64_t dch__raise_picks(int64_t top, int64_t ex, int64_t W)
{
    return top > ex ? (uint64_t)((top - ex) / W) + 1 : 0;
}

static int before_global(const dch__engine *g, uint32_t a, uint32_t b)
{
    const int64_t da = dch__deviation(g, a), db = dch__deviation(g, b);
    if (da != db)
        return g->grow ? da > db : da < db;
    return a < b;
}

/*
 * The counterparties stage 1 can pick, into heap[0 .. n). A member ranked
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
        k = dch__raise_picks(top, ex, g->W);
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
 * How many more picks in a row go to top, just picked and the only member
 * in the queue, with x's deviation ex and `moved` slots planned: while the
 * stop rule allows a pick, top still comes before next (the first of a[]
 * not picked yet, or UINT32_MAX) and, on a raise, top still holds a slot once
 * its quota is taken. Each pick moves dev[top] and ex a slot (W) apart, so
 * every bound is one division (docs/placement.md, "Stage 1: counts"): the
 * picks are those the one-at-a-time rule would make, counted at once.
 */
static uint64_t repeats(const dch__engine *g, uint32_t top, int64_t ex, uint32_t next,
                        uint32_t moved)
{
    const dch__map_view *v = g->v;
    const int64_t W = g->W, d = g->mv->dev[top];
    /* gap: how far the stop rule is from stopping, as (d - ex) - W on a
     * raise, (ex - d) - W on a lowering; each pick closes it by 2W. */
    const int64_t gap = g->grow ? d - ex - W : ex - d - W;
    uint64_t k = UINT64_MAX;
    if (g->grow || v->members[g->x].weight > 0) {
        if (gap <= 0)
            return 0;
        k = (uint64_t)((gap - 1) / (2 * W)) + 1;
    }
    const uint64_t room = g->grow ? (uint64_t)v->members[top].slots - g->mv->quota[top]
                                  : (uint64_t)v->members[g->x].slots - moved;
    k = room < k ? room : k;
    if (next != UINT32_MAX) {
        /* top comes first while its lead over next is positive, or zero
         * with the lower id; each pick shrinks the lead by W */
        const int64_t lead = g->grow ? d - g->mv->dev[next] : g->mv->dev[next] - d;
        const uint64_t tie = top < next;
        const uint64_t ahead = lead <= 0 ? (lead == 0 ? tie : 0)
                                         : (uint64_t)((lead - 1) / W) + 1 + (lead % W == 0 ? tie : 0);
        k = ahead < k ? ahead : k;
    }
    return k;
}

/*
 * Quotas of the counterparties; returns how many slots move. A raise moves
 * while the top donor's deviation exceeds x's by more than one slot (W in
 * these units); a lowering while x's exceeds the bottom receiver's by more
 * than one slot, or always when x's new weight is 0.
 */
uint32_t dch__plan_counts(const dch__engine *g)
{
    const dch__map_view *v = g->v;
    uint32_t *a = g->mv->heap, *q = g->mv->queue, *quota = g->mv->quota;
    const uint32_t x = g->x;
    /* x's deviation is kept here, not in dev[x], which stays x's value
     * before the picks until dch__move_apply sets it after stage 4; x is
     * never in pool or present, so no stage reads dev[x] meanwhile. */
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
        /* A raise picks a donor again only while it still holds a slot once
         * its quota so far is taken (docs/placement.md, "Stage 1: counts"). */
        if (!g->grow || quota[top] < v->members[top].slots) {
            const uint32_t tail = qh + qn; /* < 2n: a wrap, not a division */
            q[tail >= n ? tail - n : tail] = top;
            qn++;
        }
        /* Alone in the queue, top is picked again and again while it comes
         * before a[ai]: those picks are made at once. */
        if (qn == 1 && q[qh] == top) {
            const uint64_t k = repeats(g, top, ex, ai < n ? a[ai] : UINT32_MAX, moved);
            const int64_t step = (int64_t)k * g->W;
            g->mv->dev[top] += g->grow ? -step : step;
            ex += g->grow ? step : -step;
            quota[top] += (uint32_t)k;
            moved += (uint32_t)k;
            if (g->grow && quota[top] == v->members[top].slots)
                qn = 0;
        }
    }
    return moved;
}
