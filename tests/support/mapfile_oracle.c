/* SPDX-License-Identifier: MIT */
/*
 * The map file oracle (mapfile_oracle.h): every offset below is read off the
 * table in include/dch/map_file.h, not off src/, so that a change to the
 * library's reader or writer that departs from the document fails a test.
 */
#include "mapfile_oracle.h"

#include "support.h"

#include <criterion/criterion.h>
#include <sodium.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t file_magic[8] = {0x89, 0x44, 0x43, 0x48, 0x0D, 0x0A, 0x1A, 0x0A};
static const char checksum_key[16] = "dch map checksum";
static const char fingerprint_key_1[16] = "dch fingerprint1";
static const char fingerprint_key_r[16] = "dch fingerprintR";

uint64_t sodium_sip(const char key16[16], const uint8_t *msg, size_t len)
{
    uint8_t out[8];
    cr_assert(sodium_init() >= 0);
    crypto_shorthash_siphash24(out, msg, len, (const unsigned char *)key16);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | out[i];
    return v;
}

/* The header's size: 56 bytes, and R's 4 more in version 3. */
static size_t header_size(uint32_t version)
{
    return version == 3 ? 60 : 56;
}

/* Read the member records from `at`; returns the offset past them. */
static size_t parse_records(const uint8_t *p, size_t at, doc *d)
{
    const int v3 = d->version == 3;
    uint32_t weighted = 0;
    for (uint32_t i = 0; i < d->n; i++) {
        rec *r = &d->recs[i];
        r->id = (uint32_t)le_read(p + at, 2);
        r->weight = (uint32_t)le_read(p + at + 2, 4);
        r->slots = (uint32_t)le_read(p + at + 6, 4);
        at += 10;
        if (v3) {
            r->copies = (uint32_t)le_read(p + at, 4);
            at += 4;
        }
        r->len = p[at++];
        memcpy(r->name, p + at, r->len);
        at += r->len;
        if (v3) {
            r->zlen = p[at++];
            memcpy(r->zone, p + at, r->zlen);
            at += r->zlen;
        }
        weighted += r->weight > 0;
    }
    d->copies = v3 ? (weighted < d->R ? weighted : d->R) : 1;
    return at;
}

/* Read the table (encoding byte first) from `at`; returns the offset past
 * it. */
static size_t parse_table(const uint8_t *p, size_t at, doc *d)
{
    const size_t entries = (size_t)d->P * d->copies;
    d->table = calloc(entries + 1, sizeof *d->table);
    d->table_at = at;
    d->encoding = p[at++];
    if (d->encoding == 0) {
        for (size_t i = 0; i < entries; i++, at += 2)
            d->table[i] = (uint16_t)le_read(p + at, 2);
        return at;
    }
    cr_assert_eq(d->encoding, 1);
    const uint32_t runs = (uint32_t)le_read(p + at, 4);
    at += 4;
    uint32_t s = 0;
    for (uint32_t r = 0; r < runs; r++) {
        uint16_t t[DCH_MAP_MAX_REPLICAS];
        for (uint32_t k = 0; k < d->copies; k++)
            t[k] = (uint16_t)uleb_read(p, &at);
        const uint32_t n = uleb_read(p, &at);
        cr_assert_leq(s + n, d->P, "runs past the table");
        for (uint32_t j = 0; j < n; j++, s++)
            memcpy(d->table + (size_t)s * d->copies, t, d->copies * sizeof *t);
    }
    cr_assert_eq(s, d->P);
    return at;
}

