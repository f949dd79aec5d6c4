/* SPDX-License-Identifier: MIT */
/*
 * The lowering step (rep_lower.h; docs/replicas.md, "Raise and lowering").
 * Read it beside rep_raise.c: the two have the same shape, plan, room,
 * choose, pass, reroute, sit out, with givers and takers exchanged; a
 * lowering adds
 * pools of tied receivers, promise 6's cap on a removal and, when x
 * leaves, a last resort.
 */
#include "rep_lower.h"

#include "rep_place.h"
#include "rep_reroute.h"
#include "rep_rows.h"

/* ---- Plan ("Raise and lowering": the single-copy rule on copies, keep;
 * "Promise 6's cap") */

/* Whether receiver r has its promise-6 cap of copies, planned and received
 * (rm->most; never without a cap). */
static int lower_full(const dch__rep_call *e, uint32_t r)
{
    const dch__rep_move *rm = e->rm;
    return rm->most != 0 && e->v->held[r] + rm->quota[r] - rm->pair[r] >= rm->most;
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

/* Copies x gives to the heap's members by the rule (all of them when its
 * weight becomes 0); their quotas. No member is planned past its cap. */
static uint64_t lower_plan(const dch__rep_call *e, uint64_t held)
{
    dch__rep_move *rm = e->rm;
    uint32_t n = dch__rep_build_heap(e, 0);
    uint64_t total = 0;
    const int all = e->v->members[e->x].weight == 0;
    const uint32_t keep = dch__rep_keep(e, e->x);
    /* First the members short of what their primaries need (a lowering
     * raises every other member's primary share), in the heap's array
     * order: a min-heap by deviation, so roughly furthest below first, not
     * sorted; it matters only when x's copies run out first. */
    for (uint32_t i = 0; i < n && total + keep < held; i++) {
        const uint32_t r = rm->heap[i];
        const uint32_t need = dch__rep_keep(e, r);
        while (e->v->held[r] + rm->quota[r] < need && total + keep < held && !lower_full(e, r)) {
            rm->quota[r]++;
            rm->dev[r] += DCH__REP_ONE;
            rm->dev[e->x] -= DCH__REP_ONE;
            total++;
        }
    }
    n = dch__rep_build_heap(e, 0);
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
        dch__rep_sift_down(e, 0, n, 0);
    }
    return total;
}

/* ---- Pools of tied receivers ("Pools of tied receivers") ---------------- */

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

/* ---- Room: x's slots each receiver may still take ----------------------- */

static void lower_room(const dch__rep_call *e, uint32_t np)
{
    dch__rep_move *rm = e->rm;
    for (uint32_t i = 0; i < np; i++)
        rm->avail[rm->queue[i]] = 0;
    for (uint32_t s = 0; s < e->v->slots; s++) {
        const uint16_t *b = rep_block(e, s);
        const int at = rep_place_of(b, e->n, e->x);
        for (uint32_t i = 0; at >= 0 && i < np; i++)
            if (may_receive(e, b, (uint32_t)at, rm->queue[i]))
                rm->avail[rm->queue[i]]++;
    }
}

/* ---- Choose: the receiver of x's copy at position at of slot b
 * ("Placement", "The slack schedule") */

/* Whether r would then share more slots with a co-holder than their mean
 * plus slack: crowded when the count before the gift, *c, is at least
 * mean + slack, so a gift may end a pair at mean + slack at most, one
 * tighter than the raise's mean + 1 + slack (raise_crowded). The schedule
 * was measured with the two as they are ("The slack schedule"). */
static int lower_crowded(const dch__rep_call *e, const uint16_t *b, uint32_t at, uint32_t r,
                         int rows, uint32_t slack)
{
    const dch__rep_move *rm = e->rm;
    int crowded = 0;
    for (uint32_t j = 0; rows && j < e->n; j++) {
        if (j == at)
            continue;
        const uint32_t *c = rep_pair_cell(e, b[j], r);
        /* *c >= mean + slack, that is *c - slack + 1 > mean: no division
         * (dch__rep_above_mean). */
        crowded |= c != NULL && *c >= slack &&
                   dch__rep_above_mean(e, rm->cap[b[j]], rm->cap[r], (uint64_t)*c - slack + 1);
    }
    return crowded;
}

/* The receiver: allowed, not crowded, the most urgent; DCH__REP_NONE. */
static uint32_t lower_choose(const dch__rep_call *e, const uint16_t *b, uint32_t at,
                             uint32_t np, int rows, uint32_t slack)
{
    const dch__rep_move *rm = e->rm;
    uint32_t best = DCH__REP_NONE;
    for (uint32_t i = 0; i < np; i++) {
        const uint32_t r = rm->queue[i];
        if (dch__rep_wants(rm, r) == 0 || !may_receive(e, b, at, r))
            continue;
        if (!lower_crowded(e, b, at, r, rows, slack) &&
            (best == DCH__REP_NONE || dch__rep_urgent(rm, r, best)))
            best = r;
    }
    return best;
}

/* ---- Pass: one sweep of the visiting order ------------------------------ */

/* r receives x's copy at position at of slot s. */
static void lower_give(const dch__rep_call *e, uint32_t s, uint32_t at, uint32_t r,
                       uint32_t np, dch__rep_pace *p)
{
    dch__rep_move *rm = e->rm;
    const uint16_t *b = rep_block(e, s);
    for (uint32_t i = 0; i < np; i++) /* the slot is used up */
        if (dch__rep_wants(rm, rm->queue[i]) > 0 && may_receive(e, b, at, rm->queue[i]))
            rm->avail[rm->queue[i]]--;
    if (rm->quota[r] > 0) {
        rm->quota[r]--;
    } else { /* from its pool */
        rm->pool_budget[rm->from[r]]--;
        rm->from[r] = UINT32_MAX;
        rm->dev[r] += DCH__REP_ONE;
    }
    /* x's pairs are counted down too, though nothing reads them, so that
     * the rows stay exact and splitting need not count them again. */
    dch__rep_swap(e, s, at, r, p->rows);
    p->left--;
}

