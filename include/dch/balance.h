/* SPDX-License-Identifier: MIT */
/*
 * Balancing by load: move slots so that no member carries much more than
 * its share of the measured load, with a bound that holds for every load
 * vector and the least movement that bound allows.
 *
 * The engine keeps every member within 2 slots of its share of the slots;
 * a few hot slots can still make one member the bottleneck. Given each
 * slot's load (a dch_load_counter snapshot, or anything else),
 * dch_map_balance_load adds LOAD MOVES: entries of the layer above the base
 * table (the drains' layer, map.h, "Drains"), each saying that a slot is
 * served by other members than the base and the drains give it. Lookups
 * stay one table read; dch_map_base_owner still reads the engine's table.
 *
 * Terms, for one call (docs/balance.md, installed in share/doc/libdch,
 * proves every promise):
 *  - L(s): slot s's load, slot_load[s]. With replicas a slot's load is its
 *    primary's: a promotion moves load without moving data.
 *  - Λ: the sum of every L(s); Lmax and L2: the heaviest and the second
 *    heaviest slot loads of the map (L2 = Lmax when two slots tie; L2 = 0
 *    with one slot).
 *  - Members that BALANCE: members of positive weight under no drain.
 *    W' is their weight sum; member i's TARGET is T_i = Λ * w_i / W', its
 *    LOAD C_i the sum of L(s) over the slots it is the primary of, h_i the
 *    heaviest of those slots (0 for none), and its BOUND
 *      B_i = min(T_i + Lmax, max(T_i, h_i) + L2).
 *    The first term is the classic guarantee (max/mean <= 1.025 whenever
 *    no slot carries more than 2.5% of a target); the second is tighter
 *    when one slot is far hotter than the rest. Targets and bounds are
 *    exact rationals: every comparison is done in integers.
 *  - A member's heaviest slot is the one of largest load, the lowest slot
 *    index among equals. A member's COUNT is the copies it holds (its
 *    slots, with one copy a slot); its count SHARE is c * P * w_i / W',
 *    c the copies a slot holds.
 *
 * The call moves, one at a time, a slot from a GIVER (a member above its
 * bound) to a RECEIVER (a member below its target): always from the giver
 * whose load is the largest multiple of its target (ties: the lower id),
 * never the giver's heaviest slot nor a slot of load 0; the slot is the
 * lightest whose move brings the giver within its bound, unless a lighter
 * one (of the 64 heaviest lighter ones) and then the lightest that would
 * finish weigh less together, or the heaviest it may give when none brings
 * it within its bound; the receiver is the one furthest below its
 * target (ties: the lower id) among those allowed to take it. With
 * replicas, a giver first PROMOTES (hands the primary of a slot to one of
 * its other copies that is a receiver; no data moves), and a COPY MOVE
 * (its copy replaced by the receiver's, the receiver primary) is made only
 * while it has no promotion left; a copy move never puts two copies of a
 * slot on one member and never lowers the number of distinct zones a
 * slot's copies lie in (map.h, "Replicas", promise 2, is kept).
 *
 * Promises, for every map, history and load vector:
 *  1. Bound. With max_moves 0 and count_slack UINT32_MAX, after the call
 *     every member that balances carries at most B_i (its h_i after the
 *     call), if the map has one copy a slot, or no member has a zone. With
 *     zones a member can be left above B_i only when no receiver may take
 *     any slot it could give (every receiver is barred by the zone rule and
 *     holds none of those slots); the report names such members.
 *  2. Only what must move. A slot moves only from a member above its
 *     bound to one below its target, and a giver stops as soon as it is
 *     within its bound, so each giver ends above its target, each receiver
 *     below T_i + L2, and the load moved (promotions and copy moves) is at
 *     most the total excess over the bounds plus the load of one slot per
 *     giver. No call moves less than the report's moved_load_floor and
 *     ends with every member within its bound.
 *  3. Promotions first (replicas): see above; every promise of map.h,
 *     "Replicas", about distinct copies and zones holds on the result.
 *  4. Fixed point. A call that left no member above its bound for want of
 *     max_moves is a fixed point: calling again with the same loads and
 *     config changes nothing, the epoch included.
 *  5. Budgets. With max_moves k > 0, at most k copy moves (promotions are
 *     not counted: no data moves). With count_slack c, a copy move goes
 *     only to a receiver whose count stays within c of its count share, so
 *     no member ends more than c above its share unless it already was
 *     (and then it gains nothing); the report counts the members these
 *     budgets left above their bounds.
 *  6. The load moves are kept by clone, save and load (map file format
 *     version 5), counted in the epoch (a call that changes the table bumps
 *     it once) and in the fingerprint, and the slots they move are listed
 *     by dch_map_diff and dch_map_diff_copies.
 *  7. Determinism: the result is a pure function of the map and the
 *     arguments.
 *
 * Other calls keep a load move while they leave its slot's copies below
 * the layer unchanged (the base, then the drains) and every member the
 * move hands the slot to (its primary, and each copy the table below does
 * not hold) is still a member of positive weight under no drain; otherwise
 * the move is dropped and the slot is served as the table below gives it.
 * (A copy the table below holds stays as the drains left it: a PRIMARY-
 * drained member may remain a secondary copy of a moved slot.) Balancing
 * again with fresh loads restores the bound. dch_map_balance_clear drops
 * every load move.
 *
 * Cost: O(P * R + N) memory for the layer while a load move is in force,
 * and per call O(P * R + N log N + G log G + moves * (N + S_i + 64 log
 * S_i)), G the givers' candidate slots and S_i a giver's, plus one rebuild
 * of the layer (a clone of the base and the drains). While a load move is
 * in force, every other call that changes the map also rebuilds the layer,
 * as with a drain in force (map.h, "Drains").
 */
