/* SPDX-License-Identifier: MIT */
/*
 * The effective table (docs/drains.md, "Base and effective"): a clone of
 * the base, then every FULL drain in the order drained, each exactly
 * dch_map_remove_node's removal (the engine's own code, run on the clone),
 * then every PRIMARY drain in the order drained, promotions only
 * (drain_promote.c), then the load moves that are still valid
 * (drain_moves.c). With one copy a slot a PRIMARY drain is a FULL one.
 * The FULL drains come first so that a later removal cannot make a
 * PRIMARY-drained member a primary again (a removal may promote anywhere,
 * map.h, "Replicas", promise 5). The result is a pure function of the base
 * and the ordered list, which is what promises 4 and 6 rest on.
 */
#include "dch/error.h"

#include "alloc.h"
#include "drain_moves.h"
#include "drain_table.h"

#include <string.h>

/* Whether a drain in `mode` takes the member out of the table. */
static int removes(const dch_map *m, uint32_t mode)
{
    return mode == DCH_DRAIN_FULL || m->replicas == 1;
}

/* Run the drains on w, a clone of the base; skip has an entry per id. */
static int run_drains(dch_map *w, const uint32_t *ids, const uint32_t *modes, uint32_t n,
                      uint8_t *skip)
{
    for (uint32_t i = 0; i < n; i++)
        if (removes(w, modes[i])) {
            const int rc = dch__map_base_remove(w, ids[i]);
            if (rc != DCH_OK)
                return rc;
        } else {
            skip[ids[i]] = 1;
        }
    for (uint32_t i = 0; i < n; i++)
        if (!removes(w, modes[i])) {
            const int rc = dch__drain_promote(w, ids[i], skip);
            if (rc != DCH_OK)
                return rc;
        }
    return DCH_OK;
}

/* Take w's table into out and count every id's primaries and copies. */
static void take_table(dch_map *w, dch__drains *out)
{
    out->owner = w->owner;
    out->copies = w->copies;
    w->owner = NULL;
    w->copies = NULL;
    out->ncopies = w->ncopies;
    out->unowned = w->total_weight == 0;
    for (uint32_t id = 0; id < out->limit; id++) {
        const member *mb = id < w->mt.id_limit ? member_of(w, id) : NULL;
        out->slots[id] = mb ? mb->slots : 0;
        if (out->held != NULL)
            out->held[id] = mb ? w->held[id] : 0;
    }
}

int dch__drains_build(const dch_map *m, const uint32_t *ids, const uint32_t *modes, uint32_t n,
                      const dch__moves *mv, dch__drains *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0 && (mv == NULL || mv->n == 0))
        return DCH_OK;
    const dch_allocator *a = m->cfg.allocator;
    const uint32_t limit = m->mt.id_limit;
    out->n = n;
    out->limit = limit;
    out->ids = dch__alloc_array(a, n, sizeof *out->ids);
    out->modes = dch__alloc_array(a, n, sizeof *out->modes);
    out->slots = dch__alloc_array(a, limit, sizeof *out->slots);
    out->held = m->replicas > 1 ? dch__alloc_array(a, limit, sizeof *out->held) : NULL;
    uint8_t *skip = dch__alloc(a, limit);
    dch_map *w = NULL;
    int rc = DCH_ENOMEM;
    if (out->ids && out->modes && out->slots && (m->replicas == 1 || out->held) && skip)
        rc = dch__map_clone_base(&w, m);
    if (rc == DCH_OK) {
        if (n > 0) { /* a layer of load moves alone has no list */
            memcpy(out->ids, ids, (size_t)n * sizeof *ids);
            memcpy(out->modes, modes, (size_t)n * sizeof *modes);
        }
        memset(skip, 0, limit);
        rc = run_drains(w, ids, modes, n, skip);
    }
    if (rc == DCH_OK && mv != NULL && mv->n > 0)
        rc = dch__moves_keep(w, skip, mv, &out->mv);
    if (rc == DCH_OK && n == 0 && out->mv.n == 0)
        dch__map_drains_free(m, out); /* every move dropped: no layer */
    else if (rc == DCH_OK)
        take_table(w, out);
    dch_map_free(w);
    dch__free(a, skip);
    if (rc != DCH_OK)
        dch__map_drains_free(m, out);
    return rc;
}
