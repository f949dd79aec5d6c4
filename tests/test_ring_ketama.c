/* SPDX-License-Identifier: MIT */
/*
 * The ring's ketama placement (ring.h, DCH_RING_PLACE_KETAMA) against a
 * brute-force continuum built here from the rules ring.h states: random
 * joins, leaves and weight changes, then lookups of keys and of 64-bit hashes
 * compared with a linear scan, ranges checked at their bounds. Ties, the
 * 64-bit mapping, config checks, clones and failed allocations have tests of
 * their own. Agreement with libmemcached itself is the interop test's.
 *
 * DCH_TEST_SCALE (default 1.0) scales the number of random changes;
 * DCH_TEST_SEED overrides the seed; failures print it.
 */
#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"
#include "md5.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dch_ring *ketama_ring(const dch_allocator *a)
{
    dch_ring_config cfg;
    dch_ring_config_default(&cfg);
    cfg.placement = DCH_RING_PLACE_KETAMA;
    cfg.allocator = a;
    dch_ring *r = NULL;
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_OK);
    return r;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* ---- the brute-force continuum ------------------------------------------ */

#define MAX_MEMBERS 64

typedef struct omember {
    char name[32];
    uint32_t weight;
} omember;

/* Members in add order, as libmemcached's server list. */
typedef struct oracle {
    omember m[MAX_MEMBERS];
    unsigned n;
} oracle;

/* A point: its value in the high 32 bits, its member's add-order index in
 * the low ones, so that sorting the numbers sorts by value, ties in add
 * order (libmemcached's qsort sees the points in that order). */
static uint64_t opoint_of(uint32_t value, unsigned order)
{
    return (uint64_t)value << 32 | order;
}

static int opoint_cmp(const void *pa, const void *pb)
{
    uint64_t a, b;
    memcpy(&a, pa, sizeof a);
    memcpy(&b, pb, sizeof b);
    return (a > b) - (a < b);
}

/* ring.h's point count, step by step in float. */
static uint32_t rule_points(uint32_t w, uint64_t total, unsigned servers)
{
    volatile float x = (float)w / (float)total;
    x = x * 160.0f;
    x = x / 4.0f;
    x = x * (float)servers;
    x = x + 0.0000000001F;
    return (uint32_t)x * 4u;
}

static uint64_t *oracle_points(const oracle *o, size_t *np)
{
    uint64_t total = 0;
    unsigned servers = 0;
    for (unsigned i = 0; i < o->n; i++)
        if (o->m[i].weight > 0) {
            total += o->m[i].weight;
            servers++;
        }
    size_t cap = 0;
    for (unsigned i = 0; i < o->n; i++)
        if (o->m[i].weight > 0)
            cap += rule_points(o->m[i].weight, total, servers);
    uint64_t *p = malloc((cap + 1) * sizeof *p);
    cr_assert_not_null(p);
    size_t k = 0;
    for (unsigned i = 0; i < o->n; i++) {
        if (o->m[i].weight == 0)
            continue;
        uint32_t pts = rule_points(o->m[i].weight, total, servers);
        for (uint32_t g = 0; g < pts / 4; g++) {
            char buf[64];
            int len = snprintf(buf, sizeof buf, "%s-%u", o->m[i].name, g);
            uint8_t d[16];
            dch__md5(buf, (size_t)len, d);
            for (unsigned q = 0; q < 4; q++)
                p[k++] = opoint_of(le32(d + 4 * q), i);
        }
    }
    qsort(p, k, sizeof *p, opoint_cmp);
    *np = k;
    return p;
}

/* The add-order index of the owner of a 32-bit hash, by a linear scan. */
static unsigned oracle_owner(const uint64_t *p, size_t np, uint32_t h)
{
    for (size_t i = 0; i < np; i++)
        if (p[i] >> 32 >= h)
            return (unsigned)(p[i] & 0xFFFFFFFFu);
    return (unsigned)(p[0] & 0xFFFFFFFFu);
}

