/*
 * Migration plans between two maps.
 *
 * dch_map_diff lists the hash ranges whose owner differs between an old map
 * and a new one: exactly the data that must move when a cluster goes from one
 * to the other. Owners are named, not numbered, so the two maps may give the
 * same member different ids (as two maps built or loaded separately do).
 * A move (dch_move) is declared in range.h; rings have the same diff,
 * dch_ring_diff in ring_diff.h.
 */
#ifndef DCH_MAP_DIFF_H
#define DCH_MAP_DIFF_H

#include "common.h"
#include "map.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Call fn for each maximal hash range whose owner differs between two maps.
 *
 * Ranges come in ascending order, do not overlap, and each is maximal: the
 * hashes just before lo and just after hi either keep their owner or move
 * between another pair of names. So two moves in a row never have the same
 * (from, to) pair when they touch. Owners are compared by name. A hash
 * outside every range keeps its owner's name. Adding a member to a map gives
 * exactly the slots the new member owns, each from its old owner.
 *
 * The names and the move are borrowed for the call only. A non-zero return
 * from fn stops the walk and is returned. Nothing is allocated.
 *
 * @param from  the old map.
 * @param to    the new map: the same units, slots per unit and hash key
 *              (with another hash key every key moves, which no hash range
 *              can express).
 * @param fn    called for each range.
 * @param ctx   passed to fn unchanged.
 * @return DCH_OK; DCH_EINVAL (a NULL map or fn, or maps whose units, slots
 *         per unit or hash key differ; fn is then never called); or the
 *         non-zero value fn returned. O(P) name comparisons at most, one per
 *         change of the (old id, new id) pair along the table.
 */
DCH_API int dch_map_diff(const dch_map *from, const dch_map *to,
                         int (*fn)(const dch_move *mv, void *ctx), void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* DCH_MAP_DIFF_H */
