/* SPDX-License-Identifier: MIT */
/*
 * Per-slot load counters (dch/load.h; docs/load.md proves the promises):
 *  - a hash's slot is dch_map_slot_of's on a real map of P slots, for every
 *    P from 1 to 2^18, at random hashes and at every kind of slot boundary;
 *  - promises 1-3 against an exact oracle (a plain array fed the same hits,
 *    saturating at UINT64_MAX, and the decay computed with a 128-bit
 *    product) over seeded random streams of hits, snapshots and decays, in
 *    regimes from small amounts to amounts near 2^64 that make the running
 *    totals wrap and the loads saturate;
 *  - the wrap and the saturation, each on its own history, and the
 *    documented loss when a thread adds 2^64 to one slot between folds;
 *  - the decay's rounding at adversarial loads and fractions;
 *  - every error path leaves the counter as it was, and a failed
 *    allocation leaves nothing allocated.
 * The concurrent promises (4, and 1 under concurrent snapshots) are in
 * test_concurrency.c, which CI runs under ThreadSanitizer. Every failure
 * message names the seed; rerun with DCH_TEST_SEED.
 */
#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

static dch_load_counter *counter(uint32_t slots, uint32_t threads)
{
    dch_load_counter *c = NULL;
    cr_assert_eq(dch_load_counter_new(&c, slots, threads), DCH_OK, "new(%u, %u)", slots,
                 threads);
    return c;
}

static unsigned log2_of(uint32_t p)
{
    unsigned b = 0;
    while ((UINT32_C(1) << b) < p)
        b++;
    return b;
}

/* The first hash of slot s of P, or the last one of slot s - 1 (edge 1). */
static uint64_t boundary_hash(uint32_t p, uint32_t s, int last_of_previous)
{
    const unsigned b = log2_of(p);
    const uint64_t first = b == 0 ? 0 : (uint64_t)s << (64 - b);
    return last_of_previous ? first - 1 : first;
}

/* ---- The slot of a hash ------------------------------------------------ */

/* Hit `h` once, snapshot, and return the one slot whose load grew by 1. */
static uint32_t slot_hit(dch_load_counter *c, uint32_t thread, uint64_t h, uint64_t *before,
                         uint64_t *after)
{
    const uint32_t p = dch_load_slot_count(c);
    cr_assert_eq(dch_load_hit(c, thread, h, 1), DCH_OK);
    cr_assert_eq(dch_load_snapshot(c, after), DCH_OK);
    uint32_t grew = UINT32_MAX;
    for (uint32_t s = 0; s < p; s++) {
        if (after[s] == before[s])
            continue;
        cr_assert(after[s] == before[s] + 1 && grew == UINT32_MAX,
                  "hash %016llx: slot %u went from %llu to %llu", (unsigned long long)h, s,
                  (unsigned long long)before[s], (unsigned long long)after[s]);
        grew = s;
    }
    memcpy(before, after, p * sizeof *before);
    return grew;
}

Test(load, a_hash_falls_in_the_slot_a_map_of_as_many_slots_gives_it)
{
    static const uint32_t shapes[][2] = {{1, 1},  {1, 2},   {2, 1},    {4, 4},
                                         {16, 8}, {64, 64}, {1024, 64}, {4096, 64}};
    const uint64_t seed = test_seed(260001);
    uint64_t rng = seed;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        dch_map *m = map_shaped(shapes[k][0], shapes[k][1]);
        const uint32_t p = dch_map_slot_count(m);
        dch_load_counter *c = counter(p, 2);
        cr_assert_eq(dch_load_slot_count(c), p);
        uint64_t *before = xcalloc(p, sizeof *before), *after = xcalloc(p, sizeof *after);
        const unsigned hashes = p > 4096 ? test_scaled(48, 8) : test_scaled(400, 40);
        for (unsigned i = 0; i < hashes; i++) {
            uint64_t h;
            switch (i % 4) {
            case 0: h = rng_next(&rng); break;
            case 1: h = boundary_hash(p, rng_below(&rng, p), 0); break;
            case 2: h = boundary_hash(p, rng_below(&rng, p), 1); break;
            default: h = i % 8 == 3 ? 0 : UINT64_MAX; break;
            }
            const uint32_t got = slot_hit(c, i % 2, h, before, after);
            cr_assert_eq(got, dch_map_slot_of(m, h),
                         "P = %u, hash %016llx: counted in slot %u, the map says %u (seed %llu)",
                         p, (unsigned long long)h, got, dch_map_slot_of(m, h),
                         (unsigned long long)seed);
        }
        free(before);
        free(after);
        dch_load_counter_free(c);
        dch_map_free(m);
    }
}

