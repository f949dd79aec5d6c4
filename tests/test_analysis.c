/* SPDX-License-Identifier: MIT */
/*
 * Tests of the analysis: the metric code on tiny hand-built cases whose
 * answers are known (hand-made range lists, a two-node ring whose arcs follow
 * from its two point positions, a one-unit map), a seeded property test that
 * sampled keys always agree with the exact change lists, and an end-to-end
 * run of dch-analysis on a small scenario whose CSV files are checked.
 *
 * The end-to-end test draws charts only when gnuplot is installed and the
 * test is not running under valgrind (gnuplot is not ours to memcheck).
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include "metrics.h"
#include "number.h"
#include "outfile.h"
#include "support.h"
#include "scheme.h"
#include "load_model.h"
#include "replica_figures.h"
#include "sections.h"
#include "table.h"
#include "text.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef DCH_HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#define UNDER_VALGRIND (RUNNING_ON_VALGRIND != 0)
#else
#define UNDER_VALGRIND 0
#endif

#define HALF (UINT64_C(1) << 63)
#define QUARTER (UINT64_C(1) << 62)
#define DEFAULT_SEED UINT64_C(0x616e616c79736973)

/* ---- Harness ---------------------------------------------------------------- */

static void fixed_key(uint8_t key[16])
{
    for (unsigned i = 0; i < 16; i++)
        key[i] = (uint8_t)(0xa0 + i);
}

static an_ranges make_ranges(const dch_range *v, size_t n)
{
    an_ranges rs = {NULL, 0};
    cr_assert_eq(an_ranges_copy(&rs, v, n), DCH_OK);
    return rs;
}

/* ---- Volumes and shares ------------------------------------------------------- */

Test(analysis, volume_counts_the_whole_space_exactly)
{
    an_volume v = {0, 0};
    an_volume_add_range(&v, 0, UINT64_MAX);
    cr_assert_eq(v.high, 1);
    cr_assert_eq(v.low, 0);
    cr_assert_eq(an_volume_fraction(v), 1.0);

    an_volume h = {0, 0};
    an_volume_add_range(&h, 0, HALF - 1);
    an_volume_add_range(&h, HALF, UINT64_MAX);
    cr_assert_eq(h.high, 1);
    cr_assert_eq(h.low, 0);

    an_volume one = {0, 0};
    an_volume_add_range(&one, 7, 7);
    cr_assert_eq(one.high, 0);
    cr_assert_eq(one.low, 1);
    an_volume_add(&v, one);
    cr_assert_eq(v.high, 1);
    cr_assert_eq(v.low, 1);
    cr_assert_eq(an_volume_fraction(h), 1.0);
}

Test(analysis, shares_of_a_hand_built_list)
{
    const dch_range v[] = {
        {0, QUARTER - 1, 0},
        {QUARTER, HALF - 1, 2},
        {HALF, UINT64_MAX, 0},
    };
    an_ranges rs = make_ranges(v, 3);
    double share[3];
    cr_assert_eq(an_shares(&rs, 3, share), DCH_OK);
    cr_assert_eq(share[0], 0.75);
    cr_assert_eq(share[1], 0.0);
    cr_assert_eq(share[2], 0.25);
    /* An owner at or above the limit is an error. */
    cr_assert_eq(an_shares(&rs, 2, share), DCH_EINVAL);
    an_ranges_free(&rs);
}

Test(analysis, renumber_rejects_an_unknown_owner_and_changes_nothing)
{
    const dch_range v[] = {{0, HALF - 1, 1}, {HALF, UINT64_MAX, 5}};
    an_ranges rs = make_ranges(v, 2);
    const uint32_t to[2] = {10, 11};
    cr_assert_eq(an_ranges_renumber(&rs, to, 2), DCH_EINVAL);
    cr_assert_eq(rs.v[0].owner, 1);
    cr_assert_eq(rs.v[1].owner, 5);
    rs.v[1].owner = DCH_NODE_NONE;
    cr_assert_eq(an_ranges_renumber(&rs, to, 2), DCH_OK);
    cr_assert_eq(rs.v[0].owner, 11);
    cr_assert_eq(rs.v[1].owner, DCH_NODE_NONE);
    an_ranges_free(&rs);
}

Test(analysis, balance_measures_shares_against_weights)
{
    const double share[4] = {0.5, 0.25, 0.25, 0.0};
    const uint32_t even[4] = {2, 1, 1, 0}; /* the weight-0 member is left out */
    an_balance b = an_balance_of(share, even, 4);
    cr_assert_eq(b.members, 3);
    cr_assert_float_eq(b.peak_to_avg, 1.0, 1e-12);
    cr_assert_float_eq(b.min_to_avg, 1.0, 1e-12);
    cr_assert_float_eq(b.cv, 0.0, 1e-12);

    const uint32_t flat[4] = {1, 1, 1, 1};
    b = an_balance_of(share, flat, 4);
    /* Ratios 2, 1, 1, 0: mean 1, variance (1 + 0 + 0 + 1) / 4. */
    cr_assert_float_eq(b.peak_to_avg, 2.0, 1e-12);
    cr_assert_float_eq(b.min_to_avg, 0.0, 1e-12);
    cr_assert_float_eq(b.cv, sqrt(0.5), 1e-12);

    const uint32_t none[4] = {0, 0, 0, 0};
    b = an_balance_of(share, none, 4);
    cr_assert_eq(b.members, 0);
    cr_assert_eq(b.peak_to_avg, 0.0);
}

/* ---- Migration on hand-built lists --------------------------------------------- */

Test(analysis, moves_of_a_hand_built_change)
{
    /* Owner 2 takes [1/4, 1/2) from owner 0 and [3/4, 1) from owner 1. */
    const dch_range before[] = {{0, HALF - 1, 0}, {HALF, UINT64_MAX, 1}};
    const dch_range after[] = {
        {0, QUARTER - 1, 0},
        {QUARTER, HALF - 1, 2},
        {HALF, HALF + QUARTER - 1, 1},
        {HALF + QUARTER, UINT64_MAX, 2},
    };
    an_ranges a = make_ranges(before, 2), b = make_ranges(after, 4);
    an_changes ch = {NULL, 0, 0};
    cr_assert_eq(an_changes_diff(&ch, &a, &b), DCH_OK);
    cr_assert_eq(ch.n, 2);
    an_moves mv;
    cr_assert_eq(an_moves_of(&ch, 3, 2, &mv), DCH_OK);
    cr_assert_eq(mv.moved, 0.5);
    cr_assert_eq(mv.moved_other, 0.0);
    cr_assert_eq(mv.donors, 2);
    cr_assert_eq(mv.receivers, 1);
    cr_assert_eq(mv.max_donation, 0.25);
    cr_assert_eq(mv.max_receipt, 0.5);
    /* Seen from another subject, the same moves are between bystanders. */
    cr_assert_eq(an_moves_of(&ch, 3, 0, &mv), DCH_OK);
    cr_assert_eq(mv.moved_other, 0.25);
    cr_assert_eq(an_moves_of(&ch, 2, 2, &mv), DCH_EINVAL);
    /* A list that is not well formed is refused and the result kept. */
    a.v[0].hi = 5;
    cr_assert_eq(an_changes_diff(&ch, &a, &b), DCH_EINVAL);
    cr_assert_eq(ch.n, 2);
    an_changes_free(&ch);
    an_ranges_free(&a);
    an_ranges_free(&b);
}

Test(analysis, key_check_finds_keys_off_the_plan)
{
    const dch_range before[] = {{0, UINT64_MAX, 0}};
    const dch_range after[] = {{0, HALF - 1, 0}, {HALF, UINT64_MAX, 1}};
    an_ranges a = make_ranges(before, 1), b = make_ranges(after, 2);
    an_changes ch = {NULL, 0, 0};
    cr_assert_eq(an_changes_diff(&ch, &a, &b), DCH_OK);
    const uint64_t hash[4] = {1, HALF - 1, HALF, UINT64_MAX};
    const uint32_t own0[4] = {0, 0, 0, 0};
    const uint32_t good[4] = {0, 0, 1, 1};
    an_key_moves k = an_key_moves_check(hash, own0, good, 4, &ch, 1);
    cr_assert_eq(k.keys, 4);
    cr_assert_eq(k.moved, 2);
    cr_assert_eq(k.moved_other, 0);
    cr_assert_eq(k.mismatched, 0);
    /* A key that moved outside the changed range, one that stayed inside
     * it, and one that went to another owner than the plan says. */
    const uint32_t bad[4] = {2, 0, 0, 2};
    k = an_key_moves_check(hash, own0, bad, 4, &ch, 1);
    cr_assert_eq(k.moved, 2);
    cr_assert_eq(k.moved_other, 2);
    cr_assert_eq(k.mismatched, 3);
    an_changes_free(&ch);
    an_ranges_free(&a);
    an_ranges_free(&b);
}

Test(analysis, binomial_z_in_standard_errors)
{
    cr_assert_float_eq(an_binomial_z(0.5, 60, 100), 2.0, 1e-12);
    cr_assert_float_eq(an_binomial_z(0.5, 40, 100), -2.0, 1e-12);
    cr_assert_eq(an_binomial_z(0.0, 0, 100), 0.0);
    cr_assert(isinf(an_binomial_z(0.0, 1, 100)));
    cr_assert(an_binomial_z(1.0, 99, 100) < 0.0);
}

Test(analysis, reference_sequences)
{
    cr_assert_eq(an_harmonic_migration(1), 0.0);
    cr_assert_float_eq(an_harmonic_migration(4), 0.5 + 1.0 / 3 + 0.25, 1e-15);
    const double step[] = {0, 0, 0.5, 0.25, 0.25, 0.125, 0.125, 0.125, 0.125,
                           0.0625};
    for (uint32_t n = 2; n < 10; n++)
        cr_assert_eq(an_halving_step(n), step[n], "n = %u", (unsigned)n);
    /* 1/2 + 1/4 + 1/4 + 4 * 1/8 */
    cr_assert_eq(an_halving_migration(8), 1.5);
    cr_assert_eq(an_halving_migration(1), 0.0);
}

