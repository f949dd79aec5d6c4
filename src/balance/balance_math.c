/* SPDX-License-Identifier: MIT */
/*
 * Exact targets and bounds (docs/balance.md, "Arithmetic"). Every test of
 * a load against T = Λ * w / W' multiplies both sides by W' (> 0 while a
 * member balances): c <= T  <=>  c * W' <= Λ * w, both sides below 2^96.
 */
#include "balance_math.h"

dch__wide dch__wide_mul(uint64_t a, uint32_t b)
{
    const uint64_t lo = (a & 0xffffffffu) * b; /* < 2^64 */
    const uint64_t hi = (a >> 32) * b; /* < 2^64, weight 2^32 */
    dch__wide r;
    r.lo = lo + (hi << 32);
    r.hi = (hi >> 32) + (r.lo < lo);
    return r;
}

int dch__wide_cmp(dch__wide a, dch__wide b)
{
    if (a.hi != b.hi)
        return a.hi < b.hi ? -1 : 1;
    if (a.lo != b.lo)
        return a.lo < b.lo ? -1 : 1;
    return 0;
}

dch__wide dch__wide_sub(dch__wide a, dch__wide b)
{
    dch__wide r;
    r.lo = a.lo - b.lo;
    r.hi = a.hi - b.hi - (a.lo < b.lo);
    return r;
}

/* -1, 0, 1 as c <, =, > T. */
static int cmp_target(const dch__bal_terms *t, uint64_t c, uint32_t w)
{
    return dch__wide_cmp(dch__wide_mul(c, t->wsum), dch__wide_mul(t->total, w));
}

int dch__bal_below_target(const dch__bal_terms *t, uint64_t c, uint32_t w)
{
    return cmp_target(t, c, w) < 0;
}

int dch__bal_above_target(const dch__bal_terms *t, uint64_t c, uint32_t w)
{
    return cmp_target(t, c, w) > 0;
}

/* c > min(T + Lmax, max(T, h) + L2) holds when c passes either term. */
int dch__bal_above_bound(const dch__bal_terms *t, uint64_t c, uint32_t w, uint64_t h)
{
    if (c > t->lmax && cmp_target(t, c - t->lmax, w) > 0)
        return 1;
    return c > t->l2 && c - t->l2 > h && cmp_target(t, c - t->l2, w) > 0;
}

/* floor((hi * 2^64 + lo) / d) for a quotient below 2^64, by 32-bit digits. */
static uint64_t div_floor(dch__wide n, uint32_t d)
{
    const uint32_t digits[4] = {(uint32_t)(n.hi >> 32), (uint32_t)n.hi,
                                (uint32_t)(n.lo >> 32), (uint32_t)n.lo};
    uint64_t rem = 0, q = 0;
    for (int i = 0; i < 4; i++) {
        const uint64_t cur = (rem << 32) | digits[i];
        q = (q << 32) | (cur / d);
        rem = cur % d;
    }
    return q;
}

uint64_t dch__bal_target_floor(const dch__bal_terms *t, uint32_t w)
{
    return t->wsum == 0 ? 0 : div_floor(dch__wide_mul(t->total, w), t->wsum);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* T is rational and the loads integers: floor(T + x) = floor(T) + x and
 * floor(max(T, h)) = max(floor(T), h). */
uint64_t dch__bal_bound_floor(const dch__bal_terms *t, uint32_t w, uint64_t h)
{
    const uint64_t ft = dch__bal_target_floor(t, w);
    const uint64_t first = add_sat(ft, t->lmax);
    const uint64_t second = add_sat(ft > h ? ft : h, t->l2);
    return first < second ? first : second;
}

dch__wide dch__bal_room(const dch__bal_terms *t, uint64_t c, uint32_t w)
{
    const dch__wide target = dch__wide_mul(t->total, w);
    const dch__wide load = dch__wide_mul(c, t->wsum);
    const dch__wide zero = {0, 0};
    return dch__wide_cmp(load, target) < 0 ? dch__wide_sub(target, load) : zero;
}

int dch__bal_ratio_cmp(uint64_t ca, uint32_t wa, uint64_t cb, uint32_t wb)
{
    return dch__wide_cmp(dch__wide_mul(ca, wb), dch__wide_mul(cb, wa));
}

/* count <= copies_p * w / W' + slack  <=>  (count - slack) * W' <= copies_p * w,
 * every product below 2^64 (copies_p <= 2^27, w and W' below 2^32). */
int dch__bal_within_slack(const dch__bal_terms *t, uint32_t count, uint32_t slack,
                          uint32_t copies_p, uint32_t w)
{
    if (count <= slack)
        return 1;
    const dch__wide have = dch__wide_mul(count - slack, t->wsum);
    return dch__wide_cmp(have, dch__wide_mul(copies_p, w)) <= 0;
}
