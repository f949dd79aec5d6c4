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
    const int rc = dch__drains_build(base, ids, modes, n, out);
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

int dch__map_set_drains(dch_map *m, const uint32_t *ids, const uint32_t *modes, uint32_t n)
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
    const int rc = dch__drains_build(m, ids, modes, n, &d);
    if (rc == DCH_OK)
        dch__map_drains_install(m, &d);
    return rc;
}

void dch__map_drain_at(const dch_map *m, size_t i, uint32_t *id, uint32_t *mode)
{
    *id = m->dr.ids[i];
    *mode = m->dr.modes[i];
}