void doc_parse(const uint8_t *p, size_t len, doc *d)
{
    memset(d, 0, sizeof *d);
    cr_assert(len >= 65);
    cr_assert_eq(memcmp(p, file_magic, 8), 0, "magic");
    d->version = (uint32_t)le_read(p + 8, 4);
    cr_assert(d->version >= 1 && d->version <= 3, "version %u", d->version);
    d->n = (uint32_t)le_read(p + 12, 4);
    d->length = le_read(p + 16, 8);
    d->units = (uint32_t)le_read(p + 24, 4);
    d->spu = (uint32_t)le_read(p + 28, 4);
    memcpy(d->key, p + 32, 16);
    d->epoch = le_read(p + 48, 8);
    cr_assert_eq(d->length, len);
    cr_assert_eq(le_read(p + len - 8, 8), sodium_sip(checksum_key, p, len - 8), "checksum");
    cr_assert(len >= header_size(d->version) + 9, "shorter than a header");
    d->R = d->version == 3 ? (uint32_t)le_read(p + 56, 4) : 1;
    d->P = d->units * d->spu;
    d->recs = calloc(d->n + 2, sizeof *d->recs);
    size_t at = parse_records(p, header_size(d->version), d);
    at = parse_table(p, at, d);
    if (d->version == 2) {
        memcpy(d->transition, p + at, 16);
        at += 16;
    }
    cr_assert_eq(at, len - 8, "the table ends at the checksum");
}

void doc_free(doc *d)
{
    free(d->recs);
    free(d->table);
}

/* Whether slots a and b hold the same entries. */
static int same_slot(const doc *d, uint32_t a, uint32_t b)
{
    const size_t c = d->copies;
    return memcmp(d->table + a * c, d->table + b * c, c * sizeof *d->table) == 0;
}

/* The end of the run that starts at slot s. */
static uint32_t run_end(const doc *d, uint32_t s)
{
    uint32_t e = s + 1;
    while (e < d->P && same_slot(d, e, s))
        e++;
    return e;
}

/* Write the runs of the table at p (NULL: only count); returns the bytes
 * and sets *runs. */
static size_t write_runs(const doc *d, uint8_t *p, uint32_t *runs)
{
    uint8_t tmp[8];
    size_t at = 0;
    *runs = 0;
    for (uint32_t s = 0; s < d->P; (*runs)++) {
        const uint32_t e = run_end(d, s);
        for (size_t k = 0; k < d->copies; k++)
            at += uleb_write(p ? p + at : tmp, d->table[s * d->copies + k]);
        at += uleb_write(p ? p + at : tmp, e - s);
        s = e;
    }
    return at;
}

/* Write the member records at p; returns the bytes. */
static size_t write_records(const doc *d, uint8_t *p)
{
    const int v3 = d->version == 3;
    size_t at = 0;
    for (uint32_t i = 0; i < d->n; i++) {
        const rec *r = &d->recs[i];
        le_write(p + at, r->id, 2);
        le_write(p + at + 2, r->weight, 4);
        le_write(p + at + 6, r->slots, 4);
        at += 10;
        if (v3) {
            le_write(p + at, r->copies, 4);
            at += 4;
        }
        p[at++] = (uint8_t)r->len;
        memcpy(p + at, r->name, r->len);
        at += r->len;
        if (v3) {
            p[at++] = (uint8_t)r->zlen;
            memcpy(p + at, r->zone, r->zlen);
            at += r->zlen;
        }
    }
    return at;
}

uint8_t *doc_write(const doc *d, int encoding, size_t *len_out)
{
    const size_t c = d->copies, entries = (size_t)d->P * c;
    const size_t cap = 60 + (size_t)(d->n + 2) * 530 + 5 + (size_t)d->P * (c * 3 + 4) + 16 + 8;
    uint8_t *p = calloc(1, cap);
    memcpy(p, file_magic, 8);
    le_write(p + 8, d->version, 4);
    le_write(p + 12, d->n, 4);
    le_write(p + 24, d->units, 4);
    le_write(p + 28, d->spu, 4);
    memcpy(p + 32, d->key, 16);
    le_write(p + 48, d->epoch, 8);
    if (d->version == 3)
        le_write(p + 56, d->R, 4);
    size_t at = header_size(d->version);
    at += write_records(d, p + at);
    uint32_t runs;
    const size_t runs_bytes = 4 + write_runs(d, NULL, &runs);
    if (encoding < 0)
        encoding = runs_bytes < entries * 2 ? 1 : 0;
    p[at++] = (uint8_t)encoding;
    if (encoding == 0) {
        for (size_t i = 0; i < entries; i++, at += 2)
            le_write(p + at, d->table[i], 2);
    } else {
        le_write(p + at, runs, 4);
        at += 4;
        at += write_runs(d, p + at, &runs);
    }
    if (d->version == 2) {
        memcpy(p + at, d->transition, 16);
        at += 16;
    }
    le_write(p + 16, at + 8, 8);
    le_write(p + at, sodium_sip(checksum_key, p, at), 8);
    *len_out = at + 8;
    return p;
}

