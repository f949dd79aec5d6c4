/* SPDX-License-Identifier: MIT */
/*
 * The moves of one balancing call (balance.h; docs/balance.md, "The call"
 * gives the proofs this code keeps):
 *  - the giver is always the member above its bound whose load is the
 *    largest multiple of its target (ties: the lower id), so a budget is
 *    spent on the most loaded members first;
 *  - it gives only candidates (never its heaviest slot, never a slot of
 *    load 0), which keeps every moved slot at most L2 and so each giver
 *    above its target and each receiver below T + L2 (the bound);
 *  - the slot is the lightest whose move brings the giver within its
 *    bound, unless a lighter one followed by the lightest that would then
 *    finish moves less load (one step of look-ahead over the 64 heaviest
 *    lighter ones), else the heaviest it may give; whatever the choice a
 *    giver stops once within its bound, so it sheds at most one slot's
 *    load past it (promise 2);
 *  - the receiver is below its target, the furthest below among those
 *    that may take the slot; with replicas a promotion is tried before any
 *    copy move.
 * A giver that finds nothing to give is set aside with the reason, and
 * tried again once the others have moved, until a whole round moves
 * nothing: what is left then cannot move, which is what makes a second
 * call a fixed point (promise 4).
 */
#include "balance_run.h"
#include "drain_moves.h"

#define NO_ID UINT32_MAX

/* The copies of slot s in the working table (the owner entry alone with
 * one copy a slot). */
static uint16_t *block(dch__bal *b, uint32_t s)
{
    return b->cp ? b->cp + (size_t)s * b->stride : b->own + s;
}

/* Of receivers a and c (NO_ID: none), the one further below its target. */
static uint32_t further(const dch__bal *b, uint32_t a, uint32_t c)
{
    if (a == NO_ID)
        return c;
    const dch__wide ra = dch__bal_room(&b->t, b->mb[a].load, b->mb[a].weight);
    const dch__wide rc = dch__bal_room(&b->t, b->mb[c].load, b->mb[c].weight);
    const int k = dch__wide_cmp(ra, rc);
    return k > 0 || (k == 0 && a < c) ? a : c;
}

/* The co-replica of slot s that is a receiver furthest below its target. */
static uint32_t promotion_to(const dch__bal *b, uint32_t g, uint32_t s)
{
    (void)g;
    const uint16_t *c = b->cp + (size_t)s * b->stride;
    uint32_t best = NO_ID;
    for (uint32_t k = 1; k < b->ncopies; k++)
        if (b->mb[c[k]].role == BAL_RECEIVER)
            best = further(b, best, c[k]);
    return best;
}

/* Whether j may take g's copy of slot s: not a holder already, within
 * the count slack, and no fewer zones spanned. */
static int may_take(const dch__bal *b, uint32_t g, uint32_t j, uint32_t s)
{
    const dch__bal_member *e = &b->mb[j];
    if (!dch__bal_within_slack(&b->t, e->count + 1, b->slack, b->copies_p, e->weight))
        return 0;
    if (b->cp == NULL)
        return 1;
    const uint16_t *c = b->cp + (size_t)s * b->stride;
    uint16_t next[DCH_MAP_MAX_REPLICAS];
    for (uint32_t k = 0; k < b->ncopies; k++) {
        if (c[k] == j)
            return 0;
        next[k] = c[k] == g ? (uint16_t)j : c[k];
    }
    return dch__zones_spanned(b->m, next, b->ncopies) >=
           dch__zones_spanned(b->m, c, b->ncopies);
}

/* The receiver furthest below its target that may take g's copy of s. */
static uint32_t copy_to(const dch__bal *b, uint32_t g, uint32_t s)
{
    uint32_t best = NO_ID;
    for (uint32_t i = 0; i < b->nrecv; i++) {
        const uint32_t j = b->recv[i];
        if (b->mb[j].role == BAL_RECEIVER && may_take(b, g, j, s))
            best = further(b, best, j);
    }
    return best;
}