Test(analysis, spread_and_load_of_two_hand_built_views)
{
    /* View A sends everything to node 0; view B sends the upper half to 1. */
    const dch_range va[] = {{0, UINT64_MAX, 0}};
    const dch_range vb[] = {{0, HALF - 1, 0}, {HALF, UINT64_MAX, 1}};
    an_ranges views[2] = {make_ranges(va, 1), make_ranges(vb, 2)};
    an_spread_load sl;
    cr_assert_eq(an_spread_load_exact(views, 2, 2, &sl), DCH_OK);
    cr_assert_eq(sl.spread_max, 2.0);
    cr_assert_eq(sl.spread_mean, 1.5);
    cr_assert_eq(sl.load_max, 2.0); /* node 0 gets all keys: twice keys/2 */
    cr_assert_eq(an_spread_load_exact(views, 2, 1, &sl), DCH_EINVAL);

    /* The same views counted key by key. */
    an_key_spread ks;
    cr_assert_eq(an_key_spread_init(&ks, 2), DCH_OK);
    const uint32_t low[2] = {0, 0}, high[2] = {0, 1};
    an_key_spread_add(&ks, low, 2);
    an_key_spread_add(&ks, high, 2);
    an_spread_load r = an_key_spread_result(&ks);
    cr_assert_eq(r.spread_max, 2.0);
    cr_assert_eq(r.spread_mean, 1.5);
    cr_assert_eq(r.load_max, 2.0);
    an_key_spread_free(&ks);
    an_ranges_free(&views[0]);
    an_ranges_free(&views[1]);
}

/* ---- Known schemes ----------------------------------------------------------------- */

/* The position of a one-point ring member, by ring.h's placement rule. */
static uint64_t point_of(const uint8_t key[16], const char *name)
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%s#0", name);
    return dch_siphash24(key, buf, (size_t)n);
}

Test(analysis, two_node_ring_shares_follow_its_two_points)
{
    an_scheme_spec spec = {"ring-1", AN_KIND_RING, 0, 0, 1, {0}, DCH_RING_PLACE_SIPHASH};
    fixed_key(spec.hash_key);
    an_scheme sc;
    cr_assert_eq(an_scheme_new(&sc, &spec), DCH_OK);
    uint32_t ia, ib;
    cr_assert_eq(an_scheme_add(&sc, "a", 1, &ia), DCH_OK);
    an_ranges one;
    cr_assert_eq(an_scheme_ranges(&sc, &one), DCH_OK);
    cr_assert_eq(an_scheme_add(&sc, "b", 1, &ib), DCH_OK);
    an_ranges two;
    cr_assert_eq(an_scheme_ranges(&sc, &two), DCH_OK);

    /* b owns the hashes after a's point up to its own, wrapping. */
    uint64_t pa = point_of(spec.hash_key, "a"), pb = point_of(spec.hash_key, "b");
    cr_assert_neq(pa, pb);
    an_volume vb = {0, 0};
    if (pa < pb) {
        an_volume_add_range(&vb, pa + 1, pb);
    } else {
        if (pa != UINT64_MAX)
            an_volume_add_range(&vb, pa + 1, UINT64_MAX);
        an_volume_add_range(&vb, 0, pb);
    }
    double share_b = an_volume_fraction(vb);
    double share[2];
    cr_assert_eq(an_shares(&two, 2, share), DCH_OK);
    cr_assert_eq(share[ib], share_b);
    cr_assert_float_eq(share[ia], 1.0 - share_b, 1e-15);

    an_changes ch = {NULL, 0, 0};
    cr_assert_eq(an_changes_diff(&ch, &one, &two), DCH_OK);
    an_moves mv;
    cr_assert_eq(an_moves_of(&ch, 2, ib, &mv), DCH_OK);
    cr_assert_eq(mv.moved, share_b);
    cr_assert_eq(mv.moved_other, 0.0);
    cr_assert_eq(mv.donors, 1);
    cr_assert_eq(mv.receivers, 1);
    cr_assert_eq(mv.max_donation, share_b);

    const uint32_t weight[2] = {1, 1};
    an_balance b = an_balance_of(share, weight, 2);
    cr_assert_float_eq(b.peak_to_avg, 2.0 * fmax(share_b, 1.0 - share_b),
                       1e-12);
    an_changes_free(&ch);
    an_ranges_free(&one);
    an_ranges_free(&two);
    an_scheme_free(&sc);
}

Test(analysis, one_unit_map_moves_exactly_the_joiners_slots)
{
    an_scheme_spec spec = {"dch", AN_KIND_MAP, 1, 4, 0, {0}, DCH_RING_PLACE_SIPHASH};
    an_scheme sc;
    cr_assert_eq(an_scheme_new(&sc, &spec), DCH_OK);
    const char *names[4] = {"n0", "n1", "n2", "n3"};
    an_ranges prev = {NULL, 0}, cur = {NULL, 0};
    uint32_t id;
    cr_assert_eq(an_scheme_add(&sc, names[0], 1, &id), DCH_OK);
    cr_assert_eq(an_scheme_ranges(&sc, &prev), DCH_OK);
    double share[4];
    cr_assert_eq(an_shares(&prev, 1, share), DCH_OK);
    cr_assert_eq(share[0], 1.0);
    for (uint32_t n = 2; n <= 4; n++) {
        cr_assert_eq(an_scheme_add(&sc, names[n - 1], 1, &id), DCH_OK);
        cr_assert_eq(an_scheme_ranges(&sc, &cur), DCH_OK);
        an_changes ch = {NULL, 0, 0};
        an_moves mv;
        cr_assert_eq(an_changes_diff(&ch, &prev, &cur), DCH_OK);
        cr_assert_eq(an_moves_of(&ch, n, id, &mv), DCH_OK);
        /* Exactly the joiner's slots, each a quarter of the space. */
        cr_assert_eq(mv.moved, dch_map_node_slots(sc.map, id) / 4.0, "n = %u",
                     (unsigned)n);
        cr_assert_eq(mv.moved_other, 0.0);
        cr_assert_eq(mv.receivers, 1);
        if (n == 2) {
            cr_assert_eq(mv.moved, 0.5);
            cr_assert_eq(mv.donors, 1);
            cr_assert_eq(mv.max_donation, 0.5);
        }
        an_changes_free(&ch);
        an_ranges_free(&prev);
        prev = cur;
        cur = (an_ranges){NULL, 0};
    }
    /* Four members, four slots: one each, perfect balance. */
    uint32_t weight[4];
    an_scheme_weights(&sc, weight);
    cr_assert_eq(an_shares(&prev, 4, share), DCH_OK);
    an_balance b = an_balance_of(share, weight, 4);
    cr_assert_eq(b.peak_to_avg, 1.0);
    cr_assert_eq(b.cv, 0.0);
    /* A leaver's single slot goes to one survivor; nothing else moves. */
    cr_assert_eq(an_scheme_find(&sc, "n1", &id), DCH_OK);
    cr_assert_eq(an_scheme_remove(&sc, id), DCH_OK);
    cr_assert_eq(an_scheme_ranges(&sc, &cur), DCH_OK);
    an_changes ch = {NULL, 0, 0};
    an_moves mv;
    cr_assert_eq(an_changes_diff(&ch, &prev, &cur), DCH_OK);
    cr_assert_eq(an_moves_of(&ch, 4, id, &mv), DCH_OK);
    cr_assert(mv.moved == 0.25 && mv.moved_other == 0.0 && mv.receivers == 1 && mv.donors == 1,
              "moved %g (%g between others), %u receivers, %u donors", mv.moved,
              mv.moved_other, mv.receivers, mv.donors);
    an_changes_free(&ch);
    an_ranges_free(&prev);
    an_ranges_free(&cur);
    an_scheme_free(&sc);
}

/* ---- Property: sampled keys follow the exact plan ------------------------------------- */

/* Random joins, removals and weight changes on both schemes; after each, the
 * looked-up owners of sampled keys agree with the range diff key for key,
 * shares sum to one, and (for joins and leaves) nothing moves between
 * bystanders. */
Test(analysis, sampled_keys_follow_the_range_diff_under_random_changes)
{
    const uint64_t seed = test_seed(DEFAULT_SEED);
    const unsigned ops = test_scaled(120, 12);
    const size_t nkeys = test_scaled(4000, 500);
    uint8_t key[16];
    fixed_key(key);
    uint64_t *hash;
    cr_assert_eq(an_keys_sorted(&hash, nkeys, key), DCH_OK);
    for (size_t i = 1; i < nkeys; i++)
        cr_assert(hash[i - 1] <= hash[i]);
    uint32_t *before = malloc(nkeys * sizeof *before);
    uint32_t *after = malloc(nkeys * sizeof *after);
    cr_assert(before && after);

    an_scheme_spec specs[2] = {{"dch", AN_KIND_MAP, 16, 8, 0, {0}, DCH_RING_PLACE_SIPHASH},
                               {"ring-8", AN_KIND_RING, 0, 0, 8, {0}, DCH_RING_PLACE_SIPHASH}};
    for (int s = 0; s < 2; s++) {
        memcpy(specs[s].hash_key, key, 16);
        uint64_t rng = seed + (uint64_t)s;
        an_scheme sc;
        cr_assert_eq(an_scheme_new(&sc, &specs[s]), DCH_OK);
        an_ranges prev;
        cr_assert_eq(an_scheme_ranges(&sc, &prev), DCH_OK);
        an_scheme_lookup_many(&sc, hash, nkeys, before);
        unsigned next_name = 0;
        for (unsigned op = 0; op < ops; op++) {
            uint32_t count = an_scheme_count(&sc);
            uint32_t kind = count < 2 ? 0 : dch__rng_below(&rng, 3);
            uint32_t subject = DCH_NODE_NONE;
            uint32_t limit = an_scheme_id_limit(&sc);
            if (kind == 0 && count < 24) {
                char name[32];
                snprintf(name, sizeof name, "m%u", next_name++);
                cr_assert_eq(an_scheme_add(&sc, name,
                                           1 + dch__rng_below(&rng, 3), &subject),
                             DCH_OK);
            } else {
                /* Pick a member by walking ids from a random start. */
                uint32_t id = dch__rng_below(&rng, limit);
                while (an_scheme_name(&sc, id) == NULL)
                    id = (id + 1) % limit;
                subject = id;
                if (kind == 1 || kind == 0)
                    cr_assert_eq(an_scheme_remove(&sc, id), DCH_OK);
                else
                    cr_assert_eq(an_scheme_set_weight(&sc, id,
                                                      dch__rng_below(&rng, 4)),
                                 DCH_OK);
            }
            uint32_t lim = an_scheme_id_limit(&sc);
            if (lim > limit)
                limit = lim;
            an_ranges cur;
            cr_assert_eq(an_scheme_ranges(&sc, &cur), DCH_OK);
            an_changes ch = {NULL, 0, 0};
            cr_assert_eq(an_changes_diff(&ch, &prev, &cur), DCH_OK);
            an_moves mv;
            cr_assert_eq(an_moves_of(&ch, limit, subject, &mv), DCH_OK);
            cr_assert_eq(mv.moved_other, 0.0, "seed %llu scheme %s op %u",
                         (unsigned long long)seed, specs[s].label, op);
            an_scheme_lookup_many(&sc, hash, nkeys, after);
            an_key_moves k = an_key_moves_check(hash, before, after, nkeys,
                                                &ch, subject);
            cr_assert_eq(k.mismatched, 0, "seed %llu scheme %s op %u",
                         (unsigned long long)seed, specs[s].label, op);
            cr_assert_eq(k.moved_other, 0, "seed %llu scheme %s op %u",
                         (unsigned long long)seed, specs[s].label, op);
            double share[64];
            uint32_t weight[64];
            cr_assert(lim <= 64);
            cr_assert_eq(an_shares(&cur, lim, share), DCH_OK);
            an_scheme_weights(&sc, weight);
            double total = 0.0;
            uint32_t wsum = 0;
            for (uint32_t i = 0; i < lim; i++) {
                total += share[i];
                wsum += weight[i];
            }
            if (wsum > 0)
                cr_assert_float_eq(total, 1.0, 1e-12, "seed %llu",
                                   (unsigned long long)seed);
            an_changes_free(&ch);
            an_ranges_free(&prev);
            prev = cur;
            memcpy(before, after, nkeys * sizeof *before);
        }
        an_ranges_free(&prev);
        an_scheme_free(&sc);
    }
    free(before);
    free(after);
    free(hash);
}

