/* SPDX-License-Identifier: MIT */
/*
 * Tests of dch_map_diff_copies over seeded random histories with 1 .. 4
 * copies a slot, with and without zones: the reported changes equal, slot
 * by slot, what a brute-force oracle derives from the two maps' copy lists;
 * applying them to the old holders gives the new ones; every source holds
 * the slot in the old map; ranges are ascending, slot-aligned and maximal;
 * a join gains only the joiner and a removal loses only the leaver; with
 * one copy a slot the ranges are dch_map_diff's. Plus early stop, bad
 * arguments, and no allocation.
 *
 * DCH_TEST_SCALE scales the random work; DCH_TEST_SEED replaces the seed.
 */
#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXC DCH_MAP_MAX_REPLICAS

/* ---- Maps ------------------------------------------------------------- */

typedef struct shape {
    uint32_t units, spu;
} shape;

static const shape shapes[] = {{1, 1}, {1, 4}, {4, 1}, {4, 4}, {16, 8}, {8, 32}, {64, 16}};

static dch_map *new_map(shape sh, uint32_t R, const dch_allocator *a)
{
    dch_map_config cfg = map_config(sh.units, sh.spu);
    cfg.replicas = R;
    cfg.hash_key[0] = 42;
    cfg.allocator = a;
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    return m;
}

static shape random_shape(uint64_t *rng)
{
    return shapes[rng_below(rng, sizeof shapes / sizeof shapes[0])];
}

/* A map of R copies on shape sh after fewer than `most` random changes
 * (among 10 names, in `zones` zones). */
static dch_map *changed_map(shape sh, uint32_t R, uint32_t most, uint32_t zones, uint64_t *rng)
{
    dch_map *m = new_map(sh, R, NULL);
    for (uint32_t k = rng_below(rng, most); k > 0; k--)
        map_random_zoned_change(m, rng, 10, zones);
    return m;
}

/* A clone of m after 1 to 3 more random changes. */
static dch_map *clone_changed(const dch_map *m, uint32_t zones, uint64_t *rng)
{
    dch_map *c = map_clone_of(m);
    for (uint32_t k = 1 + rng_below(rng, 3); k > 0; k--)
        map_random_zoned_change(c, rng, 10, zones);
    return c;
}

/* ---- Collecting the changes ------------------------------------------- */

typedef struct change {
    uint64_t lo, hi;
    char *gain, *lose, *source; /* copies; NULL for none */
} change;

typedef struct changes {
    change *v;
    size_t n, cap;
} changes;

static int collect(const dch_copy_move *cm, void *ctx)
{
    changes *cs = ctx;
    cs->v = xgrow(cs->v, cs->n, &cs->cap, sizeof *cs->v);
    cs->v[cs->n++] = (change){cm->lo, cm->hi, xstrdup(cm->gain), xstrdup(cm->lose),
                              xstrdup(cm->source)};
    return 0;
}

static void changes_free(changes *cs)
{
    for (size_t i = 0; i < cs->n; i++) {
        free(cs->v[i].gain);
        free(cs->v[i].lose);
        free(cs->v[i].source);
    }
    free(cs->v);
    memset(cs, 0, sizeof *cs);
}

static changes diff_of(const dch_map *from, const dch_map *to)
{
    changes cs = {NULL, 0, 0};
    cr_assert_eq(dch_map_diff_copies(from, to, collect, &cs), DCH_OK);
    return cs;
}

static bool same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* ---- The oracle ------------------------------------------------------- */

/* A slot's holders by name, primary first. */
typedef struct holders {
    size_t n;
    const char *name[MAXC];
} holders;

static holders holders_of(const dch_map *m, uint32_t s)
{
    holders h;
    uint32_t ids[MAXC];
    h.n = dch_map_slot_replicas(m, s, ids, MAXC);
    for (size_t i = 0; i < h.n; i++)
        h.name[i] = dch_map_node_name(m, ids[i]);
    return h;
}

static bool holds(const holders *h, const char *name)
{
    for (size_t i = 0; i < h->n; i++)
        if (same_str(h->name[i], name))
            return true;
    return false;
}

