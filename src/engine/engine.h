/* SPDX-License-Identifier: MIT */
/*
 * What the files of the single-copy placement engine share: the state of
 * one move, its trivial accessors, and each file's functions. The files
 * are listed from the bottom up; each calls only files listed above it
 * (docs/placement.md, "Where the code is"):
 *
 *   engine_heap.c     binary heaps over mv->heap
 *   engine_unit.c     counting and marking one unit of the table
 *   engine_records.c  the moves made so far, per member in record order
 *   engine_bands.c    stage 3: bands, tiers, forced moves, pick keys
 *   engine_picks.c    the unit's picks: a heap and a queue of pick keys
 *   engine_quotas.c   the order of quotas: keys, and a heap and queue of them
 *   engine_levels.c   stage 2: x's count per unit and its targets
 *   engine_chains.c   the chain search
 *   engine_take.c     stage 4 on a raise: the take passes
 *   engine_give.c     stage 4 on a lowering: the give pass
 *   engine_place.c    stages 2 to 4 in order
 *   engine_counts.c   stage 1: counts
 *   engine_repair.c   stage 5: repair
 *   engine_move.c     the scratch and dch__move_apply (map_engine.h)
 */
#ifndef DCH_SRC_ENGINE_H
#define DCH_SRC_ENGINE_H

#include "map_engine.h"

#include <stdint.h>

/** The chain search's work limit per move: this many times P + N ... */
#ifndef DCH__SEARCH_BUDGET
#define DCH__SEARCH_BUDGET 4
#endif
/** ... plus this many, so that small maps search as far as large ones. */
#ifndef DCH__SEARCH_BASE
#define DCH__SEARCH_BASE 4096
#endif

/** One move in progress. */
typedef struct dch__engine {
    const dch__map_view *v;
    dch__move *mv;
    uint32_t x;
    int grow; /* 1: x's weight rises, slots flow to x */
    int equal; /* every positive weight is equal */
    int64_t W; /* weight sum after the change */
} dch__engine;

/** A strict total order of ids: whether a comes before b. */
typedef int (*dch__before_fn)(const dch__engine *g, uint32_t a, uint32_t b);

/*
 * held*W - P*w for a member once its remaining quota is carried: in stage 1
 * the quota planned so far, in stage 4 what is left of it. Kept in dev[],
 * which every change of a planned count updates by W. Not for x during
 * stages 1 to 4: dev[x] keeps its value from before stage 1 (stage 1 keeps
 * x's in a local; x is never in pool or present) until dch__move_apply sets
 * it after stage 4.
 */
static inline int64_t dch__deviation(const dch__engine *g, uint32_t id)
{
    return g->mv->dev[id];
}

/** id's band in a unit: floor and ceil of S*w/W (dch__plan_bands). */
static inline void dch__band(const dch__engine *g, uint32_t id, uint32_t *lo, uint32_t *hi)
{
    *lo = g->mv->band_lo[id];
    *hi = g->mv->band_hi[id];
}

/* engine_heap.c: binary heaps over mv->heap; `before` is a strict order. */
void dch__sift_down(const dch__engine *g, dch__before_fn before, uint32_t n, uint32_t i);
void dch__sift_up(const dch__engine *g, dch__before_fn before, uint32_t i);

/* engine_unit.c */
/** How many of o[0 .. n) equal id. */
uint32_t dch__count_of(const uint16_t *o, uint32_t n, uint32_t id);
/** Count the owners of the unit at base (other than x) into cnt/present;
 * all: 1 every owner, 0 a raise's donors with quota, slots grouped, 2 the
 * same without grouping. */
uint32_t dch__count_unit(const dch__engine *g, const uint16_t *base, int all);
/** Zero cnt[] of the np members present. */
void dch__clear_unit(const dch__engine *g, uint32_t np);
/** A slot of unit u that id holds (it holds one). */
uint32_t dch__slot_of(const dch__engine *g, uint32_t u, uint32_t id);
uint32_t dch__x_slots(const dch__engine *g, const uint16_t *base);
uint32_t dch__mark_unit(const dch__engine *g, const uint16_t *base);
int dch__mark_unit_slots(const dch__engine *g, const uint16_t *base, uint32_t *first);
int dch__has_donor(const dch__engine *g, const uint16_t *base);

/* engine_records.c */
/** Record a move of slot s with counterparty id. */
void dch__record(const dch__engine *g, uint32_t s, uint32_t id);
void dch__list_unlink(dch__move *mv, uint32_t id, uint32_t r);
void dch__list_insert(dch__move *mv, uint32_t id, uint32_t r);
void dch__record_run(const dch__engine *g, uint32_t id, uint32_t n);

/* engine_bands.c */
void dch__plan_bands(const dch__engine *g);
int dch__tier_of(int grow, uint32_t c, uint32_t lo, uint32_t hi);
int dch__tier(const dch__engine *g, uint32_t id, uint32_t c);
int64_t dch__free_quota(const dch__engine *g, uint32_t id);
uint64_t dch__pick_key(const dch__engine *g, uint32_t id, int t);
uint32_t dch__pick_run(const dch__engine *g, uint32_t id, uint64_t bound, int max_tier,
                       int first, uint32_t room);
void dch__tally_forced(const dch__engine *g, uint32_t np, int sign);
void dch__survey_forced(const dch__engine *g);

/* engine_picks.c */
uint32_t dch__unit_push(const dch__engine *g, uint32_t n, uint32_t id);
uint32_t dch__unit_heap(const dch__engine *g, uint32_t np);
uint64_t dch__unit_best(const dch__engine *g, uint32_t n, int max_tier, int first);
uint32_t dch__unit_run(const dch__engine *g, int max_tier, int first, uint32_t room,
                       uint64_t cap);
uint32_t dch__unit_fix_top(const dch__engine *g, uint32_t n);

/* engine_quotas.c: the order of quotas, a key per counterparty and, on a
 * lowering, a heap of them (docs/placement.md, "The order of quotas") */
void dch__set_key(const dch__engine *g, uint32_t id);
uint32_t dch__key_quotas(const dch__engine *g);
uint32_t dch__quota_heap(const dch__engine *g);
uint32_t dch__quota_absent(const dch__engine *g, int counted);
void dch__quota_spent(const dch__engine *g, uint32_t id);
void dch__quota_restore(const dch__engine *g);
void dch__quota_rekey(const dch__engine *g);

/* engine_levels.c */
void dch__count_x(const dch__engine *g);
void dch__plan_targets(const dch__engine *g, uint32_t moved);

/* engine_chains.c */
/** A chain of trades that lets one more move happen in unit u0 (for a
 * lowering, x's slot s0 given); 1 when one was applied. */
int dch__search_chain(const dch__engine *g, uint32_t u0, uint32_t s0);

/* engine_take.c, engine_give.c */
uint32_t dch__take_pass(const dch__engine *g, uint32_t slack, int max_tier, uint32_t left);
void dch__give_pass(const dch__engine *g);

/* engine_place.c */
/** Stages 2 to 4: carry the quotas in slots chosen unit by unit. */
void dch__place(const dch__engine *g, uint32_t moved);

/* engine_counts.c */
uint64_t dch__raise_picks(int64_t top, int64_t ex, int64_t W);
/** Stage 1: the counterparties' quotas; returns how many slots move. */
uint32_t dch__plan_counts(const dch__engine *g);

/* engine_repair.c */
void dch__repair(const dch__engine *g);

#endif /* DCH_SRC_ENGINE_H */
