/* SPDX-License-Identifier: MIT */
/*
 * Tests of map files for maps with replicas or zones (format version 3):
 * round trips of random histories for R = 1 .. 4 with and without zones,
 * equal in every getter and byte for byte on a second save; the layout
 * against an independent reader and writer that follow map_file.h's
 * description (libsodium's SipHash for the checksum and the fingerprint);
 * hostile copy tables, zones and counts behind a valid checksum; every
 * truncation, every flipped bit, allocation failure at every point; and the
 * version 3 seeds of the fuzz corpus, which are exactly what the library
 * writes for the maps built here.
 *
 * DCH_TEST_SCALE scales the random work; DCH_TEST_SEED replaces the seed.
 * DCH_WRITE_SEEDS=1 rewrites the corpus seeds instead of checking them.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include "dch/dch.h"
#include "mapfile_oracle.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Random maps ------------------------------------------------------ */

typedef struct shape {
    uint32_t units, spu;
} shape;

static const shape shapes[] = {{1, 1}, {1, 4}, {2, 2}, {4, 4}, {8, 8}, {16, 4}, {4, 32}, {32, 16}};

/* A map with `R` copies a slot built by a random history of adds (in up to
 * `zones` zones), removals and weight changes, weight 0 included; `big`
 * gives it the default 65,536 slots. */
static dch_map *random_map_sized(uint64_t *rng, uint32_t R, uint32_t zones, bool big)
{
    const shape sh = big ? (shape){1024, 64}
                         : shapes[rng_below(rng, sizeof shapes / sizeof shapes[0])];
    dch_map_config cfg = map_config(sh.units, sh.spu);
    cfg.replicas = R;
    for (int i = 0; i < 16; i++)
        cfg.hash_key[i] = (uint8_t)rng_next(rng);
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    const uint32_t ops = rng_below(rng, 24);
    for (uint32_t op = 0; op < ops; op++)
        map_random_zoned_change(m, rng, 12, zones);
    return m;
}

static dch_map *random_map(uint64_t *rng, uint32_t R, uint32_t zones)
{
    return random_map_sized(rng, R, zones, false);
}

/* ---- Round trips ------------------------------------------------------ */

Test(map_file_replicas, random_histories_round_trip_in_every_getter)
{
    const uint64_t base = test_seed(UINT64_C(0x3e9100000000000));
    const unsigned n = test_scaled(60, 4);
    unsigned v1 = 0, v3 = 0, raw = 0, runs = 0, weightless = 0;
    for (replica_case c = {.base = base, .n = n}; replica_case_next(&c);) {
        const uint32_t R = c.R, zones = c.zones;
        const unsigned i = c.i;
        const uint64_t seed = c.seed;
        const unsigned long long sd = (unsigned long long)seed;
        uint64_t rng = seed;
        dch_map *m = random_map_sized(&rng, R, zones, i == 0);
        size_t len;
        uint8_t *bytes = map_bytes(m, &len);
        bool zoned = false;
        for (uint32_t id = 0; id < dch_map_id_limit(m); id++)
            zoned |= dch_map_node_zone(m, id) != NULL;
        const uint32_t version = (uint32_t)le_read(bytes + 8, 4);
        cr_assert_eq(version, R == 1 && !zoned ? 1u : 3u,
                     "seed %llu: R %u, zones %d: version %u", sd, R, zoned, version);
        v1 += version == 1;
        v3 += version == 3;
        if (version == 3) {
            doc d;
            doc_parse(bytes, len, &d);
            raw += d.encoding == 0;
            runs += d.encoding == 1;
            weightless += d.copies == 0;
            doc_free(&d);
        }
        dch_map *back = expect_round_trip(m, bytes, len, sd);
        /* A loaded map keeps changing like the original. */
        uint64_t r1 = seed ^ 0x5a5a, r2 = r1;
        for (int k = 0; k < 3; k++) {
            map_random_zoned_change(m, &r1, 12, zones);
            map_random_zoned_change(back, &r2, 12, zones);
        }
        assert_same_map(m, back, "after changes", sd);
        dch_map_free(back);
        free(bytes);
        dch_map_free(m);
    }
    cr_assert(v1 > 0 && v3 > 0 && raw > 0 && runs > 0 && weightless > 0,
              "cases: v1 %u, v3 %u, raw %u, runs %u, no weight %u", v1, v3, raw, runs,
              weightless);
}

