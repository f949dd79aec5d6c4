/* SPDX-License-Identifier: MIT */
/*
 * The order of quotas (docs/placement.md, "Fast paths", and "Complexity",
 * "The order of quotas"). Where the bands leave a unit's pick to the order of
 * quotas alone, the pick is the counterparty with quota left that comes
 * first in that order among those present in the unit (a raise's banded
 * take) or absent from it (a lowering's lazy give). Each such counterparty
 * carries its place in the order as a key (key[]), and:
 *
 *   - a raise finds the first present one among the unit's owners, a scan
 *     of the unit it marks anyway (dch__mark_unit_slots), O(S);
 *   - a lowering keeps them in a binary min-heap of keys (heap[0 .. qn),
 *     qpos[] the place of each) and a queue of keys in increasing order
 *     (qq[qhead .. qtail)); the first in the order is the least of the
 *     heap's top and the queue's front. The first absent one is that
 *     first once those present in the unit are set aside: a receiver only
 *     gains slots in the unit being given, so one set aside stays present
 *     until the unit ends, and goes back then.
 *
 * A pick lowers one quota, which adds the same step (one in the quota's
 * field) to one key. The picks come in increasing order of keys but for
 * those set aside, so a picked member's new key is mostly at least the
 * queue's last, and then it joins the queue in O(1); else it goes to the
 * heap, O(log n). So when picks go round many receivers of equal quota
 * (one slot each in turn), each costs O(1) after its first, where the heap
 * alone cost a sift of log n levels a pick, and a sorted list a move of up
 * to n entries. Either way the pick is the one a sorted list of the order
 * would give (the first present or absent entry).
 */
#include "engine.h"

#define QPOS_NONE UINT32_MAX /* in neither the heap nor aside */
#define QPOS_ASIDE (UINT32_MAX - 1) /* set aside as present in the unit */
#define QPOS_QUEUE (UINT32_MAX - 2) /* in the queue (one entry has its key) */

/*
 * The order: members whose per-unit share is at least one slot
 * (floor(S*w/W) >= 1) first, then the larger quota, then the lower id;
 * packed into key[], which follows each change of a quota, so that the
 * order compares one word.
 */
void dch__set_key(const dch__engine *g, uint32_t id)
{
    const dch__move *mv = g->mv;
    mv->key[id] = (uint64_t)(mv->band_lo[id] == 0) << 48 |
                  (uint64_t)(UINT32_MAX - mv->quota[id]) << 16 | id;
}

/* Keys for every counterparty with quota (pool holds every one that can
 * have quota); returns how many have quota. */
uint32_t dch__key_quotas(const dch__engine *g)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < g->mv->npool; k++) {
        const uint32_t id = g->mv->pool[k];
        if (g->mv->quota[id] > 0) {
            dch__set_key(g, id);
            n++;
        }
    }
    return n;
}

static void put(dch__move *mv, uint32_t i, uint32_t id)
{
    mv->heap[i] = id;
    mv->qpos[id] = i;
}

static void down(dch__move *mv, uint32_t i)
{
    const uint32_t id = mv->heap[i], n = mv->qn;
    const uint64_t k = mv->key[id];
    int64_t steps = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c + 1 < n) /* the lesser child: a sum, not a mispredicted branch */
            c += mv->key[mv->heap[c + 1]] < mv->key[mv->heap[c]];
        else if (c >= n)
            break;
        if (mv->key[mv->heap[c]] >= k)
            break;
        put(mv, i, mv->heap[c]);
        i = c;
        steps++;
    }
    put(mv, i, id);
    dch__order_work += steps;
}

static void up(dch__move *mv, uint32_t i)
{
    const uint32_t id = mv->heap[i];
    while (i > 0 && mv->key[id] < mv->key[mv->heap[(i - 1) / 2]]) {
        put(mv, i, mv->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
        dch__order_work++;
    }
    put(mv, i, id);
}

/* Take heap[i] out of the heap (its qpos is left to the caller). */
static void cut(dch__move *mv, uint32_t i)
{
    const uint32_t last = mv->heap[--mv->qn];
    if (i < mv->qn) {
        put(mv, i, last);
        down(mv, i);
        up(mv, mv->qpos[last]);
    }
}

/* The heap of ids[0 .. n) with quota left, keyed; n may count them twice
 * over heap and aside (dch__quota_rekey passes both). */
static void build(const dch__engine *g, const uint32_t *ids, uint32_t n)
{
    dch__move *mv = g->mv;
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t id = ids[k];
        mv->qpos[id] = QPOS_NONE;
        if (mv->quota[id] > 0) {
            dch__set_key(g, id);
            mv->heap[mv->qn] = id;
            mv->qpos[id] = mv->qn++;
        }
    }
    for (uint32_t i = mv->qn / 2; i-- > 0;)
        down(mv, i);
    mv->qlive = mv->qn;
}

