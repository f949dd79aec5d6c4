/* SPDX-License-Identifier: MIT */
/*
 * Tests of map files: round trips of random maps, the byte layout against an
 * independent reader and writer that follow map_file.h's description (with
 * libsodium's SipHash for the checksum and the fingerprint), every kind of
 * damage and hostile field, allocation failure at every point, the atomic
 * file functions, and the committed golden files.
 *
 * DCH_TEST_SCALE scales the random work; DCH_TEST_SEED replaces the seed.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include "dch/dch.h"
#include "mapfile_oracle.h"
#include "support.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- Harness ---------------------------------------------------------- */

/* ---- Random maps ------------------------------------------------------ */

typedef struct shape {
    uint32_t units, spu;
} shape;

static const shape shapes[] = {
    {1, 1}, {1, 2}, {2, 1}, {4, 4}, {8, 8}, {16, 64}, {64, 16}, {256, 4}, {32, 32}, {1024, 64},
};

/*
 * A map from a random sequence of adds (weights 0 .. 10, sometimes large),
 * removes and weight changes, with names of 1 .. 255 random non-zero bytes.
 * `big` allows the 65,536-slot default shape.
 */
static dch_map *random_map(uint64_t *rng, int big)
{
    const uint32_t nshapes = (uint32_t)(sizeof shapes / sizeof shapes[0]) - (big ? 0 : 1);
    const shape sh = shapes[rng_below(rng, nshapes)];
    dch_map_config cfg = map_config(sh.units, sh.spu);
    for (int i = 0; i < 16; i++)
        cfg.hash_key[i] = (uint8_t)rng_next(rng);
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    const int ops = (int)rng_below(rng, 30);
    for (int op = 0; op < ops; op++) {
        const uint32_t r = rng_below(rng, 100);
        const uint32_t n = dch_map_node_count(m);
        if (n == 0 || r < 55) {
            char name[DCH_NAME_MAX + 1];
            const uint32_t len = rng_below(rng, 8) == 0 ? 1 + rng_below(rng, DCH_NAME_MAX)
                                                        : 1 + rng_below(rng, 12);
            /* Any byte a name may hold: 0x20 .. 0xff but 0x7f. */
            for (uint32_t i = 0; i < len; i++) {
                const uint32_t b = 0x20 + rng_below(rng, 0xdf);
                name[i] = (char)(b >= 0x7f ? b + 1 : b);
            }
            name[len] = '\0';
            const uint32_t w = rng_below(rng, 10) == 0   ? 0
                               : rng_below(rng, 10) == 0 ? 1000 + rng_below(rng, 100000)
                                                         : 1 + rng_below(rng, 10);
            const int rc = dch_map_add_node(m, name, w, NULL);
            cr_assert(rc == DCH_OK || rc == DCH_EEXIST);
        } else {
            const uint32_t id = map_random_member(m, rng);
            if (r < 75)
                cr_assert_eq(dch_map_remove_node(m, id), DCH_OK);
            else
                cr_assert_eq(dch_map_set_weight(m, id, rng_below(rng, 4) ? 1 + rng_below(rng, 10) : 0),
                             DCH_OK);
        }
    }
    return m;
}

/* ---- Round trips ------------------------------------------------------ */

/* Random map i: every 25th may take the 65,536-slot default shape. */
static dch_map *numbered_map(uint64_t *rng, unsigned i)
{
    return random_map(rng, i % 25 == 0);
}

/* m loads back to itself, and a loaded map is a full map: it can change
 * and save again. */
static void check_round_trip(const dch_map *m, unsigned long long seed, void *ctx)
{
    (void)ctx;
    size_t len;
    uint8_t *bytes = map_bytes(m, &len);
    dch_map *back = expect_round_trip(m, bytes, len, seed);
    size_t len2;
    cr_assert_eq(dch_map_add_node(back, "joined later", 3, NULL) == DCH_OK ||
                     dch_map_node_count(back) == DCH_MAP_MAX_NODES,
                 1);
    uint8_t *again = map_bytes(back, &len2);
    dch_map *third = NULL;
    cr_assert_eq(dch_map_load(&third, again, len2), DCH_OK, "seed %llu", seed);
    assert_same_map(back, third, "after a change", seed);
    dch_map_free(third);
    free(again);
    dch_map_free(back);
    free(bytes);
}

