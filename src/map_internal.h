/*
 * What the map's serialisation needs from inside the map. Internal to
 * libdch: the map file code builds maps from untrusted bytes through
 * dch__map_assemble, which checks everything before the map exists.
 */
#ifndef DCH_SRC_MAP_INTERNAL_H
#define DCH_SRC_MAP_INTERNAL_H

#include "dch/map.h"

/** Owner entry of an unowned slot in the table (never a member id). */
#define DCH__MAP_UNOWNED UINT16_C(0xFFFF)

/** The slot table: dch_map_slot_count(m) entries, DCH__MAP_UNOWNED or an id. */
const uint16_t *dch__map_owner_table(const dch_map *m);

/**
 * Build a map from its parts, as a loaded file describes it.
 *
 * names[id] is the member name of id (NULL where the id is free) for id <
 * id_limit; weights[id] its weight; owner the P-entry slot table. Checks, in
 * this order, before anything is allocated that could leak: the config (as
 * dch_map_new), id_limit <= DCH_MAP_MAX_NODES with names[id_limit-1] set,
 * every name valid and unique, the weight sum within UINT32_MAX, and the
 * table: with a positive weight sum every slot owned by a member of positive
 * weight, else every slot unowned.
 *
 * @return DCH_OK, DCH_ECORRUPT (any check above failed), DCH_EINVAL (NULL
 *         arguments or a bad config), DCH_EFULL, DCH_ENOMEM.
 */
int dch__map_assemble(dch_map **out, const dch_map_config *cfg, uint64_t epoch,
                      uint32_t id_limit, const char *const *names,
                      const uint32_t *weights, const uint16_t *owner);

/**
 * Whether every member's slot count is within the global bound that every
 * map the library builds keeps, whatever its history (NOTES.md,
 * "Invariants"): |slots - P*w/W| < 4 from 8 slots per unit up. Below 8 slots
 * per unit no bound holds for a map whose weights were ever unequal, and a
 * map's bytes do not tell its history, so none is checked. Always true when
 * no member has weight. O(N).
 */
int dch__map_within_bounds(const dch_map *m);

#endif /* DCH_SRC_MAP_INTERNAL_H */
