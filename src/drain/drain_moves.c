/* SPDX-License-Identifier: MIT */
/*
 * Load moves on the table below them (docs/balance.md, "The layer"): which
 * moves a rebuilt table keeps, and the keeping itself. A move is kept while
 * its slot's copies below are what they were when it was made and every
 * member it hands the slot to may still serve: so a call that moved the
 * slot anyway, or took a receiver out of service, drops it, and nothing a
 * move names is ever a member that no longer balances. A list read from a
 * file has no `below`: each of its moves must be valid on the table below
 * as it is, or the file is damaged.
 */
#include "dch/error.h"

#include "alloc.h"
#include "drain_moves.h"

#include <string.h>

/* The copies of slot s in w: stride entries (the owner entry alone with one
 * copy a slot). */
static uint16_t *block(dch_map *w, uint32_t s)
{
    return w->copies ? w->copies + (size_t)s * w->stride : w->owner + s;
}

static int holds(const uint16_t *b, uint32_t n, uint16_t id)
{
    for (uint32_t k = 0; k < n; k++)
        if (b[k] == id)
            return 1;
    return 0;
}

uint32_t dch__zones_spanned(const dch_map *m, const uint16_t *b, uint32_t n)
{
    uint32_t seen[DCH_MAP_MAX_REPLICAS], z = 0;
    for (uint32_t k = 0; k < n && b[k] != NONE16; k++) {
        /* A member with no zone is a zone of its own: a key no zone has. */
        const uint32_t key = zone_of(m, b[k]) ? zone_of(m, b[k]) : 0x10000u + b[k];
        uint32_t j = 0;
        while (j < z && seen[j] != key)
            j++;
        if (j == z)
            seen[z++] = key;
    }
    return z;
}

/* Whether id may be handed a slot by a move on w: a member of positive
 * weight under no drain (FULL drains are gone from w, PRIMARY ones are
 * marked in skip). */
static int may_serve(const dch_map *w, const uint8_t *skip, uint16_t id)
{
    const member *mb = id != NONE16 ? member_of(w, id) : NULL;
    return mb != NULL && mb->weight > 0 && !skip[id];
}

/* Whether copies c (stride entries) may replace below b in w: different,
 * as many copies, all distinct, the primary and every member b lacks may
 * serve, and no fewer zones spanned (map.h, "Replicas", promise 2). */
static int valid(const dch_map *w, const uint8_t *skip, const uint16_t *b, const uint16_t *c)
{
    const uint32_t n = slot_copies(w);
    if (memcmp(b, c, w->stride * sizeof *c) == 0 || !may_serve(w, skip, c[0]))
        return 0;
    for (uint32_t k = 0; k < w->stride; k++) {
        if ((k < n) != (c[k] != NONE16) || (k < n && holds(c, k, c[k])))
            return 0;
        if (k < n && !holds(b, n, c[k]) && !may_serve(w, skip, c[k]))
            return 0;
    }
    return dch__zones_spanned(w, c, n) >= dch__zones_spanned(w, b, n);
}

/* Put copies c in place of slot s's copies in w, counts included. */
static void apply(dch_map *w, uint32_t s, const uint16_t *c)
{
    uint16_t *b = block(w, s);
    const uint32_t n = slot_copies(w);
    for (uint32_t k = 0; w->held != NULL && k < n; k++) {
        if (!holds(c, n, b[k]))
            w->held[b[k]]--;
        if (!holds(b, n, c[k]))
            w->held[c[k]]++;
    }
    entry(w, b[0])->slots--;
    entry(w, c[0])->slots++;
    memcpy(b, c, w->stride * sizeof *c);
    w->owner[s] = c[0];
}

int dch__moves_keep(dch_map *w, const uint8_t *skip, const dch__moves *in, dch__moves *out)
{
    memset(out, 0, sizeof *out);
    const dch_allocator *a = w->cfg.allocator;
    const size_t st = w->stride;
    out->slot = dch__alloc_array(a, in->n, sizeof *out->slot);
    out->below = dch__alloc_array(a, in->n, st * sizeof *out->below);
    out->copies = dch__alloc_array(a, in->n, st * sizeof *out->copies);
    if (out->slot == NULL || out->below == NULL || out->copies == NULL) {
        dch__moves_free(w, out);
        return DCH_ENOMEM;
    }
    for (uint32_t i = 0; i < in->n; i++) {
        const uint32_t s = in->slot[i];
        const uint16_t *c = in->copies + i * st;
        const int ordered = s < w->slots && (i == 0 || in->slot[i - 1] < s);
        const uint16_t *b = ordered ? block(w, s) : NULL;
        const int same = in->below == NULL || (b && !memcmp(b, in->below + i * st, st * 2));
        if (b != NULL && same && valid(w, skip, b, c)) {
            out->slot[out->n] = s;
            memcpy(out->below + out->n * st, b, st * sizeof *b);
            memcpy(out->copies + out->n * st, c, st * sizeof *c);
            out->n++;
            apply(w, s, c);
        } else if (in->below == NULL) { /* a file's move that is not valid */
            dch__moves_free(w, out);
            return DCH_ECORRUPT;
        }
    }
    return DCH_OK;
}

void dch__moves_free(const dch_map *m, dch__moves *mv)
{
    void *const blocks[] = {mv->slot, mv->below, mv->copies};
    dch__free_all(m->cfg.allocator, blocks, 3);
    memset(mv, 0, sizeof *mv);
}
