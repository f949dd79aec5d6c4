/* SPDX-License-Identifier: MIT */
/*
 * The chain search (docs/placement.md, "Movement, and why the chain search
 * keeps it"): when no counterparty with quota fits a unit's band, trade
 * moves along a chain of members so that the multiset of final deviations
 * stage 1 planned is kept, exactly or within the bounds partner() allows;
 * within the budget of "Complexity".
 */
#include "engine.h"

#define DCH__SEARCH 256u

static uint32_t held_in_unit(const dch__engine *g, uint32_t u, uint32_t id)
{
    g->mv->budget -= g->v->spu;
    return dch__count_of(g->v->owner + (size_t)u * g->v->spu, g->v->spu, id);
}

/*
 * Whether id can undo one of its moves in a unit where it holds c slots
 * (take a slot back on a raise, hand one back on a lowering) and stay in its
 * band.
 */
static int can_undo(const dch__engine *g, uint32_t id, uint32_t c)
{
    uint32_t lo, hi;
    dch__band(g, id, &lo, &hi);
    if (g->grow)
        return c + 1 <= hi;
    return c > 0 && c - 1 >= lo;
}

/* The count id ends with once its remaining quota is carried. */
static int64_t final_count(const dch__engine *g, uint32_t id)
{
    const int64_t q = g->mv->quota[id], c = g->v->members[id].slots;
    return g->grow ? c - q : c + q;
}

static uint32_t table_slot(const dch__move *mv, int64_t dev)
{
    return (uint32_t)(((uint64_t)dev * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & mv->table_mask;
}

/*
 * The members with quota left (in pool order, so the lowest id first) by
 * their deviation, for partner()'s exact match: an open-addressed table
 * of at least twice as many places, holding the first id of each deviation.
 * Quotas and deviations do not change until a chain is applied.
 */
static void index_quotas(const dch__engine *g)
{
    dch__move *mv = g->mv;
    uint32_t size = 2;
    while (size < 2 * mv->npool)
        size *= 2;
    mv->table_mask = size - 1;
    mv->budget -= size + mv->npool;
    for (uint32_t i = 0; i < size; i++)
        mv->table[i] = UINT32_MAX;
    for (uint32_t k = 0; k < mv->npool; k++) {
        const uint32_t y = mv->pool[k];
        if (mv->quota[y] == 0)
            continue;
        uint32_t i = table_slot(mv, mv->dev[y]);
        while (mv->table[i] != UINT32_MAX && mv->dev[mv->table[i]] != mv->dev[y])
            i = (i + 1) & mv->table_mask;
        if (mv->table[i] == UINT32_MAX)
            mv->table[i] = y;
    }
}

/* The first member with quota left (in pool order) of deviation dev. */
static uint32_t quota_of_deviation(const dch__move *mv, int64_t dev)
{
    uint32_t i = table_slot(mv, dev);
    while (mv->table[i] != UINT32_MAX && mv->dev[mv->table[i]] != dev)
        i = (i + 1) & mv->table_mask;
    return mv->table[i];
}

/*
 * A member whose remaining quota id can carry in its place (id itself when
 * its quota is not spent). Preferred: one whose final deviation is exactly
 * one slot below id's (raise; above, lowering), so that swapping one move
 * between them leaves the multiset of final deviations as stage 1 planned.
 * Else one for which the swap keeps both within the global bound and, with
 * equal weights, every final count within 2 of every other (the invariant
 * that shows equal weights never need a repair move: docs/placement.md,
 * "Equal weights: no repair, counts within 2").
 * UINT32_MAX if none.
 */
static uint32_t partner(const dch__engine *g, uint32_t id)
{
    dch__move *mv = g->mv;
    if (mv->quota[id] > 0)
        return id;
    const int64_t W = g->W, step = g->grow ? -1 : 1;
    const int64_t mine = dch__deviation(g, id) + step * W; /* after the extra move */
    /* The exact swap: a y whose final deviation now, dev[y], equals mine
     * (id's after the extra move). Once y carries one move fewer, y's is
     * id's old one and id's is y's old one: the two values trade places. */
    const uint32_t exact = quota_of_deviation(mv, mine);
    if (exact != UINT32_MAX || !mv->allow_fit)
        return exact;
    if (mine <= -2 * W || mine >= 2 * W)
        return UINT32_MAX;
    const int64_t my_count = final_count(g, id) + step;
    mv->budget -= mv->npool;
    for (uint32_t k = 0; k < mv->npool; k++) {
        const uint32_t y = mv->pool[k];
        if (mv->quota[y] == 0)
            continue;
        const int64_t theirs = dch__deviation(g, y) - step * W; /* one move short */
        if (theirs <= -2 * W || theirs >= 2 * W)
            continue;
        /* With equal weights: every final count within 2 of every other. */
        const int64_t their_count = final_count(g, y) - step;
        const int64_t lo = my_count < their_count ? my_count : their_count;
        const int64_t hi = my_count < their_count ? their_count : my_count;
        if (!g->equal || (hi > mv->hi_count ? hi : mv->hi_count) -
                                 (lo < mv->lo_count ? lo : mv->lo_count) <= 2)
            return y;
    }
    return UINT32_MAX;
}

/* Put id on the search's frontier, reached through record r in unit u. */
static void visit(const dch__engine *g, uint32_t id, uint32_t from, uint32_t r, uint32_t u)
{
    dch__move *mv = g->mv;
    mv->mark[id] = mv->stamp;
    mv->par[id] = from;
    mv->via[id] = r;
    mv->entry[id] = u;
    mv->queue[mv->qlen++] = id;
}

/*
 * Enqueue the members that can carry one more move in the unit counted
 * into cnt/present (np of them): present ones within their band and, on a
 * lowering, receivers holding nothing there (at most `absent` of those).
 * Any member qualifies, not only stage 1's counterparties: one with no
 * quota and no records can only end a chain, through partner(). Nothing
 * here stops at DCH__SEARCH: the present loop may add up to S members
 * whatever the queue holds, and `absent` wraps once the queue has passed
 * DCH__SEARCH; each id is queued once a search (mark), and the budget
 * bounds the work (docs/placement.md, "Movement, and why the chain search
 * keeps it"). Returns one with quota left or a partner, or UINT32_MAX.
 */
static uint32_t frontier(const dch__engine *g, uint32_t np, uint32_t from, uint32_t r,
                         uint32_t u, uint32_t absent)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    for (uint32_t k = 0; k < np && mv->budget > 0; k++) {
        const uint32_t id = mv->present[k];
        /* Within its band after one more move: tier 0 or 1. */
        const uint32_t c = mv->cnt[id];
        if (mv->mark[id] == mv->stamp ||
            (g->grow ? c <= mv->band_lo[id] : c >= mv->band_hi[id]))
            continue;
        visit(g, id, from, r, u);
        if (partner(g, id) != UINT32_MAX)
            return id;
    }
    if (!g->grow && absent > 0)
        mv->budget -= v->id_limit;
    for (uint32_t id = 0; !g->grow && id < v->id_limit && absent > 0 && mv->budget > 0; id++) {
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
static void apply_chain(const dch__engine *g, uint32_t z, uint32_t s0)
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
            s = dch__slot_of(g, mv->entry[cur], cur);
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
            dch__record(g, s, cur);
            return;
        }
        if (g->grow) { /* p takes its recorded slot back */
            v->owner[mv->rec_slot[r]] = (uint16_t)p;
            v->members[p].slots++;
            v->members[x].slots--;
        }
        mv->rec_slot[r] = s; /* r is cur's now: it moves to cur's list */
        dch__list_unlink(mv, p, r);
        dch__list_insert(mv, cur, r);
        cur = p;
    }
}

