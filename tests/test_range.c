/* SPDX-License-Identifier: MIT */
/*
 * Tests of range lists: dch_range_diff against hand-built lists and against a
 * key-by-key comparison (of random lists, and of rings before and after each
 * kind of change), and dch_range_fraction at its edges.
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

#define MAX UINT64_MAX
#define NONE DCH_NODE_NONE

static void expect_change(const change_list *cs, size_t i, uint64_t lo, uint64_t hi,
                          uint32_t from, uint32_t to)
{
    cr_assert(i < cs->n, "change %zu missing (%zu reported)", i, cs->n);
    const dch_range_change *c = &cs->v[i];
    cr_assert(c->lo == lo && c->hi == hi && c->from == from && c->to == to,
              "change %zu: got [%llx, %llx] %u -> %u, want [%llx, %llx] %u -> %u", i,
              (unsigned long long)c->lo, (unsigned long long)c->hi, c->from, c->to,
              (unsigned long long)lo, (unsigned long long)hi, from, to);
}

/* ---- hand-built lists ------------------------------------------------------- */

Test(range, identical_lists_report_nothing)
{
    const dch_range a[] = {{0, 99, 1}, {100, 1u << 20, 2}, {(1u << 20) + 1, MAX, NONE}};
    change_list cs = changes_between(a, 3, a, 3);
    cr_assert_eq(cs.n, 0, "no changes between a list and itself");
    /* The same ownership cut differently is still no change. */
    const dch_range b[] = {{0, 49, 1}, {50, 99, 1}, {100, 1000, 2}, {1001, 1u << 20, 2},
                           {(1u << 20) + 1, MAX, NONE}};
    cs = changes_between(a, 3, b, 5);
    cr_assert_eq(cs.n, 0, "no changes between two cuts of one ownership");
    const dch_range whole[] = {{0, MAX, 7}};
    cs = changes_between(whole, 1, whole, 1);
    cr_assert_eq(cs.n, 0, "whole space, one owner");
    free(cs.v);
}

Test(range, one_owner_change_is_reported_with_both_owners)
{
    const dch_range a[] = {{0, 99, 1}, {100, 199, 2}, {200, MAX, 3}};
    const dch_range b[] = {{0, 99, 1}, {100, 199, 4}, {200, MAX, 3}};
    change_list cs = changes_between(a, 3, b, 3);
    cr_assert_eq(cs.n, 1, "one change");
    expect_change(&cs, 0, 100, 199, 2, 4);
    free(cs.v);

    /* Part of a range, at each end of the space. */
    const dch_range c[] = {{0, MAX, 1}};
    const dch_range d[] = {{0, 9, 2}, {10, MAX - 10, 1}, {MAX - 9, MAX, NONE}};
    cs = changes_between(c, 1, d, 3);
    cr_assert_eq(cs.n, 2, "two changes");
    expect_change(&cs, 0, 0, 9, 1, 2);
    expect_change(&cs, 1, MAX - 9, MAX, 1, NONE);
    free(cs.v);

    const dch_range e[] = {{0, MAX, 5}};
    cs = changes_between(c, 1, e, 1);
    cr_assert_eq(cs.n, 1, "one change of the whole space");
    expect_change(&cs, 0, 0, MAX, 1, 5);
    free(cs.v);
}

Test(range, adjacent_changes_with_one_pair_are_coalesced)
{
    /* a's and b's cuts fall at different places; every step is 1 -> 2. */
    const dch_range a[] = {{0, 9, 1}, {10, 19, 1}, {20, 29, 1}, {30, MAX, 3}};
    const dch_range b[] = {{0, 4, 2}, {5, 24, 2}, {25, 29, 2}, {30, MAX, 3}};
    change_list cs = changes_between(a, 4, b, 4);
    cr_assert_eq(cs.n, 1, "one coalesced change, got %zu", cs.n);
    expect_change(&cs, 0, 0, 29, 1, 2);
    free(cs.v);
}

Test(range, changes_with_different_pairs_or_a_gap_stay_apart)
{
    const dch_range a[] = {{0, 9, 1}, {10, 19, 2}, {20, 29, 1}, {30, 39, 1}, {40, MAX, 1}};
    const dch_range b[] = {{0, 9, 3}, {10, 19, 3}, {20, 29, 3}, {30, 39, 1}, {40, MAX, 3}};
    change_list cs = changes_between(a, 5, b, 5);
    cr_assert_eq(cs.n, 4, "four changes, got %zu", cs.n);
    expect_change(&cs, 0, 0, 9, 1, 3);
    expect_change(&cs, 1, 10, 19, 2, 3);
    expect_change(&cs, 2, 20, 29, 1, 3);
    expect_change(&cs, 3, 40, MAX, 1, 3);
    free(cs.v);
}