void fix_checksum(uint8_t *p, size_t len)
{
    le_write(p + len - 8, sodium_sip(checksum_key, p, len - 8), 8);
}

uint64_t doc_fingerprint(const doc *d)
{
    const int r1 = d->R == 1;
    uint8_t *p = malloc(32 + (size_t)d->n * 520 + (size_t)d->P * d->R * 2);
    le_write(p, d->units, 4);
    le_write(p + 4, d->spu, 4);
    memcpy(p + 8, d->key, 16);
    size_t at = 24;
    if (!r1) {
        le_write(p + at, d->R, 4);
        at += 4;
    }
    le_write(p + at, d->n, 4);
    at += 4;
    for (uint32_t i = 0; i < d->n; i++) {
        const rec *r = &d->recs[i];
        le_write(p + at, r->id, 2);
        le_write(p + at + 2, r->weight, 4);
        p[at + 6] = (uint8_t)r->len;
        memcpy(p + at + 7, r->name, r->len);
        at += 7 + r->len;
        if (!r1) {
            p[at++] = (uint8_t)r->zlen;
            memcpy(p + at, r->zone, r->zlen);
            at += r->zlen;
        }
    }
    /* R entries a slot, 65535 past its copy count (R = 1: the owner). */
    for (uint32_t s = 0; s < d->P; s++)
        for (uint32_t k = 0; k < d->R; k++, at += 2)
            le_write(p + at, k < d->copies ? d->table[s * d->copies + k] : 0xFFFF, 2);
    const uint64_t fp = sodium_sip(r1 ? fingerprint_key_1 : fingerprint_key_r, p, at);
    free(p);
    return fp;
}

rec *doc_rec(doc *d, uint32_t id)
{
    for (uint32_t i = 0; i < d->n; i++)
        if (d->recs[i].id == id)
            return &d->recs[i];
    return NULL;
}

void doc_recount(doc *d)
{
    for (uint32_t i = 0; i < d->n; i++)
        d->recs[i].slots = d->recs[i].copies = 0;
    for (uint32_t s = 0; s < d->P; s++)
        for (uint32_t k = 0; k < d->copies; k++) {
            rec *r = doc_rec(d, d->table[s * d->copies + k]);
            if (r == NULL)
                continue;
            r->copies++;
            r->slots += k == 0;
        }
}

/* ---- Checks built on the oracle ----------------------------------------- */

dch_map *map_with_replicas(uint32_t units, uint32_t slots_per_unit, uint32_t R)
{
    dch_map_config cfg = map_config(units, slots_per_unit);
    cfg.replicas = R;
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK, "a map of %u x %u slots, R = %u", units,
                 slots_per_unit, R);
    return m;
}

