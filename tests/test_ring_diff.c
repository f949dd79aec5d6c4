/* SPDX-License-Identifier: MIT */
/*
 * Tests of dch_ring_diff: migration plans between two rings, by name.
 *
 * The oracle knows nothing of how the diff walks: it looks every hash it
 * checks up in both rings (dch_ring_lookup_hash) and compares the owners'
 * names. The hashes checked are every range boundary of both rings (each
 * range's first and last hash and their neighbours), every move's bounds and
 * their neighbours, and a dense random sample; each must be inside a move
 * exactly when its owner's name changed, with that move's names. The moves
 * themselves must be ascending, disjoint and maximal. Histories are seeded
 * random operation sequences on both placements.
 *
 * DCH_TEST_SCALE (a double, default 1.0) scales the loop counts;
 * DCH_TEST_SEED overrides the base seed. Failures print the seed.
 */
#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- collecting and checking a diff --------------------------------------- */

/* Copies the names too: they are borrowed for the call only. */
typedef struct kept {
    uint64_t lo, hi;
    char from[DCH_NAME_MAX + 1], to[DCH_NAME_MAX + 1];
    bool has_from, has_to;
} kept;

typedef struct plan {
    kept *v;
    size_t n, cap;
    size_t stop_after; /* 0: never stop */
} plan;

static int keep(const dch_move *mv, void *ctx)
{
    plan *p = ctx;
    p->v = xgrow(p->v, p->n, &p->cap, sizeof *p->v);
    kept *k = &p->v[p->n++];
    k->lo = mv->lo;
    k->hi = mv->hi;
    k->has_from = mv->from != NULL;
    k->has_to = mv->to != NULL;
    snprintf(k->from, sizeof k->from, "%s", mv->from ? mv->from : "");
    snprintf(k->to, sizeof k->to, "%s", mv->to ? mv->to : "");
    return p->stop_after != 0 && p->n == p->stop_after ? 42 : 0;
}