static void check_against_oracle(const dch_ring *r, const oracle *o, uint64_t *rng,
                                 uint64_t seed)
{
    size_t np;
    uint64_t *p = oracle_points(o, &np);
    cr_assert_eq(dch_ring_point_count(r), np, "point count (seed %#" PRIx64 ")", seed);
    uint32_t ids[MAX_MEMBERS];
    for (unsigned i = 0; i < o->n; i++)
        cr_assert_eq(dch_ring_find_node(r, o->m[i].name, &ids[i]), DCH_OK);
    for (unsigned k = 0; k < 300; k++) {
        char key[40];
        size_t len = rng_below(rng, sizeof key);
        for (size_t b = 0; b < len; b++)
            key[b] = (char)rng_next(rng);
        uint32_t got = dch_ring_lookup(r, key, len);
        if (np == 0) {
            cr_assert_eq(got, DCH_NODE_NONE);
            continue;
        }
        uint8_t d[16];
        dch__md5(key, len, d);
        uint32_t h = le32(d);
        cr_assert_eq(dch_ring_hash(r, key, len), (uint64_t)h << 32, "hash of a key");
        cr_assert_eq(got, ids[oracle_owner(p, np, h)],
                     "key of %zu bytes (seed %#" PRIx64 ")", len, seed);
        /* Any hash with the same top 32 bits has the same owner. */
        uint64_t any = (uint64_t)h << 32 | (rng_next(rng) & 0xffffffffu);
        cr_assert_eq(dch_ring_lookup_hash(r, any), got, "low bits matter (seed %#" PRIx64 ")",
                     seed);
        /* At and just past a point. */
        size_t at = rng_below(rng, (uint32_t)np);
        uint32_t v = (uint32_t)(p[at] >> 32);
        cr_assert_eq(dch_ring_lookup_hash(r, (uint64_t)v << 32), ids[oracle_owner(p, np, v)]);
        if (v != UINT32_MAX)
            cr_assert_eq(dch_ring_lookup_hash(r, (uint64_t)(v + 1) << 32),
                         ids[oracle_owner(p, np, v + 1)]);
    }
    /* Range bounds are point positions v * 2^32 + 2^32 - 1, and exact. */
    size_t nr = 0;
    cr_assert_eq(dch_ring_ranges(r, NULL, 0, &nr), nr > 0 ? DCH_EFULL : DCH_OK);
    dch_range *rg = malloc(nr * sizeof *rg);
    cr_assert_not_null(rg);
    cr_assert_eq(dch_ring_ranges(r, rg, nr, &nr), DCH_OK);
    for (size_t i = 0; i < nr; i++) {
        cr_assert_eq(rg[i].hi & 0xffffffffu, 0xffffffffu, "range bound off a point");
        cr_assert_eq(dch_ring_lookup_hash(r, rg[i].lo), rg[i].owner);
        cr_assert_eq(dch_ring_lookup_hash(r, rg[i].hi), rg[i].owner);
    }
    free(rg);
    free(p);
}

Test(ring_ketama, lookups_match_a_brute_force_continuum_through_changes)
{
    uint64_t seed = test_seed(UINT64_C(0x6b65746100000001));
    uint64_t rng = seed;
    dch_ring *r = ketama_ring(NULL);
    oracle o = {.n = 0};
    unsigned serial = 0;
    const unsigned steps = test_scaled(60, 12);
    for (unsigned step = 0; step < steps; step++) {
        unsigned op = o.n < 2 ? 0 : rng_below(&rng, 4);
        if (op == 0 && o.n < MAX_MEMBERS) {
            omember *m = &o.m[o.n];
            if (rng_below(&rng, 2))
                snprintf(m->name, sizeof m->name, "10.0.%u.%u", serial / 200, serial % 200);
            else
                snprintf(m->name, sizeof m->name, "mc%u:%u", serial, 11212 + rng_below(&rng, 99));
            serial++;
            m->weight = rng_below(&rng, 8) == 0 ? 0 : 1 + rng_below(&rng, 5);
            cr_assert_eq(dch_ring_add_node(r, m->name, m->weight, NULL), DCH_OK);
            o.n++;
        } else if (op == 1) {
            unsigned i = rng_below(&rng, o.n);
            uint32_t id;
            cr_assert_eq(dch_ring_find_node(r, o.m[i].name, &id), DCH_OK);
            cr_assert_eq(dch_ring_remove_node(r, id), DCH_OK);
            memmove(&o.m[i], &o.m[i + 1], (o.n - i - 1) * sizeof o.m[0]);
            o.n--;
        } else {
            unsigned i = rng_below(&rng, o.n);
            uint32_t id;
            cr_assert_eq(dch_ring_find_node(r, o.m[i].name, &id), DCH_OK);
            o.m[i].weight = rng_below(&rng, 6);
            cr_assert_eq(dch_ring_set_weight(r, id, o.m[i].weight), DCH_OK);
        }
        check_against_oracle(r, &o, &rng, seed);
    }
    dch_ring_free(r);
}

/*
 * In float, 1/n * 160 / 4 * n falls just short of 40 for these n up to 100,
 * so equal weights give 156 points each there, and 160 at every other n
 * (25, 50 and 100 are checked against libmemcached by the interop test).
 */
Test(ring_ketama, equal_weights_give_156_points_at_eight_counts_up_to_100)
{
    static const unsigned short_counts[] = {25, 47, 50, 55, 61, 71, 94, 100};
    dch_ring *r = ketama_ring(NULL);
    for (unsigned n = 1; n <= 100; n++) {
        char name[16];
        snprintf(name, sizeof name, "s%u", n);
        cr_assert_eq(dch_ring_add_node(r, name, 3, NULL), DCH_OK);
        uint32_t each = 160;
        for (unsigned i = 0; i < 8; i++)
            if (short_counts[i] == n)
                each = 156;
        cr_assert_eq(dch_ring_point_count(r), each * n, "%u servers", n);
    }
    cr_assert_eq(dch_ring_point_count(r), 15600u);
    dch_ring_free(r);
}

/*
 * "tie-184" point group 29 and "tie-434" point group 4 share the value
 * 0x4e201d73 (found by search), so in a ring of the two the hash at that
 * value belongs to whichever was added first.
 */
