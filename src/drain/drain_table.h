/* SPDX-License-Identifier: MIT */
/*
 * The effective table of a map under drains (docs/drains.md, "Base and
 * effective"). Internal to libdch.
 */
#ifndef DCH_SRC_DRAIN_TABLE_H
#define DCH_SRC_DRAIN_TABLE_H

#include "map_object.h"

/**
 * The layer of the drains ids[i] in mode modes[i], i < n, in the order
 * drained, then the load moves of mv (NULL: none) that stay valid
 * (drain_moves.h), on the base of m (m's own layer is ignored), into *out:
 * the lists copied and the effective table with its counts, all from m's
 * allocator. No drain and no move kept gives an empty *out (the base is
 * the effective table). Nothing of m changes. The ids must be members and
 * the modes DCH_DRAIN_PRIMARY or DCH_DRAIN_FULL (the callers check).
 *
 * @return DCH_OK; DCH_ECORRUPT for a file's move list (no below) with a
 *         move that is not valid; DCH_ENOMEM. Nothing left allocated on
 *         error.
 */
int dch__drains_build(const dch_map *m, const uint32_t *ids, const uint32_t *modes, uint32_t n,
                      const dch__moves *mv, dch__drains *out);

/**
 * The layer of m with id's drain replaced: id taken out of the list, then
 * put at its end in `mode` unless mode is 0, and m's load moves kept where
 * they stay valid, built on the base of `base` (m itself, or a clone of it
 * that a call has changed) into *out.
 *
 * @return DCH_OK or DCH_ENOMEM (nothing left allocated).
 */
int dch__map_redrain(const dch_map *m, const dch_map *base, uint32_t id, uint32_t mode,
                     dch__drains *out);

/**
 * Promotions only: every slot of w whose primary is x gets as primary one
 * of its other copies that is not in `skip` (skip[id] != 0), chosen so that
 * the most any member gains is the least possible (drain_promote.c); a slot
 * whose other copies are all skipped keeps x. The copy sets never change.
 * w has replicas >= 2 and no drain in force.
 *
 * @return DCH_OK or DCH_ENOMEM (w unchanged).
 */
int dch__drain_promote(dch_map *w, uint32_t x, const uint8_t *skip);

#endif /* DCH_SRC_DRAIN_TABLE_H */
