/* SPDX-License-Identifier: MIT */
/*
 * A migration plan: the hash ranges whose owner changes between two versions
 * of the router, with their donor and receiver as address-book indexes.
 *
 * The plan comes from dch_map_diff or dch_ring_diff, which compare owners
 * by name, so the two versions need not number members alike. The plan
 * is exact: a key must move if and only if its hash lies in one of the
 * ranges, and plan_find says which.
 */
#ifndef REDIS_SHARD_PLAN_H
#define REDIS_SHARD_PLAN_H

#include "route.h"

typedef struct move {
    uint64_t lo, hi; /* inclusive */
    int from, to;    /* book indexes */
} move;

typedef struct plan {
    move *moves; /* ascending, disjoint */
    size_t n;
    /** Share of the hash space that changes owner. */
    double fraction;
    /** Per book index: share of the hash space it sends and receives. */
    double *sends, *receives;
    size_t nbook;
} plan;

/** The plan from `old` to `new`, views over the same address book of c. */
int plan_build(plan *p, const cluster *c, const view *old, const view *new);

void plan_free(plan *p);

/** The move whose range holds `hash`, or NULL when its owner stays. O(log n). */
const move *plan_find(const plan *p, uint64_t hash);

#endif /* REDIS_SHARD_PLAN_H */