Test(map_file, random_maps_round_trip_exactly)
{
    each_random_map(numbered_map, test_seed(UINT64_C(0xf11e000000000000)),
                    test_scaled(300, 10), check_round_trip, NULL);
}

Test(map_file, bytes_follow_the_documented_layout)
{
    expect_layout_of_random_maps(numbered_map, test_seed(UINT64_C(0x1a10000000000000)),
                                 test_scaled(200, 10), 1);
}

Test(map_file, measured_size_is_exact_and_short_buffers_are_refused)
{
    uint64_t rng = 7;
    dch_map *m = random_map(&rng, 0);
    size_t len;
    cr_assert_eq(dch_map_save(m, NULL, 0, &len), DCH_OK);
    uint8_t *buf = malloc(len + 1);
    memset(buf, 0xA5, len + 1);
    size_t got = 0;
    cr_assert_eq(dch_map_save(m, buf, len - 1, &got), DCH_EFULL);
    cr_assert_eq(got, len, "the size is reported even when the buffer is short");
    for (size_t i = 0; i <= len; i++)
        cr_assert_eq(buf[i], 0xA5, "nothing written to a short buffer");
    cr_assert_eq(dch_map_save(m, buf, len + 1, &got), DCH_OK);
    cr_assert_eq(buf[len], 0xA5, "nothing written past the serialisation");
    cr_assert_eq(dch_map_save(NULL, buf, len, &got), DCH_EINVAL);
    cr_assert_eq(dch_map_save(m, buf, len, NULL), DCH_EINVAL);
    dch_map *back = NULL;
    cr_assert_eq(dch_map_load(NULL, buf, len), DCH_EINVAL);
    cr_assert_eq(dch_map_load(&back, NULL, 5), DCH_EINVAL);
    cr_assert_eq(dch_map_load(&back, NULL, 0), DCH_ECORRUPT);
    const dch_allocator half = {NULL, NULL, NULL, NULL};
    cr_assert_eq(dch_map_load_with(&back, buf, len, &half), DCH_EINVAL);
    cr_assert_null(back);
    free(buf);
    dch_map_free(m);
}

/* ---- Fingerprint ------------------------------------------------------ */

Test(map_file, fingerprint_ignores_epoch_and_encoding_but_not_routing_state)
{
    dch_map *m = map_shaped(16, 8);
    cr_assert_eq(dch_map_add_node(m, "a", 1, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "b", 2, NULL), DCH_OK);
    const uint64_t fp = dch_map_fingerprint(m);
    cr_assert_eq(dch_map_fingerprint(NULL), 0);

    size_t len;
    uint8_t *bytes = map_bytes(m, &len);
    doc d;
    doc_parse(bytes, len, &d);

    /* Another epoch, the other encoding: the same fingerprint. */
    d.epoch = 12345;
    size_t len2;
    uint8_t *other = doc_write(&d, d.encoding ? 0 : 1, &len2);
    dch_map *m2 = NULL;
    cr_assert_eq(dch_map_load(&m2, other, len2), DCH_OK);
    cr_assert_eq(dch_map_epoch(m2), 12345);
    cr_assert_eq(dch_map_fingerprint(m2), fp);
    dch_map_free(m2);
    free(other);

    /* Hash key, a name, a weight (balance kept: b 2 -> 2 with a 1 -> 1 is
     * unchanged, so scale both), an id, a slot: each changes it. */
    uint64_t seen[5];
    for (int k = 0; k < 5; k++) {
        doc e = d;
        e.recs = malloc(d.n * sizeof *e.recs);
        memcpy(e.recs, d.recs, d.n * sizeof *e.recs);
        e.table = malloc(d.P * sizeof *e.table);
        memcpy(e.table, d.table, d.P * sizeof *e.table);
        if (k == 0)
            e.key[5] = (uint8_t)(e.key[5] ^ 1u);
        if (k == 1)
            e.recs[0].name[0] = 'z';
        if (k == 2) {
            e.recs[0].weight *= 3;
            e.recs[1].weight *= 3;
        }
        if (k == 3) { /* b becomes id 5 */
            for (uint32_t s = 0; s < e.P; s++)
                if (e.table[s] == e.recs[1].id)
                    e.table[s] = 5;
            e.recs[1].id = 5;
        }
        if (k == 4) { /* a and b swap one slot each */
            uint32_t sa = 0, sb = 0;
            while (e.table[sa] != e.recs[0].id)
                sa++;
            while (e.table[sb] != e.recs[1].id)
                sb++;
            e.table[sa] = (uint16_t)e.recs[1].id;
            e.table[sb] = (uint16_t)e.recs[0].id;
        }
        uint8_t *b = doc_write(&e, -1, &len2);
        dch_map *x = NULL;
        cr_assert_eq(dch_map_load(&x, b, len2), DCH_OK, "variant %d", k);
        seen[k] = dch_map_fingerprint(x);
        cr_assert_neq(seen[k], fp, "variant %d keeps the fingerprint", k);
        cr_assert_eq(seen[k], doc_fingerprint(&e), "variant %d", k);
        for (int j = 0; j < k; j++)
            cr_assert_neq(seen[k], seen[j]);
        dch_map_free(x);
        free(b);
        free(e.recs);
        free(e.table);
    }
    doc_free(&d);
    free(bytes);
    dch_map_free(m);
}