static dch_map *layout_map(uint64_t *rng, unsigned i)
{
    (void)i;
    const uint32_t R = 2 + rng_below(rng, 3);
    return random_map(rng, R, rng_below(rng, 4));
}

Test(map_file_replicas, bytes_follow_the_documented_layout)
{
    expect_layout_of_random_maps(layout_map, test_seed(UINT64_C(0x1a3000000000000)),
                                 test_scaled(120, 8), 3);
}

/* ---- Fixed maps ------------------------------------------------------- */

/* 16 x 4 slots, R copies; a, b in zone "east", c, d in "west", e in none,
 * f of weight 0 in "east"; with `zones` 0, the same members in no zone. */
static dch_map *zones_map(uint32_t R, int zones)
{
    dch_map_config cfg = map_config(16, 4);
    cfg.replicas = R;
    for (int i = 0; i < 16; i++)
        cfg.hash_key[i] = (uint8_t)(7 * i + 3);
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    const struct {
        const char *name, *zone;
        uint32_t w;
    } add[] = {{"a", "east", 1}, {"b", "east", 2}, {"c", "west", 1},
               {"d", "west", 1}, {"e", NULL, 1},   {"f", "east", 0}};
    for (size_t i = 0; i < sizeof add / sizeof add[0]; i++)
        cr_assert_eq(dch_map_add_node_in_zone(m, add[i].name, zones ? add[i].zone : NULL,
                                              add[i].w, NULL),
                     DCH_OK);
    return m;
}

static dch_map *zoned_map(uint32_t R)
{
    return zones_map(R, 1);
}

Test(map_file_replicas, fingerprint_covers_copies_and_zones_only_with_replicas)
{
    /* R = 1: zones are not digested, so a map with zones and the same map
     * without them have one fingerprint, the version 1 definition's. */
    dch_map *z1 = zoned_map(1);
    dch_map_config cfg;
    dch_map_get_config(z1, &cfg);
    dch_map *p1;
    cr_assert_eq(dch_map_new(&p1, &cfg), DCH_OK);
    const char *names[] = {"a", "b", "c", "d", "e", "f"};
    const uint32_t w[] = {1, 2, 1, 1, 1, 0};
    for (int i = 0; i < 6; i++)
        cr_assert_eq(dch_map_add_node(p1, names[i], w[i], NULL), DCH_OK);
    cr_assert_eq(dch_map_fingerprint(z1), dch_map_fingerprint(p1));
    size_t len;
    uint8_t *bytes = map_bytes(z1, &len);
    cr_assert_eq(le_read(bytes + 8, 4), 3, "zones alone make a version 3 file");
    free(bytes);
    bytes = map_bytes(p1, &len);
    cr_assert_eq(le_read(bytes + 8, 4), 1);
    free(bytes);

    /* R = 2: the fingerprint follows the definition, and moves with a zone
     * name, a copy swapped with another position, and R itself (R = 3 over
     * the same members). */
    dch_map *m = zoned_map(2);
    bytes = map_bytes(m, &len);
    doc d;
    doc_parse(bytes, len, &d);
    const uint64_t fp = dch_map_fingerprint(m);
    cr_assert_eq(fp, doc_fingerprint(&d));
    cr_assert_neq(fp, dch_map_fingerprint(z1));
    doc e = d;
    e.recs = malloc((d.n + 2) * sizeof *e.recs);
    e.table = malloc((size_t)d.P * d.copies * sizeof *e.table);
    for (int k = 0; k < 2; k++) {
        memcpy(e.recs, d.recs, (d.n + 2) * sizeof *e.recs);
        memcpy(e.table, d.table, (size_t)d.P * d.copies * sizeof *e.table);
        if (k == 0) { /* "west" renamed "wesT" for both its members */
            for (uint32_t i = 0; i < e.n; i++)
                if (e.recs[i].zlen == 4 && memcmp(e.recs[i].zone, "west", 4) == 0)
                    e.recs[i].zone[3] = 'T';
        } else { /* two slots trade primary and second copy */
            for (uint32_t s = 0; s < 2; s++) {
                const uint16_t t = e.table[s * 2];
                e.table[s * 2] = e.table[s * 2 + 1];
                e.table[s * 2 + 1] = t;
            }
            doc_recount(&e);
        }
        size_t blen;
        uint8_t *b = doc_write(&e, -1, &blen);
        dch_map *x = NULL;
        cr_assert_eq(dch_map_load(&x, b, blen), DCH_OK, "variant %d", k);
        cr_assert_neq(dch_map_fingerprint(x), fp, "variant %d", k);
        cr_assert_eq(dch_map_fingerprint(x), doc_fingerprint(&e), "variant %d", k);
        dch_map_free(x);
        free(b);
    }
    free(e.recs);
    free(e.table);
    dch_map *m3 = zoned_map(3);
    cr_assert_neq(dch_map_fingerprint(m3), fp);
    dch_map_free(m3);
    doc_free(&d);
    free(bytes);
    dch_map_free(m);
    dch_map_free(z1);
    dch_map_free(p1);
}