/* ---- The oracle -------------------------------------------------------- */

typedef struct oracle {
    uint32_t p, t;
    uint64_t *acc;     /* min(true load, UINT64_MAX), slot by slot */
    uint64_t *pending; /* pending[t * P + s]: added by thread t since the last fold */
} oracle;

static oracle oracle_new(uint32_t p, uint32_t t)
{
    return (oracle){p, t, xcalloc(p, sizeof(uint64_t)),
                    xcalloc((size_t)p * t, sizeof(uint64_t))};
}

static void oracle_free(oracle *o)
{
    free(o->acc);
    free(o->pending);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static uint32_t oracle_slot(const oracle *o, uint64_t h)
{
    const unsigned b = log2_of(o->p);
    return b == 0 ? 0 : (uint32_t)(h >> (64 - b));
}

static void oracle_hit(oracle *o, uint32_t t, uint64_t h, uint64_t amount)
{
    const uint32_t s = oracle_slot(o, h);
    o->acc[s] = sat_add(o->acc[s], amount);
    o->pending[(size_t)t * o->p + s] += amount;
}

static void oracle_fold(oracle *o)
{
    memset(o->pending, 0, (size_t)o->p * o->t * sizeof *o->pending);
}

static uint64_t decayed(uint64_t a, uint32_t num, uint32_t den)
{
    return (uint64_t)((u128)a * num / den);
}

static void oracle_decay(oracle *o, uint32_t num, uint32_t den)
{
    oracle_fold(o);
    for (uint32_t s = 0; s < o->p; s++)
        o->acc[s] = decayed(o->acc[s], num, den);
}

static void expect_oracle(dch_load_counter *c, oracle *o, uint64_t *out,
                          const char *what, uint64_t seed, unsigned step)
{
    cr_assert_eq(dch_load_snapshot(c, out), DCH_OK);
    oracle_fold(o);
    for (uint32_t s = 0; s < o->p; s++)
        cr_assert_eq(out[s], o->acc[s],
                     "%s, seed %llu, step %u, P = %u, %u threads: slot %u holds %llu, "
                     "the oracle %llu",
                     what, (unsigned long long)seed, step, o->p, o->t, s,
                     (unsigned long long)out[s], (unsigned long long)o->acc[s]);
}

/* ---- Random histories -------------------------------------------------- */

enum regime { SMALL, MIXED, HUGE, NREGIMES };
static const char *const regime_names[] = {"small amounts", "mixed amounts",
                                           "amounts near 2^64"};

/* An amount that keeps thread t's sum on slot s since the last fold below
 * 2^64 (the precondition of promise 1): at most `room`. */
static uint64_t draw_amount(uint64_t *rng, enum regime r, uint64_t room)
{
    uint64_t a;
    const uint32_t k = rng_below(rng, 10);
    if (r == SMALL || (r == MIXED && k < 5))
        a = k == 0 ? 0 : 1 + rng_below(rng, 1000);
    else if (r == MIXED && k < 8)
        a = rng_next(rng) >> rng_below(rng, 64);
    else
        a = k < 3 ? room : UINT64_MAX - (rng_next(rng) >> (1 + rng_below(rng, 63)));
    return a < room ? a : room;
}

static uint64_t draw_hash(uint64_t *rng, uint32_t p)
{
    switch (rng_below(rng, 4)) {
    case 0: return boundary_hash(p, rng_below(rng, p), 0);
    case 1: return boundary_hash(p, rng_below(rng, p), 1);
    default: return rng_next(rng);
    }
}

static void draw_fraction(uint64_t *rng, uint32_t *num, uint32_t *den)
{
    static const uint32_t dens[] = {1, 2, 3, 7, 8, 1000, 65536, UINT32_MAX};
    const uint32_t k = rng_below(rng, 10);
    *den = k < 8 ? dens[k] : (uint32_t)(rng_next(rng) >> 32) | 1u;
    switch (rng_below(rng, 5)) {
    case 0: *num = 0; break;
    case 1: *num = *den; break;
    case 2: *num = *den - 1; break;
    default: *num = (uint32_t)(rng_next(rng) % ((uint64_t)*den + 1)); break;
    }
}

/* One seeded history: hits, snapshots checked against the oracle, decays. */
static void run_history(uint32_t p, uint32_t t, enum regime r, uint64_t seed, unsigned steps)
{
    uint64_t rng = seed;
    dch_load_counter *c = counter(p, t);
    oracle o = oracle_new(p, t);
    uint64_t *out = xcalloc(p, sizeof *out);
    for (unsigned step = 0; step < steps; step++) {
        const uint32_t k = rng_below(&rng, 100);
        if (k < 88) {
            const uint32_t th = rng_below(&rng, t);
            const uint64_t h = draw_hash(&rng, p);
            const uint64_t room =
                UINT64_MAX - o.pending[(size_t)th * p + oracle_slot(&o, h)];
            const uint64_t a = draw_amount(&rng, r, room);
            cr_assert_eq(dch_load_hit(c, th, h, a), DCH_OK);
            oracle_hit(&o, th, h, a);
        } else if (k < 96) {
            expect_oracle(c, &o, out, regime_names[r], seed, step);
        } else {
            uint32_t num, den;
            draw_fraction(&rng, &num, &den);
            cr_assert_eq(dch_load_decay(c, num, den), DCH_OK);
            oracle_decay(&o, num, den);
        }
    }
    expect_oracle(c, &o, out, regime_names[r], seed, steps);
    free(out);
    oracle_free(&o);
    dch_load_counter_free(c);
}

Test(load, snapshots_and_decays_match_an_exact_oracle_over_random_histories)
{
    static const uint32_t shapes[][2] = {{1, 1}, {2, 3}, {16, 1}, {16, 5},
                                         {256, 2}, {256, 16}, {4096, 4}};
    const uint64_t base = test_seed(260100);
    const unsigned cases = test_scaled(6, 1), steps = test_scaled(3000, 300);
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (unsigned r = 0; r < NREGIMES; r++)
            for (unsigned i = 0; i < cases; i++)
                run_history(shapes[k][0], shapes[k][1], (enum regime)r,
                            base + i + 100 * r + 1000 * k, steps);
}

/* ---- Wrap and saturation ----------------------------------------------- */

static void hit(dch_load_counter *c, uint32_t thread, uint64_t h, uint64_t amount)
{
    cr_assert_eq(dch_load_hit(c, thread, h, amount), DCH_OK, "thread %u: hit %016llx by %llu",
                 thread, (unsigned long long)h, (unsigned long long)amount);
}

/* The loads of a snapshot: slot s's, and whether every other slot's is 0. */
static uint64_t load_of(dch_load_counter *c, uint32_t s, bool *others_zero)
{
    const uint32_t p = dch_load_slot_count(c);
    uint64_t *out = xcalloc(p, sizeof *out);
    cr_assert_eq(dch_load_snapshot(c, out), DCH_OK);
    const uint64_t load = out[s];
    bool zero = true;
    for (uint32_t k = 0; k < p; k++)
        zero = zero && (k == s || out[k] == 0);
    if (others_zero != NULL)
        *others_zero = zero;
    free(out);
    return load;
}

Test(load, running_totals_wrap_and_every_fold_counts_what_was_added)
{
    const uint64_t half = UINT64_C(1) << 63;
    dch_load_counter *c = counter(4, 2);
    /* Thread 1's total of slot 3 passes 2^64 after the first fold. */
    const uint64_t h = UINT64_MAX; /* slot 3 */
    hit(c, 1, h, half);
    cr_assert_eq(load_of(c, 3, NULL), half);
    cr_assert_eq(dch_load_decay(c, 0, 1), DCH_OK); /* loads back to 0 */
    cr_assert_eq(load_of(c, 3, NULL), 0);
    hit(c, 1, h, half); /* the total wraps to 0 */
    hit(c, 1, h, 5);    /* and is now 5 */
    bool others_zero;
    const uint64_t wrapped = load_of(c, 3, &others_zero);
    cr_assert_eq(wrapped, half + 5, "a wrapped total counts %llu", (unsigned long long)wrapped);
    cr_assert(others_zero, "the other slots hold nothing");
    /* Many wraps, each fold adding less than 2^64: all of it counted. */
    cr_assert_eq(dch_load_decay(c, 0, 1), DCH_OK);
    for (int i = 0; i < 9; i++) {
        const uint64_t a = UINT64_MAX - (uint64_t)i;
        hit(c, 0, 0, a);
        cr_assert_eq(load_of(c, 0, NULL), a, "fold %d", i);
        cr_assert_eq(dch_load_decay(c, 0, 7), DCH_OK);
    }
    dch_load_counter_free(c);
}

Test(load, a_thread_adding_two_to_the_64_between_folds_is_counted_modulo_two_to_the_64)
{
    /* The documented limit of promise 1: 2^63 twice on one slot by one
     * thread between folds is 2^64, counted as 0; by two threads, 2^64 in
     * all, counted and saturated. */
    const uint64_t half = UINT64_C(1) << 63;
    dch_load_counter *c = counter(2, 2);
    hit(c, 0, 0, half);
    hit(c, 0, 0, half);
    hit(c, 0, UINT64_MAX, half);
    hit(c, 1, UINT64_MAX, half);
    cr_assert_eq(load_of(c, 0, NULL), 0);
    cr_assert_eq(load_of(c, 1, NULL), UINT64_MAX);
    dch_load_counter_free(c);
}

Test(load, loads_saturate_at_the_top_and_decay_from_there)
{
    const uint64_t half = UINT64_C(1) << 63;
    dch_load_counter *c = counter(1, 3);
    hit(c, 0, 42, half);
    cr_assert_eq(load_of(c, 0, NULL), half);
    hit(c, 0, 42, half); /* 2^64: saturates */
    cr_assert_eq(load_of(c, 0, NULL), UINT64_MAX);
    for (uint32_t t = 0; t < 3; t++)
        hit(c, t, 7, UINT64_MAX);
    cr_assert_eq(load_of(c, 0, NULL), UINT64_MAX, "a saturated load never wraps");
    cr_assert_eq(dch_load_decay(c, 1, 2), DCH_OK);
    cr_assert_eq(load_of(c, 0, NULL), half - 1, "floor((2^64 - 1) / 2)");
    hit(c, 2, 0, 3);
    cr_assert_eq(load_of(c, 0, NULL), half + 2);
    dch_load_counter_free(c);
}

/* ---- Decay rounding ---------------------------------------------------- */

Test(load, decay_rounds_toward_zero_exactly_at_adversarial_loads)
{
    static const uint64_t loads[] = {0,
                                     1,
                                     2,
                                     6,
                                     7,
                                     UINT32_MAX - 1,
                                     UINT32_MAX,
                                     (uint64_t)UINT32_MAX + 1,
                                     (uint64_t)UINT32_MAX * UINT32_MAX,
                                     (uint64_t)UINT32_MAX * UINT32_MAX - 1,
                                     UINT64_C(1) << 63,
                                     (UINT64_C(1) << 63) - 1,
                                     UINT64_MAX - UINT32_MAX,
                                     UINT64_MAX - 1,
                                     UINT64_MAX,
                                     UINT64_C(0x123456789abcdef0)};
    static const uint32_t fr[][2] = {{0, 1},
                                     {1, 1},
                                     {1, 2},
                                     {7, 8},
                                     {2, 3},
                                     {999, 1000},
                                     {1, UINT32_MAX},
                                     {UINT32_MAX - 1, UINT32_MAX},
                                     {UINT32_MAX, UINT32_MAX},
                                     {0x80000000u, 0xffffffffu},
                                     {0x7fffffffu, 0x80000000u},
                                     {3, 7}};
    enum { NL = sizeof loads / sizeof loads[0] };
    dch_load_counter *c = counter(NL < 16 ? 16 : 32, 1);
    const uint32_t p = dch_load_slot_count(c);
    uint64_t out[32];
    for (size_t f = 0; f < sizeof fr / sizeof fr[0]; f++) {
        cr_assert_eq(dch_load_decay(c, 0, 1), DCH_OK);
        for (uint32_t s = 0; s < NL; s++)
            cr_assert_eq(dch_load_hit(c, 0, boundary_hash(p, s, 0), loads[s]), DCH_OK);
        cr_assert_eq(dch_load_decay(c, fr[f][0], fr[f][1]), DCH_OK);
        cr_assert_eq(dch_load_snapshot(c, out), DCH_OK);
        for (uint32_t s = 0; s < NL; s++) {
            const uint64_t want = decayed(loads[s], fr[f][0], fr[f][1]);
            cr_assert_eq(out[s], want, "%llu * %u / %u: %llu, not %llu",
                         (unsigned long long)loads[s], fr[f][0], fr[f][1],
                         (unsigned long long)out[s], (unsigned long long)want);
            cr_assert_leq(out[s], loads[s]);
        }
    }
    dch_load_counter_free(c);
}

Test(load, decay_scales_only_what_was_folded_before_it)
{
    dch_load_counter *c = counter(2, 2);
    hit(c, 0, 0, 100); /* not folded yet */
    hit(c, 1, 0, 1);
    cr_assert_eq(dch_load_decay(c, 1, 2), DCH_OK); /* folds 101, halves it */
    hit(c, 1, 0, 10);
    bool others_zero;
    cr_assert_eq(load_of(c, 0, &others_zero), 50 + 10);
    cr_assert(others_zero);
    dch_load_counter_free(c);
}

/* ---- Contracts --------------------------------------------------------- */

Test(load, creation_refuses_every_shape_out_of_its_limits)
{
    dch_load_counter *const sentinel = (dch_load_counter *)&sentinel;
    dch_load_counter *c = sentinel;
    static const struct {
        uint32_t slots, threads;
        int rc;
    } bad[] = {
        {0, 1, DCH_EINVAL},
        {3, 1, DCH_EINVAL},
        {96, 2, DCH_EINVAL},
        {DCH_LOAD_MAX_SLOTS + 1, 1, DCH_EINVAL},
        {UINT32_MAX, 1, DCH_EINVAL},
        {16, 0, DCH_EINVAL},
        {DCH_LOAD_MAX_SLOTS * 2, 1, DCH_EFULL},
        {UINT32_C(1) << 31, 1, DCH_EFULL},
        {16, DCH_LOAD_MAX_THREADS + 1, DCH_EFULL},
        {16, UINT32_MAX, DCH_EFULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(dch_load_counter_new(&c, bad[i].slots, bad[i].threads), bad[i].rc,
                     "new(%u, %u)", bad[i].slots, bad[i].threads);
        cr_assert_eq(c, sentinel, "*out untouched");
    }
    cr_assert_eq(dch_load_counter_new(NULL, 16, 1), DCH_EINVAL);
    faulty f = {0};
    dch_allocator a = faulty_allocator(&f);
    a.realloc = NULL;
    cr_assert_eq(dch_load_counter_new_with(&c, 16, 1, &a), DCH_EINVAL);
    cr_assert_eq(c, sentinel);
    cr_assert_eq(f.calls, 0, "nothing allocated");
    /* The limits themselves are accepted (one thread index at its most). */
    cr_assert_eq(dch_load_counter_new(&c, 1, DCH_LOAD_MAX_THREADS), DCH_OK);
    uint64_t out[1];
    cr_assert_eq(dch_load_hit(c, DCH_LOAD_MAX_THREADS - 1, 9, 11), DCH_OK);
    cr_assert_eq(dch_load_snapshot(c, out), DCH_OK);
    cr_assert_eq(out[0], 11);
    cr_assert_eq(dch_load_thread_count(c), DCH_LOAD_MAX_THREADS);
    dch_load_counter_free(c);
}

Test(load, every_error_leaves_the_counter_as_it_was)
{
    const uint64_t seed = test_seed(260200);
    uint64_t rng = seed;
    const uint32_t p = 64, t = 3;
    dch_load_counter *c = counter(p, t);
    oracle o = oracle_new(p, t);
    uint64_t out[64], sentinel[64];
    /* Folded loads, a decay, then hits not folded yet. */
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 200; i++) {
            const uint32_t th = rng_below(&rng, t);
            const uint64_t h = rng_next(&rng), a = 1 + rng_below(&rng, 1u << 20);
            cr_assert_eq(dch_load_hit(c, th, h, a), DCH_OK);
            oracle_hit(&o, th, h, a);
        }
        if (round == 0) {
            expect_oracle(c, &o, out, "setup", seed, 0);
            cr_assert_eq(dch_load_decay(c, 5, 8), DCH_OK);
            oracle_decay(&o, 5, 8);
        }
    }
    const size_t memory = dch_load_memory(c);
    memset(sentinel, 0xA5, sizeof sentinel);
    memcpy(out, sentinel, sizeof out);
    cr_assert_eq(dch_load_hit(NULL, 0, 1, 1), DCH_EINVAL);
    cr_assert_eq(dch_load_hit(c, t, 1, 1), DCH_EINVAL);
    cr_assert_eq(dch_load_hit(c, UINT32_MAX, 1, 1), DCH_EINVAL);
    cr_assert_eq(dch_load_snapshot(NULL, out), DCH_EINVAL);
    cr_assert_eq(dch_load_snapshot(c, NULL), DCH_EINVAL);
    cr_assert_eq(dch_load_decay(NULL, 1, 2), DCH_EINVAL);
    cr_assert_eq(dch_load_decay(c, 1, 0), DCH_EINVAL);
    cr_assert_eq(dch_load_decay(c, 0, 0), DCH_EINVAL);
    cr_assert_eq(dch_load_decay(c, 3, 2), DCH_EINVAL);
    cr_assert_eq(dch_load_decay(c, UINT32_MAX, UINT32_MAX - 1), DCH_EINVAL);
    cr_assert_eq(memcmp(out, sentinel, sizeof out), 0, "a failed call wrote its output");
    cr_assert_eq(dch_load_slot_count(c), p);
    cr_assert_eq(dch_load_thread_count(c), t);
    cr_assert_eq(dch_load_memory(c), memory);
    /* No hit counted, no decay applied: the oracle's loads exactly. */
    expect_oracle(c, &o, out, "after every error", seed, 1);
    oracle_free(&o);
    dch_load_counter_free(c);
}

