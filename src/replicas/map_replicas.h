/* SPDX-License-Identifier: MIT */
/*
 * The replica engine of the DCH map: R copies of every slot, in distinct
 * zones, for maps made with dch_map_config.replicas >= 2. Internal to
 * libdch; docs/replicas.md states the rule and the proofs of the
 * promises map.h makes. The engine lives in src/replicas/ (rep_apply.c
 * first); this is what the map (map.c) sees of it.
 */
#ifndef DCH_SRC_MAP_REPLICAS_H
#define DCH_SRC_MAP_REPLICAS_H

#include "dch/common.h"

#include "map_engine.h"

#include <stdint.h>

/** What the replica engine reads and changes of a map. */
typedef struct dch__rep_view {
    uint16_t *owner; /* P primaries: owner[s] == copies[s * stride] */
    uint16_t *copies; /* P blocks of stride entries, DCH__MAP_UNOWNED past n */
    uint32_t slots, replicas, stride; /* P, R, R rounded up to a power of two */
    uint32_t id_limit;
    dch__member *members; /* weight, slots (primaries) */
    uint32_t *held; /* per id: copies held over all positions */
    uint32_t *zone; /* per id: 0 (a zone of its own) or 1 + its zone's index */
} dch__rep_view;

/**
 * Scratch for one weight change, allocated before the map changes so that
 * applying cannot fail: 76 bytes per member id, 8 per copy that can move,
 * and the diversity rows, 4 bytes per entry (dch__rep_rows).
 */
typedef struct dch__rep_move {
    /* Several per-id arrays mean different things in different stages;
     * each line names every use, by file. A stage sets what it reads. */
    const dch_allocator *alloc;
    int64_t *dev; /* copies*2^32 - copy share*2^32, the plan's (I3) */
    int64_t *pdev; /* primaries*W - P*w (rep_primaries.c); in rep_shares.c
                      the sort keys of members by zone */
    int64_t *share; /* copy share * 2^32 */
    uint32_t *quota; /* copies it still gives (raise) or takes (lowering) */
    uint32_t *heap; /* a binary heap of ids (rep_book.c); the reroute's BFS
                       queue (rep_reroute.c) */
    uint32_t *pos; /* the record index a member was reached through
                      (rep_reroute.c); the member a chain came from
                      (rep_primaries.c) */
    uint32_t *pair; /* rep_raise.c: slots it shares with x, kept as x
                       takes; rep_lower.c: its count before the call
                       (read by promise 6's cap, lower_full) */
    uint32_t *zone; /* its zone key (equal keys, same zone) */
    uint32_t *stuck; /* found no slot it may trade in this call */
    uint32_t *from; /* rep_lower.c: its pool, or UINT32_MAX (rep_raise.c
                       sets UINT32_MAX: no pools); rep_primaries.c: the
                       chain's slot; rep_shares.c: a zone's weight */
    uint32_t *mark; /* visited stamp (rep_reroute.c, rep_primaries.c);
                       rep_shares.c: a zone's bound state */
    uint32_t *queue; /* rep_lower.c: the receivers of a round;
                        rep_shares.c: each zone's first key;
                        rep_relieve.c: the far look-ahead bound */
    uint32_t *avail; /* rep_raise.c, rep_lower.c: slots it may still trade
                        in; rep_reroute.c: the member it was reached from
                        (overwrites avail, read by no later pass of the
                        round); rep_relieve.c: the near look-ahead bound */
    uint32_t *cap; /* rep_raise.c, rep_lower.c: its count once the plan's
                      moves are made (not a bound); rep_relieve.c:
                      promise 7's bound, dch__rep_share_limit */
    uint32_t *rowof; /* its row in rows, or UINT32_MAX */
    uint32_t *col; /* its column in a row: a dense index of the members of
                      positive weight and x, UINT32_MAX for the others */
    uint32_t *rows; /* nrows rows of ncols shared-slot counts */
    uint32_t entries, nrows, ncols; /* room for `entries` counts; the
                                       rows in use (rep_rows.c) */
    int exact; /* the rows equal a count afresh: every move since it was
                  counted (placement, splitting) counted its pairs; a
                  reroute or the last resort clears it */
    uint32_t *rec_at, *rec_from; /* per move so far: slot << 3 | position, and
                                    who held the copy before */
    uint32_t nrec, maxrec;
    /* Pools of a lowering: members tied in deviation at the boundary of the
     * plan, any of whom may receive in place of another (from[] holds a
     * member's pool). */
    int64_t pool_pre[8];
    uint32_t pool_budget[8], npools;
    /* Promise 6 on a removal: the most copies one receiver may get (0: no
     * cap), docs/replicas.md "Promise 6's cap". pair[] holds each member's
     * count before the call on every lowering, so receipts are
     * held - pair. Not the cap[] array. */
    uint32_t most;
    uint32_t stamp;
} dch__rep_move;

/** Most entries the diversity rows of a call may take (16 MiB). */
#define DCH__REP_ROWS_MAX (UINT32_C(1) << 22)

/** DCH_OK or DCH_ENOMEM (nothing allocated); entries as dch__rep_rows,
 *  moves the copies that can move (x's on a lowering, the slots without x
 *  on a raise). */
int dch__rep_alloc(dch__rep_move *rm, const dch_allocator *a, uint32_t id_limit,
                   uint32_t entries, uint32_t moves);

/** The entries of the diversity rows a change of member x needs, members[]
 *  read below `limit` (ids past it are free): K columns, K the members of
 *  positive weight and x; on a raise (grow) a row for each of them, on a
 *  lowering of x holding `copies` one per member that can share a slot
 *  with x, at most min((R-1) * copies, K - 1). 0 when that passes
 *  DCH__REP_ROWS_MAX entries (docs/replicas.md, "Diversity bookkeeping"). */
uint32_t dch__rep_rows(const dch__member *members, uint32_t limit, uint32_t x,
                       uint32_t replicas, uint32_t copies, int grow);

void dch__rep_release(dch__rep_move *rm);

/**
 * Change member x's weight to w (w != its weight), moving copies only to x
 * (raise) or only from x (lowering), then choose the primaries; updates the
 * member's weight (members[x].weight = w, first of all: map.c does not set
 * it) and every member's slots and copies. Cannot fail.
 */
void dch__rep_apply(dch__rep_move *rm, const dch__rep_view *v, uint32_t x, uint32_t w);

#endif /* DCH_SRC_MAP_REPLICAS_H */