/* ---- Hostile files ---------------------------------------------------- */

/*
 * Each breaker damages one thing in a parsed version 3 file of zoned_map(3)
 * (R = 3, five members of positive weight in zones east, west and none);
 * the stored counts are then recomputed from the table (unless the breaker
 * is about the counts), so that the damage alone must be rejected.
 */

static uint32_t id_named(doc *d, const char *name)
{
    for (uint32_t i = 0; i < d->n; i++)
        if (d->recs[i].len == strlen(name) && memcmp(d->recs[i].name, name, d->recs[i].len) == 0)
            return d->recs[i].id;
    cr_assert_fail("no member %s", name);
    return 0;
}

static bool in_slot(const doc *d, uint32_t s, uint32_t id)
{
    for (uint32_t k = 0; k < d->copies; k++)
        if (d->table[s * d->copies + k] == id)
            return true;
    return false;
}

static void br_duplicate(doc *d) { d->table[5 * d->copies + 1] = d->table[5 * d->copies]; }
static void br_weightless(doc *d) { d->table[7 * d->copies + 2] = (uint16_t)id_named(d, "f"); }
static void br_non_member(doc *d) { d->table[3 * d->copies + 1] = 40; }
static void br_unowned_copy(doc *d) { d->table[9 * d->copies + d->copies - 1] = 0xFFFF; }
static void br_unowned_primary(doc *d) { d->table[0] = 0xFFFF; }
static void br_r_lower(doc *d) { d->R = 2; }
static void br_r_higher(doc *d) { d->R = 4; }
static void br_r_zero(doc *d) { d->R = 0; }
static void br_r_nine(doc *d) { d->R = 9; }
static void br_zone_rule(doc *d)
{
    /* A slot whose copies span three zones gets a second east member
     * instead of its west one: two zones where three are owed. */
    const uint32_t a = id_named(d, "a"), b = id_named(d, "b");
    for (uint32_t s = 0; s < d->P; s++) {
        if (in_slot(d, s, a) == in_slot(d, s, b))
            continue;
        const uint32_t other = in_slot(d, s, a) ? b : a;
        for (uint32_t k = 0; k < d->copies; k++) {
            const rec *r = doc_rec(d, d->table[s * d->copies + k]);
            if (r->zlen == 4 && memcmp(r->zone, "west", 4) == 0) {
                d->table[s * d->copies + k] = (uint16_t)other;
                return;
            }
        }
    }
    cr_assert_fail("no slot to break the zone rule in");
}
static void br_zone_control(doc *d) { d->recs[2].zone[1] = 0x01; }
static void br_zone_del(doc *d) { d->recs[0].zone[0] = 0x7f; }
static void br_zone_nul(doc *d) { d->recs[1].zone[2] = 0; }
static void br_zone_of_nobody(doc *d)
{
    /* Zones on R = 1 with no zone left: the writer's version 1 map. */
    for (uint32_t i = 0; i < d->n; i++)
        d->recs[i].zlen = 0;
    d->R = 1;
    d->copies = 1;
    uint16_t *t = malloc(d->P * sizeof *t);
    for (uint32_t s = 0; s < d->P; s++)
        t[s] = d->table[s * 3];
    free(d->table);
    d->table = t;
}
static void br_primaries_out_of_bound(doc *d)
{
    /* b (weight 2 of 6 in 64 slots: share 21.3) takes the primary position
     * in every slot it holds, which leaves the copy counts as they are. */
    const uint32_t b = id_named(d, "b");
    for (uint32_t s = 0; s < d->P; s++)
        for (uint32_t k = 1; k < d->copies; k++)
            if (d->table[s * d->copies + k] == b) {
                d->table[s * d->copies + k] = d->table[s * d->copies];
                d->table[s * d->copies] = (uint16_t)b;
            }
}
static void br_copies_count(doc *d) { d->recs[1].copies++; }
static void br_slots_count(doc *d) { d->recs[1].slots--; }