/* The slot's changes as the header defines them, written out plainly. */
static size_t expected_changes(const holders *a, const holders *b, change *out)
{
    const char *gain[MAXC], *lose[MAXC];
    size_t ng = 0, nl = 0;
    for (size_t i = 0; i < b->n; i++)
        if (!holds(a, b->name[i]))
            gain[ng++] = b->name[i];
    for (size_t i = 0; i < a->n; i++)
        if (!holds(b, a->name[i]))
            lose[nl++] = a->name[i];
    const char *source = NULL;
    for (size_t i = 0; i < b->n && source == NULL; i++)
        if (holds(a, b->name[i]))
            source = b->name[i];
    if (source == NULL && a->n > 0)
        source = a->name[0];
    const size_t n = ng > nl ? ng : nl;
    for (size_t k = 0; k < n; k++)
        out[k] = (change){0, 0, (char *)(k < ng ? gain[k] : NULL),
                          (char *)(k < nl ? lose[k] : NULL), (char *)source};
    return n;
}

static uint64_t slot_first_hash(const dch_map *m, uint32_t s)
{
    const uint32_t P = dch_map_slot_count(m);
    unsigned bits = 0;
    while ((UINT32_C(1) << bits) < P)
        bits++;
    return bits == 0 ? 0 : (uint64_t)s << (64 - bits);
}

static uint64_t slot_last_hash(const dch_map *m, uint32_t s)
{
    return s + 1 == dch_map_slot_count(m) ? UINT64_MAX : slot_first_hash(m, s + 1) - 1;
}

/*
 * Check a diff against everything the header promises: per slot exactly the
 * oracle's changes (so applying them gives the new holders), sources that
 * hold the slot in `from`, ascending slot-aligned ranges, and maximality.
 */
static void check_diff(const dch_map *from, const dch_map *to, const changes *cs,
                       unsigned long long seed)
{
    const uint32_t P = dch_map_slot_count(from);
    /* Ranges: ascending, aligned, a range's changes consecutive. */
    for (size_t i = 0; i < cs->n; i++) {
        const change *c = &cs->v[i];
        const uint32_t s0 = dch_map_slot_of(from, c->lo), s1 = dch_map_slot_of(from, c->hi);
        cr_assert(c->lo == slot_first_hash(from, s0) && c->hi == slot_last_hash(from, s1),
                  "seed %llu: range %zu not slot-aligned", seed, i);
        if (i > 0) {
            const change *p = &cs->v[i - 1];
            cr_assert((p->lo == c->lo && p->hi == c->hi) || p->hi < c->lo,
                      "seed %llu: ranges %zu and %zu overlap or descend", seed, i - 1, i);
        }
        cr_assert(c->gain != NULL || c->lose != NULL, "seed %llu: an empty change", seed);
    }
    /* Slot by slot against the oracle, walking the ranges in step. */
    size_t at = 0;
    for (uint32_t s = 0; s < P; s++) {
        const holders a = holders_of(from, s), b = holders_of(to, s);
        change want[MAXC];
        const size_t nw = expected_changes(&a, &b, want);
        while (at < cs->n && dch_map_slot_of(from, cs->v[at].hi) < s)
            at++;
        size_t got = 0;
        for (size_t i = at; i < cs->n && dch_map_slot_of(from, cs->v[i].lo) <= s; i++, got++) {
            cr_assert(got < nw, "seed %llu slot %u: more changes than %zu", seed, s, nw);
            const change *c = &cs->v[i];
            cr_assert(same_str(c->gain, want[got].gain) && same_str(c->lose, want[got].lose) &&
                          same_str(c->source, want[got].source),
                      "seed %llu slot %u change %zu: (%s, %s, %s), want (%s, %s, %s)", seed, s,
                      got, c->gain, c->lose, c->source, want[got].gain, want[got].lose,
                      want[got].source);
        }
        cr_assert_eq(got, nw, "seed %llu slot %u: %zu changes, want %zu", seed, s, got, nw);
        /* Applying them: the old holders plus gains minus losses are the
         * new holders, and the source held the slot. */
        holders h = a;
        for (size_t k = 0; k < nw; k++) {
            const change *c = &cs->v[at + k];
            if (c->lose != NULL) {
                size_t j = 0;
                while (j < h.n && !same_str(h.name[j], c->lose))
                    j++;
                cr_assert(j < h.n, "seed %llu slot %u: %s lost a copy it lacked", seed, s,
                          c->lose);
                h.name[j] = h.name[--h.n];
            }
            if (c->gain != NULL) {
                cr_assert(!holds(&h, c->gain), "seed %llu slot %u: %s gained twice", seed, s,
                          c->gain);
                h.name[h.n++] = c->gain;
            }
            cr_assert(a.n == 0 ? c->source == NULL : holds(&a, c->source),
                      "seed %llu slot %u: source %s held nothing", seed, s, c->source);
        }
        cr_assert_eq(h.n, b.n, "seed %llu slot %u", seed, s);
        for (size_t i = 0; i < b.n; i++)
            cr_assert(holds(&h, b.name[i]), "seed %llu slot %u: %s missing", seed, s,
                      b.name[i]);
    }
    /* Maximality: two touching ranges have different change lists. A
     * range's changes are the consecutive entries with its lo. */
    for (size_t i = 0; i < cs->n;) {
        size_t j = i;
        while (j < cs->n && cs->v[j].lo == cs->v[i].lo)
            j++;
        size_t k = j;
        while (k < cs->n && cs->v[k].lo == cs->v[j].lo)
            k++;
        if (j < cs->n && cs->v[j].lo == cs->v[i].hi + 1) {
            bool same = k - j == j - i;
            for (size_t t = 0; same && t < j - i; t++)
                same = same_str(cs->v[i + t].gain, cs->v[j + t].gain) &&
                       same_str(cs->v[i + t].lose, cs->v[j + t].lose) &&
                       same_str(cs->v[i + t].source, cs->v[j + t].source);
            cr_assert(!same, "seed %llu: touching ranges at %zu and %zu have the same changes",
                      seed, i, j);
        }
        i = j;
    }
}

