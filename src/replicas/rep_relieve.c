/* SPDX-License-Identifier: MIT */
/*
 * Pair relieving after a raise, with its look-ahead (rep_pairs.h;
 * docs/replicas.md, "Pair relieving").
 */
#include "rep_pairs.h"

#include "rep_rows.h"

/*
 * Promise 7 after a raise. A join lowers every pair's bound (M grows and the
 * donors hold fewer copies), so a pair can end over it without gaining a
 * slot, which the placement cannot see. The repair moves x's takes: take j
 * (x took donor d's copy at slot s) moves to slot t, where x takes the copy
 * of some u instead and d's copy at s comes back. u is d, or a member with
 * dev[u] >= dev[d] (no further below its share than d), dev[u] > 0 (u
 * ends at or above floor(share); one copy less while the pairs over their
 * bounds are relieved), held[u] > keep(u) (u keeps what its
 * primaries need) and dev[d] < one copy (d ends less than two above its
 * share): can_shift. The call still creates copies only on x and drops
 * only what x replaces. A move, or a move and a second
 * one that relieves a pair the first pushed x over, is kept only if the
 * excess (the slots pairs share beyond their bounds, summed over the map)
 * falls; so the repair ends. It runs only where the promise is made: equal
 * weights, no zones (so any slot admits any member), R >= 2 and
 * R*P >= 16*M, and its work is capped near linear in the table and the rows.
 * The pairs over their bounds now are relieved first, with the larger
 * budget, a giver allowed one copy below floor(share) and no second move
 * tried after a first that left more excess (docs/replicas.md, "Real
 * excess first").
 */
typedef struct relief {
    const dch__rep_call *e;
    uint64_t over; /* the excess, each pair counted once */
    uint64_t budget; /* work left: a unit a slot looked at or a move made,
                        an id a pair counted again */
    int undoing; /* a shift is being undone: `over` is restored whole */
    int64_t floor_slack; /* 0, or one copy while real excess is relieved */
} relief;

/* "Looking ahead" (docs/replicas.md, "Pair relieving"). The bound a
 * member holding c copies will have once M has grown by `sixteenths`
 * sixteenths (its count shrinking in proportion): pairs kept within it
 * now need no repair at the joins that lower the bound. */
static uint64_t ahead_limit(const dch__rep_call *e, uint64_t c, uint32_t sixteenths)
{
    const uint64_t M = e->M, M2 = M + M * sixteenths / 16 + 1;
    return (3 * c * M * (e->n - 1) + 4 * (M2 - 1) * M2) / (2 * (M2 - 1) * M2);
}

/* The far look-ahead, for n > 4 only: M grown by (n - 3) sixteenths. */
static uint32_t far_limit(const dch__rep_call *e, uint64_t c)
{
    return e->n > 4 ? (uint32_t)ahead_limit(e, c, e->n - 3) : UINT32_MAX;
}

/* A pair_over() of at least this is an excess over the bound itself. */
#define REAL_EXCESS ((uint64_t)1 << 42)

/* How many more slots a and c share than the bound of either (cap[]),
 * times 2^42, plus how many more than the near bound ahead (avail[]) times
 * 2^21, plus how many more than the far one (queue[]): the real excess
 * first, the nearer drop next. */
static uint64_t pair_over(const dch__rep_call *e, uint32_t a, uint32_t c)
{
    const dch__rep_move *rm = e->rm;
    const uint32_t *cell = rep_pair_cell(e, a, c);
    if (cell == NULL) /* a member of weight 0: it shares nothing */
        return 0;
    const uint32_t v = *cell;
    const uint32_t cap = rm->cap[a] < rm->cap[c] ? rm->cap[a] : rm->cap[c];
    const uint32_t ahead = rm->avail[a] < rm->avail[c] ? rm->avail[a] : rm->avail[c];
    const uint32_t far = rm->queue[a] < rm->queue[c] ? rm->queue[a] : rm->queue[c];
    return ((uint64_t)(v > cap ? v - cap : 0) << 42) + ((uint64_t)(v > ahead ? v - ahead : 0) << 21) +
           (v > far ? v - far : 0);
}