Test(ring_ketama, tied_points_go_to_the_member_added_first)
{
    const uint64_t at = UINT64_C(0x4e201d73) << 32;
    dch_ring *r = ketama_ring(NULL);
    uint32_t a, b;
    cr_assert_eq(dch_ring_add_node(r, "tie-184", 1, &a), DCH_OK);
    cr_assert_eq(dch_ring_add_node(r, "tie-434", 1, &b), DCH_OK);
    cr_assert_eq(dch_ring_lookup_hash(r, at), a, "first added wins");
    /* Re-adding the winner puts it last in the order. */
    cr_assert_eq(dch_ring_remove_node(r, a), DCH_OK);
    cr_assert_eq(dch_ring_add_node(r, "tie-184", 1, &a), DCH_OK);
    cr_assert_eq(dch_ring_lookup_hash(r, at), b, "now the other was first");
    /* Weight changes keep the order; so does a clone. */
    cr_assert_eq(dch_ring_set_weight(r, b, 2), DCH_OK);
    cr_assert_eq(dch_ring_set_weight(r, b, 1), DCH_OK);
    dch_ring *c;
    cr_assert_eq(dch_ring_clone(&c, r), DCH_OK);
    cr_assert_eq(dch_ring_lookup_hash(c, at), b);
    cr_assert_eq(dch_ring_remove_node(c, b), DCH_OK);
    cr_assert_eq(dch_ring_add_node(c, "tie-434", 1, NULL), DCH_OK);
    cr_assert_eq(dch_ring_lookup_hash(c, at), a, "order carries through the clone");
    dch_ring_free(c);
    dch_ring_free(r);
}

Test(ring_ketama, config_checks_placement)
{
    dch_ring_config cfg;
    dch_ring_config_default(&cfg);
    cr_assert_eq(cfg.placement, DCH_RING_PLACE_SIPHASH);
    dch_ring *r = (dch_ring *)&cfg;
    cfg.placement = 2;
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_EINVAL);
    cr_assert(r == (dch_ring *)&cfg, "out untouched");
    cfg.placement = DCH_RING_PLACE_KETAMA;
    cfg.points_per_weight = 0; /* unused by ketama */
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_OK);
    dch_ring_config got;
    dch_ring_get_config(r, &got);
    cr_assert_eq(got.placement, DCH_RING_PLACE_KETAMA);
    cr_assert_eq(dch_ring_add_node(r, "only", 0, NULL), DCH_OK);
    cr_assert_eq(dch_ring_point_count(r), 0, "weight 0 is no server");
    cr_assert_eq(dch_ring_lookup(r, "k", 1), DCH_NODE_NONE);
    cr_assert_eq(dch_ring_set_weight(r, 0, 1), DCH_OK);
    cr_assert_eq(dch_ring_point_count(r), 160);
    cr_assert_eq(dch_ring_lookup(r, "k", 1), 0);
    cr_assert_eq(dch_ring_remove_node(r, 0), DCH_OK);
    cr_assert_eq(dch_ring_point_count(r), 0);
    cr_assert_eq(dch_ring_memory(r) < 1024, true, "an empty ring holds no index");
    dch_ring_free(r);
}

/* ---- failed allocations --------------------------------------------------- */

Test(ring_ketama, every_failed_allocation_leaves_the_ring_unchanged)
{
    faulty f = {0, 0, false, 0};
    dch_allocator alloc = faulty_allocator(&f);
    for (int op = 0; op < 5; op++) {
        fault_sweep sw;
        for (fault_sweep_start(&sw, &f, SWEEP_ALONE, SWEEP_UNTIL_OK); fault_sweep_next(&sw);) {
            const long k = sw.at;
            faulty_arm(&f, 0, false);
            dch_ring *r = ketama_ring(&alloc);
            for (unsigned i = 0; i < 5; i++) {
                char name[16];
                snprintf(name, sizeof name, "h%u:1%u", i, i);
                cr_assert_eq(dch_ring_add_node(r, name, 1 + i % 2, NULL), DCH_OK);
            }
            ring_snap before;
            ring_snap_take(&before, r);
            faulty_arm(&f, k, false);
            int rc;
            switch (op) {
            case 0: rc = dch_ring_add_node(r, "joiner", 2, NULL); break;
            case 1: rc = dch_ring_remove_node(r, 2); break;
            case 2: rc = dch_ring_set_weight(r, 1, 9); break;
            case 3: rc = dch_ring_set_weight(r, 1, 0); break;
            default: rc = dch_ring_remove_node(r, 0); break;
            }
            fault_sweep_done(&sw, rc);
            if (rc != DCH_OK) {
                cr_assert_eq(rc, DCH_ENOMEM, "op %d, allocation %ld", op, k);
                const char *why = ring_snap_differs(&before, r, false);
                cr_assert_null(why, "op %d, allocation %ld changed the ring's %s", op, k, why);
            }
            ring_snap_free(&before);
            dch_ring_free(r);
            cr_assert_eq(f.live, 0, "op %d, allocation %ld: %ld blocks leaked", op, k, f.live);
        }
    }
}