void assert_same_map(const dch_map *a, const dch_map *b, const char *what,
                     unsigned long long seed)
{
    dch_map_config ca, cb;
    dch_map_get_config(a, &ca);
    dch_map_get_config(b, &cb);
    cr_assert(ca.units == cb.units && ca.slots_per_unit == cb.slots_per_unit &&
                  ca.replicas == cb.replicas && memcmp(ca.hash_key, cb.hash_key, 16) == 0,
              "%s seed %llu: config differs", what, seed);
    cr_assert_eq(dch_map_epoch(a), dch_map_epoch(b), "%s seed %llu", what, seed);
    cr_assert_eq(dch_map_id_limit(a), dch_map_id_limit(b), "%s seed %llu", what, seed);
    cr_assert_eq(dch_map_node_count(a), dch_map_node_count(b), "%s seed %llu", what, seed);
    cr_assert_eq(dch_map_total_weight(a), dch_map_total_weight(b), "%s seed %llu", what, seed);
    for (uint32_t id = 0; id < dch_map_id_limit(a); id++) {
        const char *na = dch_map_node_name(a, id), *nb = dch_map_node_name(b, id);
        cr_assert((na == NULL) == (nb == NULL) && (na == NULL || strcmp(na, nb) == 0),
                  "%s seed %llu: id %u named differently", what, seed, id);
        const char *za = dch_map_node_zone(a, id), *zb = dch_map_node_zone(b, id);
        cr_assert((za == NULL) == (zb == NULL) && (za == NULL || strcmp(za, zb) == 0),
                  "%s seed %llu: id %u in another zone", what, seed, id);
        cr_assert_eq(dch_map_node_weight(a, id), dch_map_node_weight(b, id), "%s seed %llu",
                     what, seed);
        cr_assert_eq(dch_map_node_slots(a, id), dch_map_node_slots(b, id), "%s seed %llu", what,
                     seed);
        cr_assert_eq(dch_map_node_copies(a, id), dch_map_node_copies(b, id), "%s seed %llu",
                     what, seed);
    }
    for (uint32_t s = 0; s < dch_map_slot_count(a); s++) {
        uint32_t ra[DCH_MAP_MAX_REPLICAS], rb[DCH_MAP_MAX_REPLICAS];
        const size_t na = dch_map_slot_replicas(a, s, ra, DCH_MAP_MAX_REPLICAS);
        const size_t nb = dch_map_slot_replicas(b, s, rb, DCH_MAP_MAX_REPLICAS);
        cr_assert(na == nb && memcmp(ra, rb, na * sizeof *ra) == 0,
                  "%s seed %llu: slot %u has other copies", what, seed, s);
        cr_assert_eq(dch_map_slot_owner(a, s), dch_map_slot_owner(b, s),
                     "%s seed %llu: slot %u", what, seed, s);
    }
}

void expect_load(const uint8_t *p, size_t len, int want, const char *what, long detail)
{
    dch_map *sentinel = (dch_map *)&sentinel;
    dch_map *out = sentinel;
    const int rc = dch_map_load(&out, p, len);
    cr_assert_eq(rc, want, "%s (%ld): got %d (%s), want %d", what, detail, rc, dch_strerror(rc),
                 want);
    if (want != DCH_OK)
        cr_assert(out == sentinel, "%s (%ld): *out changed on error", what, detail);
    else
        dch_map_free(out);
}

/* The records of d say what m's getters say, in ascending id order. */
static void check_records(const dch_map *m, const doc *d, unsigned long long sd)
{
    for (uint32_t k = 0; k < d->n; k++) {
        const rec *r = &d->recs[k];
        cr_assert(k == 0 || r->id > d->recs[k - 1].id, "seed %llu: ids ascend", sd);
        const char *name = dch_map_node_name(m, r->id), *zone = dch_map_node_zone(m, r->id);
        cr_assert(name && strlen(name) == r->len && memcmp(name, r->name, r->len) == 0,
                  "seed %llu: record %u", sd, k);
        cr_assert_eq(r->weight, dch_map_node_weight(m, r->id), "seed %llu", sd);
        cr_assert_eq(r->slots, dch_map_node_slots(m, r->id), "seed %llu", sd);
        if (d->version < 3)
            continue;
        cr_assert(zone ? strlen(zone) == r->zlen && memcmp(zone, r->zone, r->zlen) == 0
                       : r->zlen == 0,
                  "seed %llu: zone of record %u", sd, k);
        cr_assert_eq(r->copies, dch_map_node_copies(m, r->id), "seed %llu", sd);
    }
}

