/* SPDX-License-Identifier: MIT */
/*
 * Replica placements and their figures, for the replica section: copies kept
 * as pieces of the hash space, each with its copy list, so that a DCH map
 * (a piece a slot) and a ring (a piece a range) are measured by the same
 * code, and two states of one scheme compare piece by piece whatever their
 * boundaries. Members are numbers (an_node_number: node-01 is 0) below
 * `nodes`; member i is in zone i mod zones.
 */
#ifndef DCH_ANALYSIS_REPLICA_FIGURES_H
#define DCH_ANALYSIS_REPLICA_FIGURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Copies of every key in the replica section. */
#define AN_COPIES 3u

/** Pieces [lo, hi] covering the hash space in order, each with AN_COPIES
 *  member numbers (DCH_NODE_NONE past its copy count). */
typedef struct an_placement {
    size_t n, cap;
    uint64_t *lo, *hi;
    uint32_t *ids;
} an_placement;

/** Free the pieces; p is then empty. */
void an_placement_free(an_placement *p);

/** Append piece [lo, hi] with the first n of ids. @return DCH_OK, DCH_ENOMEM
 *  (p unchanged). */
int an_placement_push(an_placement *p, uint64_t lo, uint64_t hi,
                      const uint32_t *ids, size_t n);

/** The share of the hash space in [lo, hi]. */
double an_width_of(uint64_t lo, uint64_t hi);

/**
 * The zone-aware walk: from the distinct members of a clockwise walk, the
 * first of each zone not yet used, up to AN_COPIES, to out. When `complete`
 * (the walk holds every member) and fewer zones exist, the members passed
 * over fill the rest in walk order. @return the count, or 0 when an
 * incomplete walk found too few zones (walk further and call again).
 * zones is 1 .. 8.
 */
size_t an_pick_zones(const uint32_t *walk, size_t n, bool complete,
                     unsigned zones, uint32_t *out);

/** Copy balance and zone violations of one state. */
typedef struct an_state_figs {
    double copy_max, copy_min; /* copies of a member over the mean */
    double violations;         /* share of the hash space short of zones */
} an_state_figs;

/**
 * The figures of a state whose members are present[0 .. nodes-1]: copies of
 * each member (to copies[], a share of the hash space), and the share of
 * the hash space whose copies sit in fewer zones than min(copies, zones
 * present). zones is 1 .. 8.
 */
an_state_figs an_state_of(const an_placement *p, const bool *present,
                          uint32_t nodes, unsigned zones, double *copies);

/** Copies that b has and a has not (share of the hash space, once a copy);
 *  each member's part is added to gain[] unless gain is NULL. */
double an_new_copies(const an_placement *a, const an_placement *b, double *gain,
                     uint32_t nodes);

/** Who is first copy in b where `failed` was first in a: got[] (zeroed
 *  first) per member. */
void an_new_primaries(const an_placement *a, const an_placement *b,
                      uint32_t failed, double *got, uint32_t nodes);

/** Where the first copy changes from a to b: the share of the hash space
 *  whose first copy is another member (changed), and the part of that whose
 *  new first copy already held a copy in a (promoted: no data moves, a copy
 *  only takes the primary role). With `failed` a member number, only the
 *  pieces that member was first copy of in a count; DCH_NODE_NONE: all. */
typedef struct an_primary_change {
    double changed, promoted;
} an_primary_change;

an_primary_change an_primary_changes(const an_placement *a, const an_placement *b,
                                     uint32_t failed);

/** The second copy of every piece `failed` is first copy of, per member,
 *  to got[] (zeroed first): who serves its reads once it fails. */
void an_read_load(const an_placement *p, uint32_t failed, uint32_t nodes,
                  double *got);

/** How a share spreads over the survivors (present, but `failed`). */
typedef struct an_spread {
    double max_over_mean; /* NaN when nobody got anything */
    uint32_t receivers;   /* survivors that got any */
} an_spread;

an_spread an_spread_of(const double *got, const bool *present, uint32_t nodes,
                       uint32_t failed);

#endif /* DCH_ANALYSIS_REPLICA_FIGURES_H */