/* ---- Plans by member name --------------------------------------------------------------- */

Test(analysis, changes_add_drops_no_moves_and_extends_touching_pairs)
{
    an_changes c = {NULL, 0, 0};
    const dch_range_change in[] = {{0, 9, 1, 2},   {10, 19, 1, 2},
                                   {20, 29, 3, 3}, {30, 39, 1, 2},
                                   {40, 49, 2, 1}, {60, 69, 2, 1}};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        cr_assert_eq(an_changes_add(&c, &in[i]), DCH_OK);
    const dch_range_change want[] = {{0, 19, 1, 2}, {30, 39, 1, 2},
                                     {40, 49, 2, 1}, {60, 69, 2, 1}};
    cr_assert_eq(c.n, 4);
    for (size_t i = 0; i < 4; i++)
        cr_assert(c.v[i].lo == want[i].lo && c.v[i].hi == want[i].hi &&
                      c.v[i].from == want[i].from && c.v[i].to == want[i].to,
                  "change %zu", i);
    an_changes_free(&c);
}

/* A scheme holding a seeded choice of names[0 .. n-1] in a seeded order,
 * with weights 1 .. 3 and now and then 0. */
static void random_scheme(an_scheme *out, const an_scheme_spec *spec,
                          const char *const *names, uint32_t n, uint64_t *rng)
{
    uint32_t order[16];
    cr_assert(n <= 16);
    for (uint32_t g = 0; g < n; g++)
        order[g] = g;
    for (uint32_t g = n; g > 1; g--) {
        uint32_t j = dch__rng_below(rng, g), t = order[g - 1];
        order[g - 1] = order[j];
        order[j] = t;
    }
    cr_assert_eq(an_scheme_new(out, spec), DCH_OK);
    for (uint32_t g = 0; g < n; g++) {
        if (dch__rng_below(rng, 4) == 0)
            continue;
        uint32_t id;
        cr_assert_eq(an_scheme_add(out, names[order[g]],
                                   1 + dch__rng_below(rng, 3), &id), DCH_OK);
        if (dch__rng_below(rng, 5) == 0)
            cr_assert_eq(an_scheme_set_weight(out, id, 0), DCH_OK);
    }
}

static void assert_same_changes(const an_changes *got, const an_changes *want,
                                uint64_t seed, const char *label,
                                unsigned round)
{
    cr_assert_eq(got->n, want->n, "seed %llu scheme %s round %u: %zu vs %zu",
                 (unsigned long long)seed, label, round, got->n, want->n);
    for (size_t i = 0; i < got->n; i++)
        cr_assert(got->v[i].lo == want->v[i].lo &&
                      got->v[i].hi == want->v[i].hi &&
                      got->v[i].from == want->v[i].from &&
                      got->v[i].to == want->v[i].to,
                  "seed %llu scheme %s round %u change %zu",
                  (unsigned long long)seed, label, round, i);
}

/* The oracle is the computation the library's diff replaced: both range
 * lists renumbered by name, then dch_range_diff. Names outside the
 * numbering exercise the rules for DCH_NODE_NONE. */
Test(analysis, scheme_diff_by_name_is_the_range_diff_in_one_numbering)
{
    const uint64_t seed = test_seed(DEFAULT_SEED);
    const unsigned rounds = test_scaled(40, 6);
    static const char *const NAMES[12] = {"m00", "m01", "m02", "m03",
                                          "m04", "m05", "m06", "m07",
                                          "m08", "m09", "m10", "m11"};
    const an_name_list known = {NAMES, 9};
    an_scheme_spec specs[4] = {
        {"dch", AN_KIND_MAP, 16, 8, 0, {0}, DCH_RING_PLACE_SIPHASH},
        {"ring-8", AN_KIND_RING, 0, 0, 8, {0}, DCH_RING_PLACE_SIPHASH},
        {"ring-1", AN_KIND_RING, 0, 0, 1, {0}, DCH_RING_PLACE_SIPHASH},
        {"ketama-40", AN_KIND_RING, 0, 0, 40, {0}, DCH_RING_PLACE_KETAMA}};
    for (int s = 0; s < 4; s++) {
        fixed_key(specs[s].hash_key);
        uint64_t rng = seed ^ (uint64_t)(s + 1) << 56;
        for (unsigned round = 0; round < rounds; round++) {
            an_scheme a, b;
            random_scheme(&a, &specs[s], NAMES, 12, &rng);
            random_scheme(&b, &specs[s], NAMES, 12, &rng);
            an_changes got = {NULL, 0, 0}, want = {NULL, 0, 0};
            an_ranges ra, rb;
            cr_assert_eq(an_scheme_diff(&got, &a, &b, an_position_of, &known),
                         DCH_OK);
            cr_assert_eq(an_ranges_by_name(&a, NAMES, 9, &ra), DCH_OK);
            cr_assert_eq(an_ranges_by_name(&b, NAMES, 9, &rb), DCH_OK);
            cr_assert_eq(an_changes_diff(&want, &ra, &rb), DCH_OK);
            assert_same_changes(&got, &want, seed, specs[s].label, round);
            an_ranges_free(&ra);
            an_ranges_free(&rb);

            /* One change to a, numbered by a's own ids (NULL numbering):
             * the range diff of the object before and after it. */
            const char *name = NAMES[dch__rng_below(&rng, 12)];
            const an_op op = (an_op)dch__rng_below(&rng, 3);
            cr_assert_eq(an_scheme_ranges(&a, &ra), DCH_OK);
            uint32_t id;
            int rc = an_scheme_change(&a, op, name, dch__rng_below(&rng, 4), &id,
                                      NULL, NULL, &got);
            if (rc == DCH_OK) {
                cr_assert_eq(an_scheme_ranges(&a, &rb), DCH_OK);
                cr_assert_eq(an_changes_diff(&want, &ra, &rb), DCH_OK);
                assert_same_changes(&got, &want, seed, specs[s].label, round);
                an_ranges_free(&rb);
            }
            an_ranges_free(&ra);
            an_changes_free(&got);
            an_changes_free(&want);
            an_scheme_free(&a);
            an_scheme_free(&b);
        }
    }
}

Test(analysis, a_failed_change_leaves_the_scheme_and_the_plan_as_they_were)
{
    an_scheme_spec ring = {"ring-4", AN_KIND_RING, 0, 0, 4, {0}, DCH_RING_PLACE_SIPHASH};
    an_scheme_spec map = {"dch", AN_KIND_MAP, 8, 8, 0, {0}, DCH_RING_PLACE_SIPHASH};
    fixed_key(ring.hash_key);
    fixed_key(map.hash_key);
    an_scheme sc, m;
    cr_assert_eq(an_scheme_new(&sc, &ring), DCH_OK);
    cr_assert_eq(an_scheme_new(&m, &map), DCH_OK);
    cr_assert_eq(an_scheme_add(&sc, "a", 1, NULL), DCH_OK);
    an_changes ch = {NULL, 0, 0};
    uint32_t id = 77;
    cr_assert_eq(an_scheme_change(&sc, AN_OP_ADD, "b", 1, &id, NULL, NULL, &ch),
                 DCH_OK);
    cr_assert_eq(id, 1);
    cr_assert_gt(ch.n, 0);
    const an_changes kept = ch;
    const dch_range_change first = ch.v[0];
    an_ranges before, after;
    cr_assert_eq(an_scheme_ranges(&sc, &before), DCH_OK);

    id = 77;
    cr_assert_eq(an_scheme_change(&sc, AN_OP_REMOVE, "nobody", 0, &id, NULL,
                                  NULL, &ch),
                 DCH_ENOENT);
    cr_assert_eq(an_scheme_change(&sc, AN_OP_ADD, "a", 1, &id, NULL, NULL, &ch),
                 DCH_EEXIST);
    cr_assert_eq(an_scheme_diff(&ch, &sc, &m, NULL, NULL), DCH_EINVAL);
    cr_assert_eq(id, 77);
    cr_assert(ch.v == kept.v && ch.n == kept.n);
    cr_assert(ch.v[0].lo == first.lo && ch.v[0].hi == first.hi &&
              ch.v[0].from == first.from && ch.v[0].to == first.to);
    cr_assert_eq(an_scheme_count(&sc), 2);
    cr_assert_eq(an_scheme_ranges(&sc, &after), DCH_OK);
    cr_assert_eq(after.n, before.n);
    for (size_t i = 0; i < before.n; i++)
        cr_assert(after.v[i].lo == before.v[i].lo &&
                      after.v[i].hi == before.v[i].hi &&
                      after.v[i].owner == before.v[i].owner,
                  "range %zu", i);

    an_ranges_free(&before);
    an_ranges_free(&after);
    an_changes_free(&ch);
    an_scheme_free(&sc);
    an_scheme_free(&m);
}