static void lower_pass(const dch__rep_call *e, uint32_t pass, uint32_t np, dch__rep_pace *p)
{
    const uint32_t slack = dch__rep_slack(pass);
    for (dch__rep_step st = {0}; dch__rep_step_next(e, pass, p, &st);) {
        /* Pass 0 spreads x's gifts over the whole order. Only pass 0: a
         * lowering without rows runs the last pass alone, and that pass,
         * uncapped and unpaced, must leave no receiver with quota a fresh
         * slot admits (the reroutes rely on it: rep_reroute.c). */
        if (st.at < 0 || st.ahead)
            continue;
        const uint32_t at = (uint32_t)st.at;
        const uint32_t best = lower_choose(e, st.b, at, np, p->rows, slack);
        if (best != DCH__REP_NONE)
            lower_give(e, st.s, at, best, np, p);
    }
}

/* ---- Sit out: receivers that found no slot give back their quota
 * ("Re-planning without a stuck member") */

static void lower_sit_out(const dch__rep_call *e, uint32_t np)
{
    dch__rep_move *rm = e->rm;
    for (uint32_t i = 0; i < np; i++) {
        const uint32_t r = rm->queue[i];
        if (rm->quota[r] > 0) {
            rm->dev[r] -= (int64_t)rm->quota[r] * DCH__REP_ONE;
            rm->dev[e->x] += (int64_t)rm->quota[r] * DCH__REP_ONE;
            rm->quota[r] = 0;
            rm->stuck[r] = 1;
        }
    }
}

/* ---- Last resort ("Last resort"): x leaves with copies no planned
 * receiver could take */

/* Each goes to the member furthest below its share that the slot allows,
 * under promise 6's cap first (one always is allowed: docs/replicas.md,
 * "Last resort"). */
static void lower_last_resort(const dch__rep_call *e)
{
    dch__rep_move *rm = e->rm;
    for (uint32_t s = 0; s < e->v->slots; s++) {
        const uint16_t *b = rep_block(e, s);
        const int at = rep_place_of(b, e->n, e->x);
        if (at < 0)
            continue;
        uint32_t best = DCH__REP_NONE;
        for (uint32_t r = 0; r < e->v->id_limit; r++)
            if (r != e->x && rep_positive(e, r) && may_receive(e, b, (uint32_t)at, r) &&
                (best == DCH__REP_NONE || lower_full(e, best) > lower_full(e, r) ||
                 (lower_full(e, best) == lower_full(e, r) && rep_first(e, 0, r, best))))
                best = r;
        if (best != DCH__REP_NONE) {
            rm->dev[best] += DCH__REP_ONE;
            rm->exact = 0; /* moved without counting: splitting recounts */
            dch__rep_record(e, s, (uint32_t)at, e->x);
            dch__rep_trade(e, s, (uint32_t)at, best);
        }
    }
}

/* ---- The step ------------------------------------------------------------ */

/* One round: the plan's receivers (with quota or in a pool) in queue[],
 * placed pass by pass, then rerouted; those left sit out. */
static void lower_round(const dch__rep_call *e, dch__rep_pace *p)
{
    dch__rep_move *rm = e->rm;
    /* cap[]: every member's count once the planned copies moved. */
    for (uint32_t id = 0; id < e->v->id_limit; id++)
        rm->cap[id] = e->v->held[id] + rm->quota[id];
    make_pools(e);
    uint32_t np = 0;
    for (uint32_t id = 0; id < e->v->id_limit; id++)
        if (dch__rep_wants(rm, id) > 0)
            rm->queue[np++] = id;
    /* Without rows no cap can be checked, so only the last pass runs. */
    const uint32_t first_pass = p->rows ? 0 : DCH__REP_PASSES - 1;
    lower_room(e, np);
    for (uint32_t pass = first_pass; pass < DCH__REP_PASSES && p->left > 0; pass++)
        lower_pass(e, pass, np, p);
    unpool(e);
    /* ---- Reroute ("Augmenting reroutes"): quotas no fresh slot admits */
    for (uint32_t i = 0; i < np && p->left > 0; i++)
        while (rm->quota[rm->queue[i]] > 0 && dch__rep_augment(e, 0, rm->queue[i])) {
            rm->quota[rm->queue[i]]--;
            p->left--;
        }
    if (p->left > 0)
        lower_sit_out(e, np);
}

int dch__rep_lower(const dch__rep_call *e)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    for (uint32_t id = 0; id < v->id_limit; id++) {
        rm->quota[id] = rm->stuck[id] = 0;
        rm->pair[id] = v->held[id];
    }
    rm->most = removal_cap(e);
    dch__rep_pace p = {0, 0, dch__rep_build_rows(e, 0)};
    for (;;) {
        p.total = p.left = lower_plan(e, v->held[e->x]);
        if (p.left == 0)
            break;
        lower_round(e, &p); /* plan again: the rule may want more ("Re-planning
                             * without a stuck member") */
    }
    if (v->members[e->x].weight == 0 && v->held[e->x] > 0)
        lower_last_resort(e);
    return p.rows;
}