/* ---- Damage ----------------------------------------------------------- */

static dch_map *small_map(void)
{
    dch_map_config cfg;
    dch_map_config_default(&cfg);
    cfg.units = 4;
    cfg.slots_per_unit = 8; /* unequal weights: the balance bound applies */
    for (int i = 0; i < 16; i++)
        cfg.hash_key[i] = (uint8_t)(3 * i + 1);
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "alpha", 1, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "beta", 2, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "gamma", 0, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "delta", 1, NULL), DCH_OK);
    return m;
}

/* small_map() and its bytes, for the tests that damage them (their .init
 * and .fini). */
static dch_map *small;
static uint8_t *small_bytes;
static size_t small_len;

static void small_file(void)
{
    small = small_map();
    small_bytes = map_bytes(small, &small_len);
}

static void small_file_free(void)
{
    free(small_bytes);
    dch_map_free(small);
}

/* A map of `members` equal members in units x spu slots. */
static dch_map *equal_map(uint32_t units, uint32_t spu, int members)
{
    dch_map *m = map_shaped(units, spu);
    map_add_members(m, "n", (unsigned)members, NULL, 0);
    return m;
}

Test(map_file, every_truncation_and_flipped_bit_is_rejected)
{
    /* Four members in units of four slots: one-slot runs, a raw table.
     * Two members in units of 32: long runs, a runs table. Then unequal
     * weights and a member of weight 0. */
    for (uint32_t k = 0; k < 3; k++) {
        dch_map *m = k == 0 ? equal_map(4, 4, 4) : k == 1 ? equal_map(32, 32, 2) : small_map();
        size_t len;
        uint8_t *bytes = map_bytes(m, &len);
        doc d;
        doc_parse(bytes, len, &d);
        cr_assert(k == 2 || d.encoding == k, "the intended table encoding");
        doc_free(&d);
        expect_damage_rejected(bytes, len);
        free(bytes);
        dch_map_free(m);
    }
}

Test(map_file, unknown_versions_are_reported_as_such,
     .init = small_file, .fini = small_file_free)
{
    const uint32_t versions[] = {0, 6, 0x100, UINT32_MAX};
    for (size_t k = 0; k < sizeof versions / sizeof versions[0]; k++) {
        le_write(small_bytes + 8, versions[k], 4);
        fix_checksum(small_bytes, small_len);
        expect_load(small_bytes, small_len, DCH_EVERSION, "version", (long)versions[k]);
        /* Even a bare 12-byte start says which version it is. */
        expect_load(small_bytes, 12, DCH_EVERSION, "version, 12 bytes", (long)versions[k]);
    }
    /* Version 2 is known: a version 1 body under it lacks the transition
     * record, so its table runs into where the record should be. */
    le_write(small_bytes + 8, DCH_MAP_FORMAT_VERSION_STEP, 4);
    fix_checksum(small_bytes, small_len);
    expect_load(small_bytes, small_len, DCH_ECORRUPT, "version 2 without a record", 2);
    small_bytes[0] = 0x88;
    expect_load(small_bytes, small_len, DCH_ECORRUPT, "magic", 0);
}

/*
 * Hostile files whose checksum and length are right: each field broken in
 * turn through the documented writer, which must give DCH_ECORRUPT.
 */
