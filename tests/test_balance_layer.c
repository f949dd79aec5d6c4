/* SPDX-License-Identifier: MIT */
/*
 * Load moves as stored state (dch/balance.h promise 6, dch/map_file.h
 * version 5, docs/balance.md "The layer"): the round trip of a map with
 * load moves through clone, save and load, every hostile version 5 field
 * behind a good checksum, every truncation and flipped bit; staging's
 * last step keeping the target's moves; and the counterexample of
 * docs/balance.md, "Promise 1 with zones", exactly as the document gives
 * it. The promises of a balancing call themselves are tested in
 * test_balance.c.
 */
#include <criterion/criterion.h>

#include "dch/dch.h"
#include "mapfile_oracle.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Skewed loads: 100 to 1,099 a slot, and one slot in 16 ten times as hot,
 * drawn from the seed; what makes a count-balanced map move slots. */
static uint64_t *skewed_loads(uint32_t P, uint64_t seed)
{
    uint64_t *l = xcalloc(P, sizeof *l);
    uint64_t rng = seed;
    for (uint32_t s = 0; s < P; s++)
        l[s] = (100 + rng_below(&rng, 1000)) * (rng_below(&rng, 16) == 0 ? 10 : 1);
    return l;
}

/* A map of `members` members of weights 1..3 (zones z0..z2 when zoned),
 * balanced by the skewed loads of `seed` (maybe with no load move). */
static dch_map *balanced_once(uint32_t units, uint32_t spu, uint32_t R, int zoned,
                              uint32_t members, uint64_t seed)
{
    dch_map_config cfg = map_config(units, spu);
    cfg.replicas = R;
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    for (uint32_t i = 0; i < members; i++) {
        char name[16], zone[8];
        snprintf(name, sizeof name, "n%u", i);
        snprintf(zone, sizeof zone, "z%u", i % 3);
        cr_assert_eq(dch_map_add_node_in_zone(m, name, zoned ? zone : NULL, 1 + i % 3, NULL),
                     DCH_OK);
    }
    const uint32_t P = dch_map_slot_count(m);
    uint64_t *l = skewed_loads(P, seed);
    cr_assert_eq(dch_map_balance_load(m, l, P, NULL, NULL), DCH_OK);
    free(l);
    return m;
}

/* balanced_once with the first seed from `seed` on whose loads leave at
 * least two load moves in force. */
static dch_map *balanced_map(uint32_t units, uint32_t spu, uint32_t R, int zoned,
                             uint32_t members, uint64_t seed)
{
    for (uint64_t s = seed; s < seed + 100; s++) {
        dch_map *m = balanced_once(units, spu, R, zoned, members, s);
        if (dch_map_balance_moves(m) >= 2)
            return m;
        dch_map_free(m);
    }
    cr_assert_fail("no seed from %llu moves two slots", (unsigned long long)seed);
    return NULL;
}

/* The offset of version 5's move section, its count and width. */
static size_t moves_at(const uint8_t *p, size_t len, uint32_t *count, uint32_t *width)
{
    *width = (uint32_t)le_read(p + len - 16, 4);
    *count = (uint32_t)le_read(p + len - 12, 4);
    return len - 16 - (size_t)*count * (4 + 2 * *width);
}