Test(load, a_null_counter_is_answered_by_every_function)
{
    cr_assert_eq(dch_load_slot_count(NULL), 0);
    cr_assert_eq(dch_load_thread_count(NULL), 0);
    cr_assert_eq(dch_load_memory(NULL), 0);
    uint64_t out[1] = {7};
    cr_assert_eq(dch_load_hit(NULL, 0, 0, 1), DCH_EINVAL);
    cr_assert_eq(dch_load_snapshot(NULL, out), DCH_EINVAL);
    cr_assert_eq(dch_load_decay(NULL, 1, 1), DCH_EINVAL);
    cr_assert_eq(out[0], 7);
    dch_load_counter_free(NULL);
}

Test(load, a_failed_allocation_leaves_nothing_allocated)
{
    faulty f = {0};
    const dch_allocator a = faulty_allocator(&f);
    dch_load_counter *const sentinel = (dch_load_counter *)&sentinel;
    fault_sweep sw;
    long points = 0;
    for (fault_sweep_start(&sw, &f, SWEEP_BOTH, SWEEP_UNTIL_OK); fault_sweep_next(&sw);) {
        dch_load_counter *c = sentinel;
        const int rc = dch_load_counter_new_with(&c, 256, 4, &a);
        fault_sweep_done(&sw, rc);
        if (rc != DCH_OK) {
            cr_assert_eq(rc, DCH_ENOMEM, "allocation %ld%s: %d", sw.at,
                         sw.after ? " and later" : "", rc);
            cr_assert_eq(c, sentinel, "*out untouched");
            cr_assert_eq(sw.leaked, 0, "allocation %ld%s: %ld blocks left", sw.at,
                         sw.after ? " and later" : "", sw.leaked);
            points++;
            continue;
        }
        /* The counter that was made works, through the same allocator. */
        uint64_t out[256];
        cr_assert_eq(dch_load_hit(c, 3, UINT64_MAX, 9), DCH_OK);
        cr_assert_eq(dch_load_snapshot(c, out), DCH_OK);
        cr_assert_eq(out[255], 9);
        cr_assert_eq(f.live, 3, "three blocks: header, totals, snapshot state");
        const size_t mem = dch_load_memory(c);
        const size_t floor_bytes = 256u * 4u * 16u + 256u * 8u + 128u * 5u;
        cr_assert(mem >= floor_bytes && mem <= floor_bytes + 1024u,
                  "memory %zu, the totals and state alone %zu", mem, floor_bytes);
        dch_load_counter_free(c);
        cr_assert_eq(f.live, 0, "free leaves nothing");
    }
    cr_assert_eq(points, 6, "each of the 3 allocations failed alone and with the later ones");
}
