/* SPDX-License-Identifier: MIT */
/*
 * The one seeded generator of the programs and tests around the library
 * (dch-analysis, the explorer, dch-bench, the redis-shard example and the
 * tests): SplitMix64, so that a seed names the same stream in all of them.
 * Like number.h, part of the dch_number static library of the build tree,
 * not of libdch.
 */
#ifndef DCH_TOOLS_RNG_H
#define DCH_TOOLS_RNG_H

#include <stdint.h>

/* SplitMix64: the next value of the stream whose state is *state. Every
 * state, zero included, starts a full-period stream. */
uint64_t dch__rng_next(uint64_t *state);

/* A value in 0 .. n-1 (n >= 1); the modulo bias is far below anything the
 * callers measure (n is far below 2^64). */
uint32_t dch__rng_below(uint64_t *state, uint32_t n);

#endif /* DCH_TOOLS_RNG_H */