Test(balance_layer, maps_with_load_moves_round_trip_through_clone_save_and_load)
{
    const uint32_t shapes[][5] = {{64, 16, 1, 0, 9}, {32, 8, 3, 0, 12}, {16, 16, 2, 1, 7},
                                  {8, 8, 4, 1, 11}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const uint32_t *sh = shapes[k];
        dch_map *m = balanced_map(sh[0], sh[1], sh[2], (int)sh[3], sh[4], 40 + k);
        size_t len;
        uint8_t *bytes = map_bytes(m, &len);
        cr_assert_eq(le_read(bytes + 8, 4), DCH_MAP_FORMAT_VERSION_BALANCE, "shape %zu", k);
        dch_map *back;
        cr_assert_eq(dch_map_load(&back, bytes, len), DCH_OK, "shape %zu", k);
        dch_map *clone = map_clone_of(m);
        const dch_map *copies[] = {back, clone};
        for (int c = 0; c < 2; c++) {
            assert_same_map(m, copies[c], c ? "clone" : "load", k);
            cr_assert_eq(dch_map_fingerprint(copies[c]), dch_map_fingerprint(m));
            cr_assert_eq(dch_map_balance_moves(copies[c]), dch_map_balance_moves(m));
            cr_assert(same_map_bytes(copies[c], m), "shape %zu: the same bytes again", k);
        }
        /* The moves change routing, so the fingerprint covers them. */
        cr_assert_eq(dch_map_balance_clear(clone), DCH_OK);
        cr_assert_neq(dch_map_fingerprint(clone), dch_map_fingerprint(m));
        cr_assert_eq(dch_map_epoch(clone), dch_map_epoch(m) + 1, "a clear bumps the epoch once");
        cr_assert_eq(dch_map_balance_clear(clone), DCH_OK);
        cr_assert_eq(dch_map_epoch(clone), dch_map_epoch(m) + 1, "clearing nothing changes nothing");
        uint8_t *cleared = map_bytes(clone, &len);
        cr_assert_lt(le_read(cleared + 8, 4), DCH_MAP_FORMAT_VERSION_BALANCE,
                     "with no move left the map is written in its old version");
        free(cleared);
        dch_map_free(back);
        dch_map_free(clone);
        free(bytes);
        dch_map_free(m);
    }
}

/* Load p after `edit` and a fixed checksum: DCH_ECORRUPT, *out untouched. */
static void expect_refused(const uint8_t *bytes, size_t len, void (*edit)(uint8_t *, size_t),
                           const char *what)
{
    uint8_t *p = xmalloc(len);
    memcpy(p, bytes, len);
    edit(p, len);
    fix_checksum(p, len);
    expect_load(p, len, DCH_ECORRUPT, what, 0);
    free(p);
}

static void zero_count(uint8_t *p, size_t len)
{
    le_write(p + len - 12, 0, 4);
}

static void zero_width(uint8_t *p, size_t len)
{
    le_write(p + len - 16, 0, 4);
}

static void copy_unowned(uint8_t *p, size_t len)
{
    uint32_t n, w;
    const size_t at = moves_at(p, len, &n, &w);
    le_write(p + at + 4, 0xFFFF, 2);
}

static void slot_past_p(uint8_t *p, size_t len)
{
    uint32_t n, w;
    const size_t at = moves_at(p, len, &n, &w);
    le_write(p + at + (size_t)(n - 1) * (4 + 2 * w), 1u << 24, 4);
}

static void slots_out_of_order(uint8_t *p, size_t len)
{
    uint32_t n, w;
    const size_t at = moves_at(p, len, &n, &w);
    const uint64_t first = le_read(p + at, 4);
    le_write(p + at + 4 + 2 * w, first, 4); /* the second slot repeats the first */
}

static void repeated_copy(uint8_t *p, size_t len)
{
    uint32_t n, w;
    const size_t at = moves_at(p, len, &n, &w);
    le_write(p + at + 6, le_read(p + at + 4, 2), 2);
}

Test(balance_layer, hostile_version_5_fields_behind_a_good_checksum_are_refused)
{
    dch_map *one = balanced_map(64, 16, 1, 0, 9, 7);
    dch_map *rep = balanced_map(32, 8, 3, 0, 12, 8);
    size_t len1, len3;
    uint8_t *b1 = map_bytes(one, &len1), *b3 = map_bytes(rep, &len3);
    uint32_t n, w;
    moves_at(b1, len1, &n, &w);
    cr_assert(n >= 2 && w == 1, "one copy a slot: a width of 1, several moves");
    moves_at(b3, len3, &n, &w);
    cr_assert(n >= 2 && w == 3, "R = 3: a width of 3, several moves");
    const uint8_t *files[] = {b1, b3};
    const size_t lens[] = {len1, len3};
    for (int f = 0; f < 2; f++) {
        expect_refused(files[f], lens[f], zero_count, "no move");
        expect_refused(files[f], lens[f], zero_width, "a width of 0");
        expect_refused(files[f], lens[f], copy_unowned, "a copy of 65535");
        expect_refused(files[f], lens[f], slot_past_p, "a slot past P");
        expect_refused(files[f], lens[f], slots_out_of_order, "slots not ascending");
    }
    expect_refused(b3, len3, repeated_copy, "a member twice in one slot");
    free(b1);
    free(b3);
    dch_map_free(one);
    dch_map_free(rep);
}

