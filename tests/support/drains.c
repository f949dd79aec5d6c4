/* SPDX-License-Identifier: MIT */
/*
 * The drain promises, checked through the public API (drains.h).
 */
#include "drains.h"

#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE DCH_NODE_NONE

uint32_t drain_list_find(const drain_list *l, uint32_t id)
{
    uint32_t i = 0;
    while (i < l->n && l->ids[i] != id)
        i++;
    return i;
}

void drain_list_drop(drain_list *l, uint32_t id)
{
    const uint32_t i = drain_list_find(l, id);
    if (i == l->n)
        return;
    memmove(l->ids + i, l->ids + i + 1, (l->n - i - 1) * sizeof *l->ids);
    memmove(l->modes + i, l->modes + i + 1, (l->n - i - 1) * sizeof *l->modes);
    l->n--;
}

void drain_list_drain(drain_list *l, uint32_t id, uint32_t mode)
{
    const uint32_t i = drain_list_find(l, id);
    if (i < l->n && l->modes[i] == mode)
        return;
    drain_list_drop(l, id);
    l->ids[l->n] = id;
    l->modes[l->n++] = mode;
}

uint32_t *drain_table(const dch_map *m, bool base)
{
    const uint32_t P = dch_map_slot_count(m);
    uint32_t *t = xmalloc((size_t)P * DRAIN_ROW * sizeof *t);
    for (uint32_t s = 0; s < P; s++) {
        uint32_t *row = t + (size_t)s * DRAIN_ROW;
        const size_t n = base ? dch_map_base_replicas(m, s, row, DRAIN_ROW)
                              : dch_map_slot_replicas(m, s, row, DRAIN_ROW);
        for (size_t k = n; k < DRAIN_ROW; k++)
            row[k] = NONE;
    }
    return t;
}

bool drain_same_table(const uint32_t *a, const uint32_t *b, uint32_t P)
{
    return memcmp(a, b, (size_t)P * DRAIN_ROW * sizeof *a) == 0;
}

bool drain_row_has(const uint32_t *row, uint32_t id)
{
    for (uint32_t k = 0; k < DRAIN_ROW; k++)
        if (row[k] == id && id != NONE)
            return true;
    return false;
}

static bool same_set(const uint32_t *a, const uint32_t *b)
{
    for (uint32_t k = 0; k < DRAIN_ROW; k++)
        if ((a[k] != NONE && !drain_row_has(b, a[k])) || (b[k] != NONE && !drain_row_has(a, b[k])))
            return false;
    return true;
}

uint64_t drain_copies_moved(const uint32_t *a, const uint32_t *b, uint32_t P)
{
    uint64_t n = 0;
    for (size_t i = 0; i < (size_t)P * DRAIN_ROW; i++)
        n += b[i] != NONE && !drain_row_has(a + i / DRAIN_ROW * DRAIN_ROW, b[i]);
    return n;
}

static bool removes(const dch_map *m, uint32_t mode)
{
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    return mode == DCH_DRAIN_FULL || cfg.replicas == 1;
}

/* One slot of the effective table against the oracle's row rw (FULL drains
 * applied); NULL or what broke. */
static const char *check_row(const uint32_t *rw, const uint32_t *rg, const drain_list *l)
{
    const bool pdrained = rw[0] != NONE && drain_list_find(l, rw[0]) < l->n;
    if (!pdrained)
        return memcmp(rw, rg, DRAIN_ROW * sizeof *rw) != 0 ? "a row differs from the oracle's"
                                                           : NULL;
    if (!same_set(rw, rg))
        return "a promotion changed a slot's copies";
    if (drain_list_find(l, rg[0]) < l->n)
        for (uint32_t k = 0; k < DRAIN_ROW; k++)
            if (rg[k] != NONE && drain_list_find(l, rg[k]) == l->n)
                return "a PRIMARY-drained member stayed primary";
    return NULL;
}