/* The excess of a's pairs with the members from `from` on, but the one
 * with `skip`. No test of a pair sharing nothing: half of them do, at
 * random, and the branch would be mispredicted where pair_over() gives 0
 * without one. */
static uint64_t over_pairs(const dch__rep_call *e, uint32_t a, uint32_t from, uint32_t skip)
{
    uint64_t over = 0;
    for (uint32_t c = from; c < e->v->id_limit; c++)
        if (c != skip && e->rm->col[c] != UINT32_MAX)
            over += pair_over(e, a, c);
    return over;
}

/* dch__rep_count_pairs(), keeping r->over. */
static void step_pairs(relief *r, const uint16_t *b, uint32_t k, int up)
{
    if (r->undoing) {
        dch__rep_count_pairs(r->e, b, k, up);
        return;
    }
    for (uint32_t i = 0; i < r->e->n; i++)
        r->over -= i != k ? pair_over(r->e, b[k], b[i]) : 0;
    dch__rep_count_pairs(r->e, b, k, up);
    for (uint32_t i = 0; i < r->e->n; i++)
        r->over += i != k ? pair_over(r->e, b[k], b[i]) : 0;
}

static void spend(relief *r, uint64_t work)
{
    r->budget = r->budget > work ? r->budget - work : 0;
}

/* Whether take j may move to position kt of slot t (see above). */
static int can_shift(const relief *r, uint32_t j, uint32_t t, uint32_t kt)
{
    const dch__rep_call *e = r->e;
    const dch__rep_move *rm = e->rm;
    const uint32_t s = rm->rec_at[j] >> 3, k = rm->rec_at[j] & 7, d = rm->rec_from[j];
    const uint16_t *bs = rep_block(e, s), *bt = rep_block(e, t);
    const uint32_t u = bt[kt];
    if (s == t || bs[k] != e->x || rep_place_of(bt, e->n, e->x) >= 0 ||
        rep_place_of(bs, e->n, d) >= 0)
        return 0;
    /* u gives in d's place: u no further below its share than d, ending
     * at or above floor(share) (the "Floor condition"; floor_slack: one
     * copy below it in the sweeps for real excess) and above its keep
     * (step 2 must still make it the primary of its share), d ending
     * within two copies above its share. */
    return u == d || (rm->dev[u] >= rm->dev[d] && rm->dev[u] + r->floor_slack > 0 &&
                      rm->dev[d] < DCH__REP_ONE && e->v->held[u] > dch__rep_keep(e, u));
}

/* Move take j to position kt of slot t; moving it back to where it was
 * undoes it. */
static void shift_take(relief *r, uint32_t j, uint32_t t, uint32_t kt)
{
    const dch__rep_call *e = r->e;
    dch__rep_move *rm = e->rm;
    const uint32_t s = rm->rec_at[j] >> 3, k = rm->rec_at[j] & 7, d = rm->rec_from[j];
    uint16_t *bs = rep_block(e, s), *bt = rep_block(e, t);
    const uint32_t u = bt[kt], moved = u != d;
    /* d gains a copy and u loses one when they differ; where that moves a
     * bound, every pair of the two is counted again. */
    const uint32_t capd = (uint32_t)dch__rep_share_limit(e, e->v->held[d] + moved),
                   capu = (uint32_t)dch__rep_share_limit(e, e->v->held[u] - moved);
    const uint32_t aheadd = (uint32_t)ahead_limit(e, e->v->held[d] + moved, 1),
                   aheadu = (uint32_t)ahead_limit(e, e->v->held[u] - moved, 1);
    const uint32_t fard = far_limit(e, e->v->held[d] + moved),
                   faru = far_limit(e, e->v->held[u] - moved);
    const int recount = capd != rm->cap[d] || capu != rm->cap[u] || aheadd != rm->avail[d] ||
                        aheadu != rm->avail[u] || fard != rm->queue[d] || faru != rm->queue[u];
    step_pairs(r, bs, k, 0);
    step_pairs(r, bt, kt, 0);
    if (recount && !r->undoing)
        r->over -= over_pairs(e, d, 0, d) + over_pairs(e, u, 0, d);
    dch__rep_trade(e, s, k, d);
    dch__rep_trade(e, t, kt, e->x);
    rm->cap[d] = capd;
    rm->cap[u] = capu;
    rm->avail[d] = aheadd;
    rm->avail[u] = aheadu;
    rm->queue[d] = fard;
    rm->queue[u] = faru;
    if (recount && !r->undoing)
        r->over += over_pairs(e, d, 0, d) + over_pairs(e, u, 0, d);
    step_pairs(r, bs, k, 1);
    step_pairs(r, bt, kt, 1);
    rm->dev[d] += (int64_t)moved * DCH__REP_ONE;
    rm->dev[u] -= (int64_t)moved * DCH__REP_ONE;
    rm->rec_at[j] = t << 3 | kt;
    rm->rec_from[j] = u;
    spend(r, recount ? 2 * (uint64_t)e->v->id_limit : e->n);
}

