/* SPDX-License-Identifier: MIT */
/*
 * What the map's serialisation needs from inside the map. Internal to
 * libdch: the map file code builds maps from untrusted bytes through
 * dch__map_assemble, which checks everything before the map exists.
 */
#ifndef DCH_SRC_MAP_INTERNAL_H
#define DCH_SRC_MAP_INTERNAL_H

#include "dch/map.h"
#include "dch/map_stage.h"

/** Owner entry of an unowned slot in the table (never a member id). */
#define DCH__MAP_UNOWNED UINT16_C(0xFFFF)

/** The effective slot table (the base when no drain is in force):
 *  dch_map_slot_count(m) entries, DCH__MAP_UNOWNED or an id. */
const uint16_t *dch__map_owner_table(const dch_map *m);

/** The base slot table (map.h, "Drains"), as dch__map_owner_table. */
const uint16_t *dch__map_base_table(const dch_map *m);

/** A member's primaries and copies in the base table; 0 for a non-member. */
uint32_t dch__map_base_slots(const dch_map *m, uint32_t id);
uint32_t dch__map_base_copies(const dch_map *m, uint32_t id);

/** The i-th drain in force (i below dch_map_drains(m, NULL, NULL, 0)). */
void dch__map_drain_at(const dch_map *m, size_t i, uint32_t *id, uint32_t *mode);

/**
 * Put the drains ids[i] in mode modes[i], i < n, in that order, in force on
 * a map that has none (a map just assembled from a file's parts, or a step
 * map), recomputing its effective table; the epoch is left as it is.
 *
 * @return DCH_OK; DCH_ECORRUPT (an id that is not a member, drained twice,
 *         or a mode other than DCH_DRAIN_PRIMARY and DCH_DRAIN_FULL);
 *         DCH_ENOMEM. The map is unchanged on error.
 */
int dch__map_set_drains(dch_map *m, const uint32_t *ids, const uint32_t *modes, uint32_t n);

/**
 * dch__map_set_drains, then the load moves (balance.h) of a file: nmv
 * slots, each with its `width` copies, primary first, at copies[i * width].
 * Every move must be valid on the table the drains give (docs/balance.md,
 * "The layer"), the slots ascending.
 *
 * @return DCH_OK; DCH_ECORRUPT (a bad drain, a move that is not valid, or
 *         a width that is not the slots' copy count); DCH_ENOMEM. The map
 *         is unchanged on error.
 */
int dch__map_set_layer(dch_map *m, const uint32_t *ids, const uint32_t *modes, uint32_t n,
                       const uint32_t *slots, const uint16_t *copies, uint32_t nmv,
                       uint32_t width);

/**
 * Put in force on m (a map with no layer) the drains of `from`, in their
 * order, and then those of from's load moves that stay valid on m's base
 * (all of them when the two bases are equal).
 *
 * @return DCH_OK; DCH_EINVAL (the maps' copy counts differ); DCH_ENOMEM.
 *         The map is unchanged on error.
 */
int dch__map_copy_layer(dch_map *m, const dch_map *from);

/** The load moves in force, and in *width the copies each gives its slot. */
uint32_t dch__map_moves(const dch_map *m, uint32_t *width);

/** The i-th load move (i below dch__map_moves): its slot, and its *width
 *  copies, primary first. */
void dch__map_move_at(const dch_map *m, size_t i, uint32_t *slot, uint16_t *copies);

/**
 * The transition record of a step map (map_stage.h); NULL for a settled map,
 * including a step map changed since it was made or loaded.
 */
const dch_map_transition *dch__map_transition(const dch_map *m);

/**
 * Build a map from its parts, as a loaded file describes it.
 *
 * names[id] is the member name of id (NULL where the id is free) for id <
 * id_limit; zones[id] its zone (NULL for a zone of its own; zones itself
 * may be NULL: no member has a zone); weights[id] its weight; table the
 * copies of every slot, R = cfg->replicas (0 read as 1) entries a slot,
 * primary first, DCH__MAP_UNOWNED past the slot's copy count (with R = 1,
 * the P-entry owner table). Checks, in this order, before anything is
 * allocated that could leak: the config (as dch_map_new), id_limit <=
 * DCH_MAP_MAX_NODES with names[id_limit-1] set, every name and zone valid
 * and names unique, the weight sum within UINT32_MAX, and the table: with a
 * positive weight sum every primary a member of positive weight, else every
 * slot unowned; with R >= 2 every slot's copies as map.h's promises 1 and 2
 * on replicas state; then, for a settled map (tr NULL), every member's
 * primaries within 2 slots of its share (|slots*W - P*w| < 2*W).
 *
 * `tr` is the transition record of a step map (copied), NULL for a settled
 * map; step maps have one copy per slot (a tr with R >= 2 is corrupt).
 * Checks that hold only for settled maps (a step map's counts sit between
 * its two ends, wherever the plan's order left them) are skipped when tr is
 * not NULL.
 *
 * @return DCH_OK, DCH_ECORRUPT (any check above failed), DCH_EINVAL (NULL
 *         arguments or a bad config), DCH_EFULL, DCH_ENOMEM.
 */
int dch__map_assemble(dch_map **out, const dch_map_config *cfg, uint64_t epoch,
                      uint32_t id_limit, const char *const *names,
                      const char *const *zones, const uint32_t *weights,
                      const uint16_t *table, const dch_map_transition *tr);

#endif /* DCH_SRC_MAP_INTERNAL_H */