static void br_units(doc *d) { d->units = 3; }
static void br_spu_zero(doc *d) { d->spu = 0; }
static void br_too_many_slots(doc *d) { d->units = 1u << 13; d->spu = 1u << 12; }
static void br_empty_name(doc *d) { d->recs[1].len = 0; }
static void br_nul_in_name(doc *d) { d->recs[1].name[1] = 0; }
static void br_tab_in_name(doc *d) { d->recs[1].name[1] = '\t'; }
static void br_newline_in_name(doc *d) { d->recs[0].name[d->recs[0].len - 1] = '\n'; }
static void br_del_in_name(doc *d) { d->recs[1].name[0] = 0x7f; }
static void br_ids_descend(doc *d) { rec t = d->recs[0]; d->recs[0] = d->recs[1]; d->recs[1] = t; }
static void br_same_id(doc *d)
{
    /* The record after the weight-0 one takes its id, and its slots follow,
     * so only the repeated id itself is wrong. */
    uint32_t k = 0;
    while (d->recs[k].weight != 0)
        k++;
    for (uint32_t s = 0; s < d->P; s++)
        if (d->table[s] == d->recs[k + 1].id)
            d->table[s] = (uint16_t)d->recs[k].id;
    d->recs[k + 1].id = d->recs[k].id;
}
static void br_id_65535(doc *d) { d->recs[d->n - 1].id = 65535; }
static void br_same_name(doc *d) { memcpy(d->recs[1].name, d->recs[0].name, 256); d->recs[1].len = d->recs[0].len; }
static void br_slots_count(doc *d) { d->recs[0].slots++; }
static void br_weight_overflow(doc *d) { d->recs[0].weight = UINT32_MAX; }
static void br_unowned_slot(doc *d)
{
    for (uint32_t k = 0; k < d->n; k++)
        if (d->recs[k].id == d->table[3])
            d->recs[k].slots--;
    d->table[3] = 0xFFFF;
}
static void br_weightless_owner(doc *d)
{
    /* gamma has weight 0 */
    for (uint32_t k = 0; k < d->n; k++) {
        if (d->recs[k].id == d->table[3])
            d->recs[k].slots--;
        if (d->recs[k].weight == 0)
            d->recs[k].slots++;
    }
    for (uint32_t k = 0; k < d->n; k++)
        if (d->recs[k].weight == 0)
            d->table[3] = (uint16_t)d->recs[k].id;
}

static void br_foreign_owner(doc *d) { d->table[0] = 77; }
static void br_owned_without_weight(doc *d)
{
    for (uint32_t k = 0; k < d->n; k++)
        d->recs[k].weight = 0;
}

static const doc_breaker breakers[] = {
    {"units not a power of two", br_units, false},
    {"zero slots per unit", br_spu_zero, false},
    {"more than 2^24 slots", br_too_many_slots, false},
    {"empty name", br_empty_name, false},
    {"NUL inside a name", br_nul_in_name, false},
    {"TAB inside a name", br_tab_in_name, false},
    {"newline ending a name", br_newline_in_name, false},
    {"0x7f starting a name", br_del_in_name, false},
    {"ids out of order", br_ids_descend, false},
    {"duplicate id", br_same_id, false},
    {"id 65535", br_id_65535, false},
    {"duplicate name", br_same_name, false},
    {"stored slot count off by one", br_slots_count, false},
    {"weight sum over UINT32_MAX", br_weight_overflow, false},
    {"unowned slot with positive weights", br_unowned_slot, false},
    {"slot owned by a weight-0 member", br_weightless_owner, false},
    {"slot owned by a non-member", br_foreign_owner, false},
    {"owned slots with every weight 0", br_owned_without_weight, false},
};

Test(map_file, hostile_fields_with_a_valid_checksum_are_rejected,
     .init = small_file, .fini = small_file_free)
{
    expect_breakers_rejected(small_bytes, small_len, breakers, sizeof breakers / sizeof breakers[0]);
}

/*
 * The loader applies the library's name rule byte by byte: a file whose
 * member name holds byte b (checksum valid) loads exactly when b is not a
 * control byte, and the loaded name holds b.
 */