static bool same_name(const char *a, const char *b)
{
    return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static const char *kept_from(const kept *k) { return k->has_from ? k->from : NULL; }
static const char *kept_to(const kept *k) { return k->has_to ? k->to : NULL; }

/* bsearch order of a hash (key) and a move: before it, inside it, after it. */
static int hash_vs_move(const void *key, const void *elem)
{
    const uint64_t h = *(const uint64_t *)key;
    const kept *k = elem;
    return h < k->lo ? -1 : h > k->hi ? 1 : 0;
}

/* The move holding h, or NULL: the moves are ascending and disjoint. */
static const kept *move_at(const plan *p, uint64_t h)
{
    return p->n == 0 ? NULL : bsearch(&h, p->v, p->n, sizeof *p->v, hash_vs_move);
}

static void check_hash(const dch_ring *a, const dch_ring *b, const plan *p,
                       uint64_t h, uint64_t seed)
{
    const char *na = dch_ring_node_name(a, dch_ring_lookup_hash(a, h));
    const char *nb = dch_ring_node_name(b, dch_ring_lookup_hash(b, h));
    const kept *k = move_at(p, h);
    if (same_name(na, nb)) {
        cr_assert(k == NULL, "seed %llu: hash %#llx keeps %s but lies in a move",
                  (unsigned long long)seed, (unsigned long long)h, na ? na : "(none)");
    } else {
        cr_assert(k != NULL, "seed %llu: hash %#llx moves %s -> %s but no move holds it",
                  (unsigned long long)seed, (unsigned long long)h, na ? na : "(none)",
                  nb ? nb : "(none)");
        cr_assert(same_name(kept_from(k), na) && same_name(kept_to(k), nb),
                  "seed %llu: hash %#llx: move says %s -> %s, lookups say %s -> %s",
                  (unsigned long long)seed, (unsigned long long)h, k->from, k->to,
                  na ? na : "(none)", nb ? nb : "(none)");
    }
}

static void check_around(const dch_ring *a, const dch_ring *b, const plan *p,
                         uint64_t lo, uint64_t hi, uint64_t seed)
{
    check_hash(a, b, p, lo, seed);
    check_hash(a, b, p, hi, seed);
    if (lo > 0)
        check_hash(a, b, p, lo - 1, seed);
    if (hi < UINT64_MAX)
        check_hash(a, b, p, hi + 1, seed);
}

static void check_boundaries_of(const dch_ring *r, const dch_ring *a,
                                 const dch_ring *b, const plan *p, uint64_t seed)
{
    size_t n;
    dch_range *rs = ring_ranges_of(r, &n);
    for (size_t i = 0; i < n; i++)
        check_around(a, b, p, rs[i].lo, rs[i].hi, seed);
    free(rs);
}

/* The diff of a and b, checked against lookups; returns the move count. */
static size_t check_diff(const dch_ring *a, const dch_ring *b, uint64_t seed,
                         size_t samples)
{
    plan p = {0};
    cr_assert_eq(dch_ring_diff(a, b, keep, &p), DCH_OK, "seed %llu", (unsigned long long)seed);
    for (size_t i = 0; i < p.n; i++) {
        const kept *k = &p.v[i];
        cr_assert(k->lo <= k->hi, "seed %llu: empty move", (unsigned long long)seed);
        cr_assert(k->has_from || k->has_to, "seed %llu: a move from nobody to nobody",
                  (unsigned long long)seed);
        cr_assert(!same_name(kept_from(k), kept_to(k)), "seed %llu: a move to the same name",
                  (unsigned long long)seed);
        if (i > 0) {
            const kept *q = &p.v[i - 1];
            cr_assert(q->hi < k->lo, "seed %llu: moves not ascending", (unsigned long long)seed);
            cr_assert(q->hi + 1 != k->lo || !same_name(kept_from(q), kept_from(k)) ||
                          !same_name(kept_to(q), kept_to(k)),
                      "seed %llu: touching moves with one pair are not maximal",
                      (unsigned long long)seed);
        }
        check_around(a, b, &p, k->lo, k->hi, seed);
    }
    check_boundaries_of(a, a, b, &p, seed);
    check_boundaries_of(b, a, b, &p, seed);
    uint64_t s = seed;
    for (size_t i = 0; i < samples; i++)
        check_hash(a, b, &p, rng_next(&s), seed);
    size_t n = p.n;
    free(p.v);
    return n;
}

/* ---- random histories ------------------------------------------------------ */

static dch_ring *new_ring(uint32_t placement, uint32_t ppw, uint8_t key0,
                          const dch_allocator *alloc)
{
    dch_ring_config cfg;
    dch_ring_config_default(&cfg);
    cfg.placement = placement;
    cfg.points_per_weight = ppw;
    cfg.hash_key[0] = key0;
    cfg.allocator = alloc;
    dch_ring *r = NULL;
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_OK);
    return r;
}

/* One random add, remove or weight change; names come from a pool of 24. */
static void random_op(dch_ring *r, uint64_t *s)
{
    char name[32];
    snprintf(name, sizeof name, "node-%u", (unsigned)rng_below(s, 24));
    uint32_t id;
    const uint32_t weight = rng_below(s, 5);
    if (dch_ring_find_node(r, name, &id) != DCH_OK) {
        cr_assert_eq(dch_ring_add_node(r, name, weight, NULL), DCH_OK);
    } else if (rng_below(s, 3) == 0) {
        cr_assert_eq(dch_ring_remove_node(r, id), DCH_OK);
    } else {
        cr_assert_eq(dch_ring_set_weight(r, id, weight), DCH_OK);
    }
}

static void random_histories(uint32_t placement, uint32_t ppw, uint64_t fallback)
{
    const uint64_t base = test_seed(fallback);
    const size_t runs = test_scaled(40, 1);
    for (size_t run = 0; run < runs; run++) {
        uint64_t seed = base + run, s = seed;
        dch_ring *a = new_ring(placement, ppw, 3, NULL);
        const uint32_t before = 1 + rng_below(&s, 12);
        for (uint32_t i = 0; i < before; i++)
            random_op(a, &s);
        dch_ring *b = NULL;
        cr_assert_eq(dch_ring_clone(&b, a), DCH_OK);
        cr_assert_eq(check_diff(a, b, seed, 200), 0, "seed %llu: a clone differs",
                     (unsigned long long)seed);
        const uint32_t after = 1 + rng_below(&s, 6);
        for (uint32_t i = 0; i < after; i++)
            random_op(b, &s);
        (void)check_diff(a, b, seed, test_scaled(4000, 1));
        (void)check_diff(b, a, seed, test_scaled(1000, 1));
        dch_ring_free(a);
        dch_ring_free(b);
    }
}

