/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's peers (see kernels.h). They are kept out of lookup.c and
 * marked noinline so that the timing loops call them exactly as they call
 * libdch: one call per lookup, nothing hoisted or vectorised across calls.
 * Each starts on a 64-byte boundary, so that a function as short as the
 * floor never straddles two instruction fetch blocks, whatever the layout of
 * this file: the floor is the best a bare lookup can do.
 */
#include "kernels.h"

#include <stddef.h>

#define BENCH_NOINLINE __attribute__((noinline, aligned(64)))

BENCH_NOINLINE uint32_t bench_floor_lookup(const bench_floor *f, uint64_t hash)
{
    return f->table[(hash >> 32) >> f->shift];
}

BENCH_NOINLINE uint32_t bench_copies_floor_lookup(const bench_copies_floor *f,
                                                  uint64_t hash, uint32_t *ids)
{
    const uint16_t *c = f->table + (size_t)((hash >> 32) >> f->shift) * f->stride;
    uint32_t sum = 0;
    for (unsigned k = 0; k < f->copies; k++) {
        ids[k] = c[k];
        sum += c[k];
    }
    return sum;
}

BENCH_NOINLINE void bench_counts_add(bench_counts *f, uint64_t hash, uint64_t amount)
{
    f->n[(hash >> 32) >> f->shift] += amount;
}

/* The comparison is left as a branch on purpose: this is the search a ring
 * without an index performs, about log2(points) steps, each a load that
 * depends on the previous step and a branch the predictor cannot learn. */
BENCH_NOINLINE uint32_t bench_bsearch_lookup(const bench_sorted *s, uint64_t hash)
{
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (s->pos[mid] < hash)
            lo = mid + 1;
        else
            hi = mid;
    }
    return s->owner[lo == s->n ? 0 : lo];
}

/*
 * From the paper's description: the key drives a 64-bit linear congruential
 * generator; from bucket b the next jump lands at (b + 1) * 2^31 / r, where r
 * is the generator's top 31 bits plus one, and the last landing below the
 * bucket count is the answer. Expected ln(buckets) + 1 rounds, each a
 * multiply and a double division that depend on the previous round.
 */
BENCH_NOINLINE uint32_t bench_jump_lookup(const uint32_t *buckets, uint64_t key)
{
    const int64_t n = (int64_t)*buckets;
    int64_t b = -1, j = 0;
    while (j < n) {
        b = j;
        key = key * UINT64_C(2862933555777941757) + 1;
        j = (int64_t)((double)(b + 1) *
                      ((double)(INT64_C(1) << 31) / (double)((key >> 33) + 1)));
    }
    return (uint32_t)b;
}