static int count_calls(const dch_range_change *c, void *ctx)
{
    (void)c;
    ++*(int *)ctx;
    return 0;
}

Test(range, malformed_lists_are_rejected_without_calls)
{
    const dch_range good[] = {{0, 9, 1}, {10, MAX, 2}};
    const dch_range late_start[] = {{1, 9, 1}, {10, MAX, 2}};
    const dch_range gap[] = {{0, 9, 1}, {11, MAX, 2}};
    const dch_range overlap[] = {{0, 9, 1}, {9, MAX, 2}};
    const dch_range backwards[] = {{0, 9, 1}, {10, 5, 2}, {6, MAX, 2}};
    const dch_range short_end[] = {{0, 9, 1}, {10, MAX - 1, 2}};
    const dch_range past_end[] = {{0, MAX, 1}, {0, 5, 2}};
    const dch_range descending[] = {{10, MAX, 2}, {0, 9, 1}};
    struct {
        const dch_range *list;
        size_t n;
        const char *what;
    } bad[] = {
        {late_start, 2, "not starting at 0"},
        {gap, 2, "a gap"},
        {overlap, 2, "an overlap"},
        {backwards, 3, "a range with lo > hi"},
        {short_end, 2, "not ending at 2^64-1"},
        {past_end, 2, "a range after 2^64-1"},
        {descending, 2, "descending"},
        {good, 0, "empty"},
        {NULL, 2, "NULL with a count"},
        {NULL, 0, "NULL and empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int calls = 0;
        cr_assert_eq(dch_range_diff(bad[i].list, bad[i].n, good, 2, count_calls, &calls),
                     DCH_EINVAL, "first list %s", bad[i].what);
        cr_assert_eq(dch_range_diff(good, 2, bad[i].list, bad[i].n, count_calls, &calls),
                     DCH_EINVAL, "second list %s", bad[i].what);
        cr_assert_eq(calls, 0, "%s: fn called", bad[i].what);
    }
    /* A bad second list is caught even when the first would differ early. */
    const dch_range other[] = {{0, 9, 5}, {10, MAX, 2}};
    int calls = 0;
    cr_assert_eq(dch_range_diff(other, 2, gap, 2, count_calls, &calls), DCH_EINVAL, "late gap");
    cr_assert_eq(calls, 0, "fn called before validation finished");
    cr_assert_eq(dch_range_diff(good, 2, good, 2, NULL, NULL), DCH_EINVAL, "NULL fn");
}

static int stop_at_second(const dch_range_change *c, void *ctx)
{
    (void)c;
    return ++*(int *)ctx == 2 ? -77 : 0;
}

Test(range, nonzero_from_fn_stops_the_walk_and_is_returned)
{
    const dch_range a[] = {{0, 9, 1}, {10, 19, 2}, {20, 29, 3}, {30, MAX, 4}};
    const dch_range b[] = {{0, 9, 5}, {10, 19, 6}, {20, 29, 7}, {30, MAX, 8}};
    int calls = 0;
    cr_assert_eq(dch_range_diff(a, 4, b, 4, stop_at_second, &calls), -77, "fn's value");
    cr_assert_eq(calls, 2, "no call after the stop");
    /* Also when the stop is on the last change, reported after the walk. */
    const dch_range c[] = {{0, 9, 1}, {10, MAX, 2}};
    const dch_range d[] = {{0, 9, 3}, {10, MAX, 4}};
    calls = 0;
    cr_assert_eq(dch_range_diff(c, 2, d, 2, stop_at_second, &calls), -77, "last change");
}

Test(range, fraction_is_exact_at_the_edges)
{
    cr_assert(dch_range_fraction(0, MAX) == 1.0, "whole space");
    cr_assert(dch_range_fraction(0, 0) == 0x1p-64, "one hash");
    cr_assert(dch_range_fraction(MAX, MAX) == 0x1p-64, "the last hash");
    cr_assert(dch_range_fraction(0, (UINT64_C(1) << 63) - 1) == 0.5, "lower half");
    cr_assert(dch_range_fraction(UINT64_C(1) << 63, MAX) == 0.5, "upper half");
    cr_assert(dch_range_fraction(1, MAX) == 1.0, "2^64 - 1 hashes round to nearest, 1.0");
    cr_assert(dch_range_fraction(0, (UINT64_C(1) << 52)) == 0x1p-12 + 0x1p-64,
              "2^52 + 1 hashes, exactly representable");
    cr_assert(dch_range_fraction(5, 4) == 0.0, "lo > hi");
}

/* ---- key by key ------------------------------------------------------------- */

/* Owner of h in a well-formed list. */
static uint32_t owner_in(const dch_range *list, size_t n, uint64_t h)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (list[mid].lo <= h)
            lo = mid;
        else
            hi = mid;
    }
    return list[lo].owner;
}

