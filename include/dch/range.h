/* SPDX-License-Identifier: MIT */
/*
 * Ownership as hash ranges, common to the map and the ring.
 *
 * Both schemes can list who owns what as ranges [lo, hi] (inclusive) of the
 * 64-bit hash space, ascending, adjacent ranges of one owner merged, covering
 * 0 .. 2^64-1 exactly once. Shares and migration are measured exactly from
 * these lists, and a migration plan is the diff of two of them.
 */
#ifndef DCH_RANGE_H
#define DCH_RANGE_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Hashes lo .. hi (inclusive) belong to `owner` (DCH_NODE_NONE: nobody). */
typedef struct dch_range {
    uint64_t lo;
    uint64_t hi;
    uint32_t owner;
} dch_range;

/** Hashes lo .. hi (inclusive) move from owner `from` to owner `to`. */
typedef struct dch_range_change {
    uint64_t lo;
    uint64_t hi;
    uint32_t from;
    uint32_t to;
} dch_range_change;

/**
 * Hashes lo .. hi (inclusive) are owned by the member named `from` in an old
 * map or ring and by the member named `to` in the new one; NULL names nobody
 * (no member of positive weight). from and to are never both NULL and never
 * equal strings. What dch_map_diff (map_diff.h) and dch_ring_diff
 * (ring_diff.h) report.
 */
typedef struct dch_move {
    uint64_t lo;
    uint64_t hi;
    const char *from;
    const char *to;
} dch_move;

/**
 * Compare two range lists and report where the owner differs.
 *
 * Both lists must be well formed: ascending, contiguous, starting at 0 and
 * ending at 2^64-1 (as dch_map_ranges and dch_ring_ranges produce). Owners are
 * compared as numbers, so both lists must number owners the same way.
 * `fn` is called for each maximal range whose (from, to) pair is constant and
 * from != to, in ascending order; a non-zero return stops the walk and is
 * returned.
 *
 * @return DCH_OK, DCH_EINVAL (NULL list with a non-zero count, NULL fn, or a
 *         list that is not well formed; fn is then never called), or the
 *         non-zero value fn returned.
 * Complexity: O(na + nb).
 */
DCH_API int dch_range_diff(const dch_range *a, size_t na, const dch_range *b,
                           size_t nb,
                           int (*fn)(const dch_range_change *change, void *ctx),
                           void *ctx);

/**
 * The share of the hash space a range covers, (hi - lo + 1) / 2^64, as a
 * double: 1.0 for the whole space [0, 2^64-1], 2^-64 for a single hash,
 * rounded to nearest otherwise. 0.0 when lo > hi.
 */
DCH_API double dch_range_fraction(uint64_t lo, uint64_t hi);

#ifdef __cplusplus
}
#endif

#endif /* DCH_RANGE_H */
