/* SPDX-License-Identifier: MIT */
/*
 * The peers dch-bench measures the library against, each behind a call the
 * compiler cannot inline or vectorise (they live in their own translation
 * unit, marked noinline), so that every contender pays one function call per
 * lookup, as a call into libdch does.
 */
#ifndef DCH_BENCH_KERNELS_H
#define DCH_BENCH_KERNELS_H

#include <stdint.h>

/** The floor: a bare table of P owner ids, indexed by a hash's top bits. */
typedef struct bench_floor {
    const uint16_t *table;
    unsigned shift; /* index = (hash >> 32) >> shift, as the map computes it */
} bench_floor;

/** table[(hash >> 32) >> shift]: one shift and one load, nothing else. */
uint32_t bench_floor_lookup(const bench_floor *f, uint64_t hash);

/** The floor of a map with copies: a bare table of P blocks of `stride`
 *  owner ids, a slot's copies first in its block. */
typedef struct bench_copies_floor {
    const uint16_t *table;
    unsigned shift;  /* as bench_floor's */
    unsigned stride; /* ids a block, a power of two >= copies */
    unsigned copies;
} bench_copies_floor;

/** The ids of a hash's block written to ids[0 .. copies-1], and their sum:
 *  one shift, one block read, nothing checked. */
uint32_t bench_copies_floor_lookup(const bench_copies_floor *f, uint64_t hash,
                                   uint32_t *ids);

/** The floor of counting load: a bare array of P counters, no threads. */
typedef struct bench_counts {
    uint64_t *n;
    unsigned shift; /* as bench_floor's */
} bench_counts;

/** n[(hash >> 32) >> shift] += amount: one shift, one load and one store,
 *  nothing checked. */
void bench_counts_add(bench_counts *f, uint64_t hash, uint64_t amount);

/** Point positions of a ring, ascending, with the owner of each point. */
typedef struct bench_sorted {
    const uint64_t *pos;
    const uint16_t *owner;
    uint32_t n; /* > 0 */
} bench_sorted;

/**
 * Owner of the first point at or after `hash`, wrapping to the first point:
 * the textbook branchy binary search over the whole array.
 */
uint32_t bench_bsearch_lookup(const bench_sorted *s, uint64_t hash);

/**
 * Jump consistent hash (Lamping and Veach, "A Fast, Minimal Memory,
 * Consistent Hash Algorithm", 2014): the bucket in [0, buckets) of `key`.
 * buckets must be at least 1.
 */
uint32_t bench_jump_lookup(const uint32_t *buckets, uint64_t key);

#endif /* DCH_BENCH_KERNELS_H */