Test(map_file, names_load_exactly_when_they_hold_no_control_byte,
     .init = small_file, .fini = small_file_free)
{
    unsigned loaded = 0;
    for (unsigned b = 1; b <= 0xff; b++) {
        const bool valid = b >= 0x20 && b != 0x7f;
        for (int enc = 0; enc < 2; enc++) {
            doc d;
            doc_parse(small_bytes, small_len, &d);
            d.recs[1].name[d.recs[1].len - 1] = (uint8_t)b;
            size_t blen;
            uint8_t *f = doc_write(&d, enc, &blen);
            dch_map *out = NULL;
            const int rc = dch_map_load(&out, f, blen);
            if (valid) {
                cr_assert_eq(rc, DCH_OK, "byte 0x%02x (encoding %d): %s", b, enc,
                             dch_strerror(rc));
                const char *name = dch_map_node_name(out, d.recs[1].id);
                cr_assert(name != NULL && (unsigned char)name[d.recs[1].len - 1] == b,
                          "byte 0x%02x: the loaded name differs", b);
                dch_map_free(out);
                loaded += enc == 0;
            } else {
                expect_load(f, blen, DCH_ECORRUPT, "control byte in a name", (long)b);
            }
            free(f);
            doc_free(&d);
        }
    }
    cr_assert_eq(loaded, 0xff - 0x20, "bytes 0x20 .. 0xff but 0x7f load");
}

/*
 * Two members in 64 slots with weights wa, wb, a owning `a_slots` of them
 * (the first ones), as bytes with a valid checksum.
 */
static uint8_t *two_member_file(uint32_t units, uint32_t spu, uint32_t wa, uint32_t wb,
                                uint32_t a_slots, size_t *len)
{
    dch_map *m = map_shaped(units, spu);
    cr_assert_eq(dch_map_add_node(m, "a", wa, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "b", wb, NULL), DCH_OK);
    size_t blen;
    uint8_t *bytes = map_bytes(m, &blen);
    doc d;
    doc_parse(bytes, blen, &d);
    for (uint32_t s = 0; s < d.P; s++)
        d.table[s] = s < a_slots ? 0 : 1;
    d.recs[0].slots = a_slots;
    d.recs[1].slots = d.P - a_slots;
    uint8_t *b = doc_write(&d, -1, len);
    doc_free(&d);
    free(bytes);
    dch_map_free(m);
    return b;
}

Test(map_file, a_settled_map_outside_the_global_bound_is_rejected)
{
    /* 64 slots, a owns 26 to 40 of them: well-formed maps near and far from
     * their shares, with equal and unequal weights, at 1, 4, 8 and 16 slots
     * per unit. Every call keeps |slots - P*w/W| < 2 (map.h), so exactly
     * those inside the bound load; the rest could not have been built. */
    const struct {
        uint32_t units, spu, wa, wb;
    } cases[] = {{8, 8, 1, 1}, {16, 4, 1, 1}, {64, 1, 5, 5}, {8, 8, 3, 1}, {4, 16, 3, 1}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int64_t W = cases[k].wa + cases[k].wb;
        for (uint32_t a_slots = 26; a_slots <= 40; a_slots++) {
            size_t len;
            uint8_t *b = two_member_file(cases[k].units, cases[k].spu, cases[k].wa,
                                         cases[k].wb, a_slots, &len);
            const int64_t d = (int64_t)a_slots * W - 64 * (int64_t)cases[k].wa;
            const int inside = d < 2 * W && d > -2 * W; /* b's deviation is -d */
            expect_load(b, len, inside ? DCH_OK : DCH_ECORRUPT, "a's slots", (long)a_slots);
            free(b);
        }
    }
}

Test(map_file, malformed_run_tables_are_rejected)
{
    dch_map *m = map_shaped(16, 16);
    cr_assert_eq(dch_map_add_node(m, "a", 1, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "b", 1, NULL), DCH_OK);
    size_t len;
    uint8_t *bytes = map_bytes(m, &len);
    const size_t table = 56 + 2 * 12; /* two records with one-byte names */
    cr_assert_eq(bytes[table], 1, "runs encoding");
    const uint32_t runs = (uint32_t)le_read(bytes + table + 1, 4);
    const size_t first = table + 5; /* first run: owner, length, both < 128 */

    expect_run_table_rejected(bytes, len, table, 1);

    uint8_t *p = malloc(len + 8);
    /* Byte-inserting damage: an overlong uleb, an owner over 65535, two
     * adjacent runs of one owner, and a stray byte before the checksum. */
    for (int kind = 0; kind < 4; kind++) {
        size_t at = 0, n = 0;
        memcpy(p, bytes, first);
        at = first;
        const uint8_t owner = bytes[first], rlen = bytes[first + 1];
        size_t rest = first + 2;
        uint32_t r = runs;
        if (kind == 0) { /* length as 2 bytes: 0x80|len, 0x00 */
            p[at++] = owner;
            p[at++] = (uint8_t)(0x80 | rlen);
            p[at++] = 0x00;
        } else if (kind == 1) { /* owner 65536: 80 80 04 */
            p[at++] = 0x80;
            p[at++] = 0x80;
            p[at++] = 0x04;
            p[at++] = rlen;
        } else if (kind == 2) { /* split the run in two */
            p[at++] = owner;
            p[at++] = 1;
            p[at++] = owner;
            p[at++] = (uint8_t)(rlen - 1);
            r++;
        } else {
            p[at++] = owner;
            p[at++] = rlen;
        }
        n = len - 8 - rest;
        memcpy(p + at, bytes + rest, n);
        at += n;
        if (kind == 3)
            p[at++] = 0;
        le_write(p + table + 1, r, 4);
        le_write(p + 16, at + 8, 8);
        fix_checksum(p, at + 8);
        expect_load(p, at + 8, DCH_ECORRUPT, "run table damage", kind);
    }
    free(p);
    free(bytes);
    dch_map_free(m);
}