uint32_t doc_check_bytes(const dch_map *m, const uint8_t *bytes, size_t len,
                         unsigned long long sd)
{
    doc d;
    doc_parse(bytes, len, &d);
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    cr_assert_eq(d.R, cfg.replicas, "seed %llu", sd);
    cr_assert_eq(d.n, dch_map_node_count(m), "seed %llu", sd);
    cr_assert(d.units == cfg.units && d.spu == cfg.slots_per_unit, "seed %llu", sd);
    cr_assert_eq(memcmp(d.key, cfg.hash_key, 16), 0, "seed %llu", sd);
    cr_assert_eq(d.epoch, dch_map_epoch(m), "seed %llu", sd);
    check_records(m, &d, sd);
    for (uint32_t s = 0; s < d.P; s++) {
        uint32_t c[DCH_MAP_MAX_REPLICAS];
        size_t nc = dch_map_slot_replicas(m, s, c, DCH_MAP_MAX_REPLICAS);
        if (d.version < 3 && nc == 0) /* versions 1 and 2: 65535, unowned */
            c[nc++] = 0xFFFF;
        cr_assert_eq(nc, d.copies, "seed %llu slot %u", sd, s);
        for (uint32_t k = 0; k < d.copies; k++)
            cr_assert_eq(d.table[s * d.copies + k], c[k], "seed %llu slot %u", sd, s);
    }
    /* The writer's encoding rule and the whole file, reproduced from the
     * description alone; the fingerprint too. */
    size_t len2;
    uint8_t *mine = doc_write(&d, -1, &len2);
    cr_assert(len2 == len && memcmp(mine, bytes, len) == 0,
              "seed %llu: the documented writer disagrees", sd);
    cr_assert_eq(doc_fingerprint(&d), dch_map_fingerprint(m), "seed %llu: fingerprint", sd);
    free(mine);
    /* The other encoding of the same map loads to the same map. */
    mine = doc_write(&d, d.encoding ? 0 : 1, &len2);
    dch_map *other = NULL;
    cr_assert_eq(dch_map_load(&other, mine, len2), DCH_OK, "seed %llu", sd);
    assert_same_map(m, other, "other encoding", sd);
    dch_map_free(other);
    free(mine);
    const uint32_t encoding = d.encoding;
    doc_free(&d);
    return encoding;
}

void expect_field_rejected(const uint8_t *bytes, size_t len, size_t at, uint64_t v, int width,
                           const char *what, long detail)
{
    uint8_t *p = malloc(len);
    memcpy(p, bytes, len);
    le_write(p + at, v, width);
    fix_checksum(p, len);
    expect_load(p, len, DCH_ECORRUPT, what, detail);
    free(p);
}

void expect_run_table_rejected(const uint8_t *bytes, size_t len, size_t table, size_t tuple)
{
    cr_assert_eq(bytes[table], 1, "a runs table");
    const uint32_t runs = (uint32_t)le_read(bytes + table + 1, 4);
    const size_t length = table + 5 + tuple; /* the first run's length */
    for (size_t k = 0; k <= tuple; k++)
        cr_assert(bytes[table + 5 + k] < 0x80, "a first run of one-byte ulebs");
    cr_assert(bytes[length] > 1, "a first run of 2 .. 127 slots");
    for (int delta = -1; delta <= 1; delta += 2)
        expect_field_rejected(bytes, len, table + 1, (uint32_t)((int64_t)runs + delta), 4,
                              "run count", delta);
    expect_field_rejected(bytes, len, table + 1, 0, 4, "zero runs", 0);
    expect_field_rejected(bytes, len, length, 0, 1, "empty run", 0);
    expect_field_rejected(bytes, len, length, 0x7f, 1, "runs past P", 0);
    expect_field_rejected(bytes, len, table, 2, 1, "encoding 2", 0);
}

dch_map *expect_round_trip(const dch_map *m, const uint8_t *bytes, size_t len,
                           unsigned long long seed)
{
    dch_map *back = NULL;
    cr_assert_eq(dch_map_load(&back, bytes, len), DCH_OK, "seed %llu", seed);
    assert_same_map(m, back, "round trip", seed);
    cr_assert_eq(dch_map_fingerprint(m), dch_map_fingerprint(back), "seed %llu", seed);
    size_t len2;
    uint8_t *again = map_bytes(back, &len2);
    cr_assert(len2 == len && memcmp(again, bytes, len) == 0,
              "seed %llu: saving a loaded map gives other bytes", seed);
    free(again);
    return back;
}

void each_random_map(dch_map *(*make)(uint64_t *rng, unsigned i), uint64_t base, unsigned n,
                     void (*check)(const dch_map *m, unsigned long long seed, void *ctx),
                     void *ctx)
{
    for (unsigned i = 0; i < n; i++) {
        const unsigned long long seed = base + i;
        uint64_t rng = seed;
        dch_map *m = make(&rng, i);
        check(m, seed, ctx);
        dch_map_free(m);
    }
}

/* expect_layout_of_random_maps' check of one map. */
typedef struct layout_tally {
    uint32_t version;
    unsigned raw, runs;
} layout_tally;

