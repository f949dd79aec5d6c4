/* SPDX-License-Identifier: MIT */
/*
 * What a balancing call starts from (docs/balance.md, "The call"): working
 * copies of the effective table, the terms Λ, W', Lmax and L2, each
 * member's load, heaviest slot, count and role, and every giver's
 * candidate slots in ascending order of load. Everything after this reads
 * and changes only these copies, so the map is untouched until the result
 * is installed (balance.c).
 */
#include "dch/error.h"

#include "alloc.h"
#include "balance_run.h"

#include <stdlib.h>
#include <string.h>

/* A candidate while sorting: its load, then its slot. */
typedef struct keyed {
    uint64_t load;
    uint32_t slot;
} keyed;

static int keyed_cmp(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    if (a->load != b->load)
        return a->load < b->load ? -1 : 1;
    return a->slot < b->slot ? -1 : a->slot > b->slot;
}

static int alloc_tables(dch__bal *b)
{
    const dch_map *m = b->m;
    const dch_allocator *a = m->cfg.allocator;
    b->own = dch__alloc_array(a, b->P, sizeof *b->own);
    b->cp = m->replicas > 1 ? dch__alloc_array(a, b->P, b->stride * sizeof *b->cp) : NULL;
    b->mb = dch__alloc_array(a, b->limit ? b->limit : 1, sizeof *b->mb);
    b->recv = dch__alloc_array(a, b->limit ? b->limit : 1, 2 * sizeof *b->recv);
    if (b->own == NULL || (m->replicas > 1 && b->cp == NULL) || b->mb == NULL || !b->recv)
        return DCH_ENOMEM;
    b->givers = b->recv + b->limit;
    memcpy(b->own, m->rd_owner, b->P * sizeof *b->own);
    if (b->cp != NULL)
        memcpy(b->cp, m->rd_copies, (size_t)b->P * b->stride * sizeof *b->cp);
    memset(b->mb, 0, (b->limit ? b->limit : 1) * sizeof *b->mb);
    return DCH_OK;
}

/* Λ, Lmax, L2 and the lowest slot of load Lmax; DCH_EFULL past 2^64 - 1. */
static int sum_loads(dch__bal *b)
{
    dch__bal_terms *t = &b->t;
    for (uint32_t s = 0; s < b->P; s++) {
        const uint64_t l = b->load[s];
        if (l > UINT64_MAX - t->total)
            return DCH_EFULL;
        t->total += l;
        if (s == 0 || l > t->lmax) {
            t->l2 = s == 0 ? 0 : t->lmax;
            t->lmax = l;
        } else if (l > t->l2) {
            t->l2 = l;
        }
    }
    return DCH_OK;
}

void dch__bal_read_heaviest(dch__bal *b)
{
    for (uint32_t id = 0; id < b->limit; id++) {
        b->mb[id].heavy = b->P;
        b->mb[id].heavy_load = 0;
    }
    for (uint32_t s = 0; s < b->P; s++) {
        const uint16_t o = b->own[s];
        if (o == NONE16 || b->mb[o].weight == 0)
            continue;
        dch__bal_member *e = &b->mb[o];
        if (e->heavy == b->P || b->load[s] > e->heavy_load) {
            e->heavy = s;
            e->heavy_load = b->load[s];
        }
    }
}

/* Weights of the members that balance, their loads and heaviest slots. */
static void read_members(dch__bal *b)
{
    const dch_map *m = b->m;
    for (uint32_t id = 0; id < b->limit; id++) {
        dch__bal_member *e = &b->mb[id];
        if (member_of(m, id) == NULL)
            continue;
        e->count = dch_map_node_copies(m, id);
        if (dch_map_node_drained(m, id) == 0)
            e->weight = entry(m, id)->weight;
        b->t.wsum += e->weight;
    }
    for (uint32_t s = 0; s < b->P; s++) {
        const uint16_t o = b->own[s];
        if (o == NONE16 || b->mb[o].weight == 0)
            continue;
        b->mb[o].load += b->load[s];
    }
    dch__bal_read_heaviest(b);
}

/* Roles: a giver above its bound, a receiver below its target. */
static void assign_roles(dch__bal *b)
{
    for (uint32_t id = 0; id < b->limit; id++) {
        dch__bal_member *e = &b->mb[id];
        if (e->weight == 0 || b->t.total == 0)
            continue;
        if (dch__bal_above_bound(&b->t, e->load, e->weight, e->heavy_load)) {
            e->role = BAL_GIVER;
            b->givers[b->ngivers++] = id;
        } else if (dch__bal_below_target(&b->t, e->load, e->weight)) {
            e->role = BAL_RECEIVER;
            b->recv[b->nrecv++] = id;
        }
    }
}

/* Whether slot s is a candidate of a giver: its, not its heaviest, loaded. */
static int candidate(const dch__bal *b, uint32_t s)
{
    const uint16_t o = b->own[s];
    return o != NONE16 && b->mb[o].role == BAL_GIVER && s != b->mb[o].heavy &&
           b->load[s] > 0;
}

/* Every giver's candidates, grouped by giver and sorted within each. */
static int gather_candidates(dch__bal *b)
{
    const dch_allocator *a = b->m->cfg.allocator;
    uint32_t total = 0;
    for (uint32_t s = 0; s < b->P; s++)
        if (candidate(b, s))
            b->mb[b->own[s]].ncand++;
    for (uint32_t i = 0; i < b->ngivers; i++) {
        dch__bal_member *e = &b->mb[b->givers[i]];
        e->first = total;
        total += e->ncand;
        e->ncand = 0;
    }
    keyed *k = dch__alloc_array(a, total ? total : 1, sizeof *k);
    b->cand = dch__alloc_array(a, total ? total : 1, sizeof *b->cand);
    b->gone = dch__alloc(a, total ? total : 1);
    if (k == NULL || b->cand == NULL || b->gone == NULL) {
        dch__free(a, k);
        return DCH_ENOMEM;
    }
    for (uint32_t s = 0; s < b->P; s++)
        if (candidate(b, s)) {
            dch__bal_member *e = &b->mb[b->own[s]];
            k[e->first + e->ncand++] = (keyed){b->load[s], s};
        }
    for (uint32_t i = 0; i < b->ngivers; i++) {
        const dch__bal_member *e = &b->mb[b->givers[i]];
        qsort(k + e->first, e->ncand, sizeof *k, keyed_cmp);
    }
    for (uint32_t i = 0; i < total; i++)
        b->cand[i] = k[i].slot;
    memset(b->gone, 0, total ? total : 1);
    dch__free(a, k);
    return DCH_OK;
}

int dch__bal_setup(dch__bal *b)
{
    const dch_map *m = b->m;
    b->P = m->slots;
    b->stride = m->stride;
    b->ncopies = m->replicas == 1 ? 1 : layered(m) ? m->dr.ncopies : m->ncopies;
    b->limit = m->mt.id_limit;
    b->copies_p = b->ncopies * b->P;
    int rc = alloc_tables(b);
    if (rc == DCH_OK)
        rc = sum_loads(b);
    if (rc != DCH_OK)
        return rc;
    read_members(b);
    assign_roles(b);
    return gather_candidates(b);
}

void dch__bal_free(dch__bal *b)
{
    void *const blocks[] = {b->own, b->cp, b->mb, b->recv, b->cand, b->gone};
    dch__free_all(b->m->cfg.allocator, blocks, sizeof blocks / sizeof *blocks);
}