/* ---- Properties ------------------------------------------------------- */

Test(map_diff_copies, changes_are_the_oracles_and_turn_old_holders_into_new)
{
    const uint64_t base = test_seed(UINT64_C(0xc0b1e5000000000));
    const unsigned n = test_scaled(40, 3);
    unsigned reported = 0;
    for (replica_case c = {.base = base, .n = n}; replica_case_next(&c);) {
        const uint32_t R = c.R, zones = c.zones;
        const uint64_t seed = c.seed;
        uint64_t rng = seed;
        const shape sh = random_shape(&rng);
        dch_map *from = changed_map(sh, R, 12, zones, &rng);
        /* One case in four builds `to` apart, maybe with another R: ids
         * differ too. */
        dch_map *to = rng_below(&rng, 4) == 0
                          ? changed_map(sh, 1 + rng_below(&rng, 4), 12, zones, &rng)
                          : clone_changed(from, zones, &rng);
        changes cs = diff_of(from, to);
        check_diff(from, to, &cs, (unsigned long long)seed);
        reported += cs.n > 0;
        changes_free(&cs);
        dch_map_free(from);
        dch_map_free(to);
    }
    cr_assert_gt(reported, n, "most cases change something (%u)", reported);
}

Test(map_diff_copies, a_join_gains_only_the_joiner_and_a_removal_loses_only_the_leaver)
{
    const uint64_t base = test_seed(UINT64_C(0x701e000000000000));
    const unsigned n = test_scaled(40, 3);
    unsigned joins = 0, removals = 0;
    for (replica_case c = {.base = base, .n = n}; replica_case_next(&c);) {
        const uint32_t R = c.R, zones = c.zones;
        const uint64_t seed = c.seed;
        const unsigned long long sd = (unsigned long long)seed;
        uint64_t rng = seed;
        dch_map *from = changed_map(random_shape(&rng), R, 10, zones, &rng);

        /* A join of positive weight, in a zone or none. */
        dch_map *to = map_clone_of(from);
        char zone[8];
        snprintf(zone, sizeof zone, "z%u", rng_below(&rng, 3));
        const bool zoned = zones > 0 && rng_below(&rng, 2);
        cr_assert_eq(dch_map_add_node_in_zone(to, "joiner", zoned ? zone : NULL,
                                              1 + rng_below(&rng, 4), NULL),
                     DCH_OK);
        changes cs = diff_of(from, to);
        check_diff(from, to, &cs, sd);
        for (size_t k = 0; k < cs.n; k++)
            cr_assert(same_str(cs.v[k].gain, "joiner"),
                      "seed %llu: a join gains %s", sd, cs.v[k].gain);
        uint32_t jid;
        cr_assert_eq(dch_map_find_node(to, "joiner", &jid), DCH_OK);
        cr_assert_eq(cs.n > 0, dch_map_node_copies(to, jid) > 0,
                     "seed %llu: changes exactly when the joiner takes copies", sd);
        joins++;
        changes_free(&cs);
        dch_map_free(to);

        /* A removal of a member of positive weight, if any. */
        if (dch_map_total_weight(from) > 0) {
            uint32_t id;
            do
                id = map_random_member(from, &rng);
            while (dch_map_node_weight(from, id) == 0);
            const char *leaver = dch_map_node_name(from, id);
            to = map_clone_of(from);
            cr_assert_eq(dch_map_remove_node(to, id), DCH_OK);
            cs = diff_of(from, to);
            check_diff(from, to, &cs, sd);
            for (size_t k = 0; k < cs.n; k++)
                cr_assert(same_str(cs.v[k].lose, leaver),
                          "seed %llu: removing %s loses %s", sd, leaver, cs.v[k].lose);
            cr_assert_eq(cs.n > 0, dch_map_node_copies(from, id) > 0,
                         "seed %llu: changes exactly when the leaver held copies", sd);
            removals++;
            changes_free(&cs);
            dch_map_free(to);
        }
        dch_map_free(from);
    }
    cr_assert(joins > 0 && removals > 0);
}