static const char *check_effective(const dch_map *m, const dch_map *b, const drain_list *l)
{
    static char msg[160];
    dch_map *w = map_clone_of(b);
    const char *bad = NULL;
    for (uint32_t i = 0; i < l->n && bad == NULL; i++)
        if (removes(m, l->modes[i]) && dch_map_remove_node(w, l->ids[i]) != DCH_OK)
            bad = "the oracle's removal failed";
    uint32_t *want = drain_table(w, false), *got = drain_table(m, false);
    const uint32_t P = dch_map_slot_count(m);
    for (uint32_t s = 0; s < P && bad == NULL; s++) {
        bad = check_row(want + (size_t)s * DRAIN_ROW, got + (size_t)s * DRAIN_ROW, l);
        if (bad != NULL) {
            snprintf(msg, sizeof msg, "slot %u: %s", s, bad);
            bad = msg;
        }
    }
    free(want);
    free(got);
    dch_map_free(w);
    return bad;
}

/* Counts, lookups and ranges agree with the effective table. */
static const char *check_readers(const dch_map *m)
{
    const uint32_t P = dch_map_slot_count(m), limit = dch_map_id_limit(m);
    uint32_t *slots = xcalloc(limit + 1, sizeof *slots), *copies = xcalloc(limit + 1, 4);
    const char *bad = NULL;
    for (uint32_t s = 0; s < P; s++) {
        uint32_t row[DRAIN_ROW];
        const size_t n = dch_map_slot_replicas(m, s, row, DRAIN_ROW);
        if (n > 0 ? row[0] != dch_map_slot_owner(m, s) : dch_map_slot_owner(m, s) != NONE)
            bad = "slot_owner is not the first copy";
        for (size_t k = 0; k < n; k++) {
            copies[row[k]]++;
            slots[row[k]] += k == 0;
        }
    }
    for (uint32_t id = 0; id < limit && bad == NULL; id++)
        if (dch_map_node_name(m, id) != NULL &&
            (dch_map_node_slots(m, id) != slots[id] || dch_map_node_copies(m, id) != copies[id]))
            bad = "node_slots or node_copies disagree with the effective table";
    free(slots);
    free(copies);
    size_t nr;
    dch_range *rg = bad ? NULL : map_ranges_of(m, &nr);
    for (size_t i = 0; rg != NULL && i < nr && bad == NULL; i++)
        if (dch_map_lookup_hash(m, rg[i].lo) != rg[i].owner ||
            dch_map_lookup_hash(m, rg[i].hi) != rg[i].owner ||
            dch_map_slot_owner(m, dch_map_slot_of(m, rg[i].lo)) != rg[i].owner)
            bad = "a range disagrees with lookups";
    free(rg);
    return bad;
}

static const char *check_list(const dch_map *m, const dch_map *b, const drain_list *l)
{
    uint32_t ids[256], modes[256];
    if (dch_map_drains(m, ids, modes, 256) != l->n)
        return "dch_map_drains counts other drains";
    for (uint32_t i = 0; i < l->n; i++)
        if (ids[i] != l->ids[i] || modes[i] != l->modes[i] ||
            dch_map_node_drained(m, ids[i]) != modes[i])
            return "the drain list is not the one made";
    for (uint32_t id = 0; id < dch_map_id_limit(m); id++)
        if (dch_map_node_drained(m, id) != 0 && drain_list_find(l, id) == l->n)
            return "a member reports a drain it does not have";
    if ((dch_map_fingerprint(m) == dch_map_fingerprint(b)) != (l->n == 0))
        return l->n ? "the fingerprint misses the drains" : "no drain, yet another fingerprint";
    return NULL;
}

const char *drain_check(const dch_map *m, const dch_map *b, const drain_list *l)
{
    const uint32_t P = dch_map_slot_count(m);
    uint32_t *base = drain_table(m, true), *want = drain_table(b, false);
    const bool same = drain_same_table(base, want, P);
    free(base);
    free(want);
    if (!same)
        return "the base is not the drain-free map's table";
    const char *bad = check_list(m, b, l);
    if (bad == NULL)
        bad = check_effective(m, b, l);
    if (bad == NULL)
        bad = check_readers(m);
    return bad;
}