/* ---- Tables ------------------------------------------------------------------------------ */

/* A table of three columns (text, number "%.2f", integer). */
static an_table *three_columns(void)
{
    const an_column cols[3] = {{"Name", "name", NULL},
                               {"Value", "value", "%.2f"},
                               {"Count", "count", NULL}};
    an_table *t = an_table_new("t", "title", cols, 3);
    cr_assert_not_null(t);
    return t;
}

/* The table's CSV text (freed by the caller); the table is freed. */
static char *csv_text(an_table *t)
{
    char dir[64], path[128];
    temp_dir(dir, sizeof dir, "analysis-test");
    snprintf(path, sizeof path, "%s/t.csv", dir);
    cr_assert_eq(an_table_write_csv(t, path), 0);
    char *s = slurp(path, NULL);
    cr_assert_not_null(s);
    an_table_free(t);
    remove_dir(dir);
    return s;
}

Test(analysis, table_csv_quotes_only_what_needs_it)
{
    an_table *t = three_columns();
    cr_assert_eq(an_table_row(t), 0);
    an_table_text(t, 0, "a,b");
    an_table_num(t, 1, 0.125);
    an_table_int(t, 2, 7);
    cr_assert_eq(an_table_row(t), 0);
    an_table_text(t, 0, "say \"hi\"");
    cr_assert_eq(an_table_num(t, 3, 1.0), -1);
    char *s = csv_text(t);
    cr_assert_str_eq(s, "name,value,count\n\"a,b\",0.125,7\n\"say \"\"hi\"\"\",,\n");
    free(s);
}

Test(analysis, table_add_fills_one_row_by_kinds)
{
    an_table *t = three_columns();
    cr_assert_eq(an_table_add(t, "tni", "x", 0.5, 3LL), 0);
    cr_assert_eq(an_table_add(t, "-n", 2.0), 0);
    cr_assert_eq(an_table_add(t, "tnii", "y", 1.0, 1LL, 2LL), -1,
                 "more kinds than columns");
    char *s = csv_text(t);
    cr_assert_str_eq(s, "name,value,count\nx,0.5,3\n,2,\n");
    free(s);
}

/* A table of a key and `n` numbers under long headers, in two groups. */
static an_table *wide_table(size_t n)
{
    an_column cols[16];
    static char head[16][48], key[16][16];
    cols[0] = (an_column){"scheme", "scheme", NULL};
    for (size_t c = 1; c <= n; c++) {
        snprintf(head[c], sizeof head[c], "a long header number %zu", c);
        snprintf(key[c], sizeof key[c], "v%zu", c);
        cols[c] = (an_column){head[c], key[c], "%.4f"};
    }
    an_table *t = an_table_new("w", "a wide table", cols, n + 1);
    cr_assert_not_null(t);
    cr_assert_eq(an_table_group(t, 1, "first group"), 0);
    cr_assert_eq(an_table_group(t, 1 + n / 2, "second group"), 0);
    cr_assert_eq(an_table_group(t, 1, "out of order"), -1);
    for (int r = 0; r < 3; r++) {
        cr_assert_eq(an_table_row(t), 0);
        an_table_text(t, 0, r == 0 ? "dch" : r == 1 ? "ring-160" : "libmemcached");
        for (size_t c = 1; c <= n; c++)
            an_table_num(t, c, 0.5 * (double)c);
    }
    return t;
}

Test(analysis, a_wide_table_prints_in_panels_that_fit_the_width)
{
    an_table *t = wide_table(10);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    an_table_print_width(t, f, 60);
    cr_assert_eq(fclose(f), 0);
    /* Every line fits; each panel repeats the key column and names its
     * groups over their columns. */
    size_t panels = 0;
    for (const char *l = text; *l;) {
        const size_t n = strcspn(l, "\n");
        cr_assert(n <= 60, "a line of %zu: %.*s", n, (int)n, l);
        panels += strncmp(l, "libmemcached", 12) == 0;
        l += n + (l[n] == '\n');
    }
    cr_assert_geq(panels, 2, "%s", text);
    cr_assert_not_null(strstr(text, "first group"), "%s", text);
    cr_assert_not_null(strstr(text, "second group"), "%s", text);
    free(text);
    /* The CSV is still the one whole table. */
    char *s = csv_text(t);
    cr_assert(strncmp(s, "scheme,v1,v2,v3,v4,v5,v6,v7,v8,v9,v10\n", 38) == 0, "%s", s);
    free(s);
}