Test(map_file, count_and_length_fields_must_match_the_bytes,
     .init = small_file, .fini = small_file_free)
{
    const uint32_t counts[] = {0, 3, 5, 6, 65535, 65536, UINT32_MAX};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
        expect_field_rejected(small_bytes, small_len, 12, counts[k], 4, "member count", (long)counts[k]);
    const uint64_t lengths[] = {small_len - 1, small_len + 1, 0, 65, UINT64_MAX};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++)
        expect_field_rejected(small_bytes, small_len, 16, lengths[k], 8, "length field", (long)k);
    uint8_t *p = malloc(small_len + 1);
    /* A byte appended to an intact file. */
    memcpy(p, small_bytes, small_len);
    p[small_len] = 0;
    expect_load(p, small_len + 1, DCH_ECORRUPT, "appended byte", 0);
    free(p);
}

/*
 * Random damage with the checksum and length repaired, so that the parser
 * itself meets the damage: the load either fails cleanly or returns a map
 * that saves back to exactly the bytes it came from.
 */
static dch_map *damage_map(uint64_t *rng)
{
    return random_map(rng, 0);
}

Test(map_file, random_damage_behind_a_good_checksum_never_yields_a_bad_map)
{
    const damage_plan plan = {"random damage", damage_map, test_seed(UINT64_C(0xda3a000000000000)),
                              test_scaled(3000, 100), 50, 12, 4, true, true};
    expect_random_damage_clean(&plan);
}

/* ---- Allocation ------------------------------------------------------- */

Test(map_file, allocation_failure_at_every_point_of_a_load_is_clean)
{
    uint64_t rng = 99;
    dch_map *m;
    do {
        m = random_map(&rng, 0);
        if (dch_map_node_count(m) >= 3)
            break;
        dch_map_free(m);
    } while (1);
    expect_load_failures_clean(m, SWEEP_ALONE, 3);
    dch_map_free(m);
}

Test(map_file, save_file_allocation_failure_leaves_no_file)
{
    scratch sc;
    scratch_make(&sc, "map-file", "m.dchmap");
    faulty c = {0, 0, false, 0};
    const dch_allocator a = faulty_allocator(&c);
    dch_map_config cfg = map_config(4, 4);
    cfg.allocator = &a;
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "x", 1, NULL), DCH_OK);
    fault_sweep sw;
    for (fault_sweep_start(&sw, &c, SWEEP_ALONE, SWEEP_UNTIL_OK); fault_sweep_next(&sw);) {
        const int rc = dch_map_save_file(m, sc.path);
        fault_sweep_done(&sw, rc);
        cr_assert_eq(sw.leaked, 0, "save_file leaks at failure %ld", sw.at);
        /* A failed save leaves no file behind. */
        cr_assert(rc == DCH_OK || (rc == DCH_ENOMEM && access(sc.path, F_OK) == -1),
                  "failure %ld: %d, or a file left", sw.at, rc);
    }
    dch_map *back;
    cr_assert_eq(dch_map_load_file(&back, sc.path), DCH_OK);
    assert_same_map(m, back, "saved with an allocator", 0);
    dch_map_free(back);
    dch_map_free(m);
    unlink(sc.path);
    rmdir(sc.dir);
}

/* ---- Files ------------------------------------------------------------ */