/* bsearch order of a hash against a change: below it, in it, or above it.
 * The reported changes are sorted and disjoint, so at most one holds h. */
static int hash_vs_change(const void *key, const void *elem)
{
    const uint64_t h = *(const uint64_t *)key;
    const dch_range_change *c = elem;
    return h < c->lo ? -1 : h > c->hi ? 1 : 0;
}

/* The reported change holding h, or NULL. */
static const dch_range_change *change_at(const change_list *cs, uint64_t h)
{
    return cs->n ? bsearch(&h, cs->v, cs->n, sizeof cs->v[0], hash_vs_change) : NULL;
}

/* Changes are non-empty, ascending, disjoint, from != to, and maximal:
 * touching changes differ in their pair. */
static void check_shape(const change_list *cs, uint64_t seed)
{
    for (size_t i = 0; i < cs->n; i++) {
        const dch_range_change *c = &cs->v[i];
        cr_assert(c->lo <= c->hi && c->from != c->to, "seed %llu: change %zu",
                  (unsigned long long)seed, i);
        if (i > 0) {
            const dch_range_change *p = &cs->v[i - 1];
            cr_assert(p->hi < c->lo, "seed %llu: changes %zu, %zu overlap",
                      (unsigned long long)seed, i - 1, i);
            cr_assert(p->hi + 1 != c->lo || p->from != c->from || p->to != c->to,
                      "seed %llu: changes %zu, %zu not coalesced", (unsigned long long)seed,
                      i - 1, i);
        }
    }
}

/* Owners before (old_owner) and after (new_owner) one key. */
typedef struct owners {
    uint32_t (*old_owner)(const void *ctx, uint64_t h);
    uint32_t (*new_owner)(const void *ctx, uint64_t h);
    const void *old_ctx;
    const void *new_ctx;
} owners;

/* A changed key lies in exactly one change, with its from and to; an
 * unchanged key lies in none. Changes are disjoint, so "exactly one" is the
 * one change_at finds. */
static void check_key(const change_list *cs, const owners *o, uint64_t h, uint64_t seed)
{
    uint32_t from = o->old_owner(o->old_ctx, h), to = o->new_owner(o->new_ctx, h);
    const dch_range_change *c = change_at(cs, h);
    if (from == to) {
        cr_assert(c == NULL, "seed %llu: unchanged key %016llx in a change",
                  (unsigned long long)seed, (unsigned long long)h);
    } else {
        cr_assert(c != NULL && c->from == from && c->to == to,
                  "seed %llu: key %016llx moves %u -> %u, reported %u -> %u",
                  (unsigned long long)seed, (unsigned long long)h, from, to,
                  c ? c->from : NONE, c ? c->to : NONE);
    }
}

/* Random keys plus every change's ends and their outer neighbours. */
static void check_keys(const change_list *cs, const owners *o, uint64_t *g, size_t keys,
                       uint64_t seed)
{
    check_shape(cs, seed);
    for (size_t k = 0; k < keys; k++)
        check_key(cs, o, rng_next(g), seed);
    for (size_t i = 0; i < cs->n; i++) {
        check_key(cs, o, cs->v[i].lo, seed);
        check_key(cs, o, cs->v[i].hi, seed);
        check_key(cs, o, cs->v[i].lo - 1, seed);
        check_key(cs, o, cs->v[i].hi + 1, seed);
    }
}

typedef struct list {
    const dch_range *v;
    size_t n;
} list;

static uint32_t list_owner(const void *ctx, uint64_t h)
{
    const list *l = ctx;
    return owner_in(l->v, l->n, h);
}