static const doc_breaker breakers[] = {
    {"a member twice in a slot", br_duplicate, true},
    {"a member of weight 0 in a slot", br_weightless, true},
    {"a non-member in a slot", br_non_member, true},
    {"a slot one copy short (65535 last)", br_unowned_copy, true},
    {"an unowned primary", br_unowned_primary, true},
    {"R lowered: more entries than copies", br_r_lower, false},
    {"R raised: fewer entries than copies", br_r_higher, false},
    {"R of 0", br_r_zero, false},
    {"R of 9", br_r_nine, false},
    {"copies in fewer zones than owed", br_zone_rule, true},
    {"a control byte in a zone", br_zone_control, false},
    {"0x7f in a zone", br_zone_del, false},
    {"a NUL in a zone", br_zone_nul, false},
    {"version 3 with R = 1 and no zone", br_zone_of_nobody, true},
    {"stored copy count off by one", br_copies_count, false},
    {"stored slot count off by one", br_slots_count, false},
};

Test(map_file_replicas, hostile_copy_tables_and_zones_are_rejected)
{
    dch_map *m = zoned_map(3);
    size_t len;
    uint8_t *bytes = map_bytes(m, &len);
    doc parts;
    doc_parse(bytes, len, &parts);
    cr_assert(parts.version == 3 && parts.copies == 3);
    doc_free(&parts);
    expect_breakers_rejected(bytes, len, breakers, sizeof breakers / sizeof breakers[0]);
    /* The harness itself: parts that are still a map, rewritten, load: a
     * zone renamed ("East" is another zone, with one member), and R = 1
     * with one zone kept (a map version 1 cannot hold). */
    for (int variant = 0; variant < 2; variant++) {
        for (int enc = 0; enc < 2; enc++) {
            doc d;
            doc_parse(bytes, len, &d);
            if (variant == 0) {
                d.recs[0].zone[0] = 'E';
            } else {
                const uint8_t zone[3] = {'z', 'z', 'z'};
                br_zone_of_nobody(&d);
                doc_recount(&d);
                d.recs[3].zlen = 3;
                memcpy(d.recs[3].zone, zone, 3);
            }
            size_t blen;
            uint8_t *b = doc_write(&d, enc, &blen);
            expect_load(b, blen, DCH_OK, variant ? "R = 1 with a zone" : "a renamed zone", enc);
            free(b);
            doc_free(&d);
        }
    }
    free(bytes);
    dch_map_free(m);
}

Test(map_file_replicas, malformed_tuple_runs_are_rejected)
{
    /* Two members, "0" and "1", R = 2 in 8 x 8 slots: every slot holds
     * both, so the table is two runs at most (0, 1) and (1, 0), or one. */
    dch_map *m = map_with_replicas(8, 8, 2);
    map_add_members(m, "", 2, NULL, 0);
    size_t len;
    uint8_t *bytes = map_bytes(m, &len);
    doc d;
    doc_parse(bytes, len, &d);
    cr_assert_eq(d.encoding, 1, "runs");
    const size_t table = 60 + 2 * (15 + 1 + 1);
    cr_assert_eq(bytes[table], 1);
    const uint32_t runs = (uint32_t)le_read(bytes + table + 1, 4);
    expect_run_table_rejected(bytes, len, table, 2);
    uint8_t *p = malloc(len + 16);
    /* A first run split in two equal tuples. */
    const size_t first = table + 5;
    cr_assert(bytes[first + 2] > 1 && bytes[first + 2] < 0x80, "a first run of 2 .. 127 slots");
    memcpy(p, bytes, first);
    size_t at = first;
    for (int half = 0; half < 2; half++) {
        p[at++] = bytes[first];
        p[at++] = bytes[first + 1];
        p[at++] = half == 0 ? 1 : (uint8_t)(bytes[first + 2] - 1);
    }
    memcpy(p + at, bytes + first + 3, len - 8 - (first + 3));
    at += len - 8 - (first + 3);
    le_write(p + table + 1, runs + 1, 4);
    le_write(p + 16, at + 8, 8);
    fix_checksum(p, at + 8);
    expect_load(p, at + 8, DCH_ECORRUPT, "adjacent runs of one tuple", 0);
    free(p);
    doc_free(&d);
    free(bytes);
    dch_map_free(m);
}