static void check_layout(const dch_map *m, unsigned long long seed, void *ctx)
{
    layout_tally *t = ctx;
    size_t len;
    uint8_t *bytes = map_bytes(m, &len);
    cr_assert_eq(le_read(bytes + 8, 4), t->version, "seed %llu: version", seed);
    if (doc_check_bytes(m, bytes, len, seed))
        t->runs++;
    else
        t->raw++;
    free(bytes);
}

void expect_layout_of_random_maps(dch_map *(*make)(uint64_t *rng, unsigned i), uint64_t base,
                                  unsigned n, uint32_t version)
{
    layout_tally t = {version, 0, 0};
    each_random_map(make, base, n, check_layout, &t);
    cr_assert(t.raw > 0 && t.runs > 0, "both encodings exercised (raw %u, runs %u)", t.raw,
              t.runs);
}

void expect_load_failures_clean(const dch_map *m, unsigned mode, long min_failures)
{
    size_t len;
    uint8_t *bytes = map_bytes(m, &len);
    faulty c = {0, 0, false, 0};
    const dch_allocator a = faulty_allocator(&c);
    fault_sweep sw;
    for (fault_sweep_start(&sw, &c, mode, SWEEP_UNTIL_OK); fault_sweep_next(&sw);) {
        dch_map *sentinel = (dch_map *)&sentinel, *out = sentinel;
        const int rc = dch_map_load_with(&out, bytes, len, &a);
        fault_sweep_done(&sw, rc);
        if (rc == DCH_OK) {
            cr_assert_gt(c.live, 0, "the map lives in the caller's allocator");
            dch_map_config cfg;
            dch_map_get_config(out, &cfg);
            cr_assert(cfg.allocator == &a);
            assert_same_map(m, out, "load_with", 0);
            dch_map_free(out);
            cr_assert_eq(c.live, 0, "everything freed through the allocator");
            continue;
        }
        cr_assert_eq(rc, DCH_ENOMEM, "failure %ld gives %d", sw.at, rc);
        cr_assert(out == sentinel);
        cr_assert(c.live == 0 && sw.leaked == 0, "failure %ld leaks %ld blocks", sw.at,
                  sw.leaked);
    }
    cr_assert_gt(sw.failed, min_failures, "the load allocates several times");
    free(bytes);
}

void expect_damage_rejected(const uint8_t *bytes, size_t len)
{
    for (size_t cut = 0; cut < len; cut++) {
        /* An exact-size copy, so a read past the end is caught by ASan. */
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, bytes, cut);
        expect_load(cut ? p : NULL, cut, DCH_ECORRUPT, "truncated", (long)cut);
        free(p);
    }
    uint8_t *p = malloc(len);
    for (size_t i = 0; i < len; i++) {
        for (int bit = -1; bit < 8; bit++) {
            memcpy(p, bytes, len);
            p[i] = (uint8_t)(p[i] ^ (bit < 0 ? 0xFFu : 1u << bit));
            /* A damaged version field reads as an unknown version (or as
             * another known one, which then fails the checksum); every
             * other change fails the magic, the length or the checksum. */
            const uint64_t v = le_read(p + 8, 4);
            const bool unknown = v < 1 || v > 5;
            expect_load(p, len, i >= 8 && i < 12 && unknown ? DCH_EVERSION : DCH_ECORRUPT,
                        "flipped byte", (long)i);
        }
    }
    free(p);
}

/* Give d a table for the shape its config now has (the old one repeated),
 * when that shape is valid; else keep it, so the config alone is refused. */
static void fit_table(doc *d)
{
    const uint32_t P = d->units * d->spu;
    if (P == d->P || P == 0 || P > (1u << 24))
        return;
    const size_t c = d->copies;
    d->table = realloc(d->table, (size_t)P * c * sizeof *d->table + 1);
    for (uint32_t s = d->P; s < P; s++)
        memcpy(d->table + s * c, d->table + (s % d->P) * c, c * sizeof *d->table);
    d->P = P;
}

