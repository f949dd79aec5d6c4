/* SPDX-License-Identifier: MIT */
/*
 * Load moves on the table below them (docs/balance.md, "The layer").
 * Internal to libdch.
 */
#ifndef DCH_SRC_DRAIN_MOVES_H
#define DCH_SRC_DRAIN_MOVES_H

#include "map_object.h"

/**
 * Keep on w (a clone of the base with the drains run on it; skip[id] != 0
 * for a member under a PRIMARY drain) the moves of `in` that are still
 * valid, applying each to w's table and counts, and list them in *out
 * (from w's allocator) with their slots' copies on w as their below. A
 * move is kept when its slot's copies on w equal its below (any, for a
 * list with no below), its copies differ from them, are as many, distinct,
 * span no fewer zones, and its primary and every copy w's slot lacks is a
 * member of positive weight under no drain.
 *
 * @return DCH_OK; DCH_ECORRUPT when `in` has no below (a file's list) and
 *         a move is not kept or the slots do not ascend below P (w is then
 *         half changed: the caller drops it); DCH_ENOMEM (nothing applied).
 */
int dch__moves_keep(dch_map *w, const uint8_t *skip, const dch__moves *in, dch__moves *out);

/** Free mv's arrays (from m's allocator) and zero it. */
void dch__moves_free(const dch_map *m, dch__moves *mv);

/** The distinct zones that the copies b[0 .. n) of a slot lie in (a member
 *  with no zone counts as a zone of its own); stops at DCH__MAP_UNOWNED. */
uint32_t dch__zones_spanned(const dch_map *m, const uint16_t *b, uint32_t n);

#endif /* DCH_SRC_DRAIN_MOVES_H */
