/* SPDX-License-Identifier: MIT */
/*
 * The balancing promises of dch/balance.h, checked from outside through the
 * public API: shared by the property tests (test_balance.c) and the fuzz
 * target (fuzz/fuzz_balance.c).
 *
 * Every quantity is recomputed from the public readers (the effective
 * table, weights, zones, drains) in exact integers: a target or a bound is
 * kept multiplied by W' (the weight sum of the members that balance), so
 * T_i * W' = Λ * w_i and B_i * W' = min(Λ w_i + Lmax W',
 * max(Λ w_i, h_i W') + L2 W') are integers below 2^98. A check returns NULL
 * when the promise holds, else a message naming what broke (in a static
 * buffer, valid until the next check).
 */
#ifndef DCH_TESTS_SUPPORT_BALANCING_H
#define DCH_TESTS_SUPPORT_BALANCING_H

#include "dch/dch.h"
#include "drains.h"

#include <stdbool.h>
#include <stdint.h>

__extension__ typedef unsigned __int128 bal_u128;

/* What balance.h's terms are for one map and one load vector. */
typedef struct bal_state {
    uint32_t P, limit;
    uint32_t *row; /* the effective table, DRAIN_ROW entries a slot */
    const uint64_t *L; /* the loads, borrowed */
    uint64_t total, lmax, l2; /* Λ, Lmax, L2 */
    uint32_t lmax_slot; /* the lowest slot of load Lmax */
    uint64_t wsum; /* W' */
    uint32_t members, maxw; /* members that balance, their largest weight */
    uint32_t copies_per_slot; /* the most copies a slot holds */
    bool zoned; /* some member has a zone */
    /* Per id below `limit`: */
    uint8_t *bal; /* balances: a member of positive weight, not drained */
    uint32_t *w; /* weight (0 for a free id) */
    uint32_t *zone; /* zone identity: the lowest id of that zone name, or
                       the id itself for a member without a zone */
    uint32_t *copies; /* copies held (every position) */
    uint32_t *hs; /* heaviest primary slot (lowest index among equals), or
                     DCH_NODE_NONE */
    uint64_t *C, *h; /* load, heaviest primary slot's load */
} bal_state;

/* The terms for map m under loads (m's slot count of them, summing to at
 * most UINT64_MAX). */
void bal_take(bal_state *s, const dch_map *m, const uint64_t *loads);
void bal_free(bal_state *s);

/* T_i * W', B_i * W', C_i * W' for a member that balances. */
bal_u128 bal_target_x(const bal_state *s, uint32_t i);
bal_u128 bal_bound_x(const bal_state *s, uint32_t i);
/* A member that balances above its bound / below its target. */
bool bal_above(const bal_state *s, uint32_t i);
bool bal_below(const bal_state *s, uint32_t i);
/* Distinct zones among a row's copies. */
uint32_t bal_zones(const bal_state *s, const uint32_t *row);

/* A report ready for a call: every field poisoned (0xA5 bytes), left
 * pointed at `left` (cap entries). */
void bal_report_prepare(dch_balance_report *rep, dch_balance_left *left, uint32_t cap);

/*
 * One successful dch_map_balance_load(m, loads, P, cfg, rep): b the terms
 * before, a after (the same loads), `after` the map after, cfg the config
 * used (NULL: defaults), rep its report with room for every member left.
 * Checks the report's fields (recomputed), promise 1 (with no budget),
 * promise 2 (who gives, who receives, heaviest slots kept, givers above
 * their targets, receivers below T_i + L2, the moved-load bounds, the
 * floor), promise 3 (one copy move or one promotion a slot, distinct copies,
 * zones never fewer, a giver that made a copy move has no promotion left),
 * promise 5 (max_moves, count_slack, and with max_moves 1 and one copy a
 * slot the giver, slot and receiver the header names).
 */
const char *bal_check_call(const bal_state *b, const bal_state *a, const dch_map *after,
                           const dch_balance_config *cfg, const dch_balance_report *rep);

/* Whether a report lists a member left for want of max_moves. */
bool bal_left_for_budget(const dch_balance_report *rep);

/*
 * Promise 4, on m right after a call that got `rep`: when no member was
 * left for want of max_moves, the same call again changes nothing (table,
 * layer, epoch, fingerprint, bytes) and reports no move and no promotion.
 * Leaves m as it found it when the promise holds.
 */
const char *bal_check_fixed_point(dch_map *m, const uint64_t *loads,
                                  const dch_balance_config *cfg, const dch_balance_report *rep);

/*
 * Promise 6 for a call from `before` (a clone taken before it) to `after`:
 * the epoch goes up by one exactly when the effective table changed, the
 * fingerprint changes exactly then, dch_map_diff lists exactly the slots
 * whose primary changed and dch_map_diff_copies exactly those whose set of
 * copies changed.
 */
const char *bal_check_change(const dch_map *before, const dch_map *after);

/*
 * Promise 6: a clone, and a save and load, keep everything (both tables,
 * the load moves and their slots, epoch, fingerprint, bytes); a map with a
 * load move in force saves as format version 5. With a twin (as for
 * bal_check_layer) the save and load are checked only when the twin's own
 * bytes load: with zones the engine can leave a member 2 or more slots
 * from its share (map.h, "Replicas", promise 3 holds only under the
 * condition of 4), which dch_map_load refuses in a settled map whether or
 * not a load move is in force; that is no matter of the load moves.
 */
const char *bal_check_kept(const dch_map *m, const dch_map *twin);

/*
 * The layer as the readers see it: a clone with dch_map_balance_clear
 * applied gives the table below (written to *below when below is not NULL,
 * the caller frees it); dch_map_balance_moves and dch_map_balance_slots
 * name exactly the slots whose row differs from it; the clear bumps the
 * epoch once exactly when a load move was in force, leaves the base as it
 * was and no move in force. With a twin (a map that got every call but the
 * balancing ones), the base is the twin's base and the table below the
 * twin's effective table.
 */
const char *bal_check_layer(const dch_map *m, const dch_map *twin, uint32_t **below);

/*
 * The keep/drop rule after a call other than balancing: eff0 and below0
 * the effective table and the table below before it, below1 the table
 * below after it. A slot that had a load move keeps its row when its row
 * below is unchanged and every member in the row is a member of positive
 * weight that is not drained; otherwise its row is the one below. (A row
 * below whose copies are the same in another order is not read as
 * unchanged or changed: either outcome passes.)
 */
const char *bal_check_keep_drop(const uint32_t *eff0, const uint32_t *below0,
                                const uint32_t *below1, const dch_map *after);

/* ---- Load vectors ------------------------------------------------------ */

enum {
    BAL_LOADS_ZERO,      /* every slot 0 */
    BAL_LOADS_ONE_SLOT,  /* all on one slot */
    BAL_LOADS_NEAR_EQUAL, /* a base with small noise */
    BAL_LOADS_ZIPF,      /* slot ranks with Zipf popularity, s 0.8 .. 1.2 */
    BAL_LOADS_HEAVY_TAIL, /* random magnitudes over 40 binary orders */
    BAL_LOADS_HOT,       /* a few hot slots over a cool floor */
    BAL_LOADS_HUGE,      /* near UINT64_MAX / P each: the sums are tight */
    BAL_LOADS_SPARSE,    /* mostly 0, small values elsewhere */
    BAL_LOADS_KINDS
};

/* P loads of the kind, drawn from rng; their sum fits in 64 bits. */
void bal_loads(uint64_t *out, uint32_t P, unsigned kind, uint64_t *rng);

#endif /* DCH_TESTS_SUPPORT_BALANCING_H */
