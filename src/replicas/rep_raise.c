/* SPDX-License-Identifier: MIT */
/*
 * The raise step (rep_raise.h; docs/replicas.md, "Raise and lowering").
 * Read it beside rep_lower.c: the two have the same shape, plan, room,
 * choose, pass, reroute, sit out, with givers and takers exchanged.
 */
#include "rep_raise.h"

#include "rep_place.h"
#include "rep_reroute.h"
#include "rep_rows.h"

/* ---- Plan ("Raise and lowering": the single-copy rule on copies, keep) */

/*
 * One step of a raise's plan from the heap of n donors: the top donor gives
 * x one copy, or leaves the heap when it is down to what it keeps. The
 * heap's new size.
 */
static uint32_t take_one(const dch__rep_call *e, uint32_t n, uint64_t *total)
{
    dch__rep_move *rm = e->rm;
    const uint32_t d = rm->heap[0];
    if (e->v->held[d] - rm->quota[d] <= dch__rep_keep(e, d)) {
        rm->heap[0] = rm->heap[--n]; /* d keeps the rest */
    } else {
        rm->quota[d]++;
        rm->dev[d] -= DCH__REP_ONE;
        rm->dev[e->x] += DCH__REP_ONE;
        (*total)++;
    }
    dch__rep_sift_down(e, 1, n, 0);
    return n;
}

/* Copies x takes from the heap's members by the rule; their quotas. */
static uint64_t raise_plan(const dch__rep_call *e)
{
    const dch__rep_move *rm = e->rm;
    uint32_t n = dch__rep_build_heap(e, 1);
    uint64_t total = 0;
    const uint64_t room = e->v->slots - e->v->held[e->x];
    while (n > 0 && total < room && rm->dev[rm->heap[0]] > rm->dev[e->x] + DCH__REP_ONE)
        n = take_one(e, n, &total);
    /* x may end the rule short of what its primaries need (its copy share
     * close to its primary share, as in a zone with nearly all the
     * weight): it takes on from the members with copies to spare. */
    const uint32_t need = dch__rep_keep(e, e->x);
    if (e->v->held[e->x] + total >= need)
        return total;
    n = dch__rep_build_heap(e, 1);
    while (n > 0 && e->v->held[e->x] + total < need && total < room)
        n = take_one(e, n, &total);
    return total;
}

/* ---- Room: slots where x may still take a copy from each donor --------- */

static void raise_room(const dch__rep_call *e)
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

/* ---- Choose: the donor of slot b ("Placement", "The slack schedule") */

/*
 * Whether taking b[i]'s copy crowds x: x would then share more slots with
 * a co-holder than its mean (with fx copies) plus one plus slack, paced:
 * after t of `total` takes, x should share about t/total of its final
 * count with each member.
 */
static int raise_crowded(const dch__rep_call *e, const uint16_t *b, uint32_t i, uint64_t fx,
                         const dch__rep_pace *p, uint32_t slack)
{
    const dch__rep_move *rm = e->rm;
    const uint64_t t = p->total - p->left + 1;
    int crowded = 0;
    for (uint32_t j = 0; j < e->n; j++) {
        /* paced >= 1 (cap >= 1, t >= 1): a pair below slack + 1 is not
         * crowded, whatever the divisions below would give. */
        if (j == i || rm->pair[b[j]] < (uint64_t)slack + 1)
            continue;
        /* mean + 1: a take may end a pair at mean + 1 + slack (pair[] is
         * the count before it); a lowering allows one less (lower_crowded). */
        const uint64_t cap = dch__rep_pair_mean(e, fx, rm->cap[b[j]]) + 1;
        const uint64_t paced = (cap * t + p->total - 1) / p->total;
        crowded |= rm->pair[b[j]] >= paced + slack;
    }
    return crowded;
}

/* How far above its mean donor b[i] shares slots with a co-holder: taking
 * its copy here lowers that pair. */
static int64_t raise_hot(const dch__rep_call *e, const uint16_t *b, uint32_t i, int rows)
{
    const dch__rep_move *rm = e->rm;
    const uint32_t d = b[i];
    int64_t hot = 0;
    for (uint32_t j = 0; rows && j < e->n; j++) {
        if (j == i)
            continue;
        const uint32_t v = *rep_pair_cell(e, d, b[j]);
        /* At or below the mean the pair adds nothing (hot >= 0). */
        if (!dch__rep_above_mean(e, rm->cap[d], rm->cap[b[j]], v))
            continue;
        const uint64_t mean = dch__rep_pair_mean(e, rm->cap[d], rm->cap[b[j]]);
        const int64_t over = (int64_t)v - (int64_t)mean;
        hot = over > hot ? over : hot;
    }
    return hot;
}

/* The position of the donor x takes from in slot b, -1 for none: not
 * crowded, then the hottest pair (the largest raise_hot: the donor whose
 * pair with a co-holder here is furthest above its mean), then the most
 * urgent quota. */
