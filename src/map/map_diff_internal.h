/* SPDX-License-Identifier: MIT */
/*
 * What the two diffs of maps share (map_diff.c: owners, map_diff_copies.c:
 * copies): the argument check and the first hash of a slot. Internal to
 * libdch.
 */
#ifndef DCH_SRC_MAP_DIFF_INTERNAL_H
#define DCH_SRC_MAP_DIFF_INTERNAL_H

#include "dch/map.h"

#include <stdint.h>

/**
 * Whether two maps can be compared by hash ranges: both non-NULL, with the
 * same units, slots per unit and hash key. Sets *bits to log2(P).
 *
 * @return DCH_OK or DCH_EINVAL.
 */
int dch__map_diff_check(const dch_map *from, const dch_map *to, unsigned *bits);

/** First hash of slot s of a table of 2^bits slots. */
static inline uint64_t dch__map_slot_lo(unsigned bits, uint32_t s)
{
    return bits == 0 ? 0 : (uint64_t)s << (64u - bits);
}

#endif /* DCH_SRC_MAP_DIFF_INTERNAL_H */
