/* SPDX-License-Identifier: MIT */
/*
 * Copy shares (rep_shares.h; docs/replicas.md, "Shares"). The n*P copies
 * are water-filled over zones by weight, a zone held between its bounds
 * (at most P, one copy a slot, while zones are at least n; at least P and
 * at most (n - Z + 1) * P when there are Z < n zones), and a zone's share
 * is split over its members by weight.
 */
#include "rep_shares.h"

#include <stdlib.h>

/* floor(a * b / c) for a < 2^32, b < 2^64, 0 < c < 2^32, when the result
 * is below 2^64: long division in 32-bit limbs. */
static uint64_t muldiv(uint64_t a, uint64_t b, uint64_t c)
{
    const uint64_t M32 = 0xffffffffu;
    const uint64_t lo = a * (b & M32), hi = a * (b >> 32);
    uint64_t limb[4];
    limb[0] = lo & M32;
    uint64_t t = (lo >> 32) + (hi & M32);
    limb[1] = t & M32;
    t = (t >> 32) + (hi >> 32);
    limb[2] = t & M32;
    limb[3] = t >> 32;
    uint64_t r = 0, q = 0;
    for (int i = 3; i >= 0; i--) {
        const uint64_t cur = (r << 32) | limb[i];
        q = (q << 32) | (cur / c);
        r = cur % c;
    }
    return q;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Zone keys, then the members of positive weight sorted by (zone, id) in
 * keys[]; queue[] holds each zone's first key, from[] its weight, mark[]
 * 0. The member count; the zone count in e->zones. */
static uint32_t zone_runs(dch__rep_call *e, uint64_t *keys)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    uint32_t nk = 0;
    for (uint32_t id = 0; id < v->id_limit; id++) {
        const uint32_t z = v->members[id].name ? v->zone[id] : 0;
        rm->zone[id] = z ? z - 1 : DCH_MAP_MAX_NODES + id;
        rm->share[id] = 0;
        if (rep_positive(e, id))
            keys[nk++] = ((uint64_t)rm->zone[id] << 16) | id;
    }
    qsort(keys, nk, sizeof *keys, cmp_u64);
    uint32_t nz = 0;
    for (uint32_t i = 0; i < nk; i++)
        if (i == 0 || (keys[i] >> 16) != (keys[i - 1] >> 16))
            rm->queue[nz++] = i;
    e->zones = nz;
    for (uint32_t z = 0; z < nz; z++) {
        const uint32_t end = z + 1 < nz ? rm->queue[z + 1] : nk;
        uint64_t w = 0;
        for (uint32_t i = rm->queue[z]; i < end; i++)
            w += v->members[keys[i] & 0xffff].weight;
        rm->from[z] = (uint32_t)w; /* the weight sum fits in 32 bits */
        rm->mark[z] = 0;
    }
    return nk;
}

/* Water-filling: a zone fixed at a bound keeps it, the free ones share the
 * rest by weight. mark[z]: 0 free, 1 at lo, 2 at hi. A zone over hi is
 * fixed first, then one under lo; shares are rest * w / wfree, compared
 * exactly (products stay below 2^60). The rest in *rest, the free weight
 * in *wfree. */
static void water_fill(const dch__rep_call *e, uint64_t lo, uint64_t hi, uint64_t *rest,
                       uint64_t *wfree)
{
    dch__rep_move *rm = e->rm;
    const uint32_t nz = e->zones;
    for (;;) {
        *rest = (uint64_t)e->n * e->v->slots;
        *wfree = 0;
        for (uint32_t z = 0; z < nz; z++) {
            if (rm->mark[z] == 1)
                *rest -= lo;
            else if (rm->mark[z] == 2)
                *rest -= hi;
            else
                *wfree += rm->from[z];
        }
        int changed = 0;
        for (uint32_t z = 0; z < nz && !changed; z++)
            if (rm->mark[z] == 0 && *rest * rm->from[z] > hi * *wfree)
                rm->mark[z] = 2, changed = 1;
        for (uint32_t z = 0; z < nz && !changed; z++)
            if (rm->mark[z] == 0 && *rest * rm->from[z] < lo * *wfree)
                rm->mark[z] = 1, changed = 1;
        if (!changed)
            return;
    }
}

void dch__rep_plan_shares(dch__rep_call *e)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    const uint64_t P = v->slots;
    uint64_t *keys = (uint64_t *)(void *)rm->pdev;
    const uint32_t nk = zone_runs(e, keys), nz = e->zones;
    const uint64_t n = e->n;
    const uint64_t lo = nz >= n ? 0 : P, hi = nz >= n ? P : (n - nz + 1) * P;
    uint64_t rest, wfree;
    water_fill(e, lo, hi, &rest, &wfree);
    for (uint32_t z = 0; z < nz; z++) {
        const uint32_t end = z + 1 < nz ? rm->queue[z + 1] : nk;
        for (uint32_t i = rm->queue[z]; i < end; i++) {
            const uint32_t id = (uint32_t)(keys[i] & 0xffff);
            const uint64_t wi = (uint64_t)v->members[id].weight << 32;
            uint64_t t;
            if (rm->mark[z] == 0)
                t = muldiv(rest, wi, wfree);
            else
                t = muldiv(rm->mark[z] == 1 ? lo : hi, wi, rm->from[z]);
            if (t > (P << 32))
                t = P << 32; /* one copy a slot at most */
            rm->share[id] = (int64_t)t;
        }
    }
}
