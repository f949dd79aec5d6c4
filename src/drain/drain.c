/* SPDX-License-Identifier: MIT */
/*
 * Drains: the list of drained members in the order drained, and the calls
 * that change and read it (map.h, "Drains"; docs/drains.md has the design
 * and the proofs). Every change builds the new list's effective table
 * (drain_table.c) before anything of the map changes, so a failure leaves
 * the map as it was; the base table is never touched here.
 */
#include "dch/error.h"

#include "alloc.h"
#include "drain_moves.h"
#include "drain_table.h"
#include "map_internal.h"

#include <string.h>

/* Position of id in m's list, or m->dr.n. */
static uint32_t find(const dch_map *m, uint32_t id)
{
    uint32_t i = 0;
    while (i < m->dr.n && m->dr.ids[i] != id)
        i++;
    return i;
}

/* The list of m without id (if listed), then (id, mode) if mode != 0, into
 * ids and modes (m->dr.n + 1 entries each); its length. */
static uint32_t edit(const dch_map *m, uint32_t id, uint32_t mode, uint32_t *ids,
                     uint32_t *modes)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->dr.n; i++)
        if (m->dr.ids[i] != id) {
            ids[n] = m->dr.ids[i];
            modes[n++] = m->dr.modes[i];
        }
    if (mode != 0) {
        ids[n] = id;
        modes[n++] = mode;
    }
    return n;
}

int dch__map_redrain(const dch_map *m, const dch_map *base, uint32_t id, uint32_t mode,
                     dch__drains *out)
{
    const dch_allocator *a = m->cfg.allocator;
    uint32_t *ids = dch__alloc_array(a, (size_t)m->dr.n + 1, 2 * sizeof *ids);
    if (ids == NULL)
        return DCH_ENOMEM;
    uint32_t *modes = ids + m->dr.n + 1;
    const uint32_t n = edit(m, id, mode, ids, modes);
    const int rc = dch__drains_build(base, ids, modes, n, &m->dr.mv, out);
    dch__free(a, ids);
    return rc;
}

/* Put the list of m with id's drain set to mode (0: ended) in force. */
static int change(dch_map *m, uint32_t id, uint32_t mode)
{
    dch__drains d;
    const int rc = dch__map_redrain(m, m, id, mode, &d);
    if (rc != DCH_OK)
        return rc;
    dch__map_drains_install(m, &d);
    m->epoch++;
    return DCH_OK;
}

int dch_map_drain(dch_map *m, uint32_t id, uint32_t mode)
{
    if (m == NULL || (mode != DCH_DRAIN_PRIMARY && mode != DCH_DRAIN_FULL))
        return DCH_EINVAL;
    if (member_of(m, id) == NULL)
        return DCH_ENOENT;
    const uint32_t i = find(m, id);
    if (i < m->dr.n && m->dr.modes[i] == mode)
        return DCH_OK;
    return change(m, id, mode);
}

int dch_map_undrain(dch_map *m, uint32_t id)
{
    if (m == NULL)
        return DCH_EINVAL;
    if (member_of(m, id) == NULL)
        return DCH_ENOENT;
    if (find(m, id) == m->dr.n)
        return DCH_OK;
    return change(m, id, 0);
}

uint32_t dch_map_node_drained(const dch_map *m, uint32_t id)
{
    if (member_of(m, id) == NULL)
        return 0;
    const uint32_t i = find(m, id);
    return i < m->dr.n ? m->dr.modes[i] : 0;
}

size_t dch_map_drains(const dch_map *m, uint32_t *ids, uint32_t *modes, size_t cap)
{
    if (m == NULL)
        return 0;
    for (size_t i = 0; i < cap && i < m->dr.n; i++) {
        if (ids != NULL)
            ids[i] = m->dr.ids[i];
        if (modes != NULL)
            modes[i] = m->dr.modes[i];
    }
    return m->dr.n;
}

/* Put in force on m the drains (n) and then the moves of mv that stay
 * valid (all of them must, for a list with no below). */
static int set_layer(dch_map *m, const uint32_t *ids, const uint32_t *modes, uint32_t n,
                     const dch__moves *mv)
{
    for (uint32_t i = 0; i < n; i++) {
        if (member_of(m, ids[i]) == NULL ||
            (modes[i] != DCH_DRAIN_PRIMARY && modes[i] != DCH_DRAIN_FULL))
            return DCH_ECORRUPT;
        for (uint32_t j = 0; j < i; j++)
            if (ids[j] == ids[i])
                return DCH_ECORRUPT;
    }
    dch__drains d;
    const int rc = dch__drains_build(m, ids, modes, n, mv, &d);
    if (rc == DCH_OK)
        dch__map_drains_install(m, &d);
    return rc;
}

int dch__map_set_drains(dch_map *m, const uint32_t *ids, const uint32_t *modes, uint32_t n)
{
    return set_layer(m, ids, modes, n, NULL);
}

int dch__map_set_layer(dch_map *m, const uint32_t *ids, const uint32_t *modes, uint32_t n,
                       const uint32_t *slots, const uint16_t *copies, uint32_t nmv,
                       uint32_t width)
{
    if (nmv == 0)
        return set_layer(m, ids, modes, n, NULL);
    if (width == 0 || width > m->stride)
        return DCH_ECORRUPT;
    const dch_allocator *a = m->cfg.allocator;
    dch__moves mv = {nmv, dch__alloc_array(a, nmv, sizeof *mv.slot), NULL,
                     dch__alloc_array(a, nmv, m->stride * sizeof *mv.copies)};
    int rc = DCH_ENOMEM;
    if (mv.slot != NULL && mv.copies != NULL) {
        rc = DCH_OK;
        for (uint32_t i = 0; i < nmv; i++) {
            mv.slot[i] = slots[i];
            for (uint32_t k = 0; k < m->stride; k++) {
                /* Exactly `width` copies: one that is no member is damage. */
                const uint16_t c = k < width ? copies[i * width + k] : NONE16;
                rc = k < width && c == NONE16 ? DCH_ECORRUPT : rc;
                mv.copies[i * m->stride + k] = c;
            }
        }
        if (rc == DCH_OK)
            rc = set_layer(m, ids, modes, n, &mv);
    }
    dch__moves_free(m, &mv);
    return rc;
}

int dch__map_copy_layer(dch_map *m, const dch_map *from)
{
    if (from->dr.mv.n > 0 && m->stride != from->stride)
        return DCH_EINVAL;
    return set_layer(m, from->dr.ids, from->dr.modes, from->dr.n, &from->dr.mv);
}

uint32_t dch__map_moves(const dch_map *m, uint32_t *width)
{
    *width = m->replicas > 1 ? m->dr.ncopies : 1;
    return m->dr.mv.n;
}

void dch__map_move_at(const dch_map *m, size_t i, uint32_t *slot, uint16_t *copies)
{
    *slot = m->dr.mv.slot[i];
    const uint32_t width = m->replicas > 1 ? m->dr.ncopies : 1;
    memcpy(copies, m->dr.mv.copies + i * m->stride, width * sizeof *copies);
}

void dch__map_drain_at(const dch_map *m, size_t i, uint32_t *id, uint32_t *mode)
{
    *id = m->dr.ids[i];
    *mode = m->dr.modes[i];
}