/* The first move's copies replaced by what the table below gives its slot
 * (the base: no drain), or its primary by a member of weight 0. */
static dch_map *g_map;
static uint32_t g_id;

static void move_equals_below(uint8_t *p, size_t len)
{
    uint32_t n, w;
    const size_t at = moves_at(p, len, &n, &w);
    const uint32_t slot = (uint32_t)le_read(p + at, 4);
    uint32_t ids[DCH_MAP_MAX_REPLICAS];
    cr_assert_eq(dch_map_base_replicas(g_map, slot, ids, DCH_MAP_MAX_REPLICAS), w);
    for (uint32_t k = 0; k < w; k++)
        le_write(p + at + 4 + 2 * k, ids[k], 2);
}

static void primary_of_weight_0(uint8_t *p, size_t len)
{
    uint32_t n, w;
    const size_t at = moves_at(p, len, &n, &w);
    le_write(p + at + 4, g_id, 2);
}

Test(balance_layer, a_move_no_call_could_have_left_is_refused)
{
    for (uint32_t R = 1; R <= 3; R += 2) {
        g_map = balanced_map(32, 16, R, 0, 10, 9 + R);
        cr_assert_eq(dch_map_add_node(g_map, "idle", 0, &g_id), DCH_OK);
        cr_assert_gt(dch_map_balance_moves(g_map), 0, "a member of weight 0 keeps the moves");
        size_t len;
        uint8_t *bytes = map_bytes(g_map, &len);
        expect_refused(bytes, len, move_equals_below, "a move equal to its below");
        expect_refused(bytes, len, primary_of_weight_0, "a member of weight 0 as primary");
        free(bytes);
        dch_map_free(g_map);
    }
}

Test(balance_layer, every_truncation_and_flipped_bit_of_a_version_5_file_is_rejected)
{
    dch_map *m = balanced_map(4, 4, 2, 1, 5, 3);
    size_t len;
    uint8_t *bytes = map_bytes(m, &len);
    expect_damage_rejected(bytes, len);
    free(bytes);
    dch_map_free(m);
}

Test(balance_layer, drains_and_load_moves_share_the_layer_in_a_file)
{
    dch_map *m = balanced_map(32, 8, 3, 1, 12, 21);
    /* A drain of a member no move names keeps the moves whose slots it
     * leaves alone; the file then holds both. */
    uint32_t id = 0;
    while (dch_map_node_drained(m, id) == 0 && id < 12) {
        if (dch_map_drain(m, id, DCH_DRAIN_PRIMARY) == DCH_OK && dch_map_balance_moves(m) > 0)
            break;
        cr_assert_eq(dch_map_undrain(m, id), DCH_OK);
        id++;
    }
    cr_assert_lt(id, 12, "some drain keeps a load move");
    size_t len;
    uint8_t *bytes = map_bytes(m, &len);
    dch_map *back;
    cr_assert_eq(dch_map_load(&back, bytes, len), DCH_OK);
    assert_same_map(m, back, "drain and moves", id);
    cr_assert_eq(dch_map_fingerprint(back), dch_map_fingerprint(m));
    cr_assert_eq(dch_map_node_drained(back, id), DCH_DRAIN_PRIMARY);
    free(bytes);
    dch_map_free(back);
    dch_map_free(m);
}

