/* SPDX-License-Identifier: MIT */
/*
 * The replica engine's step 1 (map_replicas.c has the rule): placing the
 * copies x takes on a raise or gives on a lowering, slot by slot, under
 * the diversity caps, with the counts planned by the single-copy rule.
 */
#include "map_replicas.h"

#include <stdlib.h>
#include <string.h>

/* ---- Heaps of ids by deviation ----------------------------------------- */

static void sift_down(const dch__rep_call *e, int max, uint32_t n, uint32_t i)
{
    uint32_t *h = e->rm->heap;
    for (;;) {
        uint32_t best = i;
        const uint32_t l = 2 * i + 1, r = l + 1;
        if (l < n && rep_first(e, max, h[l], h[best]))
            best = l;
        if (r < n && rep_first(e, max, h[r], h[best]))
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
static uint32_t build_heap(const dch__rep_call *e, int max)
{
    uint32_t n = 0;
    for (uint32_t id = 0; id < e->v->id_limit; id++)
        if (id != e->x && rep_positive(e, id) && !e->rm->stuck[id])
            e->rm->heap[n++] = id;
    for (uint32_t i = n / 2; i-- > 0;)
        sift_down(e, max, n, i);
    return n;
}

/* ---- Raise: x takes copies --------------------------------------------- */

/*
 * One step of a raise's plan from the heap of n donors: the top donor gives
 * x one copy, or leaves the heap when it is down to what it keeps. The
 * heap's new size.
 */
static uint32_t take_one(const dch__rep_call *e, uint32_t n, uint64_t *total)
{
    dch__rep_move *rm = e->rm;
    const uint32_t d = rm->heap[0];
    if (e->v->held[d] - rm->quota[d] <= rep_keep(e, d)) {
        rm->heap[0] = rm->heap[--n]; /* d keeps the rest */
    } else {
        rm->quota[d]++;
        rm->dev[d] -= DCH__REP_ONE;
        rm->dev[e->x] += DCH__REP_ONE;
        (*total)++;
    }
    sift_down(e, 1, n, 0);
    return n;
}

/* Copies x takes from the heap's members by the rule; their quotas. */
static uint64_t plan_raise(const dch__rep_call *e)
{
    const dch__rep_move *rm = e->rm;
    uint32_t n = build_heap(e, 1);
    uint64_t total = 0;
    const uint64_t room = e->v->slots - e->v->held[e->x];
    while (n > 0 && total < room && rm->dev[rm->heap[0]] > rm->dev[e->x] + DCH__REP_ONE)
        n = take_one(e, n, &total);
    /* x may end the rule short of what its primaries need (its copy share
     * close to its primary share, as in a zone with nearly all the
     * weight): it takes on from the members with copies to spare. */
    const uint32_t need = rep_keep(e, e->x);
    if (e->v->held[e->x] + total >= need)
        return total;
    n = build_heap(e, 1);
    while (n > 0 && e->v->held[e->x] + total < need && total < room)
        n = take_one(e, n, &total);
    return total;
}

/*
 * How many slots two members holding ca and cb copies share on average
 * when copies are spread without bias: ca * (n - 1) * cb / (n*P - max),
 * rounded up (the smaller member's co-holders are the others' copies in
 * proportion). With equal counts c this is c * (n - 1) / (M - 1).
 */
static uint64_t pair_mean(const dch__rep_call *e, uint64_t ca, uint64_t cb)
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
static void count_donor_room(const dch__rep_call *e)
{
    dch__rep_move *rm = e->rm;
    for (uint32_t id = 0; id < e->v->id_limit; id++)
        rm->avail[id] = 0;
    for (uint32_t s = 0; s < e->v->slots; s++) {
        const uint16_t *b = rep_block(e, s);
        if (rep_place_of(b, e->n, e->x) >= 0)
            continue;
        for (uint32_t i = 0; i < e->n; i++)
            if (rm->quota[b[i]] > 0 && rep_zones_ok(e, b, e->n, i, e->x))
                rm->avail[b[i]]++;
    }
}

void dch__rep_grow(const dch__rep_call *e)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    const uint32_t n = e->n, P = v->slots, x = e->x;
    for (uint32_t id = 0; id < v->id_limit; id++) {
        rm->pair[id] = rm->quota[id] = rm->stuck[id] = 0;
        rm->from[id] = UINT32_MAX; /* no pools */
    }
    for (uint32_t s = 0; s < P && v->held[x] > 0; s++) {
        const uint16_t *b = rep_block(e, s);
        if (rep_place_of(b, n, x) >= 0)
            for (uint32_t k = 0; k < n; k++)
                rm->pair[b[k]] += b[k] != x;
    }
    const int rows = dch__rep_build_rows(e, 1);
    for (;;) {
        uint64_t left = plan_raise(e);
        const uint64_t total = left;
        if (left == 0)
            break;
        /* cap[]: every member's count once the planned copies moved. */
        for (uint32_t id = 0; id < v->id_limit; id++)
            rm->cap[id] = v->held[id] - rm->quota[id];
        const uint64_t fx = v->held[x] + left;
        /* Passes under looser and looser caps: first only where no member
         * would share more than about the mean of x's slots, at last
         * anywhere. */
        count_donor_room(e);
        for (uint32_t pass = 0; pass < PASSES && left > 0; pass++) {
            const uint32_t slack = slack_of(pass);
            for (uint32_t k = 0; k < P && left > 0; k++) {
                const uint32_t s = rep_visit(e, k);
                uint16_t *b = rep_block(e, s);
                if (rep_place_of(b, n, x) >= 0)
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
                    if (rm->quota[d] == 0 || !rep_zones_ok(e, b, n, i, x))
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
                        const int64_t over = (int64_t)*rep_pair_cell(e, d, b[j]) - (int64_t)mean;
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
                    if (rm->quota[b[i]] > 0 && rep_zones_ok(e, b, n, i, x))
                        rm->avail[b[i]]--;
                rm->quota[d]--;
                rep_record(e, s, (uint32_t)best, d);
                if (rows)
                    dch__rep_count_pairs(e, b, (uint32_t)best, 0);
                rep_trade(e, s, (uint32_t)best, x);
                for (uint32_t j = 0; j < n; j++)
                    rm->pair[b[j]] += b[j] != x;
                left--;
            }
        }
        for (uint32_t id = 0; id < v->id_limit && left > 0; id++)
            while (rm->quota[id] > 0 && dch__rep_augment(e, 1, id)) {
                rm->quota[id]--;
                left--;
            }
        if (left == 0)
            continue; /* plan again: the rule may want more */
        /* Members that found no slot give back their quota and sit out. */
        for (uint32_t id = 0; id < v->id_limit; id++)
            if (rm->quota[id] > 0) {
                rm->dev[id] += (int64_t)rm->quota[id] * DCH__REP_ONE;
                rm->dev[x] -= (int64_t)rm->quota[id] * DCH__REP_ONE;
                rm->quota[id] = 0;
                rm->stuck[id] = 1;
            }
    }
    dch__rep_relieve_pairs(e);
}

/* ---- Lowering: x gives copies ------------------------------------------ */

/* Whether receiver r has its promise-6 cap of copies, planned and received
 * (rm->most; never without a cap). */
static int lower_full(const dch__rep_call *e, uint32_t r)
{
    const dch__rep_move *rm = e->rm;
    return rm->most != 0 && e->v->held[r] + rm->quota[r] - rm->pair[r] >= rm->most;
}

/* Copies x gives to the heap's members by the rule (all of them when its
 * weight becomes 0); their quotas. No member is planned past its cap. */
static uint64_t plan_lower(const dch__rep_call *e, uint64_t held)
{
    dch__rep_move *rm = e->rm;
    uint32_t n = build_heap(e, 0);
    uint64_t total = 0;
    const int all = e->v->members[e->x].weight == 0;
    const uint32_t keep = rep_keep(e, e->x);
    /* First the members short of what their primaries need (a lowering
     * raises every other member's primary share), furthest below first. */
    for (uint32_t i = 0; i < n && total + keep < held; i++) {
        const uint32_t r = rm->heap[i];
        const uint32_t need = rep_keep(e, r);
        while (e->v->held[r] + rm->quota[r] < need && total + keep < held && !lower_full(e, r)) {
            rm->quota[r]++;
            rm->dev[r] += DCH__REP_ONE;
            rm->dev[e->x] -= DCH__REP_ONE;
            total++;
        }
    }
    n = build_heap(e, 0);
    while (n > 0 && total + keep < held) {
        const uint32_t r = rm->heap[0];
        if (!all && rm->dev[e->x] <= rm->dev[r] + DCH__REP_ONE)
            break;
        if (lower_full(e, r)) {
            rm->heap[0] = rm->heap[--n]; /* r has its cap */
        } else {
            rm->quota[r]++;
            rm->dev[r] += DCH__REP_ONE;
            rm->dev[e->x] -= DCH__REP_ONE;
            total++;
        }
        sift_down(e, 0, n, 0);
    }
    return total;
}

/* Whether r may take x's copy at position k of slot b. */
static int may_receive(const dch__rep_call *e, const uint16_t *b, uint32_t k, uint32_t r)
{
    return rep_place_of(b, e->n, r) < 0 && rep_zones_ok(e, b, e->n, k, r);
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
static void make_pools(const dch__rep_call *e)
{
    dch__rep_move *rm = e->rm;
    const uint32_t L = e->v->id_limit;
    rm->npools = 0;
    for (uint32_t id = 0; id < L; id++)
        rm->from[id] = UINT32_MAX;
    for (uint32_t id = 0; id < L; id++) {
        if (rm->quota[id] != 1)
            continue;
        const int64_t pre = rm->dev[id] - DCH__REP_ONE;
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
        if (id == e->x || !rep_positive(e, id) || rm->stuck[id] || rm->quota[id] > 1 ||
            (rm->quota[id] == 0 && lower_full(e, id)))
            continue;
        const int64_t pre = rm->dev[id] - (int64_t)rm->quota[id] * DCH__REP_ONE;
        for (uint32_t p = 0; p < rm->npools; p++)
            if (rm->pool_pre[p] == pre) {
                rm->from[id] = p;
                if (rm->quota[id] == 1) {
                    rm->quota[id] = 0;
                    rm->dev[id] -= DCH__REP_ONE;
                    rm->pool_budget[p]++;
                }
            }
    }
}

/* Pool copies nobody took go back to the first members of each pool, as
 * the plan had them. */
static void unpool(const dch__rep_call *e)
{
    dch__rep_move *rm = e->rm;
    for (uint32_t id = 0; id < e->v->id_limit; id++) {
        const uint32_t p = rm->from[id];
        if (p != UINT32_MAX && rm->pool_budget[p] > 0) {
            rm->pool_budget[p]--;
            rm->quota[id] = 1;
            rm->dev[id] += DCH__REP_ONE;
        }
        rm->from[id] = UINT32_MAX;
    }
    rm->npools = 0;
}

/*
 * Where x was a primary, its place goes to one of the slot's copies picked
 * by a key of (slot, member) rather than to the member that took x's copy:
 * a leaving member's primaries then spread over all its co-holders, not
 * over the few that could take its copies (with as many zones as copies,
 * only members of its own zone). Counts are balanced afterwards anyway.
 */
static void hand_over_primaries(const dch__rep_call *e)
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

/*
 * Promise 6's cap for a removal: while every member of positive weight has
 * the same weight and a zone of its own, no survivor may receive more than
 * 1.25 times the mean plus 2 of x's copies, floor((5c + 8M) / 4M) for c
 * copies over M survivors. 0 (no cap) otherwise.
 */
static uint32_t removal_cap(const dch__rep_call *e)
{
    const dch__rep_view *v = e->v;
    if (v->members[e->x].weight != 0 || e->M == 0 || e->zones != e->M)
        return 0;
    uint32_t weight = 0;
    for (uint32_t id = 0; id < v->id_limit; id++) {
        if (!rep_positive(e, id))
            continue;
        if (weight != 0 && v->members[id].weight != weight)
            return 0;
        weight = v->members[id].weight;
    }
    const uint64_t c = v->held[e->x], M = e->M;
    return (uint32_t)((5 * c + 8 * M) / (4 * M));
}

void dch__rep_shrink(const dch__rep_call *e)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    const uint32_t n = e->n, P = v->slots, x = e->x;
    for (uint32_t id = 0; id < v->id_limit; id++) {
        rm->quota[id] = rm->stuck[id] = 0;
        rm->pair[id] = v->held[id];
    }
    rm->most = removal_cap(e);
    const int rows = dch__rep_build_rows(e, 0);
    for (;;) {
        uint64_t left = plan_lower(e, v->held[x]);
        if (left == 0)
            break;
        /* The receivers with quota or in a pool, in queue[], and their
         * counts once the plan is carried (for the diversity caps). */
        for (uint32_t id = 0; id < v->id_limit; id++)
            rm->cap[id] = v->held[id] + rm->quota[id];
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
            const uint16_t *b = rep_block(e, s);
            const int at = rep_place_of(b, n, x);
            for (uint32_t i = 0; at >= 0 && i < np; i++)
                if (may_receive(e, b, (uint32_t)at, rm->queue[i]))
                    rm->avail[rm->queue[i]]++;
        }
        for (uint32_t pass = first_pass; pass < PASSES && left > 0; pass++) {
            const uint32_t slack = slack_of(pass);
            for (uint32_t k = 0; k < P && left > 0; k++) {
                const uint32_t s = rep_visit(e, k);
                const uint16_t *b = rep_block(e, s);
                const int at = rep_place_of(b, n, x);
                if (at < 0)
                    continue;
                /* The first pass spreads x's gifts over the whole order. */
                if (pass == first_pass && (total - left) * P >= (uint64_t)(k + 1) * total)
                    continue;
                uint32_t best = DCH__REP_NONE;
                for (uint32_t i = 0; i < np; i++) {
                    const uint32_t r = rm->queue[i];
                    if (wants(rm, r) == 0 || !may_receive(e, b, (uint32_t)at, r))
                        continue;
                    int crowded = 0;
                    for (uint32_t j = 0; rows && j < n; j++) {
                        if (j == (uint32_t)at)
                            continue;
                        const uint32_t *c = rep_pair_cell(e, b[j], r);
                        const uint64_t cap = pair_mean(e, rm->cap[b[j]], rm->cap[r]);
                        crowded |= c != NULL && *c >= cap + slack;
                    }
                    if (!crowded && (best == DCH__REP_NONE || urgent(rm, r, best)))
                        best = r;
                }
                if (best == DCH__REP_NONE)
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
                    rm->dev[best] += DCH__REP_ONE;
                }
                rep_record(e, s, (uint32_t)at, x);
                rep_trade(e, s, (uint32_t)at, best);
                if (rows)
                    dch__rep_count_pairs(e, b, (uint32_t)at, 1);
                left--;
            }
        }
        unpool(e);
        for (uint32_t i = 0; i < np && left > 0; i++)
            while (rm->quota[rm->queue[i]] > 0 && dch__rep_augment(e, 0, rm->queue[i])) {
                rm->quota[rm->queue[i]]--;
                left--;
            }
        if (left == 0)
            continue;
        for (uint32_t i = 0; i < np; i++) {
            const uint32_t r = rm->queue[i];
            if (rm->quota[r] > 0) {
                rm->dev[r] -= (int64_t)rm->quota[r] * DCH__REP_ONE;
                rm->dev[x] += (int64_t)rm->quota[r] * DCH__REP_ONE;
                rm->quota[r] = 0;
                rm->stuck[r] = 1;
            }
        }
    }
    if (v->members[x].weight > 0 || v->held[x] == 0) {
        if (rows)
            dch__rep_split_pairs(e);
        hand_over_primaries(e);
        return;
    }
    /* Leaving, with copies no planned receiver could take: each goes to the
     * member furthest below its share that the slot allows (one always
     * does: NOTES.md, "Replicas"). */
    for (uint32_t s = 0; s < P; s++) {
        const uint16_t *b = rep_block(e, s);
        const int at = rep_place_of(b, n, x);
        if (at < 0)
            continue;
        uint32_t best = DCH__REP_NONE;
        for (uint32_t r = 0; r < v->id_limit; r++)
            if (r != x && rep_positive(e, r) && may_receive(e, b, (uint32_t)at, r) &&
                (best == DCH__REP_NONE || lower_full(e, best) > lower_full(e, r) ||
                 (lower_full(e, best) == lower_full(e, r) && rep_first(e, 0, r, best))))
                best = r;
        if (best != DCH__REP_NONE) {
            rm->dev[best] += DCH__REP_ONE;
            rep_record(e, s, (uint32_t)at, x);
            rep_trade(e, s, (uint32_t)at, best);
        }
    }
    if (rows)
        dch__rep_split_pairs(e);
    hand_over_primaries(e);
}