/* A random well-formed list: few owners, so neighbours often repeat one. */
static dch_range *random_list(uint64_t *g, size_t *n_out)
{
    size_t n = 1 + rng_below(g, 40);
    dch_range *v = malloc(n * sizeof *v);
    cr_assert(v != NULL, "out of memory");
    uint64_t *cuts = malloc(n * sizeof *cuts);
    cr_assert(cuts != NULL, "out of memory");
    for (size_t i = 0; i + 1 < n; i++) {
        uint64_t c = rng_next(g);
        /* Cluster some cuts near the ends and near each other. */
        if (rng_below(g, 4) == 0)
            c = rng_below(g, 3) == 0 ? c % 8 : MAX - c % 8;
        cuts[i] = c == MAX ? MAX - 1 : c;
    }
    /* Sort the cuts, then drop duplicates by shrinking n. */
    for (size_t i = 1; i + 1 < n; i++)
        for (size_t j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
            uint64_t t = cuts[j];
            cuts[j] = cuts[j - 1];
            cuts[j - 1] = t;
        }
    size_t m = 0;
    uint64_t lo = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (m > 0 && cuts[i] < lo)
            continue;
        v[m++] = (dch_range){lo, cuts[i], rng_below(g, 4) == 3 ? NONE : rng_below(g, 3)};
        lo = cuts[i] + 1;
    }
    v[m++] = (dch_range){lo, MAX, rng_below(g, 3)};
    free(cuts);
    *n_out = m;
    return v;
}

Test(range, diff_of_random_lists_matches_key_by_key_comparison)
{
    uint64_t seed = test_seed(0xd1ffu);
    uint64_t g = seed;
    size_t rounds = test_scaled(2000, 1);
    for (size_t r = 0; r < rounds; r++) {
        size_t na, nb;
        dch_range *a = random_list(&g, &na), *b = random_list(&g, &nb);
        change_list cs = changes_between(a, na, b, nb);
        list la = {a, na}, lb = {b, nb};
        owners o = {list_owner, list_owner, &la, &lb};
        check_keys(&cs, &o, &g, 200, seed);
        /* Every range end of both lists, and its neighbours. */
        for (size_t i = 0; i < na + nb; i++) {
            const dch_range *x = i < na ? &a[i] : &b[i - na];
            check_key(&cs, &o, x->lo, seed);
            check_key(&cs, &o, x->hi, seed);
            check_key(&cs, &o, x->hi + 1, seed);
        }
        free(cs.v);
        free(a);
        free(b);
    }
}

static uint32_t ring_owner(const void *ctx, uint64_t h)
{
    return dch_ring_lookup_hash(ctx, h);
}

/* Diff `before` against `after` and check it on `keys` keys. */
static void check_ring_change(const dch_ring *before, const dch_ring *after, uint64_t *g,
                              size_t keys, uint64_t seed, const char *what)
{
    size_t na, nb;
    dch_range *a = ring_ranges_of(before, &na), *b = ring_ranges_of(after, &nb);
    change_list cs = changes_between(a, na, b, nb);
    cr_assert(cs.n > 0, "seed %llu: %s moved nothing", (unsigned long long)seed, what);
    owners o = {ring_owner, ring_owner, before, after};
    check_keys(&cs, &o, g, keys, seed);
    free(cs.v);
    free(a);
    free(b);
}

Test(range, diff_of_ring_ranges_matches_key_by_key_comparison)
{
    uint64_t seed = test_seed(0x41e6u);
    uint64_t g = seed;
    size_t keys = test_scaled(1000000, 1);
    dch_ring *r;
    cr_assert_eq(dch_ring_new(&r, NULL), DCH_OK, "new");
    uint32_t ids[40];
    ring_add_members(r, "node-", 40, 3, &g, ids);
    dch_ring *before;

    cr_assert_eq(dch_ring_clone(&before, r), DCH_OK, "clone");
    cr_assert_eq(dch_ring_add_node(r, "joiner", 2, NULL), DCH_OK, "add");
    check_ring_change(before, r, &g, keys, seed, "add");
    dch_ring_free(before);

    cr_assert_eq(dch_ring_clone(&before, r), DCH_OK, "clone");
    cr_assert_eq(dch_ring_remove_node(r, ids[rng_below(&g, 40)]), DCH_OK, "remove");
    check_ring_change(before, r, &g, keys, seed, "remove");
    dch_ring_free(before);

    /* A weight change that crosses another: both directions at once. */
    uint32_t up = ids[0], down = ids[1];
    if (dch_ring_node_name(r, up) == NULL || dch_ring_node_name(r, down) == NULL) {
        up = ids[2];
        down = ids[3];
    }
    cr_assert_eq(dch_ring_clone(&before, r), DCH_OK, "clone");
    cr_assert_eq(dch_ring_set_weight(r, up, dch_ring_node_weight(r, up) + 3), DCH_OK, "raise");
    cr_assert_eq(dch_ring_set_weight(r, down, 0), DCH_OK, "drain");
    check_ring_change(before, r, &g, keys, seed, "set_weight");
    dch_ring_free(before);

    dch_ring_free(r);
}