typedef uint32_t (*taker)(const dch__bal *b, uint32_t g, uint32_t s);

/* The first of g's candidates (index into its run) whose move alone would
 * bring load c within g's bound: the candidates ascend by load, so those
 * that do are a suffix, found by bisection. A gone one counts by its load. */
static uint32_t first_covering(const dch__bal *b, const dch__bal_member *e, uint64_t c)
{
    const uint32_t *cand = b->cand + e->first;
    uint32_t lo = 0, hi = e->ncand;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        const uint64_t l = b->load[cand[mid]];
        if (l < c && dch__bal_above_bound(&b->t, c - l, e->weight, e->heavy_load))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The lightest candidate still held, but for index `skip`, that would bring
 * load c within g's bound; its load, or UINT64_MAX for none. */
static uint64_t lightest_covering(const dch__bal *b, const dch__bal_member *e, uint64_t c,
                                  uint32_t skip)
{
    const uint32_t *cand = b->cand + e->first;
    for (uint32_t i = first_covering(b, e, c); i < e->ncand; i++)
        if (i != skip && !b->gone[e->first + i])
            return b->load[cand[i]];
    return UINT64_MAX;
}

/* How many of the heaviest candidates below the covering ones a giver
 * weighs as a first step: the look-ahead costs O(LOOK log S) a move. */
#define LOOK 64u

/* The candidate below index lo that g should give before covering its
 * excess, or NO_ID to cover it now with the covering slot of load la: of
 * the LOOK heaviest, the one whose load and then the lightest that would
 * finish the job weigh least together, if less than la (ties: the
 * heavier). A look-ahead of one step, on loads alone: the load moved past
 * the bound is what the choice decides. Two distinct slots of g weigh at
 * most Λ together, so the sums cannot overflow. */
static uint32_t undershoot_first(const dch__bal *b, const dch__bal_member *e, uint32_t lo,
                                 uint64_t la)
{
    const uint32_t *cand = b->cand + e->first;
    uint32_t best = NO_ID, seen = 0;
    uint64_t least = la;
    for (uint32_t i = lo; i-- > 0 && seen < LOOK;) {
        if (b->gone[e->first + i])
            continue;
        seen++;
        const uint64_t lb = b->load[cand[i]];
        const uint64_t rest = lightest_covering(b, e, e->load - lb, i);
        if (rest != UINT64_MAX && rest + lb < least) {
            least = rest + lb;
            best = i;
        }
    }
    return best;
}

/* g's candidate to give through `to` (its index; NO_ID for none), *j its
 * receiver: the lightest that brings g within its bound, unless a lighter
 * one (undershoot_first) and then the lightest that would finish the job
 * move less load; the heaviest it may give when none brings it within. */
static uint32_t pick(const dch__bal *b, uint32_t g, taker to, uint32_t *j)
{
    const dch__bal_member *e = &b->mb[g];
    const uint32_t *c = b->cand + e->first;
    const uint32_t lo = first_covering(b, e, e->load);
    uint32_t ia = NO_ID;
    for (uint32_t i = lo; i < e->ncand && ia == NO_ID; i++)
        if (!b->gone[e->first + i] && (*j = to(b, g, c[i])) != NO_ID)
            ia = i;
    if (ia != NO_ID) {
        const uint32_t ib = undershoot_first(b, e, lo, b->load[c[ia]]);
        if (ib != NO_ID && (*j = to(b, g, c[ib])) != NO_ID)
            return ib;
        return (*j = to(b, g, c[ia])), ia;
    }
    for (uint32_t i = lo; i-- > 0;) /* the heaviest it may give */
        if (!b->gone[e->first + i] && (*j = to(b, g, c[i])) != NO_ID)
            return i;
    return NO_ID;
}

/* Slot s's load goes from g to j; roles follow. */
static void shift_load(dch__bal *b, uint32_t g, uint32_t j, uint32_t s)
{
    dch__bal_member *eg = &b->mb[g], *ej = &b->mb[j];
    eg->load -= b->load[s];
    ej->load += b->load[s];
    b->own[s] = (uint16_t)j;
    if (!dch__bal_below_target(&b->t, ej->load, ej->weight))
        ej->role = BAL_NONE;
    if (!dch__bal_above_bound(&b->t, eg->load, eg->weight, eg->heavy_load))
        eg->role = BAL_NONE;
}

/* One promotion or copy move by g of its i-th candidate to j. */
static void give(dch__bal *b, uint32_t g, uint32_t i, uint32_t j, int promote)
{
    dch__bal_member *e = &b->mb[g];
    const uint32_t s = b->cand[e->first + i];
    uint16_t *c = block(b, s);
    b->gone[e->first + i] = 1;
    if (promote) {
        for (uint32_t k = 1; k < b->ncopies; k++)
            if (c[k] == j)
                c[k] = (uint16_t)g;
        b->promotions++;
        b->promoted_load += b->load[s];
    } else {
        e->count--;
        b->mb[j].count++;
        b->moves++;
        b->moved_load += b->load[s];
    }
    c[0] = (uint16_t)j; /* g was the primary: a candidate is its own */
    shift_load(b, g, j, s);
}

static int budget_left(const dch__bal *b)
{
    return b->max_moves == 0 || b->moves < b->max_moves;
}

/* Why g could not give (DCH_BALANCE_LEFT_*): the budget if a copy move
 * was open but for it, the slack if one was open but for that, else the
 * copies and zones. */
static uint8_t why_not(dch__bal *b, uint32_t g)
{
    uint32_t j;
    if (!budget_left(b) && pick(b, g, copy_to, &j) != NO_ID)
        return DCH_BALANCE_LEFT_BUDGET;
    const uint32_t slack = b->slack;
    b->slack = UINT32_MAX;
    const uint32_t i = pick(b, g, copy_to, &j);
    b->slack = slack;
    return i != NO_ID ? DCH_BALANCE_LEFT_SLACK : DCH_BALANCE_LEFT_PLACEMENT;
}

/* One move by g: a promotion if it has one, else a copy move. */
static int step(dch__bal *b, uint32_t g)
{
    uint32_t j, i = NO_ID;
    if (b->cp != NULL && (i = pick(b, g, promotion_to, &j)) != NO_ID) {
        give(b, g, i, j, 1);
        return 1;
    }
    if (budget_left(b) && (i = pick(b, g, copy_to, &j)) != NO_ID) {
        give(b, g, i, j, 0);
        return 1;
    }
    b->mb[g].why = why_not(b, g);
    return 0;
}

/* The giver that is not set aside with the largest load / target. */
static uint32_t next_giver(const dch__bal *b)
{
    uint32_t best = NO_ID;
    for (uint32_t i = 0; i < b->ngivers; i++) {
        const uint32_t g = b->givers[i];
        const dch__bal_member *e = &b->mb[g];
        if (e->role != BAL_GIVER || e->why != 0)
            continue;
        if (best == NO_ID ||
            dch__bal_ratio_cmp(e->load, e->weight, b->mb[best].load, b->mb[best].weight) > 0)
            best = g;
    }
    return best;
}

void dch__bal_run(dch__bal *b)
{
    uint64_t steps = 0, at_retry = 0;
    for (;;) {
        const uint32_t g = next_giver(b);
        if (g != NO_ID) {
            steps += (uint64_t)step(b, g);
            continue;
        }
        /* Every giver left is set aside: try them again if anything moved
         * since they last were, else they cannot move. */
        if (steps == at_retry)
            return;
        at_retry = steps;
        for (uint32_t i = 0; i < b->ngivers; i++)
            b->mb[b->givers[i]].why = 0;
    }
}