Test(map_file, files_are_replaced_atomically_and_read_back)
{
    char dir[64];
    temp_dir(dir, sizeof dir, "map-file");
    char path[128], sub[128];
    snprintf(path, sizeof path, "%s/cluster.dchmap", dir);
    dch_map *m = small_map();
    umask(022);
    cr_assert_eq(dch_map_save_file(m, path), DCH_OK);
    cr_assert_eq(dir_count(dir, true), 1, "only the map file: no temporary left");
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0644, "a new file: 0666 less the umask");

    /* The file holds exactly what dch_map_save writes. */
    size_t len;
    uint8_t *bytes = map_bytes(m, &len);
    cr_assert_eq((size_t)st.st_size, len);
    dch_map *back = NULL;
    cr_assert_eq(dch_map_load_file(&back, path), DCH_OK);
    assert_same_map(m, back, "file", 0);
    dch_map_free(back);

    /* Replacing keeps the permission bits of the file replaced. */
    cr_assert_eq(chmod(path, 0640), 0);
    cr_assert_eq(dch_map_add_node(m, "epsilon", 1, NULL), DCH_OK);
    cr_assert_eq(dch_map_save_file(m, path), DCH_OK);
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0640);
    cr_assert_eq(dir_count(dir, true), 1);
    cr_assert_eq(dch_map_load_file(&back, path), DCH_OK);
    assert_same_map(m, back, "replaced file", 0);
    dch_map_free(back);

    /* A rename that fails (the target is a directory) leaves the directory
     * alone and removes the temporary file. */
    snprintf(sub, sizeof sub, "%s/taken", dir);
    cr_assert_eq(mkdir(sub, 0755), 0);
    errno = 0;
    cr_assert_eq(dch_map_save_file(m, sub), DCH_EIO);
    cr_assert_neq(errno, 0, "errno says why");
    cr_assert_eq(dir_count(dir, true), 2, "no temporary left after a failed rename");
    cr_assert_eq(dir_count(sub, true), 0);
    rmdir(sub);

    /* A missing directory. */
    snprintf(sub, sizeof sub, "%s/missing/m.dchmap", dir);
    errno = 0;
    cr_assert_eq(dch_map_save_file(m, sub), DCH_EIO);
    cr_assert_eq(errno, ENOENT);
    cr_assert_eq(dch_map_load_file(&back, sub), DCH_EIO);
    cr_assert_eq(errno, ENOENT);
    /* A directory is not a map. */
    cr_assert_eq(dch_map_load_file(&back, dir), DCH_EIO);

    cr_assert_eq(dch_map_save_file(NULL, path), DCH_EINVAL);
    cr_assert_eq(dch_map_save_file(m, NULL), DCH_EINVAL);
    cr_assert_eq(dch_map_save_file(m, ""), DCH_EINVAL);
    cr_assert_eq(dch_map_load_file(NULL, path), DCH_EINVAL);
    cr_assert_eq(dch_map_load_file(&back, NULL), DCH_EINVAL);

    free(bytes);
    dch_map_free(m);
    unlink(path);
    rmdir(dir);
}

Test(map_file, damaged_files_are_refused)
{
    scratch sc;
    scratch_make(&sc, "map-file", "bad.dchmap");
    dch_map *m = small_map();
    size_t len;
    uint8_t *bytes = map_bytes(m, &len);
    uint8_t *p = malloc(len + 64);
    dch_map *out = NULL;

    memcpy(p, bytes, len);
    p[len] = 'x';
    write_file(sc.path, p, len + 1);
    cr_assert_eq(dch_map_load_file(&out, sc.path), DCH_ECORRUPT, "data after the map");
    const size_t cuts[] = {0, 5, 11, 12, 40, 56, 57, len - 1};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        write_file(sc.path, bytes, cuts[k]);
        cr_assert_eq(dch_map_load_file(&out, sc.path), DCH_ECORRUPT, "cut at %zu", cuts[k]);
    }
    memcpy(p, bytes, len);
    le_write(p + 8, 6, 4);
    write_file(sc.path, p, len);
    cr_assert_eq(dch_map_load_file(&out, sc.path), DCH_EVERSION);
    write_file(sc.path, p, 12);
    cr_assert_eq(dch_map_load_file(&out, sc.path), DCH_EVERSION, "a bare version-6 start");
    /* A header announcing more than any map can take is refused unread. */
    memcpy(p, bytes, len);
    le_write(p + 16, UINT64_C(1) << 40, 8);
    write_file(sc.path, p, len);
    cr_assert_eq(dch_map_load_file(&out, sc.path), DCH_ECORRUPT);
    memcpy(p, bytes, len);
    p[100 % len] = (uint8_t)(p[100 % len] ^ 0x10u);
    write_file(sc.path, p, len);
    cr_assert_eq(dch_map_load_file(&out, sc.path), DCH_ECORRUPT);
    cr_assert_null(out);

    write_file(sc.path, bytes, len);
    cr_assert_eq(dch_map_load_file(&out, sc.path), DCH_OK);
    dch_map_free(out);
    free(p);
    free(bytes);
    dch_map_free(m);
    unlink(sc.path);
    rmdir(sc.dir);
}

