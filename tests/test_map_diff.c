/* SPDX-License-Identifier: MIT */
/*
 * Tests of dch_map_diff against two oracles: the owners of random keys looked
 * up in both maps, and the merge of the two maps' range lists (dch_map_ranges)
 * with owners turned into names. Plus the plan of an add, maps that number
 * the same members differently, early stop and every error.
 *
 * DCH_TEST_SCALE scales the random work; DCH_TEST_SEED replaces the seed.
 */
#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"
#include "map_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Harness ---------------------------------------------------------- */

typedef struct shape {
    uint32_t units, spu;
} shape;

static const shape shapes[] = {{1, 1}, {1, 4}, {4, 1}, {4, 4}, {16, 8}, {64, 16}, {32, 64}, {1024, 64}};

static dch_map *new_map(uint32_t units, uint32_t spu, uint64_t key_seed)
{
    dch_map_config cfg = map_config(units, spu);
    for (int i = 0; i < 16; i++)
        cfg.hash_key[i] = (uint8_t)(key_seed >> (i % 8 * 8));
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    return m;
}

/* Weights 0 .. 5 for new and changed members alike. */
static uint32_t change_weight(uint64_t *rng, uint32_t r, bool adding)
{
    (void)r;
    (void)adding;
    return rng_below(rng, 6);
}

/* Adds, removals and new weights, names from a pool of 12. */
static const map_change_rule rule = {50, 75, 12, change_weight};

/* ---- Collecting a plan ------------------------------------------------ */

typedef struct mv {
    uint64_t lo, hi;
    char *from, *to; /* copies; NULL for nobody */
} mv;

typedef struct moves {
    mv *v;
    size_t n, cap;
} moves;

static void push(moves *ms, uint64_t lo, uint64_t hi, const char *from, const char *to)
{
    ms->v = xgrow(ms->v, ms->n, &ms->cap, sizeof *ms->v);
    ms->v[ms->n++] = (mv){lo, hi, xstrdup(from), xstrdup(to)};
}

static void moves_free(moves *ms)
{
    for (size_t i = 0; i < ms->n; i++) {
        free(ms->v[i].from);
        free(ms->v[i].to);
    }
    free(ms->v);
    ms->v = NULL;
    ms->n = ms->cap = 0;
}

static int collect(const dch_move *m, void *ctx)
{
    push(ctx, m->lo, m->hi, m->from, m->to);
    return 0;
}