/*
 * Breadth-first search for a chain of trades that lets one more move happen
 * in unit u0 within every band: the move goes to a counterparty in its band
 * there; if its quota is spent, it undoes one of its recorded moves in
 * another unit (staying in its band), where another counterparty takes the
 * move over, and so on until one with quota left, or one that can carry
 * the quota of a partner (see partner()). The multiset of final deviations
 * comes out as stage 1 planned: exactly in the first search, within the
 * bounds partner() allows in the looser one (allow_fit; docs/placement.md,
 * I2), so every global bound holds. No member is expanded once DCH__SEARCH
 * are queued (the queue itself may pass it, see frontier()), and the
 * search stops when the move's budget is spent; applying the chain found
 * is charged to the same budget. Returns 1 when a chain was applied.
 */
static int search_once(const dch__engine *g, uint32_t u0, uint32_t s0)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    mv->stamp++;
    mv->qlen = 0;
    const uint16_t *base0 = v->owner + (size_t)u0 * v->spu;
    mv->budget -= v->spu;
    uint32_t np = dch__count_unit(g, base0, 1);
    uint32_t z = frontier(g, np, UINT32_MAX, UINT32_MAX, u0, DCH__SEARCH);
    dch__clear_unit(g, np);
    for (uint32_t head = 0; z == UINT32_MAX && head < mv->qlen && mv->qlen < DCH__SEARCH &&
                            mv->budget > 0;
         head++) {
        const uint32_t k = mv->queue[head];
        uint32_t r = mv->rec_head[k];
        for (; r != UINT32_MAX && z == UINT32_MAX && mv->budget > 0; r = mv->rec_next[r]) {
            const uint32_t u = mv->rec_slot[r] / v->spu;
            mv->budget--;
            if (u == u0 || !can_undo(g, k, held_in_unit(g, u, k)))
                continue;
            mv->budget -= v->spu;
            np = dch__count_unit(g, v->owner + (size_t)u * v->spu, 1);
            mv->cnt[k] = 0; /* k cannot take its own move over */
            z = frontier(g, np, k, r, u, DCH__SEARCH - mv->qlen);
            dch__clear_unit(g, np);
        }
    }
    if (z == UINT32_MAX)
        return 0;
    apply_chain(g, z, s0);
    return 1;
}

/* A chain that keeps stage 1's final deviations exactly, else one that
 * keeps them within the bounds partner() allows. */
int dch__search_chain(const dch__engine *g, uint32_t u0, uint32_t s0)
{
    const dch__map_view *v = g->v;
    dch__move *mv = g->mv;
    if (mv->budget <= 0) /* spent: the later, looser passes carry the quota */
        return 0;
    index_quotas(g); /* for both searches: a failed one changes nothing */
    mv->allow_fit = 0;
    if (search_once(g, u0, s0))
        return 1;
    /* The looser search: with equal weights partner() needs the least and
     * most final count, which the failed search left as they were. */
    mv->allow_fit = 1;
    mv->lo_count = INT64_MAX;
    mv->hi_count = INT64_MIN;
    mv->budget -= g->equal ? v->id_limit : 0;
    for (uint32_t id = 0; g->equal && id < v->id_limit; id++) {
        if (v->members[id].weight == 0)
            continue;
        /* x ends with what stage 1 planned (dev[x] is stale until then) */
        const int64_t c = id == g->x ? mv->x_final : final_count(g, id);
        mv->lo_count = c < mv->lo_count ? c : mv->lo_count;
        mv->hi_count = c > mv->hi_count ? c : mv->hi_count;
    }
    return search_once(g, u0, s0);
}