/* dch_map_diff's moves, collected. */
static int collect_move(const dch_move *mv, void *ctx)
{
    changes *cs = ctx;
    const dch_copy_move cm = {mv->lo, mv->hi, mv->to, mv->from, mv->from};
    return collect(&cm, cs);
}

Test(map_diff_copies, one_copy_a_slot_gives_the_ranges_of_map_diff)
{
    const uint64_t base = test_seed(UINT64_C(0x0e1000000000000));
    const unsigned n = test_scaled(150, 10);
    for (unsigned i = 0; i < n; i++) {
        const uint64_t seed = base + i;
        uint64_t rng = seed;
        dch_map *from = changed_map(random_shape(&rng), 1, 12, 3, &rng);
        dch_map *to = clone_changed(from, 3, &rng);
        changes a = diff_of(from, to), b = {NULL, 0, 0};
        cr_assert_eq(dch_map_diff(from, to, collect_move, &b), DCH_OK);
        cr_assert_eq(a.n, b.n, "seed %llu: %zu copy changes, %zu moves",
                     (unsigned long long)seed, a.n, b.n);
        for (size_t k = 0; k < a.n; k++)
            cr_assert(a.v[k].lo == b.v[k].lo && a.v[k].hi == b.v[k].hi &&
                          same_str(a.v[k].gain, b.v[k].gain) &&
                          same_str(a.v[k].lose, b.v[k].lose) &&
                          same_str(a.v[k].source, b.v[k].source),
                      "seed %llu: change %zu differs from the move", (unsigned long long)seed,
                      k);
        changes_free(&a);
        changes_free(&b);
        dch_map_free(from);
        dch_map_free(to);
    }
}

