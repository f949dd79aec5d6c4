/* SPDX-License-Identifier: MIT */
/*
 * What the two diffs of maps share (map_diff.c: owners, map_diff_copies.c:
 * copies): the argument check and the hashes of a run of slots. Internal
 * to libdch.
 */
#ifndef DCH_SRC_MAP_DIFF_INTERNAL_H
#define DCH_SRC_MAP_DIFF_INTERNAL_H

#include "dch/map.h"

#include <stdint.h>

/** The slots of two maps that can be diffed: P of them, P = 2^bits. */
typedef struct dch__slot_span {
    uint32_t slots;
    unsigned bits;
} dch__slot_span;

/**
 * Whether a diff of two maps can be made and reported: both maps non-NULL,
 * with the same units, slots per unit and hash key, and a callback to
 * report to (has_callback). Sets *span.
 *
 * @return DCH_OK or DCH_EINVAL.
 */
int dch__map_diff_span(const dch_map *from, const dch_map *to, int has_callback,
                       dch__slot_span *span);

/** First hash of slot s. */
static inline uint64_t dch__span_lo(const dch__slot_span *span, uint32_t s)
{
    return span->bits == 0 ? 0 : (uint64_t)s << (64u - span->bits);
}

/** Last hash before slot s: a range of slots [first, s) ends there (at
 *  2^64 - 1 when s is the end of the table). */
static inline uint64_t dch__span_hi(const dch__slot_span *span, uint32_t s)
{
    return s == span->slots ? UINT64_MAX : dch__span_lo(span, s) - 1;
}

#endif /* DCH_SRC_MAP_DIFF_INTERNAL_H */
