/* SPDX-License-Identifier: MIT */
/*
 * The unit heap (docs/placement.md, "Fast paths"): the members counted in a
 * unit that hold a slot there and have quota left, by pick key.
 */
#include "engine.h"

/*
 * The unit's picks. The members counted in a unit (cnt/present) that hold a
 * slot there and have quota left, by their dch__pick_key()s: a key ends
 * with its id, so the structure holds keys alone and compares them in
 * place. A pick changes only the picked member's count and quota (forced[]
 * changes only as a unit starts), so only its key changes, and it is the
 * least key. Its new key is larger (less quota, or a worse tier), and
 * mostly at least the last re-keyed one: so beside a binary heap
 * (ukey[0 .. uhn)) a queue keeps re-keyed keys in increasing order
 * (uq[uqhead .. uqtail)), and the least key is the heap's top or the
 * queue's front. A re-key joins the queue in O(1) when it is at least the
 * queue's last, else the heap in O(log S): when picks go round many
 * members of equal spare quota, one slot each in turn, each costs O(1)
 * after its first, where a heap alone cost log S levels a pick
 * (docs/placement.md, "Complexity").
 */
static void unit_sift_down(uint64_t *h, uint32_t n, uint32_t i)
{
    const uint64_t key = h[i];
    int64_t steps = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c + 1 < n)
            c += h[c + 1] < h[c]; /* the lesser child: a sum, not a branch
                                   * that keys in random order mispredict */
        else if (c >= n)
            break;
        if (h[c] >= key)
            break;
        h[i] = h[c];
        i = c;
        steps++;
    }
    h[i] = key;
    dch__order_work += steps;
}

static uint64_t key_now(const dch__engine *g, uint32_t id)
{
    return dch__pick_key(g, id, dch__tier(g, id, g->mv->cnt[id]));
}

/* Key k joins the queue when it is at least the queue's last, else the heap. */
static void unit_put(dch__move *mv, uint64_t key)
{
    if (mv->uqtail > mv->uqhead && key < mv->uq[mv->uqtail - 1]) {
        uint64_t *h = mv->ukey;
        uint32_t i = mv->uhn++;
        while (i > 0 && key < h[(i - 1) / 2]) {
            h[i] = h[(i - 1) / 2];
            i = (i - 1) / 2;
            dch__order_work++;
        }
        h[i] = key;
        return;
    }
    if (mv->uqtail == mv->qcap) { /* at most one entry per id: half is free */
        const uint32_t n = mv->uqtail - mv->uqhead;
        for (uint32_t i = 0; i < n; i++)
            mv->uq[i] = mv->uq[mv->uqhead + i];
        mv->uqhead = 0;
        mv->uqtail = n;
    }
    mv->uq[mv->uqtail++] = key;
    dch__order_work++;
}

/* The least key, or UINT64_MAX when there is none. */
static uint64_t unit_least(const dch__move *mv)
{
    const uint64_t q = mv->uqtail > mv->uqhead ? mv->uq[mv->uqhead] : UINT64_MAX;
    return mv->uhn > 0 && mv->ukey[0] < q ? mv->ukey[0] : q;
}

uint32_t dch__unit_push(const dch__engine *g, uint32_t n, uint32_t id)
{
    unit_put(g->mv, key_now(g, id));
    return n + 1;
}

/* The picks of the np members counted in the unit; returns how many. */
uint32_t dch__unit_heap(const dch__engine *g, uint32_t np)
{
    dch__move *mv = g->mv;
    uint32_t n = 0;
    for (uint32_t k = 0; k < np; k++) {
        const uint32_t id = mv->present[k];
        if (mv->cnt[id] == 0 || mv->quota[id] == 0)
            continue;
        mv->ukey[n++] = key_now(g, id);
    }
    for (uint32_t i = n / 2; i-- > 0;)
        unit_sift_down(mv->ukey, n, i);
    mv->uhn = n;
    mv->uqhead = mv->uqtail = 0;
    return n;
}

/*
 * The least dch__pick_key() of the n picks if its tier is at most max_tier
 * and, on the first pass of a raise, a tier-1 pick leaves quota beyond what
 * later units force; else UINT64_MAX. (When the least fails, all fail: a
 * larger key has a larger tier, or the same tier and less spare quota.)
 */
uint64_t dch__unit_best(const dch__engine *g, uint32_t n, int max_tier, int first)
{
    if (n == 0)
        return UINT64_MAX;
    const uint64_t key = unit_least(g->mv);
    const int t = (int)(key >> 60);
    if (t > max_tier || (t == 1 && first && dch__free_quota(g, (uint32_t)(key & 0xFFFF)) <= 0))
        return UINT64_MAX;
    return key;
}

/*
 * How many picks in a row the least key makes (at most room, at least one;
 * it has been accepted): until its key, which grows with each pick, passes
 * the least of the others or `cap` (a pick from outside the unit's heap,
 * the lazy give's absent receiver), or dch__pick_run()'s other bounds. The
 * others' least is the heap's top or the queue's front, or, where the
 * least is one of those, the next in the queue or a child of the top.
 */
uint32_t dch__unit_run(const dch__engine *g, int max_tier, int first, uint32_t room,
                       uint64_t cap)
{
    const dch__move *mv = g->mv;
    const uint64_t least = unit_least(mv);
    uint64_t other = cap;
    uint32_t qh = mv->uqhead, top = 0;
    if (mv->uqtail > qh && mv->uq[qh] == least)
        qh++; /* the least is the queue's front */
    else
        top = 1; /* the least is the heap's top */
    if (mv->uqtail > qh && mv->uq[qh] < other)
        other = mv->uq[qh];
    for (uint32_t i = top; i <= 2 * top && i < mv->uhn; i++)
        other = mv->ukey[i] < other ? mv->ukey[i] : other;
    return dch__pick_run(g, (uint32_t)(least & 0xFFFF), other, max_tier, first, room);
}

/* After the least's count or quota changed: re-key it, or drop it when it
 * holds nothing there or has no quota left. Returns the new count. */
uint32_t dch__unit_fix_top(const dch__engine *g, uint32_t n)
{
    dch__move *mv = g->mv;
    const uint64_t least = unit_least(mv);
    const uint32_t id = (uint32_t)(least & 0xFFFF);
    if (mv->uqtail > mv->uqhead && mv->uq[mv->uqhead] == least) {
        mv->uqhead++;
    } else {
        mv->ukey[0] = mv->ukey[--mv->uhn];
        unit_sift_down(mv->ukey, mv->uhn, 0);
    }
    if (mv->cnt[id] == 0 || mv->quota[id] == 0)
        return n - 1;
    unit_put(mv, key_now(g, id));
    return n;
}