static int same_name(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static moves diff_of(const dch_map *a, const dch_map *b)
{
    moves ms = {NULL, 0, 0};
    cr_assert_eq(dch_map_diff(a, b, collect, &ms), DCH_OK);
    return ms;
}

/* Ascending, disjoint, maximal, and never from a name to itself. */
static void check_shape(const moves *ms, unsigned long long seed)
{
    for (size_t i = 0; i < ms->n; i++) {
        const mv *m = &ms->v[i];
        cr_assert(m->lo <= m->hi, "seed %llu move %zu", seed, i);
        cr_assert(!same_name(m->from, m->to), "seed %llu move %zu from a name to itself", seed, i);
        if (i > 0) {
            const mv *p = &ms->v[i - 1];
            cr_assert(p->hi < m->lo, "seed %llu: moves %zu and %zu overlap or descend", seed, i - 1, i);
            if (p->hi + 1 == m->lo)
                cr_assert(!(same_name(p->from, m->from) && same_name(p->to, m->to)),
                          "seed %llu: moves %zu and %zu should be one", seed, i - 1, i);
        }
    }
}

/* The move holding hash h, or NULL. */
static const mv *move_at(const moves *ms, uint64_t h)
{
    size_t lo = 0, hi = ms->n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (ms->v[mid].hi < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ms->n && ms->v[lo].lo <= h ? &ms->v[lo] : NULL;
}

/* ---- Oracle: the pieces both range lists cut --------------------------- */

/* bsearch order of a hash against a range: below it, in it, or above it. */
static int hash_vs_range(const void *key, const void *elem)
{
    const uint64_t h = *(const uint64_t *)key;
    const dch_range *r = elem;
    return h < r->lo ? -1 : h > r->hi ? 1 : 0;
}

/* The name owning hash h in m, whose ranges r[0 .. n-1] cover every hash. */
static const char *owner_name(const dch_map *m, const dch_range *r, size_t n, uint64_t h)
{
    const dch_range *at = bsearch(&h, r, n, sizeof *r, hash_vs_range);
    cr_assert(at != NULL, "hash %llu is in no range", (unsigned long long)h);
    return dch_map_node_name(m, at->owner);
}

static int u64_order(const void *x, const void *y)
{
    const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* Every range end of either map cuts the hash space; each piece has one
 * owner in each map, found by search, and the pieces whose owners' names
 * differ, merged where they touch with the same pair, are the moves. */
static moves merge_oracle(const dch_map *a, const dch_map *b)
{
    size_t na, nb;
    dch_range *ra = map_ranges_of(a, &na), *rb = map_ranges_of(b, &nb);
    uint64_t *ends = xmalloc((na + nb) * sizeof *ends);
    for (size_t i = 0; i < na; i++)
        ends[i] = ra[i].hi;
    for (size_t j = 0; j < nb; j++)
        ends[na + j] = rb[j].hi;
    qsort(ends, na + nb, sizeof *ends, u64_order);
    moves ms = {NULL, 0, 0};
    uint64_t lo = 0;
    for (size_t k = 0; k < na + nb; k++) {
        const uint64_t hi = ends[k];
        if (k > 0 && hi == ends[k - 1])
            continue;
        const char *from = owner_name(a, ra, na, hi);
        const char *to = owner_name(b, rb, nb, hi);
        if (!same_name(from, to)) {
            mv *last = ms.n ? &ms.v[ms.n - 1] : NULL;
            if (last && last->hi + 1 == lo && same_name(last->from, from) && same_name(last->to, to))
                last->hi = hi;
            else
                push(&ms, lo, hi, from, to);
        }
        lo = hi + 1;
    }
    free(ends);
    free(ra);
    free(rb);
    return ms;
}

/* ---- Tests ------------------------------------------------------------ */

/*
 * The first map of case c: a random shape (the large one in every 20th
 * case, and in *sh unless sh is NULL) keyed from the seed, after fewer than
 * max_changes random changes. rng starts at the seed and goes on from here.
 */
static dch_map *case_map(uint64_t seed, unsigned c, uint32_t max_changes, uint64_t *rng,
                         shape *sh)
{
    *rng = seed;
    const shape drawn = shapes[rng_below(rng, c % 20 == 0 ? 8 : 7)];
    if (sh != NULL)
        *sh = drawn;
    dch_map *a = new_map(drawn.units, drawn.spu, seed);
    for (uint32_t k = rng_below(rng, max_changes); k > 0; k--)
        map_random_change(a, rng, &rule);
    return a;
}

Test(map_diff, plans_match_key_lookups_and_merged_range_lists)
{
    const uint64_t base = test_seed(UINT64_C(0xd1ff000000000000));
    const unsigned n = test_scaled(400, 12);
    const unsigned keys = test_scaled(4000, 200);
    for (unsigned c = 0; c < n; c++) {
        const uint64_t seed = base + c;
        const unsigned long long sd = (unsigned long long)seed;
        uint64_t rng;
        shape sh;
        dch_map *a = case_map(seed, c, 10, &rng, &sh);
        /* b: a clone changed further, or a map built independently (other
         * ids for the same names). */
        dch_map *b;
        if (rng_below(&rng, 3) == 0) {
            b = new_map(sh.units, sh.spu, seed);
        } else {
            cr_assert_eq(dch_map_clone(&b, a), DCH_OK);
        }
        for (uint32_t k = rng_below(&rng, 6); k > 0; k--)
            map_random_change(b, &rng, &rule);

        moves got = diff_of(a, b);
        check_shape(&got, sd);
        moves want = merge_oracle(a, b);
        cr_assert_eq(got.n, want.n, "seed %llu: %zu moves, the range merge has %zu", sd, got.n,
                     want.n);
        for (size_t i = 0; i < got.n; i++)
            cr_assert(got.v[i].lo == want.v[i].lo && got.v[i].hi == want.v[i].hi &&
                          same_name(got.v[i].from, want.v[i].from) &&
                          same_name(got.v[i].to, want.v[i].to),
                      "seed %llu: move %zu differs from the range merge", sd, i);

        for (unsigned k = 0; k < keys; k++) {
            char key[32];
            snprintf(key, sizeof key, "key-%llu-%u", sd, k);
            const uint64_t h = dch_map_hash(a, key, strlen(key));
            const char *from = dch_map_node_name(a, dch_map_lookup(a, key, strlen(key)));
            const char *to = dch_map_node_name(b, dch_map_lookup(b, key, strlen(key)));
            const mv *m = move_at(&got, h);
            if (same_name(from, to)) {
                cr_assert_null(m, "seed %llu: key %s keeps its owner but is in a move", sd, key);
            } else {
                cr_assert_not_null(m, "seed %llu: key %s moves but is in no move", sd, key);
                cr_assert(same_name(m->from, from) && same_name(m->to, to),
                          "seed %llu: key %s moves %s -> %s, the plan says %s -> %s", sd, key,
                          from ? from : "-", to ? to : "-", m->from ? m->from : "-",
                          m->to ? m->to : "-");
            }
        }
        moves_free(&got);
        moves_free(&want);
        dch_map_free(a);
        dch_map_free(b);
    }
}

Test(map_diff, the_plan_of_an_add_is_exactly_the_new_members_slots)
{
    const uint64_t base = test_seed(UINT64_C(0xadd0000000000000));
    const unsigned n = test_scaled(200, 10);
    for (unsigned c = 0; c < n; c++) {
        const unsigned long long sd = base + c;
        uint64_t rng;
        dch_map *a = case_map(sd, c, 12, &rng, NULL);
        dch_map *b;
        cr_assert_eq(dch_map_clone(&b, a), DCH_OK);
        uint32_t x;
        cr_assert_eq(dch_map_add_node(b, "newcomer", 1 + rng_below(&rng, 5), &x), DCH_OK);

        moves got = diff_of(a, b);
        check_shape(&got, sd);
        const uint32_t P = dch_map_slot_count(b);
        unsigned bits = 0;
        while ((UINT32_C(1) << bits) < P)
            bits++;
        const unsigned shift = 64u - bits; /* unused when P == 1 */
        uint64_t covered = 0;
        for (size_t i = 0; i < got.n; i++) {
            cr_assert_str_eq(got.v[i].to, "newcomer", "seed %llu", sd);
            covered += P == 1 ? 1 : ((got.v[i].hi - got.v[i].lo) >> shift) + 1;
        }
        cr_assert_eq(covered, dch_map_node_slots(b, x), "seed %llu: the plan moves %llu slots, "
                     "the newcomer owns %u", sd, (unsigned long long)covered,
                     dch_map_node_slots(b, x));
        /* Slot by slot: in a move exactly when the newcomer owns it, and
         * from its owner before. */
        for (uint32_t s = 0; s < P; s++) {
            const uint64_t h = P == 1 ? 0 : (uint64_t)s << shift;
            const mv *m = move_at(&got, h);
            if (dch_map_slot_owner(b, s) == x) {
                cr_assert_not_null(m, "seed %llu slot %u", sd, s);
                cr_assert(same_name(m->from, dch_map_node_name(a, dch_map_slot_owner(a, s))),
                          "seed %llu slot %u: wrong donor", sd, s);
            } else {
                cr_assert_null(m, "seed %llu slot %u moves but is not the newcomer's", sd, s);
            }
        }
        moves_free(&got);
        dch_map_free(a);
        dch_map_free(b);
    }
}

Test(map_diff, members_are_matched_by_name_not_id)
{
    /* b holds a's members under other ids, and the same table by name:
     * there is nothing to move, although every id differs. */
    dch_map *a = new_map(16, 16, 5);
    cr_assert_eq(dch_map_add_node(a, "red", 1, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(a, "green", 2, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(a, "blue", 1, NULL), DCH_OK);
    const uint32_t P = dch_map_slot_count(a);
    const char *names[5] = {NULL, dch_map_node_name(a, 2), NULL, dch_map_node_name(a, 0),
                            dch_map_node_name(a, 1)};
    const uint32_t weights[5] = {0, 1, 0, 1, 2};
    const uint16_t remap[3] = {3, 4, 1};
    uint16_t *owner = malloc(P * sizeof *owner);
    for (uint32_t s = 0; s < P; s++)
        owner[s] = remap[dch_map_slot_owner(a, s)];
    dch_map_config cfg;
    dch_map_get_config(a, &cfg);
    dch_map *b;
    cr_assert_eq(dch__map_assemble(&b, &cfg, 99, 5, names, NULL, weights, owner, NULL), DCH_OK);
    moves got = diff_of(a, b);
    cr_assert_eq(got.n, 0, "renumbering alone moves nothing");
    moves_free(&got);

    /* The same two maps compared by id (dch_map_ranges) differ everywhere. */
    cr_assert_neq(dch_map_slot_owner(a, 0), dch_map_slot_owner(b, 0));

    /* A member renamed is a move of all its slots. */
    names[1] = "cyan"; /* was blue */
    dch_map *c;
    cr_assert_eq(dch__map_assemble(&c, &cfg, 100, 5, names, NULL, weights, owner, NULL), DCH_OK);
    got = diff_of(a, c);
    uint64_t moved = 0;
    for (size_t i = 0; i < got.n; i++) {
        cr_assert_str_eq(got.v[i].from, "blue");
        cr_assert_str_eq(got.v[i].to, "cyan");
        moved += ((got.v[i].hi - got.v[i].lo) >> 56) + 1;
    }
    cr_assert_eq(moved, dch_map_node_slots(a, 2));
    moves_free(&got);
    free(owner);
    dch_map_free(a);
    dch_map_free(b);
    dch_map_free(c);
}

Test(map_diff, nobody_is_null_and_identical_maps_give_no_moves)
{
    dch_map *empty = new_map(1, 1, 0);
    dch_map *one;
    cr_assert_eq(dch_map_clone(&one, empty), DCH_OK);
    cr_assert_eq(dch_map_add_node(one, "solo", 1, NULL), DCH_OK);
    moves got = diff_of(empty, one);
    cr_assert_eq(got.n, 1);
    cr_assert(got.v[0].lo == 0 && got.v[0].hi == UINT64_MAX);
    cr_assert_null(got.v[0].from);
    cr_assert_str_eq(got.v[0].to, "solo");
    moves_free(&got);
    got = diff_of(one, empty);
    cr_assert(got.n == 1 && got.v[0].to == NULL && strcmp(got.v[0].from, "solo") == 0);
    moves_free(&got);
    got = diff_of(one, one);
    cr_assert_eq(got.n, 0);
    moves_free(&got);
    dch_map_free(empty);
    dch_map_free(one);
}

/* Collects moves like `collect`, and stops the walk at the third. */
static int collect_three(const dch_move *m, void *ctx)
{
    moves *ms = ctx;
    push(ms, m->lo, m->hi, m->from, m->to);
    return ms->n == 3 ? 42 : 0;
}

Test(map_diff, a_non_zero_return_stops_the_walk_and_bad_pairs_are_refused)
{
    dch_map *a = new_map(64, 16, 1), *b;
    map_add_members(a, "m", 4, NULL, 0);
    cr_assert_eq(dch_map_clone(&b, a), DCH_OK);
    cr_assert_eq(dch_map_remove_node(b, 1), DCH_OK);
    moves all = diff_of(a, b);
    cr_assert_gt(all.n, 3);
    /* The walk stops at the third call, after the walk's first moves. */
    moves first = {NULL, 0, 0};
    cr_assert_eq(dch_map_diff(a, b, collect_three, &first), 42);
    cr_assert_eq(first.n, 3, "stopped at the third call");
    for (size_t i = 0; i < 3; i++)
        cr_assert(first.v[i].lo == all.v[i].lo && first.v[i].hi == all.v[i].hi &&
                      same_name(first.v[i].from, all.v[i].from) &&
                      same_name(first.v[i].to, all.v[i].to),
                  "move %zu", i);
    moves_free(&all);

    /* A refused pair calls fn for nothing: `first` keeps its 3 moves. */
    cr_assert_eq(dch_map_diff(NULL, b, collect_three, &first), DCH_EINVAL);
    cr_assert_eq(dch_map_diff(a, NULL, collect_three, &first), DCH_EINVAL);
    cr_assert_eq(dch_map_diff(a, b, NULL, NULL), DCH_EINVAL);
    dch_map *units = new_map(32, 16, 1), *spu = new_map(64, 8, 1), *key = new_map(64, 16, 2);
    cr_assert_eq(dch_map_diff(a, units, collect_three, &first), DCH_EINVAL);
    cr_assert_eq(dch_map_diff(a, spu, collect_three, &first), DCH_EINVAL);
    cr_assert_eq(dch_map_diff(a, key, collect_three, &first), DCH_EINVAL, "another hash key");
    cr_assert_eq(first.n, 3, "fn called for a refused pair");
    moves_free(&first);
    dch_map_free(units);
    dch_map_free(spu);
    dch_map_free(key);
    dch_map_free(a);
    dch_map_free(b);
}