Test(map_file_replicas, every_truncation_and_flipped_bit_is_rejected)
{
    for (uint32_t R = 2; R <= 3; R++) {
        dch_map *m = zoned_map(R);
        size_t len;
        uint8_t *bytes = map_bytes(m, &len);
        expect_damage_rejected(bytes, len);
        free(bytes);
        dch_map_free(m);
    }
}

/*
 * Random damage behind a repaired length and checksum: the load fails
 * cleanly, or gives a map that the documented reader agrees with.
 */
static dch_map *damage_map(uint64_t *rng)
{
    return random_map(rng, 2 + rng_below(rng, 3), 3);
}

Test(map_file_replicas, random_damage_behind_a_good_checksum_never_yields_a_bad_map)
{
    const damage_plan plan = {"random damage (version 3)", damage_map,
                              test_seed(UINT64_C(0xda3a300000000000)), test_scaled(2000, 100), 40,
                              56, 3, false, false};
    expect_random_damage_clean(&plan);
}

/* ---- Allocation ------------------------------------------------------- */

Test(map_file_replicas, allocation_failure_at_every_point_of_a_load_is_clean)
{
    for (uint32_t R = 2; R <= 4; R += 2) {
        dch_map *m = zoned_map(R);
        expect_load_failures_clean(m, SWEEP_BOTH, 6);
        dch_map_free(m);
    }
}

/* ---- Fuzz seeds ------------------------------------------------------- */

/*
 * The version 3 seeds of tests/fuzz/corpus_map_load: what the library
 * writes for these maps. With DCH_WRITE_SEEDS=1 the files are (re)written;
 * otherwise each must hold exactly those bytes, so a format change that
 * forgets the corpus fails here.
 */
static dch_map *seed_map(int k)
{
    if (k == 0)
        return zoned_map(2);
    if (k == 1)
        return zoned_map(3);
    dch_map *m = k == 2 ? map_with_replicas(4, 4, 4) : map_with_replicas(32, 8, 2);
    if (k == 2) { /* R = 4 with three members: n = 3, then one removed */
        cr_assert_eq(dch_map_add_node(m, "x", 1, NULL), DCH_OK);
        cr_assert_eq(dch_map_add_node(m, "y", 3, NULL), DCH_OK);
        cr_assert_eq(dch_map_add_node(m, "z", 1, NULL), DCH_OK);
        cr_assert_eq(dch_map_remove_node(m, 0), DCH_OK);
    } else if (k == 3) { /* every weight 0: no copies */
        cr_assert_eq(dch_map_add_node_in_zone(m, "idle", "rack-1", 0, NULL), DCH_OK);
    } else { /* runs of one tuple, raw would be larger */
        cr_assert_eq(dch_map_add_node_in_zone(m, "left", "r1", 1, NULL), DCH_OK);
        cr_assert_eq(dch_map_add_node_in_zone(m, "right", "r2", 1, NULL), DCH_OK);
    }
    return m;
}

Test(map_file_replicas, fuzz_seeds_are_what_the_library_writes)
{
    const char *names[] = {"v3-zoned-r2", "v3-zoned-r3", "v3-r4-three-members",
                           "v3-weightless", "v3-runs"};
    for (int k = 0; k < 5; k++) {
        dch_map *m = seed_map(k);
        size_t flen;
        char *file = expect_map_load_seed(m, names[k], 3, &flen);
        dch_map *back = NULL;
        cr_assert_eq(dch_map_load(&back, file, flen), DCH_OK, "%s", names[k]);
        assert_same_map(m, back, names[k], (unsigned long long)k);
        dch_map_free(back);
        free(file);
        dch_map_free(m);
    }
}