static int relieve_x(relief *r, uint32_t p, uint64_t goal);

/* Try take j at position kt of slot t: kept (1) if the excess falls below
 * goal, alone or (second) with a pair it pushes x over relieved next.
 * Moves that would push d over at s are not tried. */
static int try_shift(relief *r, uint32_t j, uint32_t t, uint32_t kt, uint64_t goal, int second)
{
    const dch__rep_call *e = r->e;
    const dch__rep_move *rm = e->rm;
    if (r->budget == 0 || !can_shift(r, j, t, kt))
        return 0;
    const uint32_t s = rm->rec_at[j] >> 3, k = rm->rec_at[j] & 7, d = rm->rec_from[j];
    const uint16_t *bt = rep_block(e, t);
    const uint32_t moved = bt[kt] != d;
    if (!dch__rep_joins_within(e, rep_block(e, s), k, d, dch__rep_share_limit(e, e->v->held[d] + moved)))
        return 0;
    const int x_fits = dch__rep_joins_within(e, bt, kt, e->x, rm->cap[e->x]);
    if (!x_fits && !second)
        return 0;
    const uint64_t before = r->over;
    shift_take(r, j, t, kt);
    if (r->over < goal)
        return 1;
    /* A second move relieves one pair of x by one slot. While the real
     * excess is relieved, a first move that left more of it than there was
     * (u's bound fell under a pair of its own) cannot be saved by one, and
     * the search for it would read the whole table. */
    const int hopeless = r->floor_slack != 0 && r->over / REAL_EXCESS > goal / REAL_EXCESS;
    for (uint32_t i = 0; !x_fits && !hopeless && i < e->n; i++)
        if (i != kt && pair_over(e, e->x, bt[i]) && relieve_x(r, bt[i], goal))
            return 1;
    /* Undone, the table, the rows and the bounds are as they were, so the
     * excess is too: each step of r->over is the exact change of the sum
     * of pair_over() over all pairs, and the steps back cancel the steps
     * there. It is restored rather than counted back (the same budget is
     * spent). */
    r->undoing = 1;
    shift_take(r, j, s, k);
    r->undoing = 0;
    r->over = before;
    return 0;
}

/* A move of a take of x beside p to a slot without p, keeping the excess
 * below goal. */
static int relieve_x(relief *r, uint32_t p, uint64_t goal)
{
    const dch__rep_call *e = r->e;
    const dch__rep_move *rm = e->rm;
    for (uint32_t j = 0; j < rm->nrec && r->budget > 0; j++) {
        const uint32_t s = rm->rec_at[j] >> 3, k = rm->rec_at[j] & 7, d = rm->rec_from[j];
        const uint16_t *bs = rep_block(e, s);
        /* d must fit back at s, whatever slot the take moves to. */
        if (rep_place_of(bs, e->n, p) < 0 ||
            !dch__rep_joins_within(e, bs, k, d, dch__rep_share_limit(e, e->v->held[d] + 1)))
            continue;
        for (uint32_t i = 0; i < e->v->slots && r->budget > 0; i++, spend(r, 1)) {
            const uint32_t t = dch__rep_visit(e, i);
            if (rep_place_of(rep_block(e, t), e->n, p) >= 0)
                continue;
            for (uint32_t kt = 0; kt < e->n; kt++)
                if (try_shift(r, j, t, kt, goal, 0))
                    return 1;
        }
    }
    return 0;
}