void expect_breakers_rejected(const uint8_t *bytes, size_t len, const doc_breaker *breakers,
                              size_t n)
{
    for (size_t k = 0; k < n; k++) {
        for (int enc = 0; enc < 2; enc++) {
            doc d;
            doc_parse(bytes, len, &d);
            breakers[k].fn(&d);
            if (breakers[k].recount)
                doc_recount(&d);
            fit_table(&d);
            size_t blen;
            uint8_t *b = doc_write(&d, enc, &blen);
            expect_load(b, blen, DCH_ECORRUPT, breakers[k].what, enc);
            free(b);
            doc_free(&d);
        }
    }
}

bool expect_damage_clean(const uint8_t *bytes, size_t len, bool same_bytes,
                         unsigned long long seed, unsigned i)
{
    dch_map *out = NULL;
    const int rc = dch_map_load(&out, bytes, len);
    const uint64_t version = le_read(bytes + 8, 4);
    cr_assert(rc == DCH_OK || rc == DCH_ECORRUPT ||
                  (rc == DCH_EVERSION && (version < 1 || version > 3)),
              "seed %llu case %u: rc %d", seed, i, rc);
    if (rc != DCH_OK)
        return false;
    doc d;
    doc_parse(bytes, len, &d);
    cr_assert_eq(dch_map_fingerprint(out), doc_fingerprint(&d),
                 "seed %llu case %u: the map is not what the bytes say", seed, i);
    cr_assert_eq(dch_map_epoch(out), d.epoch, "seed %llu case %u", seed, i);
    size_t len2;
    uint8_t *again = map_bytes(out, &len2);
    cr_assert(!same_bytes || (len2 == len && memcmp(again, bytes, len) == 0) ||
                  again[d.table_at] != d.encoding,
              "seed %llu case %u: saved back differently", seed, i);
    dch_map *back = NULL;
    cr_assert_eq(dch_map_load(&back, again, len2), DCH_OK, "seed %llu case %u", seed, i);
    assert_same_map(out, back, "damaged, saved again", seed);
    dch_map_free(back);
    free(again);
    doc_free(&d);
    dch_map_free(out);
    return true;
}

unsigned expect_random_damage_clean(const damage_plan *plan)
{
    unsigned accepted = 0;
    for (unsigned i = 0; i < plan->cases; i++) {
        const uint64_t seed = plan->seed + i / plan->per_map;
        uint64_t rng = seed;
        dch_map *m = plan->make(&rng);
        size_t len;
        uint8_t *bytes = map_bytes(m, &len);
        dch_map_free(m);
        cr_assert_gt(len, plan->from + 8);
        rng += i; /* a different damage for each use of a map */
        const uint32_t edits = 1 + rng_below(&rng, plan->edits);
        for (uint32_t e = 0; e < edits; e++) {
            const size_t at = plan->from + rng_below(&rng, (uint32_t)(len - 8 - plan->from));
            bytes[at] = rng_below(&rng, 2) ? (uint8_t)rng_next(&rng) : (uint8_t)(bytes[at] ^ 1);
        }
        if (plan->fix_length && rng_below(&rng, 4) == 0)
            le_write(bytes + 16, len, 8);
        fix_checksum(bytes, len);
        accepted += expect_damage_clean(bytes, len, plan->same_bytes, (unsigned long long)seed, i);
        free(bytes);
    }
    fprintf(stderr, "%s: %u cases, %u still valid maps\n", plan->name, plan->cases, accepted);
    return accepted;
}

char *expect_map_load_seed(const dch_map *m, const char *name, uint32_t version, size_t *len)
{
    const char *w = getenv("DCH_WRITE_SEEDS");
    size_t blen, flen;
    uint8_t *bytes = map_bytes(m, &blen);
    cr_assert_eq(le_read(bytes + 8, 4), version, "%s is a version %u map", name, version);
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus_map_load/%s.dchmap", DCH_SOURCE_DIR, name);
    if (w != NULL && strcmp(w, "1") == 0)
        write_file(path, bytes, blen);
    char *file = slurp(path, &flen);
    cr_assert_not_null(file, "%s missing (DCH_WRITE_SEEDS=1 writes it)", path);
    cr_assert(flen == blen && memcmp(file, bytes, blen) == 0,
              "%s differs from what the library writes", path);
    free(bytes);
    if (len != NULL)
        *len = flen;
    return file;
}
