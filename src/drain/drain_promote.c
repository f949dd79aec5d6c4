/* SPDX-License-Identifier: MIT */
/*
 * A PRIMARY drain with R >= 2: promotions only (map.h, "Drains", promise
 * 3; docs/drains.md, "PRIMARY: promotions, evenly").
 *
 * The slots whose primary is x are the tasks; each may go to any of its
 * other copies that is not itself PRIMARY-drained (its candidates). First a
 * greedy pass in ascending slot order gives each task to the candidate that
 * has gained least so far (ties to the earlier copy). Then augmenting
 * paths: while a member u with the largest gain g >= 2 reaches, through
 * "a task of u can go to v", a member v with gain <= g - 2, the tasks along
 * the path each move one step and u gains one less. When no such path is
 * left the largest gain is the least any assignment can reach: the members
 * reachable from the largest gains all have gain >= g - 1, every task of
 * theirs has all its candidates among them, so any assignment gives them
 * as many tasks and one of them at least g (docs/drains.md proves it).
 * Everything is a pure function of the table: slots ascending, copies in
 * their order, members by id.
 */
#include "dch/error.h"

#include "alloc.h"
#include "drain_table.h"

#include <string.h>

#define NO_TASK UINT32_MAX

/* Scratch of one promotion: k tasks and, per member id below limit, the
 * gain and the search's state. */
typedef struct promo {
    dch_map *w;
    const uint8_t *skip;
    uint32_t x, k, limit, n;
    uint32_t *slot; /* task -> slot */
    uint8_t *pick; /* task -> position of its new primary, 0 while none */
    uint32_t *next; /* task -> next task of the same member */
    uint32_t *gain, *head, *via, *seen, *queue; /* per member id */
} promo;

static const uint16_t *block(const promo *p, uint32_t t)
{
    return p->w->copies + (size_t)p->slot[t] * p->w->stride;
}

/* Whether position j of task t's slot is a candidate. */
static int candidate(const promo *p, uint32_t t, uint32_t j)
{
    return j > 0 && j < p->n && !p->skip[block(p, t)[j]];
}

static void greedy(promo *p)
{
    for (uint32_t t = 0; t < p->k; t++) {
        const uint16_t *c = block(p, t);
        p->pick[t] = 0;
        for (uint32_t j = 1; j < p->n; j++)
            if (candidate(p, t, j) &&
                (p->pick[t] == 0 || p->gain[c[j]] < p->gain[c[p->pick[t]]]))
                p->pick[t] = (uint8_t)j;
        if (p->pick[t] != 0)
            p->gain[c[p->pick[t]]]++;
    }
}

/* Move the tasks along the path that ends at member v one step each. */
static void shift_path(promo *p, uint32_t v)
{
    p->gain[v]++;
    for (;;) {
        const uint32_t t = p->via[v];
        const uint16_t *c = block(p, t);
        const uint32_t u = c[p->pick[t]];
        for (uint32_t j = 1; j < p->n; j++)
            if (c[j] == v)
                p->pick[t] = (uint8_t)j;
        v = u;
        if (p->via[v] == NO_TASK)
            break;
    }
    p->gain[v]--;
}

/* One search from every member of gain g; whether it found a path (and
 * shifted it). stamp marks this search's members in seen[]. */
static int augment(promo *p, uint32_t g, uint32_t stamp)
{
    uint32_t qn = 0;
    for (uint32_t id = 0; id < p->limit; id++)
        p->head[id] = NO_TASK;
    for (uint32_t t = p->k; t-- > 0;) {
        if (p->pick[t] == 0)
            continue;
        const uint32_t u = block(p, t)[p->pick[t]];
        p->next[t] = p->head[u];
        p->head[u] = t;
    }
    for (uint32_t id = 0; id < p->limit; id++)
        if (p->gain[id] == g) {
            p->seen[id] = stamp;
            p->via[id] = NO_TASK;
            p->queue[qn++] = id;
        }
    for (uint32_t q = 0; q < qn; q++)
        for (uint32_t t = p->head[p->queue[q]]; t != NO_TASK; t = p->next[t])
            for (uint32_t j = 1; j < p->n; j++) {
                const uint32_t v = block(p, t)[j];
                if (!candidate(p, t, j) || p->seen[v] == stamp)
                    continue;
                p->seen[v] = stamp;
                p->via[v] = t;
                if (p->gain[v] + 2 <= g) {
                    shift_path(p, v);
                    return 1;
                }
                p->queue[qn++] = v;
            }
    return 0;
}

static void balance(promo *p)
{
    for (uint32_t stamp = 1;; stamp++) {
        uint32_t g = 0;
        for (uint32_t id = 0; id < p->limit; id++)
            g = p->gain[id] > g ? p->gain[id] : g;
        if (g < 2 || !augment(p, g, stamp))
            return;
    }
}

/* Swap every task's new primary to the front. */
static void apply(promo *p)
{
    dch_map *w = p->w;
    for (uint32_t t = 0; t < p->k; t++) {
        if (p->pick[t] == 0)
            continue;
        uint16_t *c = w->copies + (size_t)p->slot[t] * w->stride;
        const uint16_t y = c[p->pick[t]];
        c[p->pick[t]] = c[0];
        c[0] = y;
        w->owner[p->slot[t]] = y;
        entry(w, p->x)->slots--;
        entry(w, y)->slots++;
    }
}

int dch__drain_promote(dch_map *w, uint32_t x, const uint8_t *skip)
{
    promo p = {w, skip, x, 0, w->mt.id_limit, w->ncopies, NULL, NULL, NULL,
               NULL, NULL, NULL, NULL, NULL};
    for (uint32_t s = 0; p.n >= 2 && s < w->slots; s++)
        p.k += w->owner[s] == x;
    if (p.k == 0)
        return DCH_OK;
    const dch_allocator *a = w->cfg.allocator;
    p.slot = dch__alloc_array(a, p.k, sizeof *p.slot);
    p.pick = dch__alloc_array(a, p.k, sizeof *p.pick);
    p.next = dch__alloc_array(a, p.k, sizeof *p.next);
    uint32_t *ids = dch__alloc_array(a, p.limit, 5 * sizeof *ids);
    void *const blocks[] = {p.slot, p.pick, p.next, ids};
    if (!p.slot || !p.pick || !p.next || !ids) {
        dch__free_all(a, blocks, sizeof blocks / sizeof *blocks);
        return DCH_ENOMEM;
    }
    memset(ids, 0, (size_t)p.limit * 5 * sizeof *ids);
    p.gain = ids;
    p.head = ids + p.limit;
    p.via = ids + 2 * (size_t)p.limit;
    p.seen = ids + 3 * (size_t)p.limit;
    p.queue = ids + 4 * (size_t)p.limit;
    for (uint32_t s = 0, t = 0; s < w->slots; s++)
        if (w->owner[s] == x)
            p.slot[t++] = s;
    greedy(&p);
    balance(&p);
    apply(&p);
    dch__free_all(a, blocks, sizeof blocks / sizeof *blocks);
    return DCH_OK;
}
