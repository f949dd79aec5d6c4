/* SPDX-License-Identifier: MIT */
/*
 * The diff of two rings as named hash ranges (ring_diff.h).
 *
 * Each ring's arcs come from a cursor over its points (ring_points.c), so
 * the walk allocates nothing: like a merge, every step ends at the nearer of
 * the two current arc ends, and within a step both owners are constant.
 * Within one ring distinct ids have distinct names, so names are compared
 * only when the (old id, new id) pair changes; a changed step that touches
 * the pending move and has its (from, to) names extends it.
 */
#include "dch/ring_diff.h"

#include "dch/error.h"

#include "ring_points.h"

#include <stdbool.h>
#include <string.h>

static bool same_name(const char *a, const char *b)
{
    return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* Rings whose keys hash the same way, so that one hash range means the same
 * keys in both. */
static bool comparable(const dch_ring *from, const dch_ring *to)
{
    dch_ring_config a, b;
    dch_ring_get_config(from, &a);
    dch_ring_get_config(to, &b);
    if (a.placement != b.placement)
        return false;
    return a.placement == DCH_RING_PLACE_KETAMA ||
           memcmp(a.hash_key, b.hash_key, sizeof a.hash_key) == 0;
}

int dch_ring_diff(const dch_ring *from, const dch_ring *to,
                  int (*fn)(const dch_move *mv, void *ctx), void *ctx)
{
    if (from == NULL || to == NULL || fn == NULL || !comparable(from, to))
        return DCH_EINVAL;
    dch__points_cursor ca, cb;
    dch__points_cursor_init(&ca, dch__ring_points_of(from));
    dch__points_cursor_init(&cb, dch__ring_points_of(to));
    dch_range ra, rb;
    (void)dch__points_cursor_next(&ca, &ra); /* each ring has one arc at least */
    (void)dch__points_cursor_next(&cb, &rb);

    uint32_t pa = DCH_NODE_NONE, pb = DCH_NODE_NONE; /* the last id pair */
    bool have_pair = false, differs = false, pending = false;
    const char *na = NULL, *nb = NULL;
    dch_move mv = {0, 0, NULL, NULL};
    uint64_t lo = 0;
    for (;;) {
        const uint64_t hi = ra.hi < rb.hi ? ra.hi : rb.hi;
        if (!have_pair || ra.owner != pa || rb.owner != pb) {
            pa = ra.owner;
            pb = rb.owner;
            have_pair = true;
            na = dch_ring_node_name(from, pa);
            nb = dch_ring_node_name(to, pb);
            differs = !same_name(na, nb);
        }
        if (differs && pending && mv.hi + 1 == lo && same_name(mv.from, na) &&
            same_name(mv.to, nb)) {
            mv.hi = hi;
        } else if (differs) {
            if (pending) {
                const int rc = fn(&mv, ctx);
                if (rc != 0)
                    return rc;
            }
            mv = (dch_move){lo, hi, na, nb};
            pending = true;
        }
        if (hi == UINT64_MAX)
            break;
        if (ra.hi == hi)
            (void)dch__points_cursor_next(&ca, &ra);
        if (rb.hi == hi)
            (void)dch__points_cursor_next(&cb, &rb);
        lo = hi + 1;
    }
    return pending ? fn(&mv, ctx) : DCH_OK;
}