Test(ring_diff, matches_lookups_after_random_siphash_histories)
{
    random_histories(DCH_RING_PLACE_SIPHASH, 7, 1000);
}

Test(ring_diff, matches_lookups_after_random_ketama_histories)
{
    random_histories(DCH_RING_PLACE_KETAMA, 0, 2000);
}

Test(ring_diff, compares_names_not_ids)
{
    /* The same (name, weight) pairs added in opposite orders give the same
     * SipHash ring under other ids: nothing moves. */
    dch_ring *a = new_ring(DCH_RING_PLACE_SIPHASH, 20, 0, NULL);
    dch_ring *b = new_ring(DCH_RING_PLACE_SIPHASH, 20, 0, NULL);
    const char *names[] = {"alpha", "beta", "gamma", "delta", "epsilon"};
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(dch_ring_add_node(a, names[i], (uint32_t)i + 1, NULL), DCH_OK);
        cr_assert_eq(dch_ring_add_node(b, names[4 - i], 5 - (uint32_t)i, NULL), DCH_OK);
    }
    uint32_t ia, ib;
    cr_assert_eq(dch_ring_find_node(a, "alpha", &ia), DCH_OK);
    cr_assert_eq(dch_ring_find_node(b, "alpha", &ib), DCH_OK);
    cr_assert_neq(ia, ib, "the ids differ");
    cr_assert_eq(check_diff(a, b, 0, 2000), 0);
    dch_ring_free(a);
    dch_ring_free(b);
}

static int expect_to(const dch_move *mv, void *ctx)
{
    cr_assert(mv->to != NULL && strcmp(mv->to, ctx) == 0, "a move to %s, not %s",
              mv->to ? mv->to : "(none)", (const char *)ctx);
    cr_assert(mv->from != NULL, "a move from nobody in a ring with points");
    return 0;
}

Test(ring_diff, an_add_moves_arcs_only_to_the_new_member)
{
    dch_ring *a = new_ring(DCH_RING_PLACE_SIPHASH, 40, 1, NULL);
    for (int i = 0; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        cr_assert_eq(dch_ring_add_node(a, name, 1, NULL), DCH_OK);
    }
    dch_ring *b = NULL;
    cr_assert_eq(dch_ring_clone(&b, a), DCH_OK);
    cr_assert_eq(dch_ring_add_node(b, "newcomer", 2, NULL), DCH_OK);
    cr_assert_eq(dch_ring_diff(a, b, expect_to, "newcomer"), DCH_OK);
    cr_assert_gt(check_diff(a, b, 5, 2000), 0);
    dch_ring_free(a);
    dch_ring_free(b);
}

Test(ring_diff, empty_rings_and_rings_without_points)
{
    dch_ring *a = new_ring(DCH_RING_PLACE_SIPHASH, 10, 0, NULL);
    dch_ring *b = new_ring(DCH_RING_PLACE_SIPHASH, 10, 0, NULL);
    cr_assert_eq(check_diff(a, b, 0, 100), 0, "two empty rings");
    cr_assert_eq(dch_ring_add_node(b, "only", 1, NULL), DCH_OK);
    plan p = {0};
    cr_assert_eq(dch_ring_diff(a, b, keep, &p), DCH_OK);
    cr_assert_eq(p.n, 1, "everything moves from nobody to the one member");
    cr_assert(p.v[0].lo == 0 && p.v[0].hi == UINT64_MAX && !p.v[0].has_from &&
              strcmp(p.v[0].to, "only") == 0);
    free(p.v);
    cr_assert_eq(dch_ring_add_node(a, "idle", 0, NULL), DCH_OK);
    cr_assert_eq(check_diff(b, a, 0, 100), 1, "a member of weight 0 owns nothing");
    dch_ring_free(a);
    dch_ring_free(b);
}

