/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's load section: the cost of counting a request's load,
 * dch_load_hit (dch/load.h) on one thread index of a counter of the
 * default P, against the floor of incrementing a bare uint64_t array at
 * the hash's slot behind a call the compiler cannot inline
 * (bench_counts_add, kernels.c: every peer pays one call, as a call into
 * libdch does), in the same process and on the same hashes. Beside them,
 * for information: the same increment written inline in the loop (no
 * call, so the compiler pipelines the loop freely), and inline with a
 * relaxed atomic fetch-and-add (the locked read-modify-write dch_load_hit
 * avoids). The goals: dch_load_hit within 2 times the floor and under
 * 5 ns. Before timing, one pass of hits is checked: the counter's snapshot
 * must equal the bare array's counts.
 */
#include "bench.h"
#include "kernels.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define LOAD_P 65536u
#define LOAD_SHIFT 16u /* 32 - log2(LOAD_P) */
#define LOAD_THREADS 4u

typedef struct bare_counts {
    bench_counts floor;
    _Atomic uint64_t *atomic_n;
} bare_counts;

__attribute__((aligned(64))) static uint64_t hit_loop(const void *obj, const uint64_t *h,
                                                      uint64_t mask, uint64_t ops)
{
    dch_load_counter *c = (dch_load_counter *)obj; /* the bench's own, not const */
    uint64_t acc = 0;
    for (uint64_t i = 0; i < ops; i++)
        acc += (uint64_t)dch_load_hit(c, 1, h[i & mask], 1);
    return acc;
}

__attribute__((aligned(64))) static uint64_t floor_loop(const void *obj, const uint64_t *h,
                                                        uint64_t mask, uint64_t ops)
{
    bench_counts *f = &((bare_counts *)obj)->floor; /* the bench's own, not const */
    for (uint64_t i = 0; i < ops; i++)
        bench_counts_add(f, h[i & mask], 1);
    return f->n[0];
}

__attribute__((aligned(64))) static uint64_t inline_loop(const void *obj, const uint64_t *h,
                                                         uint64_t mask, uint64_t ops)
{
    uint64_t *n = ((const bare_counts *)obj)->floor.n;
    for (uint64_t i = 0; i < ops; i++)
        n[(h[i & mask] >> 32) >> LOAD_SHIFT] += 1;
    return n[0];
}

__attribute__((aligned(64))) static uint64_t atomic_loop(const void *obj, const uint64_t *h,
                                                         uint64_t mask, uint64_t ops)
{
    _Atomic uint64_t *n = ((const bare_counts *)obj)->atomic_n;
    for (uint64_t i = 0; i < ops; i++)
        atomic_fetch_add_explicit(&n[(h[i & mask] >> 32) >> LOAD_SHIFT], 1,
                                  memory_order_relaxed);
    return atomic_load_explicit(&n[0], memory_order_relaxed);
}

/* One pass over the hashes: the counter's snapshot equals the bare counts. */
static int load_agrees(const bench *b, dch_load_counter *c, uint64_t mask)
{
    uint64_t *want = calloc(LOAD_P, sizeof *want), *got = calloc(LOAD_P, sizeof *got);
    int ok = want != NULL && got != NULL;
    for (uint64_t i = 0; ok && i <= mask; i++) {
        ok = dch_load_hit(c, (uint32_t)(i % LOAD_THREADS), b->hashes[i], i) == DCH_OK;
        want[(b->hashes[i] >> 32) >> LOAD_SHIFT] += i;
    }
    ok = ok && dch_load_snapshot(c, got) == DCH_OK;
    for (uint32_t s = 0; ok && s < LOAD_P; s++)
        ok = got[s] == want[s];
    free(want);
    free(got);
    return ok;
}

void bench_section_load(bench *b)
{
    const uint64_t mask = LOAD_P - 1; /* as many hashes as slots, as in the lookups */
    dch_load_counter *c = NULL;
    bare_counts bare = {{calloc(LOAD_P, sizeof(uint64_t)), LOAD_SHIFT},
                        calloc(LOAD_P, sizeof(_Atomic uint64_t))};
    if (dch_load_counter_new(&c, LOAD_P, LOAD_THREADS) != DCH_OK || bare.floor.n == NULL ||
        bare.atomic_n == NULL || !load_agrees(b, c, mask)) {
        fprintf(stderr, "dch-bench: the load counter disagrees with a bare array "
                        "(or no memory)\n");
        b->failed = 1;
        dch_load_counter_free(c);
        free(bare.floor.n);
        free((void *)bare.atomic_n);
        return;
    }
    for (uint32_t s = 0; s < LOAD_P; s++)
        atomic_init(&bare.atomic_n[s], 0);
    char g[32];
    printf("\nCounting load: a hit on one of %u thread indices against a bare array, "
           "P = %s; ns per hit, median [min .. max]\n", LOAD_THREADS,
           bench_grouped(g, sizeof g, LOAD_P));
    contender k[4] = {
        {"dch_load_hit", hit_loop, c, 0, {0}},
        {"floor: bare array +=, a call", floor_loop, &bare, 0, {0}},
        {"bare array +=, inline", inline_loop, &bare, 0, {0}},
        {"bare array fetch_add, inline", atomic_loop, &bare, 0, {0}},
    };
    bench_run_group(b, k, 4, mask);
    for (int i = 0; i < 4; i++) {
        char s[64];
        bench_record(b, "load", &k[i], "independent", LOAD_THREADS, LOAD_P, 0);
        printf("  %-30s %s\n", k[i].subject, bench_stat_text(s, sizeof s, k[i].ns, b->o.trials));
    }
    bench_check_ratio(b, "load_hit_over_floor", "dch_load_hit / floor (bare array +=), P=65536",
                      &k[0], &k[1], BENCH_GOAL_AT_MOST, 2.0);
    bench_check_values(b, "load_hit_ns", "dch_load_hit, ns per hit, P=65536", "ns",
                       k[0].ns, b->o.trials, BENCH_GOAL_AT_MOST, 5.0);
    bench_check_ratio(b, "load_hit_over_inline", "dch_load_hit / bare array += inline, P=65536",
                      &k[0], &k[2], BENCH_GOAL_NONE, 0);
    bench_check_ratio(b, "load_atomic_over_inline",
                      "atomic fetch_add / bare array += inline, P=65536", &k[3], &k[2],
                      BENCH_GOAL_NONE, 0);
    dch_load_counter_free(c);
    free(bare.floor.n);
    free((void *)bare.atomic_n);
}
