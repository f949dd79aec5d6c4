/* SPDX-License-Identifier: MIT */
/*
 * The copy diff of two maps: where the set of members holding a slot's data
 * changes, which member gains a copy, which loses one, and where the gainer
 * reads the data from.
 *
 * The walk is over slots, as for dch_map_diff (map_diff.c). A slot's changes
 * are computed from its two copy lists by name: the members of `to`'s list
 * absent from `from`'s gain (in `to`'s order), those of `from`'s absent from
 * `to`'s lose (in `from`'s order), the k-th gain paired with the k-th loss.
 * The source is the first member of `to`'s list (primary first) that holds
 * the slot in `from` too, which is the new primary whenever it held a copy;
 * failing one, `from`'s primary, which keeps its data until the migration
 * ends. Adjacent slots with the same changes by name form one range. Two
 * slots with the same pair of id lists have the same changes, so the names
 * are compared only where the pair changes. Everything lives on the stack:
 * a slot has at most DCH_MAP_MAX_REPLICAS copies in each map.
 */
#include "dch/map_diff.h"

#include "dch/error.h"

#include "map_diff_internal.h"

#include <string.h>

#define MAXC DCH_MAP_MAX_REPLICAS

/* The changes of one slot: n (gain, lose) pairs and the slot's source. */
typedef struct slot_changes {
    uint32_t n;
    const char *gain[MAXC];
    const char *lose[MAXC];
    const char *source;
} slot_changes;

static int same_name(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int same_changes(const slot_changes *x, const slot_changes *y)
{
    if (x->n != y->n || !same_name(x->source, y->source))
        return 0;
    for (uint32_t k = 0; k < x->n; k++)
        if (!same_name(x->gain[k], y->gain[k]) || !same_name(x->lose[k], y->lose[k]))
            return 0;
    return 1;
}

/* Whether `name` is among the n names of list. */
static int listed(const char *const *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], name) == 0)
            return 1;
    return 0;
}

/* The changes of a slot whose copies are the na names a (in `from`) and
 * the nb names b (in `to`). */
static void changes_of(const char *const *a, size_t na, const char *const *b, size_t nb,
                       slot_changes *c)
{
    uint32_t gains = 0, losses = 0;
    for (size_t i = 0; i < nb; i++)
        if (!listed(a, na, b[i]))
            c->gain[gains++] = b[i];
    for (size_t i = 0; i < na; i++)
        if (!listed(b, nb, a[i]))
            c->lose[losses++] = a[i];
    c->n = gains > losses ? gains : losses;
    for (uint32_t k = gains; k < c->n; k++)
        c->gain[k] = NULL;
    for (uint32_t k = losses; k < c->n; k++)
        c->lose[k] = NULL;
    c->source = na > 0 ? a[0] : NULL;
    for (size_t i = 0; i < nb; i++)
        if (listed(a, na, b[i])) {
            c->source = b[i];
            break;
        }
}

/* The names of slot s's copies in m into names; their number. */
static size_t copy_names(const dch_map *m, uint32_t s, uint32_t *ids, const char **names)
{
    const size_t n = dch_map_slot_replicas(m, s, ids, MAXC);
    for (size_t i = 0; i < n; i++)
        names[i] = dch_map_node_name(m, ids[i]);
    return n;
}

/* Report every change of the range [lo, hi]; fn's first non-zero value. */
static int emit(const slot_changes *c, uint64_t lo, uint64_t hi,
                int (*fn)(const dch_copy_move *cm, void *ctx), void *ctx)
{
    for (uint32_t k = 0; k < c->n; k++) {
        const dch_copy_move cm = {lo, hi, c->gain[k], c->lose[k], c->source};
        const int rc = fn(&cm, ctx);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int dch_map_diff_copies(const dch_map *from, const dch_map *to,
                        int (*fn)(const dch_copy_move *cm, void *ctx), void *ctx)
{
    dch__slot_span sp;
    if (dch__map_diff_span(from, to, fn != NULL, &sp) != DCH_OK)
        return DCH_EINVAL;
    /* The id lists of the previous slot, to skip slots that repeat them. */
    uint32_t pa[MAXC], pb[MAXC], ia[MAXC], ib[MAXC];
    size_t pna = 0, pnb = 0;
    const char *a[MAXC], *b[MAXC];
    slot_changes run, cur;
    memset(&run, 0, sizeof run);
    int is_open = 0;
    uint32_t start = 0;
    for (uint32_t s = 0; s < sp.slots; s++) {
        const size_t na = copy_names(from, s, ia, a);
        const size_t nb = copy_names(to, s, ib, b);
        if (s > 0 && na == pna && nb == pnb && memcmp(ia, pa, na * sizeof *ia) == 0 &&
            memcmp(ib, pb, nb * sizeof *ib) == 0)
            continue; /* the previous slot's changes, already open or none */
        memcpy(pa, ia, na * sizeof *ia);
        memcpy(pb, ib, nb * sizeof *ib);
        pna = na;
        pnb = nb;
        changes_of(a, na, b, nb, &cur);
        if (is_open && same_changes(&run, &cur))
            continue;
        if (is_open) {
            const int rc = emit(&run, dch__span_lo(&sp, start), dch__span_hi(&sp, s), fn, ctx);
            if (rc != 0)
                return rc;
            is_open = 0;
        }
        if (cur.n > 0) {
            run = cur;
            start = s;
            is_open = 1;
        }
    }
    if (is_open)
        return emit(&run, dch__span_lo(&sp, start), dch__span_hi(&sp, sp.slots), fn, ctx);
    return DCH_OK;
}