Test(balance_layer, staging_ends_on_the_target_with_its_load_moves)
{
    dch_map *from = map_shaped(64, 16);
    map_add_members(from, "n", 6, NULL, 0);
    dch_map *target = map_clone_of(from);
    cr_assert_eq(dch_map_add_node(target, "n6", 1, NULL), DCH_OK);
    const uint32_t P = dch_map_slot_count(target);
    uint64_t *l = skewed_loads(P, 77);
    cr_assert_eq(dch_map_balance_load(target, l, P, NULL, NULL), DCH_OK);
    cr_assert_gt(dch_map_balance_moves(target), 0);
    dch_map *cur = map_clone_of(from);
    for (int step = 0; step < 100000; step++) {
        dch_map *next;
        const int rc = dch_map_stage_next(&next, cur, target, 32);
        cr_assert_eq(rc, DCH_OK, "step %d", step);
        dch_map_free(cur);
        cur = next;
        if (!dch_map_in_transition(cur, NULL))
            break;
    }
    cr_assert_eq(dch_map_fingerprint(cur), dch_map_fingerprint(target),
                 "the last step is the target, its load moves included");
    cr_assert_eq(dch_map_balance_moves(cur), dch_map_balance_moves(target));
    free(l);
    dch_map_free(cur);
    dch_map_free(target);
    dch_map_free(from);
}

Test(balance_layer, the_zone_counterexample_leaves_c_above_its_bound_as_documented)
{
    dch_map_config cfg = map_config(1, 4);
    cfg.replicas = 2;
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    const char *names[] = {"a", "b", "c", "d"}, *zones[] = {"B", "B", "A", "B"};
    const uint32_t weights[] = {3, 1, 3, 3};
    for (uint32_t i = 0; i < 4; i++)
        cr_assert_eq(dch_map_add_node_in_zone(m, names[i], zones[i], weights[i], NULL), DCH_OK);
    /* The copies docs/balance.md gives, primary first: c = 2, a = 0, d = 3. */
    const uint32_t want[4][2] = {{2, 0}, {3, 2}, {2, 3}, {0, 2}};
    for (uint32_t s = 0; s < 4; s++) {
        uint32_t ids[2];
        cr_assert_eq(dch_map_slot_replicas(m, s, ids, 2), 2);
        cr_assert(ids[0] == want[s][0] && ids[1] == want[s][1], "slot %u", s);
    }
    const uint64_t loads[4] = {5, 5, 5, 0};
    const uint64_t epoch = dch_map_epoch(m);
    dch_balance_left left[4];
    dch_balance_report r = {.left = left, .left_cap = 4};
    cr_assert_eq(dch_map_balance_load(m, loads, 4, NULL, &r), DCH_OK);
    cr_assert_eq(r.above_before, 1);
    cr_assert_eq(r.above_after, 1);
    cr_assert_eq(r.moves + r.promotions, 0, "no move keeps promise 2");
    cr_assert_eq(dch_map_epoch(m), epoch, "nothing changed");
    cr_assert_eq(r.left_count, 1);
    cr_assert_eq(left[0].id, 2, "c is left");
    cr_assert_eq(left[0].why, DCH_BALANCE_LEFT_PLACEMENT);
    cr_assert_eq(left[0].load, 10);
    cr_assert_eq(left[0].bound, 9, "floor(min(4.5 + 5, max(4.5, 5) + 5))");
    cr_assert_eq(r.moved_load_floor, 1, "ceil(10 - 9.5)");
    dch_map_free(m);
}

/*
 * The version 5 seeds of the map-load fuzzer's corpus are exactly what the
 * library writes for these maps: one copy a slot, and R = 3 in zones with a
 * PRIMARY drain beside the moves. DCH_WRITE_SEEDS=1 (re)writes them;
 * otherwise a format change that forgets the corpus fails here.
 */
static dch_map *seed_map(int k)
{
    if (k == 0)
        return balanced_map(8, 8, 1, 0, 5, 1);
    dch_map *m = balanced_map(8, 4, 3, 1, 7, 2);
    for (uint32_t id = 0; id < 7; id++) {
        cr_assert_eq(dch_map_drain(m, id, DCH_DRAIN_PRIMARY), DCH_OK);
        if (dch_map_balance_moves(m) > 0)
            return m;
        cr_assert_eq(dch_map_undrain(m, id), DCH_OK);
    }
    cr_assert_fail("some drain keeps a load move");
    return NULL;
}

Test(balance_layer, fuzz_seeds_are_what_the_library_writes)
{
    const char *names[] = {"v5-balanced-r1", "v5-balanced-r3-drained"};
    for (int k = 0; k < 2; k++) {
        dch_map *m = seed_map(k);
        free(expect_map_load_seed(m, names[k], 5, NULL));
        dch_map_free(m);
    }
}
