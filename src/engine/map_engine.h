/* SPDX-License-Identifier: MIT */
/*
 * The DCH map's placement engine: how slots move when one member's weight
 * changes. Internal to libdch: what map.c calls. The engine itself is in
 * src/engine/ (engine.h lists its files from the bottom up);
 * docs/placement.md states the rule, the proofs of the bounds map.h
 * promises, and the cost.
 */
#ifndef DCH_SRC_MAP_ENGINE_H
#define DCH_SRC_MAP_ENGINE_H

#include "dch/common.h"

#include <stdint.h>

/** A map's member entry, indexed by id. */
typedef struct dch__member {
    char *name; /* NULL when the id is free */
    uint32_t weight; /* 0 for a free id */
    uint32_t slots; /* slots owned (as primary); sums to P when the weight sum is > 0 */
} dch__member;

/** What the engine reads and changes of a map. */
typedef struct dch__map_view {
    uint16_t *owner; /* P entries: an id, or DCH__MAP_UNOWNED */
    uint32_t units, spu, slots; /* U, S, P = U * S */
    uint32_t id_limit; /* members has id_limit entries */
    uint32_t total_weight; /* their weights' sum before the change */
    dch__member *members;
} dch__map_view;

/**
 * Scratch for one weight change. Everything is allocated by
 * dch__move_alloc, before the map changes, so that a failed allocation
 * leaves the map as it was; applying the move then cannot fail.
 * Size: 140 bytes per id, 8 per unit, 8 per slot of a unit (and 4 more) and
 * 8 per move it can make (dch__move_bound).
 */
typedef struct dch__move {
    const dch_allocator *alloc;
    /* per id: held*W - P*w once the planned moves are made; x's is stale
     * (its value before stage 1) until set after stage 4 (engine_counts.c) */
    int64_t *dev;
    uint32_t *quota; /* per id: slots it gives (raise) or receives (lowering) */
    /* per id: a heap of counterparties (stage 1's, then stage 4's) */
    uint32_t *heap;
    /* per id: stage 4's order of counterparties (engine_quotas.c) */
    uint64_t *key;
    /* per id: where it sits in stage 4's heap of quotas, and the receivers
     * set aside as present in the unit being given (engine_quotas.c) */
    uint32_t *qpos, *aside;
    uint32_t qn, naside, qlive; /* the heap's size, aside's, and both's with quota */
    /* 2 per id: beside the heap, a queue of keys in increasing order (the
     * re-keyed picks, engine_quotas.c), qq[qhead .. qtail) */
    uint64_t *qq;
    uint32_t qhead, qtail, qcap;
    uint32_t *cnt; /* per id: slots held in the unit being visited */
    /* per id: the last slot it holds in the unit counted or marked; after a
     * raise's grouped count, the end of its segment of xs[] (group_slots) */
    uint32_t *slot;
    uint32_t *xcnt; /* per unit: slots the changing member holds */
    uint32_t *target; /* per unit: what it should hold after the move */
    uint32_t *present; /* ids seen in the unit being visited */
    /* S + 1 entries: the histogram of x's counts a unit (plan_targets), then
     * x's slots of the unit being visited (a lowering), or the donors' slots
     * grouped by donor (a raise: dch__count_unit with all 0, where a
     * donor's next slot is xs[slot[id] - 1]) */
    uint32_t *xs;
    uint32_t *forced; /* per id: moves the per-unit bands force in units to come */
    uint32_t *par, *via, *entry; /* per id: the chain search's parent, record, unit */
    /* per id: a stamp (visited by the chain search, or present in a unit
     * of a lowering); the chain search's queue, or stage 1's */
    uint32_t *mark, *queue;
    uint32_t stamp, qlen;
    uint32_t *pool, npool; /* per id: members with quota left, for partner() */
    uint32_t *band_lo, *band_hi; /* per id: floor and ceil of S*w/W */
    uint32_t level; /* on a raise, x ends every unit it fills at level or level + 1 */
    int surveyed; /* forced[] was planned for this move */
    uint32_t max_band_lo, max_band_hi; /* the highest floor, ceil of S*w/W among the others */
    int64_t lo_count, hi_count; /* least and most final count, for partner() */
    int64_t x_final; /* the count stage 1 planned for x */
    int allow_fit; /* partner() may pick a swap that is not exact */
    /* per move so far: its slot (its counterparty is the member whose list
     * holds it) */
    uint32_t *rec_slot;
    /* each id's moves as a list in record order: its first and last, and
     * per move the next (the chain search reads them) */
    uint32_t *rec_head, *rec_tail, *rec_next;
    uint32_t *table, table_mask; /* the chain search's ids with quota, by deviation */
    uint64_t *ukey; /* per id: a heap of the pick keys of a unit's members */
    /* 2 per id: beside it, a queue of pick keys in increasing order
     * (engine_picks.c), uq[uqhead .. uqtail); uhn the heap's size */
    uint64_t *uq;
    uint32_t uhn, uqhead, uqtail;
    uint32_t nrec;
    uint32_t donors_seen; /* donors the last raise's count found in a unit */
    /* Table entries (and ids) the chain search may still read in this move:
     * a few times P + N, so that the search costs O(P + N) in all
     * (docs/placement.md, "Complexity"); spent, it finds no chain. */
    int64_t budget;
} dch__move;

/** DCH_OK or DCH_ENOMEM (nothing allocated). max_moves bounds the slots
 * the move can carry (dch__move_bound). */
int dch__move_alloc(dch__move *mv, const dch_allocator *a, uint32_t id_limit,
                    uint32_t units, uint32_t spu, uint32_t max_moves);

void dch__move_release(dch__move *mv);

/**
 * The most slots changing x's weight to w can move, for dch__move_alloc:
 * on a lowering the slots x holds; on a raise the picks stage 1 can make
 * (the bound candidates() uses, about x's new share plus 3), so the scratch
 * follows the change, not P. members has id_limit entries, of weights
 * summing to total; x may be past them (a member being added: no slots,
 * weight 0).
 */
uint32_t dch__move_bound(const dch__member *members, uint32_t id_limit, uint32_t slots,
                         uint32_t x, uint32_t w, uint32_t total);

/**
 * Change member x's weight to w and update v->members[x].weight and the
 * held counts (members[].slots). Stages 1 to 4 move slots only between x
 * and other members of positive weight; stage 5, repair (unequal weights
 * only), may move single slots between two other members
 * (docs/placement.md, "Stage 5: repair"). Requires another member of
 * positive weight (else x owns all or nothing, which the caller sets) and
 * w != v->members[x].weight.
 */
void dch__move_apply(dch__move *mv, const dch__map_view *v, uint32_t x,
                     uint32_t w);

/**
 * The chain search's work in the last move made on this thread, in the
 * units of its budget (table entries and ids read). For tests only: it is
 * not part of the public ABI.
 */
extern _Thread_local int64_t dch__search_work;

/**
 * Units the last move made on this thread counted member by member
 * (dch__count_unit), where the fast paths of docs/placement.md only mark
 * them. For tests only, as dch__search_work.
 */
extern _Thread_local int64_t dch__units_counted;

/**
 * Steps the last move made on this thread spent ordering its picks: heap
 * levels moved in the order of quotas and in the unit picks, and entries
 * put in their queues (docs/placement.md, "Complexity"). For tests only,
 * as dch__search_work.
 */
extern _Thread_local int64_t dch__order_work;

#endif /* DCH_SRC_MAP_ENGINE_H */