static int raise_choose(const dch__rep_call *e, const uint16_t *b, uint64_t fx,
                        const dch__rep_pace *p, uint32_t slack, int64_t *best_hot)
{
    const dch__rep_move *rm = e->rm;
    int best = -1;
    *best_hot = 0;
    for (uint32_t i = 0; i < e->n; i++) {
        const uint32_t d = b[i];
        if (rm->quota[d] == 0 || !rep_zones_ok(e, b, e->n, i, e->x) ||
            raise_crowded(e, b, i, fx, p, slack))
            continue;
        const int64_t hot = raise_hot(e, b, i, p->rows);
        if (best < 0 || hot > *best_hot ||
            (hot == *best_hot && dch__rep_urgent(rm, d, b[best]))) {
            best = (int)i;
            *best_hot = hot;
        }
    }
    return best;
}

/* ---- Pass: one sweep of the visiting order ----------------------------- */

/* x takes the copy at position k of slot s. */
static void raise_take(const dch__rep_call *e, uint32_t s, uint32_t k, dch__rep_pace *p)
{
    dch__rep_move *rm = e->rm;
    uint16_t *b = rep_block(e, s);
    const uint32_t d = b[k];
    for (uint32_t i = 0; i < e->n; i++) /* the slot is used up */
        if (rm->quota[b[i]] > 0 && rep_zones_ok(e, b, e->n, i, e->x))
            rm->avail[b[i]]--;
    rm->quota[d]--;
    /* x's new pairs: no pass reads them (a slot x takes in holds no x
     * before), but counting them keeps the rows exact, so the relieving
     * need not count them again (rep_rows.c). */
    dch__rep_swap(e, s, k, e->x, p->rows);
    for (uint32_t j = 0; j < e->n; j++)
        rm->pair[b[j]] += b[j] != e->x;
    p->left--;
}

static void raise_pass(const dch__rep_call *e, uint32_t pass, uint64_t fx, dch__rep_pace *p)
{
    const uint32_t slack = dch__rep_slack(pass);
    for (dch__rep_step st = {0}; dch__rep_step_next(e, pass, p, &st);) {
        if (st.at >= 0)
            continue;
        /* The first pass spreads x's takes over the whole order, but for
         * slots where a pair of members shares more than its mean: taking
         * one of them there lowers it. */
        int64_t hot;
        const int best = raise_choose(e, st.b, fx, p, slack, &hot);
        if (best < 0 || (st.ahead && hot == 0))
            continue;
        raise_take(e, st.s, (uint32_t)best, p);
    }
}

/* ---- Sit out: donors that found no slot give back their quota
 * ("Re-planning without a stuck member") */

static void raise_sit_out(const dch__rep_call *e)
{
    dch__rep_move *rm = e->rm;
    for (uint32_t id = 0; id < e->v->id_limit; id++)
        if (rm->quota[id] > 0) {
            rm->dev[id] += (int64_t)rm->quota[id] * DCH__REP_ONE;
            rm->dev[e->x] -= (int64_t)rm->quota[id] * DCH__REP_ONE;
            rm->quota[id] = 0;
            rm->stuck[id] = 1;
        }
}

/* ---- The step ----------------------------------------------------------- */

void dch__rep_raise(const dch__rep_call *e)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    const uint32_t x = e->x;
    for (uint32_t id = 0; id < v->id_limit; id++) {
        rm->pair[id] = rm->quota[id] = rm->stuck[id] = 0;
        rm->from[id] = UINT32_MAX; /* no pools */
    }
    /* pair[]: the slots each member shares with x (on a lowering pair[]
     * means something else: map_replicas.h). */
    for (uint32_t s = 0; s < v->slots && v->held[x] > 0; s++) {
        const uint16_t *b = rep_block(e, s);
        if (rep_place_of(b, e->n, x) >= 0)
            for (uint32_t k = 0; k < e->n; k++)
                rm->pair[b[k]] += b[k] != x;
    }
    dch__rep_pace p = {0, 0, dch__rep_build_rows(e, 1)};
    for (;;) {
        p.total = p.left = raise_plan(e);
        if (p.left == 0)
            break;
        /* cap[]: every member's count once the planned copies moved. */
        for (uint32_t id = 0; id < v->id_limit; id++)
            rm->cap[id] = v->held[id] - rm->quota[id];
        const uint64_t fx = v->held[x] + p.left;
        raise_room(e);
        for (uint32_t pass = 0; pass < DCH__REP_PASSES && p.left > 0; pass++)
            raise_pass(e, pass, fx, &p);
        /* Reroute ("Augmenting reroutes"): quotas no fresh slot admits.
         * They update neither pair[] nor the rows; the next round's caps
         * read those stale, which only steers choices (rep_rows.c). */
        for (uint32_t id = 0; id < v->id_limit && p.left > 0; id++)
            while (rm->quota[id] > 0 && dch__rep_augment(e, 1, id)) {
                rm->quota[id]--;
                p.left--;
            }
        if (p.left == 0)
            continue; /* plan again: the rule may want more ("Re-planning
                       * without a stuck member") */
        raise_sit_out(e);
    }
}