Test(map_diff_copies, equal_maps_report_nothing_and_empty_maps_only_gains_or_losses)
{
    dch_map *m = new_map((shape){8, 8}, 3, NULL);
    const char *names[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(dch_map_add_node(m, names[i], 1, NULL), DCH_OK);
    changes cs = diff_of(m, m);
    cr_assert_eq(cs.n, 0);
    dch_map *c = map_clone_of(m);
    cs = diff_of(m, c);
    cr_assert_eq(cs.n, 0);
    dch_map_free(c);
    /* A loaded copy: still nothing. */
    size_t len;
    uint8_t *bytes = map_bytes(m, &len);
    dch_map *loaded;
    cr_assert_eq(dch_map_load(&loaded, bytes, len), DCH_OK);
    cs = diff_of(loaded, m);
    cr_assert_eq(cs.n, 0);
    dch_map_free(loaded);
    free(bytes);
    /* Every weight 0 to positive: all gains, no source; and back. */
    dch_map *empty = new_map((shape){8, 8}, 3, NULL);
    cr_assert_eq(dch_map_add_node(empty, "a", 0, NULL), DCH_OK);
    cs = diff_of(empty, m);
    check_diff(empty, m, &cs, 0);
    for (size_t k = 0; k < cs.n; k++)
        cr_assert(cs.v[k].source == NULL && cs.v[k].lose == NULL && cs.v[k].gain != NULL);
    cr_assert_geq(cs.n, 3, "three gains a range");
    changes_free(&cs);
    cs = diff_of(m, empty);
    check_diff(m, empty, &cs, 0);
    for (size_t k = 0; k < cs.n; k++)
        cr_assert(cs.v[k].gain == NULL && cs.v[k].lose != NULL && cs.v[k].source != NULL);
    changes_free(&cs);
    dch_map_free(empty);
    dch_map_free(m);
}

/* ---- Calls ------------------------------------------------------------ */

static int stop_at_second(const dch_copy_move *cm, void *ctx)
{
    (void)cm;
    return ++*(int *)ctx == 2 ? 77 : 0;
}

Test(map_diff_copies, a_non_zero_return_stops_the_walk_and_bad_pairs_are_refused)
{
    dch_map *a = new_map((shape){16, 8}, 2, NULL);
    map_add_members(a, "m", 3, NULL, 0);
    dch_map *b = map_clone_of(a);
    cr_assert_eq(dch_map_add_node(b, "new", 1, NULL), DCH_OK);
    int calls = 0;
    cr_assert_eq(dch_map_diff_copies(a, b, stop_at_second, &calls), 77);
    cr_assert_eq(calls, 2);

    /* A refused pair calls fn for nothing: calls stays 2. */
    cr_assert_eq(dch_map_diff_copies(NULL, b, stop_at_second, &calls), DCH_EINVAL);
    cr_assert_eq(dch_map_diff_copies(a, NULL, stop_at_second, &calls), DCH_EINVAL);
    cr_assert_eq(dch_map_diff_copies(a, b, NULL, NULL), DCH_EINVAL);
    /* Maps of other units, other slots per unit, another hash key: refused
     * in either order. */
    dch_map_config cfg;
    dch_map_get_config(a, &cfg);
    cfg.hash_key[15] ^= 1;
    dch_map *other[3] = {new_map((shape){32, 4}, 2, NULL), new_map((shape){16, 16}, 2, NULL)};
    cr_assert_eq(dch_map_new(&other[2], &cfg), DCH_OK);
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(dch_map_diff_copies(a, other[k], stop_at_second, &calls), DCH_EINVAL,
                     "other %d", k);
        cr_assert_eq(dch_map_diff_copies(other[k], a, stop_at_second, &calls), DCH_EINVAL,
                     "other %d", k);
        dch_map_free(other[k]);
    }
    cr_assert_eq(calls, 2, "fn called for a refused pair");
    dch_map_free(a);
    dch_map_free(b);
}

Test(map_diff_copies, nothing_is_allocated)
{
    faulty f = {0, 0, false, 0};
    const dch_allocator al = faulty_allocator(&f);
    dch_map *a = new_map((shape){64, 16}, 3, &al);
    uint64_t rng = 5;
    for (int k = 0; k < 8; k++)
        map_random_zoned_change(a, &rng, 10, 3);
    dch_map *b = map_clone_of(a);
    for (int k = 0; k < 3; k++)
        map_random_zoned_change(b, &rng, 10, 3);
    /* Every allocation now fails: the diff must not need one. */
    faulty_arm(&f, 1, true);
    changes cs = {NULL, 0, 0};
    cr_assert_eq(dch_map_diff_copies(a, b, collect, &cs), DCH_OK);
    cr_assert_eq(f.calls, 0, "the diff allocated %ld times", f.calls);
    faulty_arm(&f, 0, false);
    check_diff(a, b, &cs, 5);
    changes_free(&cs);
    dch_map_free(a);
    dch_map_free(b);
}