/* Split the pair at positions ka and kc of slot t (without x): x takes
 * one of the two copies there. Single moves are tried before any that
 * needs a second one: a second move searches the whole table, and trying
 * it take by take spent the budget before a single move was reached. */
static void split_at(relief *r, uint32_t t, uint32_t ka, uint32_t kc)
{
    for (int second = 0; second < 2; second++)
        for (uint32_t j = 0; j < r->e->rm->nrec; j++)
            if (try_shift(r, j, t, ka, r->over, second) || try_shift(r, j, t, kc, r->over, second))
                return;
}

/* One sweep over the slots: at a slot where x sits beside a partner it
 * shares too many slots with, one of those takes moves away; at a slot
 * without x holding a pair over its bound, x takes one of the two copies
 * there. Only pairs whose pair_over() is at least `least` are looked at. */
static void sweep(relief *r, uint64_t least)
{
    const dch__rep_call *e = r->e;
    const uint32_t n = e->n, x = e->x;
    for (uint32_t i = 0; i < e->v->slots && r->over > 0 && r->budget > 0; i++, spend(r, 1)) {
        const uint32_t t = dch__rep_visit(e, i);
        const uint16_t *bt = rep_block(e, t);
        const int kx = rep_place_of(bt, n, x);
        for (uint32_t ka = 0; ka < n; ka++)
            for (uint32_t kc = ka + 1; kc < n; kc++) {
                if (pair_over(e, bt[ka], bt[kc]) < least)
                    continue;
                if (kx >= 0) {
                    if (ka == (uint32_t)kx || kc == (uint32_t)kx)
                        relieve_x(r, bt[ka == (uint32_t)kx ? kc : ka], r->over);
                    continue;
                }
                split_at(r, t, ka, kc);
            }
    }
}

void dch__rep_relieve_pairs(const dch__rep_call *e)
{
    dch__rep_move *rm = e->rm;
    const dch__rep_view *v = e->v;
    const uint32_t L = v->id_limit;
    if (!dch__rep_diversity_promised(e) || rm->nrec == 0 || !dch__rep_build_rows(e, 1))
        return;
    /* The work of a sweep's scan and of recounting every pair twice. */
    const uint64_t work = (uint64_t)v->slots * e->n + (uint64_t)L * L;
    relief r = {e, 0, 16 * work + 65536, 0, DCH__REP_ONE};
    for (uint32_t id = 0; id < L; id++) {
        rm->cap[id] = rep_positive(e, id) ? (uint32_t)dch__rep_share_limit(e, v->held[id]) : UINT32_MAX;
        rm->avail[id] = rep_positive(e, id) ? (uint32_t)ahead_limit(e, v->held[id], 1) : UINT32_MAX;
        rm->queue[id] = rep_positive(e, id) ? far_limit(e, v->held[id]) : UINT32_MAX;
    }
    for (uint32_t a = 0; a < L; a++)
        if (rm->col[a] != UINT32_MAX)
            r.over += over_pairs(e, a, a + 1, a);
    /* At most 4 sweeps for the pairs over their bounds now, then at most 4
     * for every pair with a budget of their own (docs/replicas.md, "Real
     * excess first"): the look-ahead must not spend the budget the promise
     * needs (64 x 8, R = 8: a removal leaves a pair at the old bound and
     * the next joins drop it; corpus
     * equal-r8-64x8-diversity-rejoin-after-removals). */
    for (uint32_t pass = 0, last = 1; pass < 4 && last && r.over >= REAL_EXCESS && r.budget > 0;
         pass++) {
        const uint64_t before = r.over;
        sweep(&r, REAL_EXCESS);
        last = r.over < before; /* no pass after one that moved nothing */
    }
    r.floor_slack = 0;
    r.budget = 4 * work + 65536;
    for (uint32_t pass = 0; pass < 4 && r.over > 0 && r.budget > 0; pass++)
        sweep(&r, 1);
}
