/* SPDX-License-Identifier: MIT */
/*
 * Migration plans between two maps.
 *
 * dch_map_diff lists the hash ranges whose owner differs between an old map
 * and a new one: exactly the data that must move when a cluster goes from one
 * to the other. Owners are named, not numbered, so the two maps may give the
 * same member different ids (as two maps built or loaded separately do).
 * A move (dch_move) is declared in range.h; rings have the same diff,
 * dch_ring_diff in ring_diff.h.
 *
 * With replicas (map.h) the two diffs answer two questions. dch_map_diff
 * reports primaries: where reads and writes of a key go, so it is what a
 * router switches over. dch_map_diff_copies reports data: for every range
 * whose set of copy holders changes, which member must receive a copy,
 * which may drop its copy, and which member to copy from, so it is what a
 * migrator works through. A change of primary among the same holders (a
 * promotion) moves no data and appears only in dch_map_diff; with one copy
 * a slot both report the same ranges.
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

/**
 * One change of the copies of a hash range [lo, hi] (dch_map_diff_copies).
 *
 * gain: a member that holds a copy in the new map and not in the old, NULL
 * when the range only loses a copy here. lose: a member that held a copy in
 * the old map and not in the new, NULL when the range only gains one.
 * source: a member holding the range's data in the old map, where gain reads
 * it from: the first of the new map's copies (primary first) that held one
 * in the old map as well, so the new primary whenever it did; when no member
 * holds a copy in both maps, the old primary, which keeps its data until the
 * migration ends. NULL only when the old map held no copy of the range (no
 * member had weight: there is no data to copy). Names, borrowed from the
 * maps.
 */
typedef struct dch_copy_move {
    uint64_t lo;
    uint64_t hi;
    const char *gain;
    const char *lose;
    const char *source;
} dch_copy_move;

/**
 * Call fn for each change of every maximal hash range whose copy holders
 * differ, by name, between two maps.
 *
 * For each slot, the members holding a copy in `to` but not in `from` are
 * the gains, in `to`'s order (primary first), those holding one in `from`
 * but not in `to` the losses, in `from`'s order; the k-th gain is paired
 * with the k-th loss, and the longer list's extra entries with NULL, so a
 * slot has max(gains, losses) changes, all with the slot's source (see
 * dch_copy_move). A slot whose holders are the same, in any order, has
 * none. Ranges come in ascending order, do not overlap, and are maximal:
 * adjacent slots with the same changes (the same gain, lose and source
 * names in the same order) form one range, so the slots just outside a
 * range have other changes or none. A range's changes are reported one
 * call each, in pairing order, with the range's lo and hi. Applying every
 * change (add gain, drop lose) to the holders of `from` gives exactly the
 * holders of `to`. With one copy a slot the ranges are dch_map_diff's, a
 * move (from, to) reported as gain = to, lose = from, source = from.
 * By map.h's movement promise, a call that raises one member's weight
 * (an add) reports that member as the only gain, and one that lowers it (a
 * removal) reports it as the only loss.
 *
 * The names and the change are borrowed for the call only. A non-zero
 * return from fn stops the walk and is returned. Nothing is allocated.
 *
 * @param from  the old map.
 * @param to    the new map: the same units, slots per unit and hash key, any
 *              number of copies a slot.
 * @param fn    called for each change.
 * @param ctx   passed to fn unchanged.
 * @return DCH_OK; DCH_EINVAL (a NULL map or fn, or maps whose units, slots
 *         per unit or hash key differ; fn is then never called); or the
 *         non-zero value fn returned. O(P * R^2) name comparisons at most,
 *         R the larger copy count, made only where the pair of id lists
 *         changes along the table.
 */
DCH_API int dch_map_diff_copies(const dch_map *from, const dch_map *to,
                                int (*fn)(const dch_copy_move *cm, void *ctx), void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* DCH_MAP_DIFF_H */