Test(ring_diff, a_nonzero_return_stops_the_walk)
{
    dch_ring *a = new_ring(DCH_RING_PLACE_SIPHASH, 30, 0, NULL);
    dch_ring *b = new_ring(DCH_RING_PLACE_SIPHASH, 30, 0, NULL);
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", i);
        cr_assert_eq(dch_ring_add_node(a, name, 1, NULL), DCH_OK);
        snprintf(name, sizeof name, "k%d", i);
        cr_assert_eq(dch_ring_add_node(b, name, 1, NULL), DCH_OK);
    }
    plan p = {0};
    p.stop_after = 3;
    cr_assert_eq(dch_ring_diff(a, b, keep, &p), 42);
    cr_assert_eq(p.n, 3);
    free(p.v);
    dch_ring_free(a);
    dch_ring_free(b);
}

Test(ring_diff, refuses_rings_that_hash_keys_differently)
{
    dch_ring *a = new_ring(DCH_RING_PLACE_SIPHASH, 10, 0, NULL);
    dch_ring *key = new_ring(DCH_RING_PLACE_SIPHASH, 10, 1, NULL);
    dch_ring *ppw = new_ring(DCH_RING_PLACE_SIPHASH, 11, 0, NULL);
    dch_ring *ket = new_ring(DCH_RING_PLACE_KETAMA, 10, 0, NULL);
    dch_ring *ket_key = new_ring(DCH_RING_PLACE_KETAMA, 10, 9, NULL);
    /* A refused diff calls fn for nothing: `p` stays empty. */
    plan p = {0};
    cr_assert_eq(dch_ring_diff(a, key, keep, &p), DCH_EINVAL, "another hash key");
    cr_assert_eq(dch_ring_diff(a, ket, keep, &p), DCH_EINVAL, "another placement");
    cr_assert_eq(dch_ring_diff(ket, a, keep, &p), DCH_EINVAL, "another placement");
    cr_assert_eq(dch_ring_diff(NULL, a, keep, &p), DCH_EINVAL);
    cr_assert_eq(dch_ring_diff(a, NULL, keep, &p), DCH_EINVAL);
    cr_assert_eq(dch_ring_diff(a, a, NULL, NULL), DCH_EINVAL);
    cr_assert_eq(p.n, 0, "fn called on a refused diff");
    cr_assert_eq(dch_ring_diff(a, ppw, keep, &p), DCH_OK, "points per weight may differ");
    cr_assert_eq(dch_ring_diff(ket, ket_key, keep, &p), DCH_OK, "ketama ignores the key");
    cr_assert_eq(p.n, 0);
    free(p.v);
    dch_ring_free(a);
    dch_ring_free(key);
    dch_ring_free(ppw);
    dch_ring_free(ket);
    dch_ring_free(ket_key);
}

/* ---- allocation --------------------------------------------------------- */

Test(ring_diff, allocates_nothing_and_works_when_every_allocation_fails)
{
    faulty f = {0, 0, false, 0};
    const dch_allocator alloc = faulty_allocator(&f);
    const uint64_t seed = test_seed(77);
    uint64_t s = seed;
    dch_ring *a = new_ring(DCH_RING_PLACE_SIPHASH, 9, 0, &alloc);
    dch_ring *b = new_ring(DCH_RING_PLACE_SIPHASH, 9, 0, &alloc);
    for (int i = 0; i < 12; i++) {
        random_op(a, &s);
        random_op(b, &s);
    }
    plan want = {0}, got = {0};
    cr_assert_eq(dch_ring_diff(a, b, keep, &want), DCH_OK);
    const long live = f.live;
    faulty_arm(&f, 1, true); /* from here on every allocation fails */
    cr_assert_eq(dch_ring_diff(a, b, keep, &got), DCH_OK);
    cr_assert_eq(f.calls, 0, "the diff called the allocator");
    cr_assert_eq(f.live, live);
    cr_assert_eq(got.n, want.n, "seed %llu", (unsigned long long)seed);
    for (size_t i = 0; i < got.n; i++)
        cr_assert(got.v[i].lo == want.v[i].lo && got.v[i].hi == want.v[i].hi &&
                      same_name(kept_from(&got.v[i]), kept_from(&want.v[i])) &&
                      same_name(kept_to(&got.v[i]), kept_to(&want.v[i])),
                  "seed %llu: move %zu", (unsigned long long)seed, i);
    free(want.v);
    free(got.v);
    faulty_arm(&f, 0, false);
    dch_ring_free(a);
    dch_ring_free(b);
    cr_assert_eq(f.live, 0, "every block given back");
}
