/* SPDX-License-Identifier: MIT */
/*
 * Balancing by load: the public calls (balance.h; docs/balance.md has the
 * design and the proofs). A call runs on working copies of the effective
 * table (balance_setup.c, balance_run.c); only its result, as the list of
 * load moves it implies, is put in force, by rebuilding the layer above
 * the base (drain_table.c), so a failure anywhere leaves the map as it was
 * and a map's effective table stays a pure function of its base, its
 * drains and its load moves.
 */
#include "dch/balance.h"
#include "dch/error.h"

#include "alloc.h"
#include "balance_report.h"
#include "drain_table.h"

#include <string.h>

int dch_balance_config_init(dch_balance_config *cfg, uint32_t version)
{
    if (cfg == NULL || version < 1 || version > DCH_BALANCE_CONFIG_VERSION)
        return DCH_EINVAL;
    cfg->version = version;
    cfg->max_moves = 0;
    cfg->count_slack = UINT32_MAX;
    return DCH_OK;
}

/* Slot s's copies in m's effective table (stride entries). */
static const uint16_t *effective(const dch_map *m, uint32_t s)
{
    return m->rd_copies ? m->rd_copies + (size_t)s * m->stride : m->rd_owner + s;
}

/* The load moves that b's working table gives on the table below m's
 * moves: a move for every slot whose copies differ from those below (a
 * slot's below is its move's, if it has one, else its effective copies). */
static int moves_of(const dch_map *m, const dch__bal *b, dch__moves *mv)
{
    const dch_allocator *a = m->cfg.allocator;
    const dch__moves *old = &m->dr.mv;
    const size_t st = m->stride;
    memset(mv, 0, sizeof *mv);
    mv->slot = dch__alloc_array(a, m->slots, sizeof *mv->slot);
    mv->below = dch__alloc_array(a, m->slots, st * sizeof *mv->below);
    mv->copies = dch__alloc_array(a, m->slots, st * sizeof *mv->copies);
    if (mv->slot == NULL || mv->below == NULL || mv->copies == NULL)
        return DCH_ENOMEM;
    for (uint32_t s = 0, i = 0; s < m->slots; s++) {
        const int moved = i < old->n && old->slot[i] == s;
        const uint16_t *below = moved ? old->below + i++ * st : effective(m, s);
        const uint16_t *now = b->cp ? b->cp + s * st : b->own + s;
        if (memcmp(below, now, st * sizeof *now) == 0)
            continue;
        mv->slot[mv->n] = s;
        memcpy(mv->below + mv->n * st, below, st * sizeof *below);
        memcpy(mv->copies + mv->n * st, now, st * sizeof *now);
        mv->n++;
    }
    return DCH_OK;
}

/* Put b's working table in force on m as its load moves; bumps the epoch. */
static int install(dch_map *m, const dch__bal *b)
{
    dch__moves mv;
    int rc = moves_of(m, b, &mv);
    dch__drains d;
    if (rc == DCH_OK)
        rc = dch__drains_build(m, m->dr.ids, m->dr.modes, m->dr.n, &mv, &d);
    if (rc == DCH_OK) {
        dch__map_drains_install(m, &d);
        m->epoch++;
    }
    const dch_allocator *a = m->cfg.allocator;
    void *const blocks[] = {mv.slot, mv.below, mv.copies};
    dch__free_all(a, blocks, 3);
    return rc;
}

int dch_map_balance_load(dch_map *m, const uint64_t *slot_load, uint32_t nslots,
                         const dch_balance_config *cfg, dch_balance_report *rep)
{
    if (m == NULL || slot_load == NULL || nslots != m->slots)
        return DCH_EINVAL;
    if (cfg != NULL && (cfg->version < 1 || cfg->version > DCH_BALANCE_CONFIG_VERSION))
        return DCH_EINVAL;
    dch__bal b;
    memset(&b, 0, sizeof b);
    b.m = m;
    b.load = slot_load;
    b.max_moves = cfg ? cfg->max_moves : 0;
    b.slack = cfg ? cfg->count_slack : UINT32_MAX;
    int rc = dch__bal_setup(&b);
    dch_balance_report r = {0};
    if (rep != NULL) {
        r.left = rep->left;
        r.left_cap = rep->left_cap;
    }
    if (rc == DCH_OK) {
        dch__bal_report_before(&b, &r);
        dch__bal_run(&b);
        if (b.moves + b.promotions > 0)
            rc = install(m, &b);
    }
    if (rc == DCH_OK && rep != NULL) {
        dch__bal_report_after(&b, &r);
        r.in_force = m->dr.mv.n;
        *rep = r;
    }
    dch__bal_free(&b);
    return rc;
}

int dch_map_balance_clear(dch_map *m)
{
    if (m == NULL)
        return DCH_EINVAL;
    if (m->dr.mv.n == 0)
        return DCH_OK;
    dch__drains d;
    const int rc = dch__drains_build(m, m->dr.ids, m->dr.modes, m->dr.n, NULL, &d);
    if (rc != DCH_OK)
        return rc;
    dch__map_drains_install(m, &d);
    m->epoch++;
    return DCH_OK;
}

uint32_t dch_map_balance_moves(const dch_map *m)
{
    return m ? m->dr.mv.n : 0;
}

size_t dch_map_balance_slots(const dch_map *m, uint32_t *slots, size_t cap)
{
    if (m == NULL)
        return 0;
    for (size_t i = 0; slots != NULL && i < cap && i < m->dr.mv.n; i++)
        slots[i] = m->dr.mv.slot[i];
    return m->dr.mv.n;
}