#ifndef DCH_BALANCE_H
#define DCH_BALANCE_H

#include "common.h"
#include "map.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The layout of dch_balance_config that these headers describe. */
#define DCH_BALANCE_CONFIG_VERSION 1u

/**
 * What one balancing call may do. Versioned as dch_map_config is: new
 * fields go at the end, each raising DCH_BALANCE_CONFIG_VERSION.
 */
typedef struct dch_balance_config {
    /** DCH_BALANCE_CONFIG_VERSION (the layout the caller was built with). */
    uint32_t version;
    /** Most copy moves one call makes; 0 (default): no limit. */
    uint32_t max_moves;
    /** Most copies a member may hold beyond its count share after a copy
     *  move to it; UINT32_MAX (default): no limit. */
    uint32_t count_slack;
} dch_balance_config;

/**
 * Fill cfg with the defaults (no limit) in layout `version`.
 *
 * @return DCH_OK; DCH_EINVAL for a NULL cfg or a version other than 1 ..
 *         DCH_BALANCE_CONFIG_VERSION.
 */
DCH_API int dch_balance_config_init(dch_balance_config *cfg, uint32_t version);

/** Why a member was left above its bound (dch_balance_left.why). */
enum {
    /** max_moves was spent before its turn came. */
    DCH_BALANCE_LEFT_BUDGET = 1,
    /** count_slack barred every receiver that could have taken a slot. */
    DCH_BALANCE_LEFT_SLACK = 2,
    /** Copies and zones barred every receiver (promise 1). */
    DCH_BALANCE_LEFT_PLACEMENT = 3
};

/** A member left above its bound. */
typedef struct dch_balance_left {
    uint32_t id;
    uint32_t why; /**< DCH_BALANCE_LEFT_* */
    uint64_t load; /**< its load after the call */
    uint64_t bound; /**< floor(B_i) */
} dch_balance_left;

/**
 * What a balancing call found and did. The caller may set `left` and
 * `left_cap` before the call to get the members left above their bounds;
 * every other field is written by the call.
 */
typedef struct dch_balance_report {
    uint64_t total_load; /**< Λ */
    uint64_t heaviest_load; /**< Lmax */
    uint64_t second_load; /**< L2 */
    uint32_t heaviest_slot; /**< the lowest slot of load Lmax */
    uint32_t members; /**< members that balance */
    /** Slots heavier than every member's target: wherever such a slot
     *  goes, its member carries more than its target (only spreading the
     *  slot's reads over its copies could help). */
    uint32_t too_heavy;
    uint32_t above_before; /**< members above their bounds before the call */
    uint32_t above_after; /**< ... and after it */
    uint32_t moves; /**< copy moves */
    uint32_t promotions; /**< primaries handed to another copy */
    uint64_t moved_load; /**< load of the copy moves */
    uint64_t promoted_load; /**< load of the promotions */
    /** No call that ends with every member within its bound moves less
     *  load (promotions and copy moves): the sum over the members above
     *  their bounds of C_i - B_i, each rounded up. */
    uint64_t moved_load_floor;
    /** Largest C_i / T_i before and after the call (0 when Λ = 0). */
    double max_ratio_before, max_ratio_after;
    uint32_t in_force; /**< load moves in force after the call */
    /** In: where to write the members left above their bounds (ascending
     *  ids), and how many fit; NULL / 0 for none. Out: left_count, how
     *  many there are (min(left_cap, left_count) written). */
    dch_balance_left *left;
    uint32_t left_cap;
    uint32_t left_count;
} dch_balance_report;

/**
 * Balance the map by the loads of its slots (see the top of this header).
 *
 * @param slot_load  nslots loads, slot_load[s] slot s's load.
 * @param nslots     the map's slot count (dch_map_slot_count).
 * @param cfg        NULL: the defaults.
 * @param rep        NULL, or where to write the report (its `left` and
 *                   `left_cap` are read first).
 * @return DCH_OK; DCH_EINVAL for a NULL map or slot_load, nslots other
 *         than the map's slot count, a cfg whose version is not 1 ..
 *         DCH_BALANCE_CONFIG_VERSION; DCH_EFULL if the loads sum past UINT64_MAX;
 *         DCH_ENOMEM. On error the map is unchanged and rep unwritten.
 */
DCH_API int dch_map_balance_load(dch_map *m, const uint64_t *slot_load, uint32_t nslots,
                                 const dch_balance_config *cfg, dch_balance_report *rep);

/**
 * Drop every load move: the table becomes what the base and the drains
 * give. Bumps the epoch if a load move was in force.
 *
 * @return DCH_OK; DCH_EINVAL for a NULL map; DCH_ENOMEM (map unchanged).
 */
DCH_API int dch_map_balance_clear(dch_map *m);

/** Load moves in force (slots whose copies the layer sets); 0 for NULL. */
DCH_API uint32_t dch_map_balance_moves(const dch_map *m);

/**
 * The load moves in force, in ascending slot order: writes min(cap, n)
 * slots and returns n. slots may be NULL; 0 for a NULL map.
 */
DCH_API size_t dch_map_balance_slots(const dch_map *m, uint32_t *slots, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* DCH_BALANCE_H */