Test(analysis, outfile_replaces_the_file_only_when_committed)
{
    char dir[64], path[128];
    temp_dir(dir, sizeof dir, "analysis-test");
    snprintf(path, sizeof path, "%s/f.txt", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("old\n", f);
    cr_assert_eq(fclose(f), 0);
    an_outfile o;
    cr_assert_eq(an_outfile_open(&o, path), 0);
    fputs("new\n", o.f);
    fflush(o.f);
    char *s = slurp(path, NULL);
    cr_assert_str_eq(s, "old\n", "the target changed before the commit");
    free(s);
    an_outfile_abort(&o);
    s = slurp(path, NULL);
    cr_assert_str_eq(s, "old\n");
    free(s);
    cr_assert_eq(an_outfile_open(&o, path), 0);
    fputs("new\n", o.f);
    cr_assert_eq(an_outfile_commit(&o), 0);
    s = slurp(path, NULL);
    cr_assert_str_eq(s, "new\n");
    free(s);
    /* Nothing else is left in the folder. */
    cr_assert_eq(dir_count(dir, false), 1);
    snprintf(path, sizeof path, "%s/no-such-dir/f.txt", dir);
    cr_assert_eq(an_outfile_open(&o, path), -1);
    remove_dir(dir);
}

Test(analysis, html_escape_writes_the_four_entities)
{
    an_buf b = {0};
    an_html_escape(&b, "<a href=\"x\">R&D</a>");
    cr_assert_str_eq(an_buf_str(&b),
                     "&lt;a href=&quot;x&quot;&gt;R&amp;D&lt;/a&gt;");
    an_buf_free(&b);
    cr_assert_str_eq(an_buf_str(&b), "");
}

/* Two hand-built placements of 3 copies: a = [0, 2^63) {0,1,2},
 * [2^63, 2^64) {0,1,3}; b = [0, 2^62) {0,1,2}, [2^62, 2^64) {4,0,3}. */
static void replica_pair(an_placement *a, an_placement *b)
{
    const uint64_t h = UINT64_C(1) << 63, q = UINT64_C(1) << 62;
    *a = (an_placement){0};
    *b = (an_placement){0};
    cr_assert_eq(an_placement_push(a, 0, h - 1, (const uint32_t[]){0, 1, 2}, 3), DCH_OK);
    cr_assert_eq(an_placement_push(a, h, UINT64_MAX, (const uint32_t[]){0, 1, 3}, 3), DCH_OK);
    cr_assert_eq(an_placement_push(b, 0, q - 1, (const uint32_t[]){0, 1, 2}, 3), DCH_OK);
    cr_assert_eq(an_placement_push(b, q, UINT64_MAX, (const uint32_t[]){4, 0, 3}, 3), DCH_OK);
}

Test(analysis, replica_figures_of_hand_built_placements)
{
    an_placement a, b;
    replica_pair(&a, &b);
    /* [2^62, 2^63): 4 and 3 are new (2 x 1/4); [2^63, 2^64): 4 (1/2). */
    double gain[6] = {0};
    const double moved = an_new_copies(&a, &b, gain, 6); /* once: the asserts
                                                              expand their
                                                              arguments twice */
    cr_assert_float_eq(moved, 1.0, 1e-12);
    cr_assert_float_eq(gain[4], 0.75, 1e-12);
    cr_assert_float_eq(gain[3], 0.25, 1e-12);
    cr_assert_eq(gain[0] + gain[1] + gain[2], 0.0);
    const double none = an_new_copies(&a, &a, NULL, 6);
    cr_assert_float_eq(none, 0.0, 1e-12);
    /* 0 was first everywhere; 4 is first on [2^62, 2^64). */
    double got[6];
    an_new_primaries(&a, &b, 0, got, 6);
    cr_assert_float_eq(got[4], 0.75, 1e-12);
    cr_assert_float_eq(got[0], 0.25, 1e-12);
    /* Reads of 0 go to the second copy, 1, everywhere. */
    an_read_load(&a, 0, 6, got);
    cr_assert_float_eq(got[1], 1.0, 1e-12);
    const bool present[6] = {true, true, true, true, false, false};
    const an_spread sp = an_spread_of(got, present, 6, 0);
    cr_assert_eq(sp.receivers, 1);
    cr_assert_float_eq(sp.max_over_mean, 3.0, 1e-12, "1 of 3 survivors takes all");
    /* With 3 zones (i mod 3), {0,1,3} puts 0 and 3 in zone 0 although
     * three zones are present: half the space. Copies 1, 1, 1/2, 1/2 over
     * a mean of 3/4. */
    double copies[6];
    const an_state_figs f = an_state_of(&a, present, 6, 3, copies);
    cr_assert_float_eq(f.violations, 0.5, 1e-12);
    cr_assert_float_eq(f.copy_max, 4.0 / 3.0, 1e-12);
    cr_assert_float_eq(f.copy_min, 2.0 / 3.0, 1e-12);
    /* With 4 zones nothing shares one. */
    const an_state_figs f4 = an_state_of(&a, present, 6, 4, copies);
    cr_assert_eq(f4.violations, 0.0);
    an_placement_free(&a);
    an_placement_free(&b);
}

/* A hand-built placement: 4 slots of loads 10, 6, 3, 1, two members of
 * weight 1, member 0 holding the first three. Λ = 20, T = 10, Lmax = 10,
 * L2 = 6; member 0 carries 19 against B = min(10 + 10, max(10, 10) + 6) =
 * 16, member 1 carries 1 against min(20, 10 + 6) = 16. The greedy
 * baseline moves member 0's hottest slot (10) to member 1, which then
 * carries 11, within its bound: one move of 10 where 3 was enough. */
Test(analysis, load_figures_and_greedy_of_a_hand_built_placement)
{
    const uint64_t load[4] = {10, 6, 3, 1};
    uint32_t owner[4] = {0, 0, 0, 1};
    const uint32_t w[2] = {1, 1};
    uint64_t c[2], h[2];
    an_load_state st = {2, w, 0, 0, 0, 0, c, h};
    an_load_state_of(&st, load, 4, owner);
    cr_assert_eq(st.total, 20);
    cr_assert_eq(st.lmax, 10);
    cr_assert_eq(st.l2, 6);
    cr_assert_eq(c[0], 19);
    cr_assert_eq(h[0], 10);
    cr_assert_eq(an_load_bound_scaled(&st, 0), 16 * 2);
    cr_assert_eq(an_load_bound_scaled(&st, 1), 16 * 2);
    cr_assert_eq(an_load_excess(&st), 3);
    cr_assert_eq(an_load_above(&st), 1);
    cr_assert_float_eq(an_load_max_ratio(&st), 1.9, 1e-12);
    cr_assert_float_eq(an_load_floor(&st), 1.0, 1e-12);
    an_greedy_result gr;
    cr_assert_eq(an_greedy_balance(&st, load, 4, owner, &gr), 0);
    cr_assert_eq(gr.moves, 1);
    cr_assert_eq(gr.moved_load, 10);
    cr_assert_arr_eq(owner, ((uint32_t[]){1, 0, 0, 1}), sizeof owner);
    cr_assert_eq(c[0], 9);
    cr_assert_eq(c[1], 11);
    cr_assert_eq(an_load_above(&st), 0);
    /* Weighted: the floor is the heaviest slot over the largest target. */
    const uint32_t w2[2] = {1, 3};
    an_load_state sw = {2, w2, 0, 0, 0, 0, c, h};
    an_load_state_of(&sw, load, 4, owner);
    cr_assert_float_eq(an_load_floor(&sw), 1.0, 1e-12); /* 10 / 15 */
    const uint64_t one[4] = {40, 0, 0, 0};
    an_load_state_of(&sw, one, 4, owner);
    cr_assert_float_eq(an_load_floor(&sw), 40.0 / 30.0, 1e-12);
}

/* The models: Zipf popularity sums to about AN_LOAD_SCALE, a slot's load
 * is its items' popularity before any drift, a drift keeps the hottest
 * ranks' popularities (it deals them out again) and moves each slot's
 * factor by a lognormal step; the normal draws have mean 0 and variance 1. */
Test(analysis, load_models_sum_their_items_and_drift_by_lognormal_steps)
{
    uint64_t rng = 3;
    double sum = 0.0, sq = 0.0;
    const int draws = 200000;
    for (int i = 0; i < draws; i++) {
        const double z = an_normal(&rng);
        sum += z;
        sq += z * z;
    }
    cr_assert(fabs(sum / draws) < 0.01 && fabs(sq / draws - 1.0) < 0.02, "mean %g var %g",
              sum / draws, sq / draws);
    const size_t items = 20000;
    const uint32_t slots = 256;
    uint32_t *slot_of = malloc(items * sizeof *slot_of);
    cr_assert_not_null(slot_of);
    for (size_t i = 0; i < items; i++)
        slot_of[i] = (uint32_t)((i * 2654435761u) % slots);
    an_load_model m;
    cr_assert_eq(an_load_model_new(&m, AN_LOAD_KEYS, 1.0, slots, items, slot_of, 9), 0);
    uint64_t load[256], want[256] = {0}, total = 0;
    for (size_t r = 0; r < items; r++) {
        want[m.slot_of[m.item_at[r]]] += m.pop[r];
        total += m.pop[r];
    }
    cr_assert(fabs((double)total / AN_LOAD_SCALE - 1.0) < 1e-3);
    an_load_model_slots(&m, load);
    cr_assert_arr_eq(load, want, sizeof load);
    uint32_t *before = malloc(items * sizeof *before);
    cr_assert_not_null(before);
    memcpy(before, m.item_at, items * sizeof *before);
    an_load_model_drift(&m);
    size_t kept = 0, moved = 0;
    for (size_t r = 0; r < items; r++) {
        if (r >= m.hot)
            cr_assert_eq(m.item_at[r], before[r], "rank %zu is not among the hottest", r);
        else
            moved += m.item_at[r] != before[r];
        for (size_t q = 0; r < m.hot && q < m.hot; q++)
            kept += m.item_at[r] == before[q];
    }
    cr_assert_eq(kept, m.hot, "the hottest items trade among themselves");
    cr_assert_gt(moved, m.hot / 2, "the hottest items were dealt out again");
    free(before);
    cr_assert_eq(m.hot, items / 100);
    double logsum = 0.0, logsq = 0.0;
    for (uint32_t s = 0; s < slots; s++) {
        logsum += log(m.mult[s]);
        logsq += log(m.mult[s]) * log(m.mult[s]);
    }
    const double sd = sqrt(logsq / slots - (logsum / slots) * (logsum / slots));
    cr_assert(sd > 0.08 && sd < 0.12, "one drift step's sigma: %g", sd);
    double members[1];
    uint32_t *zero = calloc(items, sizeof *zero);
    cr_assert_not_null(zero);
    an_load_model_members(&m, zero, 1, members);
    an_load_model_slots(&m, load);
    double slot_sum = 0.0;
    for (uint32_t s = 0; s < slots; s++)
        slot_sum += (double)load[s];
    cr_assert(fabs(members[0] / slot_sum - 1.0) < 1e-6);
    free(zero);
    an_load_model_free(&m);
}

Test(analysis, zone_walk_takes_the_first_member_of_each_new_zone)
{
    uint32_t out[3] = {9, 9, 9};
    /* Zones (mod 3) of the walk: 0, 0, 1, 1, 2. */
    cr_assert_eq(an_pick_zones((const uint32_t[]){0, 3, 1, 4, 2}, 5, false, 3, out), 3);
    cr_assert_arr_eq(out, ((uint32_t[]){0, 1, 2}), sizeof out);
    /* Two zones for three copies: an incomplete walk asks for more, a
     * complete one fills from the members it passed over. */
    cr_assert_eq(an_pick_zones((const uint32_t[]){0, 2, 1}, 3, false, 2, out), 0);
    cr_assert_eq(an_pick_zones((const uint32_t[]){0, 2, 1}, 3, true, 2, out), 3);
    cr_assert_arr_eq(out, ((uint32_t[]){0, 1, 2}), sizeof out);
    cr_assert_eq(an_pick_zones((const uint32_t[]){5, 2}, 2, true, 3, out), 2);
}

Test(analysis, every_section_need_names_another_section)
{
    cr_assert_str_eq(an_sections[0].name, "glance", "the summary comes first");
    for (size_t i = 0; i < an_sections_count; i++) {
        for (size_t k = 0; k < AN_MAX_NEEDS && an_sections[i].needs[k]; k++) {
            const char *need = an_sections[i].needs[k];
            bool found = false;
            for (size_t j = 0; j < an_sections_count; j++)
                found = found || (j != i && strcmp(an_sections[j].name, need) == 0);
            cr_assert(found, "%s needs unknown '%s'", an_sections[i].name, need);
        }
    }
}

/* ---- End to end ---------------------------------------------------------------------------- */

/* A parsed CSV: header names and rows of fields (no quoted fields expected). */
typedef struct csv {
    char *text;
    char **field;
    size_t cols;
    size_t rows; /* data rows */
} csv;

static csv read_csv(const char *dir, const char *file)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    csv c = {slurp(path, NULL), NULL, 0, 0};
    cr_assert_not_null(c.text, "missing %s", path);
    size_t lines = 0, commas = 0;
    for (char *p = c.text; *p; p++) {
        lines += *p == '\n';
        commas += *p == ',';
    }
    c.field = calloc(lines + commas + 1, sizeof *c.field);
    cr_assert_not_null(c.field);
    size_t k = 0, line_fields = 0;
    char *start = c.text;
    for (char *p = c.text; *p; p++) {
        if (*p != ',' && *p != '\n')
            continue;
        bool eol = *p == '\n';
        *p = '\0';
        c.field[k++] = start;
        line_fields++;
        start = p + 1;
        if (eol) {
            if (c.cols == 0)
                c.cols = line_fields;
            cr_assert_eq(line_fields, c.cols, "ragged row in %s", file);
            line_fields = 0;
        }
    }
    c.rows = k / c.cols - 1;
    return c;
}

static size_t csv_col(const csv *c, const char *name)
{
    for (size_t i = 0; i < c->cols; i++)
        if (strcmp(c->field[i], name) == 0)
            return i;
    cr_assert_fail("no column %s", name);
    return 0;
}

static const char *csv_at(const csv *c, size_t row, size_t col)
{
    return c->field[(row + 1) * c->cols + col];
}

static double csv_num(const csv *c, size_t row, size_t col)
{
    return strtod(csv_at(c, row, col), NULL);
}

static void free_csv(csv *c)
{
    free(c->field);
    free(c->text);
}

/* Run the program with args (NULL-terminated), stdout to out_file, stderr
 * kept (so sanitizer reports reach the log) unless quiet; returns its exit
 * status. It is started directly, without a shell, so that a valgrind run
 * traces one process per call. */
static int run_program(const char *const *args, const char *out_file,
                       bool quiet)
{
    char *argv[32];
    char program[] = DCH_ANALYSIS_PROGRAM;
    size_t n = 0;
    argv[n++] = program;
    for (; args[n - 1] != NULL && n < 31; n++)
        argv[n] = (char *)(uintptr_t)args[n - 1];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork failed");
    if (pid == 0) {
        int fd = open(out_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
            _exit(126);
        close(fd);
        if (quiet) {
            int nul = open("/dev/null", O_WRONLY);
            if (nul >= 0) {
                dup2(nul, STDERR_FILENO);
                close(nul);
            }
        }
        execv(program, argv);
        _exit(127);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st), "%s did not exit normally", program);
    return WEXITSTATUS(st);
}

static bool have_gnuplot(void)
{
    return system("gnuplot --version >/dev/null 2>&1") == 0;
}

static bool is_png(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a,
                                         '\n'};
    unsigned char buf[8] = {0};
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return false;
    size_t n = fread(buf, 1, 8, f);
    fclose(f);
    return n == 8 && memcmp(buf, sig, 8) == 0;
}

/* dir/file into buf. */
static const char *path_in(char *buf, size_t n, const char *dir, const char *file)
{
    snprintf(buf, n, "%s/%s", dir, file);
    return buf;
}