/* The lowering's heap of receivers with quota; returns how many. */
uint32_t dch__quota_heap(const dch__engine *g)
{
    g->mv->qn = g->mv->naside = g->mv->qhead = g->mv->qtail = 0;
    build(g, g->mv->pool, g->mv->npool);
    return g->mv->qlive;
}

/* A queue entry is live while its member is in the queue with that key
 * (keys only grow, so an old entry never matches again). */
static int live(const dch__move *mv, uint64_t e)
{
    const uint32_t id = (uint32_t)(e & 0xFFFF);
    return mv->qpos[id] == QPOS_QUEUE && mv->key[id] == e;
}

/* Id (quota left, keyed, in neither the heap nor the queue) joins the
 * queue when its key is at least the queue's last, else the heap. */
static void place(const dch__engine *g, uint32_t id)
{
    dch__move *mv = g->mv;
    const uint64_t k = mv->key[id];
    if (mv->qtail > mv->qhead && k < mv->qq[mv->qtail - 1]) {
        mv->heap[mv->qn] = id;
        mv->qpos[id] = mv->qn++;
        up(mv, mv->qn - 1);
        return;
    }
    if (mv->qtail == mv->qcap) { /* full: keep the live entries, in order */
        uint32_t n = 0;
        for (uint32_t i = mv->qhead; i < mv->qtail; i++)
            if (live(mv, mv->qq[i]))
                mv->qq[n++] = mv->qq[i];
        mv->qhead = 0;
        mv->qtail = n; /* n < qcap / 2: each id has one live entry at most */
    }
    mv->qq[mv->qtail++] = k;
    dch__order_work++;
    mv->qpos[id] = QPOS_QUEUE;
}

/* The first in the order among the heap and the queue, or UINT32_MAX. */
static uint32_t first(dch__move *mv)
{
    while (mv->qhead < mv->qtail && !live(mv, mv->qq[mv->qhead]))
        mv->qhead++;
    const uint64_t q = mv->qhead < mv->qtail ? mv->qq[mv->qhead] : UINT64_MAX;
    if (mv->qn > 0 && mv->key[mv->heap[0]] < q)
        return mv->heap[0];
    return q == UINT64_MAX ? UINT32_MAX : (uint32_t)(q & 0xFFFF);
}

/*
 * The receiver with quota first in the order that holds nothing in the
 * unit (from cnt[] when it was counted, else from mark[]), or UINT32_MAX.
 * The firsts present are set aside until dch__quota_restore.
 */
uint32_t dch__quota_absent(const dch__engine *g, int counted)
{
    dch__move *mv = g->mv;
    for (;;) {
        const uint32_t id = first(mv);
        if (id == UINT32_MAX || (counted ? mv->cnt[id] == 0 : mv->mark[id] != mv->stamp))
            return id;
        if (mv->qpos[id] == QPOS_QUEUE)
            mv->qhead++; /* first() left it at the front */
        else
            cut(mv, 0);
        mv->qpos[id] = QPOS_ASIDE;
        mv->aside[mv->naside++] = id;
    }
}

/* After id's quota fell by one: re-key it, or drop it when spent. */
void dch__quota_spent(const dch__engine *g, uint32_t id)
{
    dch__move *mv = g->mv;
    const uint32_t at = mv->qpos[id];
    if (at == QPOS_NONE) /* not in the order (a chain gave it quota) */
        return;
    if (at < QPOS_QUEUE)
        cut(mv, at);
    if (mv->quota[id] == 0) {
        mv->qlive--;
        /* one spent aside is dropped on its return; the queue's entry dies */
        mv->qpos[id] = at == QPOS_ASIDE ? at : QPOS_NONE;
        return;
    }
    dch__set_key(g, id);
    if (at != QPOS_ASIDE)
        place(g, id);
}

/* The unit is done: those set aside with quota left go back. */
void dch__quota_restore(const dch__engine *g)
{
    dch__move *mv = g->mv;
    for (uint32_t k = 0; k < mv->naside; k++) {
        const uint32_t id = mv->aside[k];
        mv->qpos[id] = QPOS_NONE;
        if (mv->quota[id] > 0)
            place(g, id);
    }
    mv->naside = 0;
}

/* After a chain, which may change any quota: rebuild the heap from those
 * in it, the queue or aside (the spent ones leave), the queue empty. */
void dch__quota_rekey(const dch__engine *g)
{
    dch__move *mv = g->mv;
    uint32_t n = mv->qn;
    for (uint32_t i = mv->qhead; i < mv->qtail; i++)
        if (live(mv, mv->qq[i]))
            mv->heap[n++] = (uint32_t)(mv->qq[i] & 0xFFFF);
    for (uint32_t k = 0; k < mv->naside; k++)
        mv->heap[n++] = mv->aside[k];
    mv->qn = mv->naside = mv->qhead = mv->qtail = 0;
    /* build() reads heap[k] before it writes heap[qn], qn <= k */
    build(g, mv->heap, n);
}
