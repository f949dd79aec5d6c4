/* SPDX-License-Identifier: MIT */
/*
 * The diff of two maps as named hash ranges.
 *
 * Both maps cut the hash space into the same P slots, so the walk is over
 * slots: a slot's hashes all change owner together, and a range boundary can
 * only fall on a slot boundary. Within one map distinct ids have distinct
 * names, so "the (old name, new name) pair is the same" is "the (old id, new
 * id) pair is the same", and names are compared only when that pair changes.
 */
#include "dch/map_diff.h"

#include "dch/error.h"

#include "map_diff_internal.h"
#include "map_internal.h"

#include <string.h>

static const char *owner_name(const dch_map *m, uint16_t id)
{
    return id == DCH__MAP_UNOWNED ? NULL : dch_map_node_name(m, id);
}

int dch__map_diff_span(const dch_map *from, const dch_map *to, int has_callback,
                       dch__slot_span *span)
{
    if (from == NULL || to == NULL || !has_callback)
        return DCH_EINVAL;
    dch_map_config a, b;
    dch_map_get_config(from, &a);
    dch_map_get_config(to, &b);
    if (a.units != b.units || a.slots_per_unit != b.slots_per_unit ||
        memcmp(a.hash_key, b.hash_key, sizeof a.hash_key) != 0)
        return DCH_EINVAL;
    span->slots = dch_map_slot_count(from);
    span->bits = 0;
    while ((UINT32_C(1) << span->bits) < span->slots)
        span->bits++;
    return DCH_OK;
}

int dch_map_diff(const dch_map *from, const dch_map *to,
                 int (*fn)(const dch_move *mv, void *ctx), void *ctx)
{
    dch__slot_span sp;
    if (dch__map_diff_span(from, to, fn != NULL, &sp) != DCH_OK)
        return DCH_EINVAL;
    const uint32_t P = sp.slots;
    const uint16_t *oa = dch__map_owner_table(from);
    const uint16_t *ob = dch__map_owner_table(to);

    /* The (old id, new id) pair of the previous slot, and whether its names
     * differ; `open` when a move is being grown from slot `start`. */
    uint16_t pa = 0, pb = 0;
    int have_pair = 0, differs = 0, open = 0;
    uint32_t start = 0;
    dch_move mv;
    for (uint32_t s = 0; s <= P; s++) {
        const int same_pair = s < P && have_pair && oa[s] == pa && ob[s] == pb;
        if (same_pair)
            continue;
        /* The pair changes at s (or the table ends): close any open move. */
        if (open) {
            mv.lo = dch__span_lo(&sp, start);
            mv.hi = dch__span_hi(&sp, s);
            const int rc = fn(&mv, ctx);
            if (rc != 0)
                return rc;
            open = 0;
        }
        if (s == P)
            break;
        pa = oa[s];
        pb = ob[s];
        have_pair = 1;
        const char *na = owner_name(from, pa), *nb = owner_name(to, pb);
        differs = (na == NULL) != (nb == NULL) || (na != NULL && strcmp(na, nb) != 0);
        if (differs) {
            mv.from = na;
            mv.to = nb;
            start = s;
            open = 1;
        }
    }
    return DCH_OK;
}