/*
 * With replicas and zones map.h promises primaries within 2 slots of their
 * share only under a condition on the zones' weights, and the engine can
 * leave a member further: this history (found by a seeded search) leaves
 * n14 (weight 626, zone z0) at 47 primaries against a share of 49.40. Its
 * saved bytes must load, as every map the engine builds does; before 0.5.0
 * the loader held it to the bound and refused it.
 */
Test(map_file_replicas, a_zoned_map_outside_the_primary_bound_still_loads)
{
    dch_map *m = map_with_replicas(16, 8, 4);
    static const struct {
        char op; /* 'a' add, 'r' remove, 'w' set_weight */
        const char *name, *zone;
        uint32_t id, weight;
    } h[] = {{'a', "n14", "z0", 0, 8},  {'w', NULL, NULL, 0, 8},    {'a', "n9", NULL, 0, 4},
             {'a', "n18", "z0", 0, 8},  {'a', "n7", "z1", 0, 7},    {'r', NULL, NULL, 1, 0},
             {'w', NULL, NULL, 3, 8},   {'w', NULL, NULL, 3, 7},    {'w', NULL, NULL, 0, 2},
             {'w', NULL, NULL, 0, 626}, {'a', "n15", NULL, 0, 6},   {'r', NULL, NULL, 1, 0},
             {'a', "n0", "z1", 0, 3},   {'a', "n4", "z1", 0, 6},    {'w', NULL, NULL, 4, 828},
             {'a', "n12", "z0", 0, 946}, {'w', NULL, NULL, 3, 4},   {'a', "n9", "z1", 0, 2},
             {'r', NULL, NULL, 1, 0},   {'a', "n8", "z1", 0, 8},    {'a', "n19", "z2", 0, 8},
             {'a', "n1", "z1", 0, 7},   {'a', "n11", "z0", 0, 5},   {'w', NULL, NULL, 2, 5},
             {'a', "n6", NULL, 0, 5},   {'a', "n13", "z2", 0, 3},   {'w', NULL, NULL, 4, 3}};
    for (size_t k = 0; k < sizeof h / sizeof h[0]; k++) {
        int rc;
        if (h[k].op == 'a')
            rc = dch_map_add_node_in_zone(m, h[k].name, h[k].zone, h[k].weight, NULL);
        else if (h[k].op == 'r')
            rc = dch_map_remove_node(m, h[k].id);
        else
            rc = dch_map_set_weight(m, h[k].id, h[k].weight);
        cr_assert(rc == DCH_OK || rc == DCH_ENOENT, "step %zu: %d", k, rc);
    }
    const double share = 128.0 * dch_map_node_weight(m, 0) / dch_map_total_weight(m);
    cr_assert_geq(share - dch_map_node_slots(m, 0), 2.0,
                  "n14 is 2 or more slots below its share (%u against %.2f)",
                  dch_map_node_slots(m, 0), share);
    size_t len;
    uint8_t *bytes = map_bytes(m, &len);
    dch_map *back;
    cr_assert_eq(dch_map_load(&back, bytes, len), DCH_OK);
    assert_same_map(m, back, "zoned map off the bound", 0);
    dch_map_free(back);
    free(bytes);
    dch_map_free(m);
}

/* Primaries 2 or more slots from their share: refused with replicas and no
 * zone (map.h promises every such map the bound), loaded with zones (the
 * bound is promised there only under a condition on the zones' weights). */
Test(map_file_replicas, the_primary_bound_is_checked_only_where_it_is_promised)
{
    for (int zones = 0; zones < 2; zones++) {
        dch_map *m = zones_map(3, zones);
        size_t len;
        uint8_t *bytes = map_bytes(m, &len);
        for (int enc = 0; enc < 2; enc++) {
            doc d;
            doc_parse(bytes, len, &d);
            br_primaries_out_of_bound(&d);
            doc_recount(&d);
            size_t blen;
            uint8_t *b = doc_write(&d, enc, &blen);
            expect_load(b, blen, zones ? DCH_OK : DCH_ECORRUPT, "primaries off the bound",
                        zones);
            free(b);
            doc_free(&d);
        }
        free(bytes);
        dch_map_free(m);
    }
}
