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

/** The slot table: dch_map_slot_count(m) entries, DCH__MAP_UNOWNED or an id. */
const uint16_t *dch__map_owner_table(const dch_map *m);

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
