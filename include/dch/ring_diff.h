/* SPDX-License-Identifier: MIT */
/*
 * Migration plans between two rings, by member name: the ring's counterpart
 * of map_diff.h.
 *
 * dch_ring_diff lists the hash ranges whose owner differs between an old ring
 * and a new one: exactly the data that must move when a cluster goes from one
 * to the other. Owners are named, not numbered, so the two rings may give the
 * same member different ids (as two rings built in different orders do).
 */
#ifndef DCH_RING_DIFF_H
#define DCH_RING_DIFF_H

#include "common.h"
#include "range.h"
#include "ring.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Call fn for each maximal hash range whose owner differs between two rings.
 *
 * Ranges come in ascending order, do not overlap, and each is maximal: the
 * hashes just before lo and just after hi either keep their owner or move
 * between another pair of names, so two moves in a row never have the same
 * (from, to) pair when they touch. Owners are compared by name. A hash
 * outside every range keeps its owner's name. Adding a member to a ring
 * gives exactly the arcs its points take, each from its old owner.
 *
 * The names and the move are borrowed for the call only. A non-zero return
 * from fn stops the walk and is returned. Nothing is allocated.
 *
 * @param from  the old ring.
 * @param to    the new ring: the same placement and, with SipHash placement,
 *              the same hash key (with another key or placement every key
 *              hashes elsewhere, which no hash range can express).
 *              points_per_weight may differ.
 * @param fn    called for each range.
 * @param ctx   passed to fn unchanged.
 * @return DCH_OK; DCH_EINVAL (a NULL ring or fn, or rings whose placement
 *         or, with SipHash placement, hash key differ; fn is then never
 *         called); or the non-zero value fn returned. O(points of both
 *         rings); names are compared only where the (old id, new id) pair
 *         changes.
 */
DCH_API int dch_ring_diff(const dch_ring *from, const dch_ring *to,
                          int (*fn)(const dch_move *mv, void *ctx), void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* DCH_RING_DIFF_H */