/* Does s name a file like "000_9b3f07b0b8e46b09.txt" (digits, '_', 16 hex
 * digits, ".txt"): a fuzzer's corpus or seed file, which no reader has? */
static bool names_hash_file(const char *s)
{
    for (const char *p = strchr(s, '_'); p != NULL; p = strchr(p + 1, '_')) {
        size_t hex = 0;
        while (hex < 16 && isxdigit((unsigned char)p[1 + hex]))
            hex++;
        if (hex == 16 && strncmp(p + 17, ".txt", 4) == 0 && p > s &&
            isdigit((unsigned char)p[-1]))
            return true;
    }
    return false;
}

/*
 * The maintenance section (8): a DCH drain and its undrain end where they
 * began, moving the member's share out and exactly that back; a DCH drain
 * and then the member's removal moves nothing the second time and ends as
 * a plain removal; DCH's weight 0 and back ends elsewhere (the member comes
 * back to other slots), while a ring's removal and join again under the
 * same name ends where it began. No change moves anything between other
 * members but in libmemcached, whose point counts follow the weight sum.
 */
static void check_maintenance(const char *rdir, double slot)
{
    csv m = read_csv(rdir, "maintenance.csv");
    cr_assert_eq(m.rows, AN_SCHEMES * 3);
    const size_t cs = csv_col(&m, "scheme"), cc = csv_col(&m, "maintenance"),
                 csh = csv_col(&m, "member_share"), co = csv_col(&m, "moved_out"),
                 cb = csv_col(&m, "moved_back"), cw = csv_col(&m, "moved_between_others"),
                 cf = csv_col(&m, "off_target");
    for (size_t r = 0; r < m.rows; r++) {
        const char *scheme = csv_at(&m, r, cs), *c = csv_at(&m, r, cc);
        const bool dch = strcmp(scheme, "dch") == 0;
        const double share = csv_num(&m, r, csh), out = csv_num(&m, r, co),
                     back = csv_num(&m, r, cb), off = csv_num(&m, r, cf);
        cr_assert_float_eq(out, share, 1e-12, "row %zu: the first change moves the share", r);
        if (strcmp(scheme, "libmemcached") != 0)
            cr_assert_eq(csv_num(&m, r, cw), 0.0, "row %zu moved between others", r);
        if (strcmp(c, "drain then undrain") == 0) {
            cr_assert_eq(off, 0.0, "row %zu: %s does not end where it began", r, scheme);
            cr_assert_float_eq(back, out, 1e-12, "row %zu", r);
        } else if (strcmp(c, "drain then remove") == 0) {
            cr_assert_eq(off, 0.0, "row %zu: not a plain removal", r);
            cr_assert_eq(back, 0.0, "row %zu: the removal after the drain moved", r);
        } else {
            cr_assert_str_eq(c, "weight 0 then back");
            if (dch)
                cr_assert_gt(off, slot, "row %zu: DCH came back to its own slots?", r);
            else if (strcmp(scheme, "libmemcached") != 0)
                cr_assert_eq(off, 0.0, "row %zu: %s", r, scheme);
        }
    }
    free_csv(&m);
}

/*
 * The replica section of a run grown to `nodes` and shrunk to `stop`
 * members: its two CSVs have the columns the page and programs read; DCH
 * and the ring's zone walk never put two copies in one zone when the zones
 * could hold them apart, while next-3, blind to zones, does somewhere; a
 * DCH join creates close to its R/N part of the copies and every DCH or
 * next-3 removal exactly the leaver's copies; a failed member's reads and
 * new copies reach some survivor.
 */
static void check_replicas(const char *rdir, unsigned nodes, unsigned stop)
{
    csv st = read_csv(rdir, "replica_steps.csv");
    const char *step_cols[] = {"case", "zones", "scheme", "step", "change",
                               "n_before", "n_after", "member", "new_copies",
                               "optimum", "new_copies_over_optimum",
                               "copy_max_over_mean", "copy_min_over_mean",
                               "zone_violations", "primary_changed", "promoted"};
    cr_assert_eq(st.cols, sizeof step_cols / sizeof step_cols[0]);
    for (size_t i = 0; i < st.cols; i++)
        cr_assert_str_eq(st.field[i], step_cols[i], "replica_steps.csv column %zu", i);
    /* 3 schemes, 2 zone counts; joins 4 .. nodes, removals down to stop. */
    cr_assert_eq(st.rows, 6u * ((nodes - 3) + (nodes - stop)));
    size_t cc = csv_col(&st, "case"), ch = csv_col(&st, "change"),
           cr = csv_col(&st, "new_copies_over_optimum"),
           cv = csv_col(&st, "zone_violations"), cn = csv_col(&st, "new_copies"),
           cpc = csv_col(&st, "primary_changed"), cpp = csv_col(&st, "promoted");
    double next_violations = 0.0;
    for (size_t r = 0; r < st.rows; r++) {
        const char *c = csv_at(&st, r, cc);
        const bool join = strcmp(csv_at(&st, r, ch), "join") == 0;
        const double ratio = csv_num(&st, r, cr), v = csv_num(&st, r, cv);
        cr_assert(join || strcmp(csv_at(&st, r, ch), "remove") == 0, "row %zu", r);
        cr_assert(csv_num(&st, r, cn) > 0.0, "row %zu: a change with no new copy", r);
        /* Promotions are counted apart from new copies: a part of the first
         * copies that changed hands, and none on a ring's join, where the
         * joiner (a new copy) is the only new first copy. */
        cr_assert(csv_num(&st, r, cpp) >= 0.0 &&
                      csv_num(&st, r, cpp) <= csv_num(&st, r, cpc) + 1e-12,
                  "row %zu: more promoted than changed", r);
        if (join && strncmp(c, "dch", 3) != 0)
            cr_assert_eq(csv_num(&st, r, cpp), 0.0, "row %zu (%s): a ring join promoted", r, c);
        if (strncmp(c, "next-3", 6) == 0)
            next_violations = fmax(next_violations, v);
        else
            cr_assert_eq(v, 0.0, "row %zu (%s): copies share a zone", r, c);
        if (strncmp(c, "dch", 3) == 0 && join)
            cr_assert(ratio > 0.3 && ratio < 1.25,
                      "row %zu: a DCH join made %.3f times its part", r, ratio);
        if (!join && strncmp(c, "zone walk", 9) != 0)
            cr_assert_float_eq(ratio, 1.0, 1e-9,
                               "row %zu (%s): a removal made %.6f times the "
                               "leaver's copies", r, c, ratio);
    }
    cr_assert(next_violations > 0.0, "next-3 never put two copies in one zone");
    free_csv(&st);

    csv sm = read_csv(rdir, "replicas.csv");
    cr_assert_eq(sm.rows, 6);
    size_t sc = csv_col(&sm, "case"), sv = csv_col(&sm, "zone_violations_max"),
           sx = csv_col(&sm, "copy_max_over_mean"),
           sn = csv_col(&sm, "copy_min_over_mean"),
           srr = csv_col(&sm, "read_receivers"), src = csv_col(&sm, "recopy_receivers"),
           spr = csv_col(&sm, "primary_receivers"),
           srm = csv_col(&sm, "read_max_over_mean"),
           scm = csv_col(&sm, "recopy_max_over_mean"),
           spp = csv_col(&sm, "primary_promoted_part");
    for (size_t r = 0; r < sm.rows; r++) {
        const char *c = csv_at(&sm, r, sc);
        /* next-3 walks on from the failed member: its second copy, which
         * held a copy, becomes the first; a promotion, no data moved. */
        cr_assert(csv_num(&sm, r, spp) >= 0.0 && csv_num(&sm, r, spp) <= 1.0, "%s", c);
        if (strncmp(c, "next-3", 6) == 0)
            cr_assert_float_eq(csv_num(&sm, r, spp), 1.0, 1e-12, "%s", c);
        if (strncmp(c, "next-3", 6) != 0)
            cr_assert_eq(csv_num(&sm, r, sv), 0.0, "%s", c);
        cr_assert(csv_num(&sm, r, sx) >= 1.0 - 1e-12 && csv_num(&sm, r, sn) <= 1.0 + 1e-12,
                  "%s: the fullest member below the mean", c);
        cr_assert(csv_num(&sm, r, srr) >= 1 && csv_num(&sm, r, srr) <= nodes - 1, "%s", c);
        cr_assert(csv_num(&sm, r, src) >= 1 && csv_num(&sm, r, src) <= nodes - 1, "%s", c);
        cr_assert(csv_num(&sm, r, spr) >= 1 && csv_num(&sm, r, spr) <= nodes - 1, "%s", c);
        cr_assert(csv_num(&sm, r, srm) >= 1.0 - 1e-12 && csv_num(&sm, r, scm) >= 1.0 - 1e-12,
                  "%s: the busiest survivor below the mean", c);
    }
    free_csv(&sm);
}

/*
 * The Load section (9) of a run over P slots, at N = min(100, P/8) only
 * (P/8 < 100 here): its tables have a row per load model, every epoch of
 * every scheme is in load_epochs.csv, and the balanced map keeps
 * dch/balance.h's promises on every call: no member left above its bound
 * (promise 1, no zones here), no less load moved than the report's lower
 * bound, which is exactly the load above the bounds that the section
 * computes itself, nothing moved when no member is above its bound, and no
 * slot moved away from a member within its bound (promise 2: no thrash).
 * No placement beats the floor.
 */