/* ---- Golden files ----------------------------------------------------- */

/*
 * Every tests/golden/NAME.dchmap has a NAME.expect, written when the file was
 * made (tests/golden/generate.sh), holding lines
 *   epoch E | fingerprint HEX | member ID WEIGHT SLOTS NAME | route KEY NAME
 * (NAME "-" for no owner). Every later version must load the file and route
 * exactly so; a version that still writes format 1 must write the same bytes.
 */
static void check_golden(const char *dir, const char *base)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.dchmap", dir, base);
    dch_map *m = NULL;
    cr_assert_eq(dch_map_load_file(&m, path), DCH_OK, "%s does not load", path);
    snprintf(path, sizeof path, "%s/%s.expect", dir, base);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s missing", path);
    char line[1024];
    int routes = 0, members = 0, have_fp = 0, have_epoch = 0;
    while (fgets(line, sizeof line, f)) {
        char a[300], b[300];
        unsigned long long v;
        unsigned id, weight, slots;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "epoch %llu", &v) == 1) {
            cr_assert_eq(dch_map_epoch(m), v, "%s: epoch", base);
            have_epoch = 1;
        } else if (sscanf(line, "fingerprint %llx", &v) == 1) {
            cr_assert_eq(dch_map_fingerprint(m), v, "%s: fingerprint", base);
            have_fp = 1;
        } else if (sscanf(line, "member %u %u %u %299s", &id, &weight, &slots, a) == 4) {
            cr_assert_str_eq(dch_map_node_name(m, id), a, "%s: member %u", base, id);
            cr_assert_eq(dch_map_node_weight(m, id), weight, "%s: member %u", base, id);
            cr_assert_eq(dch_map_node_slots(m, id), slots, "%s: member %u", base, id);
            members++;
        } else if (sscanf(line, "route %299s %299s", a, b) == 2) {
            const uint32_t owner = dch_map_lookup(m, a, strlen(a));
            const char *name = dch_map_node_name(m, owner);
            cr_assert_str_eq(name ? name : "-", b, "%s: key %s", base, a);
            routes++;
        } else {
            cr_assert_fail("%s: unreadable line: %s", path, line);
        }
    }
    fclose(f);
    cr_assert(have_fp && have_epoch && routes >= 50, "%s: incomplete expectations", base);
    cr_assert_eq((uint32_t)members, dch_map_node_count(m), "%s: members listed", base);

    if (DCH_MAP_FORMAT_VERSION == 1) {
        snprintf(path, sizeof path, "%s/%s.dchmap", dir, base);
        f = fopen(path, "rb");
        cr_assert_not_null(f);
        static uint8_t file[1 << 20];
        const size_t flen = fread(file, 1, sizeof file, f);
        fclose(f);
        size_t len;
        uint8_t *again = map_bytes(m, &len);
        cr_assert(len == flen && memcmp(again, file, len) == 0,
                  "%s: saving it again gives other bytes", base);
        free(again);
    }
    dch_map_free(m);
}

Test(map_file, golden_files_load_and_route_as_recorded)
{
    const char *dir = DCH_SOURCE_DIR "/tests/golden";
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        const size_t n = strlen(e->d_name);
        if (n > 7 && strcmp(e->d_name + n - 7, ".dchmap") == 0) {
            char base[256];
            snprintf(base, sizeof base, "%.*s", (int)(n - 7), e->d_name);
            check_golden(dir, base);
            files++;
        } else if (n > 7 && strcmp(e->d_name + n - 7, ".expect") == 0) {
            char path[512];
            snprintf(path, sizeof path, "%s/%.*s.dchmap", dir, (int)(n - 7), e->d_name);
            cr_assert_eq(access(path, R_OK), 0, "%s has no map file", e->d_name);
        }
    }
    closedir(d);
    cr_assert_geq(files, 5, "golden files found: %d", files);
}
