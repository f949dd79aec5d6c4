/* SPDX-License-Identifier: MIT */
/*
 * What fuzz_balance and fuzz_replicas read from their inputs alike: the
 * map's shape and R from byte 0, a weight byte, an add's three argument
 * bytes; and what they do alike: a clone to continue with, a violation
 * reported. Each target's header comment
 * documents its whole input; a change here changes how both decode every
 * input, and so what CI runs (.ci/run replays the corpora and a fixed
 * number of inputs from a fixed seed).
 *
 * A target defines FUZZ_TARGET, its name in failure messages, before it
 * includes this header.
 */
#ifndef DCH_FUZZ_INPUT_H
#define DCH_FUZZ_INPUT_H

#include "dch/dch.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef FUZZ_TARGET
#error "define FUZZ_TARGET (the target's name) before including fuzz_input.h"
#endif

/* Byte 0: units 2^(b & 7), slots per unit 2^(b >> 3 & 3), so at most 2^10
 * slots and a run stays fast; R 1 + (b >> 5 & 3). */
static inline dch_map_config fuzz_map_config(uint8_t b)
{
    dch_map_config cfg = map_config(UINT32_C(1) << (b & 7), UINT32_C(1) << (b >> 3 & 3));
    cfg.replicas = 1u + (b >> 5 & 3u);
    return cfg;
}

/* A weight byte below 0xF0 is b % 8 (0 included); from 0xF0 up one of
 * sixteen weights up to 10^6, so unequal histories reach ratios of 10^6. */
static inline uint32_t fuzz_weight(uint8_t b)
{
    static const uint32_t big_weights[16] = {9,      10,     16,     25,     50,     99,
                                             100,    255,    1000,   4096,   10000,  65535,
                                             100000, 250000, 999999, 1000000};
    return b < 0xF0 ? b % 8u : big_weights[b - 0xF0];
}

/* An add's arguments: name byte, zone byte, weight byte. */
typedef struct fuzz_add {
    char name[8];     /* "n<b % names>" */
    char zone_in[8];  /* "z<b % zones>" */
    const char *zone; /* zone_in, or NULL when there are no zones */
    uint32_t weight;  /* fuzz_weight */
} fuzz_add;

/* The add whose three argument bytes start at p, with `names` names and
 * `zones` zones (0: none). */
static inline void fuzz_add_args(fuzz_add *a, const uint8_t *p, uint32_t names, uint32_t zones)
{
    snprintf(a->name, sizeof a->name, "n%u", p[0] % names);
    snprintf(a->zone_in, sizeof a->zone_in, "z%u", zones ? p[1] % zones : 0);
    a->zone = zones ? a->zone_in : NULL;
    a->weight = fuzz_weight(p[2]);
}

/* Continue with a clone of *m, which the clone replaces. */
static inline void fuzz_clone(dch_map **m)
{
    dch_map *c;
    if (dch_map_clone(&c, *m) != DCH_OK)
        abort();
    dch_map_free(*m);
    *m = c;
}

/* A violation: the step, the operation and what broke, then abort. */
static inline void fail(int step, const char *op, const char *what)
{
    fprintf(stderr, FUZZ_TARGET ": step %d (%s): %s\n", step, op, what);
    abort();
}

#endif /* DCH_FUZZ_INPUT_H */