static void check_load(const char *rdir)
{
    csv st = read_csv(rdir, "load.csv");
    cr_assert_eq(st.rows, 9, "one row per load model");
    const size_t fl = csv_col(&st, "floor"), cnt = csv_col(&st, "count_max_over_mean"),
                 bal = csv_col(&st, "dch_max_over_mean"), ring = csv_col(&st, "ring_max_over_mean"),
                 above = csv_col(&st, "dch_above_after");
    for (size_t r = 0; r < st.rows; r++) {
        const double floor = csv_num(&st, r, fl);
        cr_assert(floor >= 1.0, "row %zu: floor %g", r, floor);
        const double least = floor * (1.0 - 1e-9); /* the CSV keeps 10 digits */
        cr_assert(csv_num(&st, r, cnt) >= least && csv_num(&st, r, bal) >= least,
                  "row %zu: a placement below the floor", r);
        cr_assert(csv_num(&st, r, ring) >= 1.0 - 1e-9, "row %zu", r);
        cr_assert_eq(csv_num(&st, r, above), 0.0, "row %zu: left above its bound", r);
    }
    free_csv(&st);

    csv ep = read_csv(rdir, "load_epochs.csv");
    cr_assert_eq(ep.rows, 9u * 4u * 31u, "9 models, 4 schemes, 31 epochs");
    const size_t cs = csv_col(&ep, "scheme"), cd = csv_col(&ep, "drifted"),
                 cm = csv_col(&ep, "moved_load"), cf = csv_col(&ep, "moved_floor"),
                 ca = csv_col(&ep, "above_after"), cb = csv_col(&ep, "above_before"),
                 ct = csv_col(&ep, "thrash"), cc = csv_col(&ep, "copies"),
                 cx = csv_col(&ep, "max_over_mean"), cfl = csv_col(&ep, "floor");
    size_t balanced = 0;
    for (size_t r = 0; r < ep.rows; r++) {
        cr_assert(csv_num(&ep, r, cx) >= csv_num(&ep, r, cfl) * (1.0 - 1e-9) ||
                      strcmp(csv_at(&ep, r, cs), "ring") == 0,
                  "row %zu: below the floor", r);
        if (strcmp(csv_at(&ep, r, cs), "balanced") != 0)
            continue;
        balanced++;
        const double drifted = csv_num(&ep, r, cd), moved = csv_num(&ep, r, cm);
        cr_assert_eq(csv_num(&ep, r, cf), drifted,
                     "row %zu: the report's lower bound is not the load above the bounds", r);
        cr_assert(moved >= drifted, "row %zu: moved %g below the lower bound %g", r, moved,
                  drifted);
        cr_assert_eq(csv_num(&ep, r, ca), 0.0, "row %zu: left above its bound", r);
        cr_assert_eq(csv_num(&ep, r, ct), 0.0, "row %zu: moved from a member within bound", r);
        if (csv_num(&ep, r, cb) == 0.0)
            cr_assert(moved == 0.0 && csv_num(&ep, r, cc) == 0.0,
                      "row %zu: moved with every member within its bound", r);
    }
    cr_assert_eq(balanced, 9u * 31u);
    free_csv(&ep);

    csv g = read_csv(rdir, "load_goals.csv");
    cr_assert_eq(g.rows, 5);
    const size_t cv = csv_col(&g, "verdict");
    for (size_t r = 0; r < g.rows; r++) {
        const char *v = csv_at(&g, r, cv);
        cr_assert(strcmp(v, "met") == 0 || strncmp(v, "missed", 6) == 0 ||
                      strcmp(v, "not measured at this size") == 0,
                  "goal %zu: %s", r, v);
    }
    /* The thrash goal is promise 2: it holds at every size. */
    cr_assert_str_eq(csv_at(&g, 3, cv), "met");
    free_csv(&g);
}

Test(analysis, end_to_end_small_scenario_writes_consistent_csvs)
{
    const unsigned nodes = 8, units = 16, slots = 16; /* as in args */
    const unsigned keys = test_scaled(20000, 2000);
    const bool charts = !UNDER_VALGRIND && have_gnuplot();
    char dir[64], out[128], rdir[128], keys_arg[32];
    temp_dir(dir, sizeof dir, "analysis-test");
    snprintf(out, sizeof out, "%s.stdout", dir);
    snprintf(rdir, sizeof rdir, "%s/report", dir);
    snprintf(keys_arg, sizeof keys_arg, "%u", keys);
    const char *args[] = {"--nodes", "8", "--units", "16", "--slots", "16",
                          "--keys", keys_arg, "--views", "4", "--shrink-to",
                          "3", "--balance-max", "20", "--seed", "7", "--out",
                          rdir, charts ? NULL : "--no-charts", NULL};
    cr_assert_eq(run_program(args, out, false), 0,
                 "dch-analysis failed on the small scenario");

    /* stdout has one table per section, and fits a terminal of
     * AN_TABLE_TEXT_WIDTH columns; the closing line names the charts' outcome
     * once, with no parentheses inside parentheses. */
    char *text = slurp(out, NULL);
    cr_assert_not_null(text);
    const char *titles[] = {"1. Growth", "2. Shrink", "3. Weights",
                            "4a. Balance", "4c. Balance", "5. Karger",
                            "6. Sampled keys", "7. Replicas", "8. Maintenance",
                            "9a. Load", "9b. Load", "9c. Load"};
    for (size_t i = 0; i < sizeof titles / sizeof titles[0]; i++)
        cr_assert_not_null(strstr(text, titles[i]), "no '%s' on stdout",
                           titles[i]);
    size_t line = 1;
    for (const char *l = text; *l; line++) {
        const size_t n = strcspn(l, "\n");
        if (strncmp(l, "Report: ", 8) != 0)
            cr_assert(n <= AN_TABLE_TEXT_WIDTH, "stdout line %zu is %zu wide: %.*s", line,
                      n, (int)n, l);
        else
            cr_assert_null(strstr(l, "(charts"), "%.*s", (int)n, l);
        l += n + (l[n] == '\n');
    }
    free(text);
    remove(out);

    /* Growth: DCH moves 1/N within one slot; no scheme moves old->old but
     * libmemcached's ketama, whose point counts follow the member count
     * (ring.h), so it is held to nothing here. */
    csv g = read_csv(rdir, "growth.csv");
    cr_assert_eq(g.rows, AN_SCHEMES * (nodes - 1));
    size_t cs = csv_col(&g, "scheme"), cn = csv_col(&g, "n"),
           cm = csv_col(&g, "moved"), co = csv_col(&g, "moved_between_old"),
           cz = csv_col(&g, "sampled_z");
    const double slot = 1.0 / (units * slots);
    size_t dch_rows = 0;
    for (size_t r = 0; r < g.rows; r++) {
        double n = csv_num(&g, r, cn), moved = csv_num(&g, r, cm);
        if (strcmp(csv_at(&g, r, cs), "libmemcached") != 0)
            cr_assert_eq(csv_num(&g, r, co), 0.0, "row %zu moved between old", r);
        cr_assert(moved > 0.0 && moved < 1.0);
        cr_assert(fabs(csv_num(&g, r, cz)) < 6.0, "row %zu sample off", r);
        if (strcmp(csv_at(&g, r, cs), "dch") == 0) {
            dch_rows++;
            cr_assert(fabs(moved - 1.0 / n) <= slot, "N %.0f moved %.10g", n,
                      moved);
        }
    }
    cr_assert_eq(dch_rows, nodes - 1);
    free_csv(&g);

    /* Shrink: exactly the leaver's share moves, to survivors only. */
    csv s = read_csv(rdir, "shrink.csv");
    cr_assert_eq(s.rows, AN_SCHEMES * (nodes - 3));
    size_t so = csv_col(&s, "moved_between_others"),
           sr = csv_col(&s, "moved_over_share"), ss = csv_col(&s, "scheme");
    for (size_t r = 0; r < s.rows; r++) {
        if (strcmp(csv_at(&s, r, ss), "libmemcached") == 0)
            continue;
        cr_assert_eq(csv_num(&s, r, so), 0.0);
        cr_assert_float_eq(csv_num(&s, r, sr), 1.0, 1e-9);
    }
    free_csv(&s);

    /* Weights: nothing moves between the other members, but for
     * libmemcached's ketama, where one weight sets every server's point
     * count: there a change between two non-zero weights moves keys between
     * the others (draining to 0 and back, among equal weights, does not). */
    csv w = read_csv(rdir, "weights.csv");
    cr_assert_eq(w.rows, AN_SCHEMES * 5);
    size_t wo = csv_col(&w, "moved_between_others"), ws = csv_col(&w, "scheme"),
           wb = csv_col(&w, "share_before"), wa = csv_col(&w, "share_after");
    for (size_t r = 0; r < w.rows; r++) {
        if (strcmp(csv_at(&w, r, ws), "libmemcached") == 0)
            cr_assert((csv_num(&w, r, wb) > 0 && csv_num(&w, r, wa) > 0) ==
                          (csv_num(&w, r, wo) > 0), "row %zu", r);
        else
            cr_assert_eq(csv_num(&w, r, wo), 0.0, "row %zu", r);
    }
    free_csv(&w);

    check_maintenance(rdir, slot);

    /* Sampled keys: no key ever moved off the exact plan. */
    csv k = read_csv(rdir, "sampled.csv");
    size_t km = csv_col(&k, "mismatched_keys");
    for (size_t r = 0; r < k.rows; r++)
        cr_assert_eq(csv_num(&k, r, km), 0.0);
    free_csv(&k);

    /* Per-unit deviation: the run's S and S = 8, three mixes each; the
     * global column is held to the map's promise, |slots - P*w/W| < 2. */
    csv u = read_csv(rdir, "units.csv");
    cr_assert_eq(u.rows, 6);
    size_t ug = csv_col(&u, "global_max"), ux = csv_col(&u, "unit_max"),
           up = csv_col(&u, "unit_p99"), um = csv_col(&u, "unit_mean"),
           ub = csv_col(&u, "share_below_0_5");
    for (size_t r = 0; r < u.rows; r++) {
        cr_assert(csv_num(&u, r, ug) < 2.0, "row %zu", r);
        cr_assert(csv_num(&u, r, ux) >= csv_num(&u, r, up), "row %zu", r);
        cr_assert(csv_num(&u, r, ux) >= csv_num(&u, r, um), "row %zu", r);
        double bands = 0.0;
        for (size_t c = ub; c < ub + 6; c++)
            bands += csv_num(&u, r, c);
        cr_assert_float_eq(bands, 1.0, 1e-9, "row %zu", r);
    }
    free_csv(&u);

    check_replicas(rdir, nodes, 3);
    check_load(rdir);

    /* The shared DCH map: every view agrees, spread exactly 1. */
    csv kg = read_csv(rdir, "karger.csv");
    size_t ks = csv_col(&kg, "scheme"), kx = csv_col(&kg, "spread_max");
    bool shared = false;
    for (size_t r = 0; r < kg.rows; r++) {
        if (strcmp(csv_at(&kg, r, ks), "dch (one shared map)") == 0) {
            shared = true;
            cr_assert_eq(csv_num(&kg, r, kx), 1.0);
        }
    }
    cr_assert(shared);
    free_csv(&kg);

    const char *files[] = {
        "growth.csv",           "shrink.csv",
        "weights.csv",          "balance_peak.csv",
        "balance_cv.csv",       "balance_points.csv",
        "karger.csv",           "history.csv",
        "sampled.csv",          "index.html",           "units.csv",
        "replicas.csv",         "replica_steps.csv",    "maintenance.csv",
        "load.csv",             "load_drift.csv",       "load_goals.csv",
        "load_epochs.csv",
        "diagram_join_dch.svg", "diagram_join_ring-160.svg",
        "diagram_join_ring-1.svg", "diagram_remove_dch.svg",
        "diagram_join_libmemcached.svg"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[256];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", rdir, files[i]);
        cr_assert(stat(path, &st) == 0 && st.st_size > 0, "missing %s",
                  files[i]);
    }
    char path[256];
    /* charts.gp is written with or without gnuplot. */
    snprintf(path, sizeof path, "%s/charts.gp", rdir);
    struct stat gst;
    cr_assert(stat(path, &gst) == 0 && gst.st_size > 0, "no charts.gp");
    snprintf(path, sizeof path, "%s/index.html", rdir);
    char *html = slurp(path, NULL);
    cr_assert_not_null(html);
    cr_assert_not_null(strstr(html, "href=\"growth.csv\""));

    /* The page opens with the summary; every group of its cells links to
     * its section, and its figures are the sections' own. */
    const char *glance = strstr(html, "<h2 id=\"glance\">");
    const char *schemes = strstr(html, "<h2 id=\"schemes\">");
    cr_assert(glance != NULL && schemes != NULL && glance < schemes,
              "the page does not open with the four properties at a glance");
    cr_assert(strstr(html, "<h2") == glance, "a section comes before the summary");
    const char *glance_end = strstr(glance, "</table>");
    cr_assert_not_null(glance_end);
    const char *sections[] = {"#balance", "#growth", "#karger", "#shrink"};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        char link[48];
        snprintf(link, sizeof link, "href=\"%s\"", sections[i]);
        const char *at = strstr(glance, link);
        cr_assert(at != NULL && at < glance_end, "the summary has no link to %s",
                  sections[i]);
    }
    csv bp = read_csv(rdir, "balance_peak.csv");
    size_t bn = csv_col(&bp, "n"), bd = csv_col(&bp, "dch");
    bool found = false;
    for (size_t r = 0; r < bp.rows; r++) {
        if (csv_num(&bp, r, bn) != nodes)
            continue;
        char cell[96];
        snprintf(cell, sizeof cell, "<a href=\"#balance\">%.4f</a>", csv_num(&bp, r, bd));
        const char *at = strstr(glance, cell);
        cr_assert(at != NULL && at < glance_end, "the summary lacks DCH's balance %s", cell);
        found = true;
    }
    cr_assert(found, "balance_peak.csv has no row for N = %u", nodes);
    free_csv(&bp);
    /* DCH's spread and load say in the table why they are what they are:
     * a row for the one map clients share, a row for a map per client. */
    const char *one_map = strstr(glance, "how DCH is used");
    const char *apart = strstr(glance, "maps built apart disagree");
    cr_assert(one_map != NULL && one_map < glance_end && apart != NULL && apart < glance_end,
              "the summary does not say why DCH's spread is what it is");
    /* Every section opens with its lead: what it measures and what it found. */
    size_t sections_seen = 0, leads = 0;
    for (const char *h = strstr(html, "<h2 id="); h != NULL; h = strstr(h + 1, "<h2 id="))
        sections_seen++;
    for (const char *l = strstr(html, "<p class=\"lead\">"); l != NULL;
         l = strstr(l + 1, "<p class=\"lead\">"))
        leads++;
    cr_assert_eq(leads, sections_seen, "%zu sections, %zu leads", sections_seen, leads);
    cr_assert_null(strstr(html, "In this run"), "figures in a paragraph instead of a table");
    /* Contents as a plain list: the titles carry their own numbers. */
    cr_assert_not_null(strstr(html, "<nav><h3>Contents</h3><ul>"));
    /* Nothing names a file the reader does not have, such as a corpus or
     * seed file of a fuzzer (a hash-like name: 000_9b3f07b0b8e46b09.txt). */
    cr_assert_null(strstr(html, "of the descriptions"));
    char *script = slurp(path_in(path, sizeof path, rdir, "charts.gp"), NULL);
    cr_assert_not_null(script);
    cr_assert(!names_hash_file(html), "the page names a file the reader has not");
    cr_assert(!names_hash_file(script), "charts.gp names a file the reader has not");
    free(script);
    snprintf(path, sizeof path, "%s/index.html", rdir);
    cr_assert_null(strstr(html, "http://"), "the page must not load anything");
    cr_assert_null(strstr(html, "https://"), "the page must not load anything");
    if (charts) {
        const char *pngs[] = {"growth_moved", "growth_cumulative",
                              "growth_donors", "growth_donation",
                              "shrink_moved", "shrink_receivers", "balance_n",
                              "balance_points", "balance_points_cv",
                              "karger_spread", "karger_load", "replicas_moved",
                              "replicas_balance", "replicas_failure",
                              "load_static_32", "load_drift", "load_moved",
                              "load_copies", "load_plan"};
        for (size_t i = 0; i < sizeof pngs / sizeof pngs[0]; i++) {
            snprintf(path, sizeof path, "%s/%s.png", rdir, pngs[i]);
            cr_assert(is_png(path), "%s is not a PNG", path);
            char img[128];
            snprintf(img, sizeof img, "src=\"%s.png\"", pngs[i]);
            cr_assert_not_null(strstr(html, img), "page lacks %s", img);
        }
    } else {
        cr_assert_not_null(strstr(html, "Charts skipped"));
    }
    free(html);
    /* Every file was written whole: no temporary file is left. */
    DIR *d = opendir(rdir);
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        cr_assert(e->d_name[0] != '.' || strcmp(e->d_name, ".") == 0 ||
                      strcmp(e->d_name, "..") == 0,
                  "a temporary file is left in the report: %s", e->d_name);
    closedir(d);
    remove(out);
    remove_dir(dir);
}

