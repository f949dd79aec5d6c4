/* SPDX-License-Identifier: MIT */
/*
 * Counting one unit of the table: how many slots an id holds (four
 * entries a word), every owner's count (cnt/present), marks, x's slots, and
 * a slot an id holds. The bottom of the engine: it calls nothing of it.
 */
#include "engine.h"

#include <string.h>

_Thread_local int64_t dch__units_counted;

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

/* A raise's donors' slots of the unit, each donor's together in xs[] in
 * slot order, its segment ending at slot[id] (a counting sort of the
 * slots by owner): the donor's next slot, the highest it holds, is
 * xs[slot[id] - 1], read in order rather than by a link to follow across
 * the unit. A run of slots of one owner is written from a local cursor,
 * slot[] touched once a run (see count_donors). */
static void group_slots(const dch__engine *g, const uint16_t *base, uint32_t np)
{
    dch__move *mv = g->mv;
    const uint32_t spu = g->v->spu, ids = g->v->id_limit;
    uint32_t at = 0, run = UINT32_MAX, pos = 0;
    for (uint32_t k = 0; k < np; k++) {
        mv->slot[mv->present[k]] = at;
        at += mv->cnt[mv->present[k]];
    }
    for (uint32_t i = 0; i < spu; i++) {
        const uint32_t o = base[i];
        if (o >= ids || mv->quota[o] == 0)
            continue;
        if (o != run) {
            if (run != UINT32_MAX)
                mv->slot[run] = pos;
            run = o;
            pos = mv->slot[o];
        }
        mv->xs[pos++] = i;
    }
    if (run != UINT32_MAX)
        mv->slot[run] = pos;
}

/*
 * Counts by runs: a unit is mostly runs of one owner (a member that took
 * many slots of it in one call took them together), and cnt[o]++ slot by
 * slot makes each increment wait for the last one's store. So a run of
 * equal owners is counted in a register and added once; present[] gets the
 * ids in the order of their first slot, as slot by slot. Returns np.
 */
static uint32_t add_run(dch__move *mv, uint32_t np, uint32_t o, uint32_t n)
{
    mv->present[np] = o;
    np += mv->cnt[o] == 0;
    mv->cnt[o] += n;
    return np;
}

/* A raise's donors with quota left (x's quota is 0; DCH__MAP_UNOWNED is
 * at least id_limit). By runs where the last unit counted had few donors
 * for its slots (long runs are likely), else slot by slot: among many
 * donors a run test mispredicts a branch a slot. Either way the same
 * cnt[] and present[]. */
static uint32_t count_donors(const dch__engine *g, const uint16_t *base)
{
    dch__move *mv = g->mv;
    const uint32_t spu = g->v->spu, ids = g->v->id_limit;
    uint32_t np = 0, run = UINT32_MAX, n = 0;
    if (mv->donors_seen > spu / 8) {
        for (uint32_t i = 0; i < spu; i++) {
            const uint32_t o = base[i];
            if (o >= ids || mv->quota[o] == 0)
                continue;
            mv->present[np] = o;
            np += mv->cnt[o]++ == 0;
        }
        return mv->donors_seen = np;
    }
    for (uint32_t i = 0; i < spu; i++) {
        const uint32_t o = base[i];
        if (o >= ids || mv->quota[o] == 0)
            continue;
        if (o == run) {
            n++;
            continue;
        }
        if (n > 0)
            np = add_run(mv, np, run, n);
        run = o;
        n = 1;
    }
    return mv->donors_seen = n > 0 ? add_run(mv, np, run, n) : np;
}

/* Every owner but x, with slot[id] the last slot id holds: slot by slot,
 * as the units of a lowering and of the chain search are mostly of many
 * owners, where runs would cost a mispredicted branch a slot. */
static uint32_t count_owners(const dch__engine *g, const uint16_t *base)
{
    dch__move *mv = g->mv;
    const uint32_t spu = g->v->spu, ids = g->v->id_limit, x = g->x;
    uint32_t np = 0;
    for (uint32_t i = 0; i < spu; i++) {
        const uint32_t o = base[i];
        if (o >= ids || o == x)
            continue;
        mv->present[np] = o;
        np += mv->cnt[o]++ == 0;
        mv->slot[o] = i;
    }
    return np;
}

/* Count unit u's owners other than x into cnt/present; slot[id] is the last
 * slot of the unit id holds (all 1, or a lowering). Only donors with quota
 * left, on a raise (all 0: then their slots are grouped and slot[id] ends
 * id's segment of xs[], group_slots; all 2: counts only, for the survey of
 * forced moves, slot[] untouched). */
uint32_t dch__count_unit(const dch__engine *g, const uint16_t *base, int all)
{
    dch__units_counted++;
    if (!g->grow || all == 1)
        return count_owners(g, base);
    const uint32_t np = count_donors(g, base);
    if (all == 0)
        group_slots(g, base, np);
    return np;
}

void dch__clear_unit(const dch__engine *g, uint32_t np)
{
    for (uint32_t i = 0; i < np; i++)
        g->mv->cnt[g->mv->present[i]] = 0;
}

/* A slot of unit u that id holds (it holds one). */
uint32_t dch__slot_of(const dch__engine *g, uint32_t u, uint32_t id)
{
    uint32_t s = u * g->v->spu;
    while (g->v->owner[s] != id)
        s++;
    g->mv->budget -= s - u * g->v->spu + 1;
    return s;
}

/* x's slots of a unit, in order, into xs[]; returns how many. */
uint32_t dch__x_slots(const dch__engine *g, const uint16_t *base)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->v->spu; i++)
        if (base[i] == g->x)
            g->mv->xs[n++] = i;
    return n;
}

/*
 * Mark the owners of a unit with a new stamp, so that mark[id] == stamp
 * exactly for those present, and list x's slots as dch__x_slots() does. (The
 * chain search draws its stamps from the same counter, so no mark of one
 * use is taken for the other's.)
 */
uint32_t dch__mark_unit(const dch__engine *g, const uint16_t *base)
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

/* dch__mark_unit() that also sets slot[id] to the last slot id holds in the
 * unit, and *first to the member with quota of least key[] (the first in
 * the order of quotas, engine_quotas.c) present there, or UINT32_MAX; returns
 * whether some member holds two slots of it. */
int dch__mark_unit_slots(const dch__engine *g, const uint16_t *base, uint32_t *first)
{
    dch__move *mv = g->mv;
    const uint32_t stamp = ++mv->stamp, ids = g->v->id_limit;
    uint32_t twice = 0, best = UINT32_MAX;
    uint64_t best_key = UINT64_MAX;
    for (uint32_t i = 0; i < g->v->spu; i++) {
        const uint32_t o = base[i];
        if (o >= ids)
            continue;
        twice |= mv->mark[o] == stamp;
        mv->mark[o] = stamp;
        mv->slot[o] = i;
        if (mv->quota[o] > 0 && mv->key[o] < best_key) {
            best_key = mv->key[o];
            best = o;
        }
    }
    *first = best;
    return twice != 0;
}

/* Whether a member with quota left holds a slot of the unit (x's is 0). */
int dch__has_donor(const dch__engine *g, const uint16_t *base)
{
    const uint32_t *quota = g->mv->quota, ids = g->v->id_limit;
    uint32_t any = 0;
    for (uint32_t i = 0; i < g->v->spu; i++)
        any |= base[i] < ids && quota[base[i]] > 0;
    return any != 0;
}
