/* SPDX-License-Identifier: MIT */
/*
 * Migration plans from the library's diffs (see plan.h).
 */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct builder {
    plan *p;
    const cluster *c;
    int failed;
} builder;

static int add_move(builder *b, uint64_t lo, uint64_t hi, int from, int to)
{
    plan *p = b->p;
    move *nm;
    double f = dch_range_fraction(lo, hi);

    if (from < 0 || to < 0) {
        /* Only an empty router owns nothing, and main refuses to make one. */
        fprintf(stderr, "redis-shard: plan has a range with no owner\n");
        return b->failed = -1;
    }
    nm = realloc(p->moves, (p->n + 1) * sizeof *nm);
    if (nm == NULL) {
        fprintf(stderr, "redis-shard: out of memory\n");
        return b->failed = -1;
    }
    p->moves = nm;
    p->moves[p->n++] = (move){lo, hi, from, to};
    p->fraction += f;
    p->sends[from] += f;
    p->receives[to] += f;
    return 0;
}

/* A move of either diff, by name: map and ring report the same way. */
static int on_move(const dch_move *mv, void *ctx)
{
    builder *b = ctx;

    return add_move(b, mv->lo, mv->hi, mv->from ? cluster_find(b->c, mv->from) : -1,
                    mv->to ? cluster_find(b->c, mv->to) : -1);
}

int plan_build(plan *p, const cluster *c, const view *old, const view *new)
{
    builder b = {p, c, 0};
    int rc;

    memset(p, 0, sizeof *p);
    p->nbook = c->nbook;
    p->sends = calloc(c->nbook, sizeof *p->sends);
    p->receives = calloc(c->nbook, sizeof *p->receives);
    if (p->sends == NULL || p->receives == NULL) {
        fprintf(stderr, "redis-shard: out of memory\n");
        plan_free(p);
        return -1;
    }
    if (old->map != NULL)
        rc = dch_map_diff(old->map, new->map, on_move, &b);
    else
        rc = dch_ring_diff(old->ring, new->ring, on_move, &b);
    if (rc != DCH_OK || b.failed) {
        if (!b.failed)
            fprintf(stderr, "redis-shard: computing the plan: %s\n",
                    dch_strerror(rc));
        plan_free(p);
        return -1;
    }
    return 0;
}

void plan_free(plan *p)
{
    free(p->moves);
    free(p->sends);
    free(p->receives);
    memset(p, 0, sizeof *p);
}

const move *plan_find(const plan *p, uint64_t hash)
{
    size_t lo = 0, hi = p->n;

    /* The first move whose hi is at or past the hash. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (p->moves[mid].hi < hash)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n && p->moves[lo].lo <= hash ? &p->moves[lo] : NULL;
}