Test(analysis, bad_usage_exits_with_status_2_and_help_with_0)
{
    char dir[64], out[128];
    temp_dir(dir, sizeof dir, "analysis-test");
    snprintf(out, sizeof out, "%s/out", dir);
    const char *help[] = {"--help", NULL};
    cr_assert_eq(run_program(help, out, false), 0);
    char *text = slurp(out, NULL);
    cr_assert_not_null(text);
    cr_assert_not_null(strstr(text, "--balance-max"));
    free(text);
    const char *units[] = {"--units", "3", NULL};
    const char *nodes[] = {"--nodes=1", NULL};
    const char *shrink[] = {"--nodes", "4", "--shrink-to", "4", NULL};
    const char *bogus[] = {"--bogus", NULL};
    const char *missing[] = {"--keys", NULL};
    const char *const *bad[] = {units, nodes, shrink, bogus, missing};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(run_program(bad[i], out, true), 2, "case %zu", i);
    remove(out);
    rmdir(dir);
}

/* The number parser every program shares (tools/number): whole strings of
 * digits only, 0x hexadecimal only when asked, the range inclusive, no
 * overflow, and *out untouched on a refusal. */
Test(analysis, the_shared_number_parser_reads_whole_numbers_only)
{
    static const struct {
        const char *s;
        unsigned flags;
        uint64_t min, max;
        int ok;
        uint64_t want;
    } cases[] = {
        {"0", 0, 0, 10, 1, 0},
        {"10", 0, 0, 10, 1, 10},
        {"11", 0, 0, 10, 0, 0},
        {"4", 0, 5, 10, 0, 0},
        {"18446744073709551615", 0, 0, UINT64_MAX, 1, UINT64_MAX},
        {"18446744073709551616", 0, 0, UINT64_MAX, 0, 0},
        {"99999999999999999999999", 0, 0, UINT64_MAX, 0, 0},
        {"0x10", 0, 0, 100, 0, 0},
        {"0x10", DCH__NUMBER_HEX, 0, 100, 1, 16},
        {"0XfF", DCH__NUMBER_HEX, 0, 1000, 1, 255},
        {"0xffffffffffffffff", DCH__NUMBER_HEX, 0, UINT64_MAX, 1, UINT64_MAX},
        {"0x10000000000000000", DCH__NUMBER_HEX, 0, UINT64_MAX, 0, 0},
        {"0x", DCH__NUMBER_HEX, 0, 100, 0, 0},
        {"ff", DCH__NUMBER_HEX, 0, 1000, 0, 0},
        {"010", DCH__NUMBER_HEX, 0, 100, 1, 10},
        {"", 0, 0, 100, 0, 0},
        {NULL, 0, 0, 100, 0, 0},
        {"-1", 0, 0, 100, 0, 0},
        {"+1", 0, 0, 100, 0, 0},
        {" 1", 0, 0, 100, 0, 0},
        {"1 ", 0, 0, 100, 0, 0},
        {"1.0", 0, 0, 100, 0, 0},
        {"1e2", 0, 0, 1000, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 12345;
        const int rc = dch__number_parse(cases[i].s, cases[i].flags, cases[i].min, cases[i].max,
                                         &v);
        cr_assert_eq(rc == 0, cases[i].ok, "case %zu (%s)", i, cases[i].s ? cases[i].s : "NULL");
        cr_assert_eq(v, cases[i].ok ? cases[i].want : 12345, "case %zu", i);
    }
}

/* The hash-key parser every program shares (tools/number): exactly 2n
 * hexadecimal digits of either case, high digit first, and out untouched
 * on a refusal. */
Test(analysis, the_shared_hex_parser_reads_exactly_n_bytes)
{
    static const struct {
        const char *s;
        int ok;
        uint8_t want[4];
    } cases[] = {
        {"0123abcd", 1, {0x01, 0x23, 0xab, 0xcd}},
        {"FFfe0A9b", 1, {0xff, 0xfe, 0x0a, 0x9b}},
        {"0123abc", 0, {0}},
        {"0123abcd0", 0, {0}},
        {"0123abcg", 0, {0}},
        {"0x23abcd", 0, {0}},
        {" 123abcd", 0, {0}},
        {"", 0, {0}},
        {NULL, 0, {0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t out[4] = {7, 7, 7, 7};
        const uint8_t untouched[4] = {7, 7, 7, 7};
        cr_assert_eq(dch__hex_parse(cases[i].s, out, 4) == 0, cases[i].ok, "case %zu", i);
        cr_assert(memcmp(out, cases[i].ok ? cases[i].want : untouched, 4) == 0, "case %zu", i);
    }
}
