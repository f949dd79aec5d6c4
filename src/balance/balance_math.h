/* SPDX-License-Identifier: MIT */
/*
 * Exact targets and bounds for balancing (docs/balance.md, "Arithmetic").
 * A target T = Λ * w / W' is a rational; every comparison with it is made
 * by cross-multiplying into 96 bits (a load below 2^64 times a weight
 * below 2^32), held in two 64-bit halves, so that no rounding can decide
 * whether a member is above its bound. Internal to libdch.
 */
#ifndef DCH_SRC_BALANCE_MATH_H
#define DCH_SRC_BALANCE_MATH_H

#include <stdint.h>

/* hi * 2^64 + lo. */
typedef struct dch__wide {
    uint64_t hi, lo;
} dch__wide;

/* The terms of one call: Λ, W', Lmax, L2. */
typedef struct dch__bal_terms {
    uint64_t total; /* Λ */
    uint32_t wsum; /* W' */
    uint64_t lmax, l2;
} dch__bal_terms;

/** a * b, exactly. */
dch__wide dch__wide_mul(uint64_t a, uint32_t b);
/** -1, 0 or 1 as a <, =, > b. */
int dch__wide_cmp(dch__wide a, dch__wide b);
/** a - b, for a >= b. */
dch__wide dch__wide_sub(dch__wide a, dch__wide b);

/** Whether load c is below the target of weight w: c * W' < Λ * w. */
int dch__bal_below_target(const dch__bal_terms *t, uint64_t c, uint32_t w);
/** Whether load c is above the target of weight w. */
int dch__bal_above_target(const dch__bal_terms *t, uint64_t c, uint32_t w);
/** Whether load c is above B = min(T + Lmax, max(T, h) + L2), T the target
 *  of weight w, h the member's heaviest slot's load. */
int dch__bal_above_bound(const dch__bal_terms *t, uint64_t c, uint32_t w, uint64_t h);
/** floor(T) of weight w (T <= Λ, so it fits). */
uint64_t dch__bal_target_floor(const dch__bal_terms *t, uint32_t w);
/** floor(B), saturated at UINT64_MAX. */
uint64_t dch__bal_bound_floor(const dch__bal_terms *t, uint32_t w, uint64_t h);
/** How far below its target load c of weight w is, scaled by W':
 *  Λ * w - c * W' (0 when not below). */
dch__wide dch__bal_room(const dch__bal_terms *t, uint64_t c, uint32_t w);
/** -1, 0, 1 as ca / T(wa) <, =, > cb / T(wb): ca * wb against cb * wa. */
int dch__bal_ratio_cmp(uint64_t ca, uint32_t wa, uint64_t cb, uint32_t wb);
/** Whether a member holding `count` copies (after a copy move to it) stays
 *  within `slack` of its count share c * P * w / W' (copies_p = c * P). */
int dch__bal_within_slack(const dch__bal_terms *t, uint32_t count, uint32_t slack,
                          uint32_t copies_p, uint32_t w);

#endif /* DCH_SRC_BALANCE_MATH_H */
