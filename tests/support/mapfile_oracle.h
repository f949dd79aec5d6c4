/* SPDX-License-Identifier: MIT */
/*
 * An independent reader and writer of the map file format, written from
 * include/dch/map_file.h's description alone (versions 1, 2 and 3), with
 * libsodium's SipHash-2-4 for the checksum and the fingerprint: the oracle
 * the map-file tests hold the library's bytes against. It asserts with
 * Criterion, so only Criterion programs link it (dch_test_mapfile).
 */
#ifndef DCH_TEST_MAPFILE_ORACLE_H
#define DCH_TEST_MAPFILE_ORACLE_H

#include "dch/dch.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One member record. copies, zlen and zone exist in version 3 only. */
typedef struct rec {
    uint32_t id, weight, slots, copies, len, zlen;
    uint8_t name[256], zone[256];
} rec;

/* A whole file, field by field. */
typedef struct doc {
    uint32_t version, n, R; /* R: 1 in versions 1 and 2 */
    uint64_t length;
    uint32_t units, spu;
    uint8_t key[16];
    uint64_t epoch;
    rec *recs; /* n + 2 entries, for breakers that add one */
    uint32_t encoding;
    size_t table_at; /* offset of the encoding byte */
    uint32_t P, copies; /* copies: entries a slot (1 in versions 1 and 2) */
    uint16_t *table;    /* P * copies, slot by slot, primary first */
    uint8_t transition[16]; /* version 2's transition record */
} doc;

/* SipHash-2-4 of msg under key16, from libsodium, as a little-endian
 * integer. */
uint64_t sodium_sip(const char key16[16], const uint8_t *msg, size_t len);

/* Parse a file the library wrote, asserting the documented layout (magic,
 * length field, checksum, a table that ends at the checksum). The caller
 * frees *d with doc_free. */
void doc_parse(const uint8_t *p, size_t len, doc *d);
void doc_free(doc *d);

/* Write a file from its parts as map_file.h describes d->version, with the
 * given table encoding (-1: the writer's rule, runs when strictly smaller),
 * the length field and checksum computed. The caller frees the bytes. */
uint8_t *doc_write(const doc *d, int encoding, size_t *len_out);

/* Recompute the checksum after a change to the bytes before it. */
void fix_checksum(uint8_t *p, size_t len);

/* The fingerprint as map_file.h defines it from the documented parts: the
 * R = 1 definition ("dch fingerprint1") or the R >= 2 one. */
uint64_t doc_fingerprint(const doc *d);

/* The record of id, or NULL. */
rec *doc_rec(doc *d, uint32_t id);

/* Recount every member's primaries and copies from the table. */
void doc_recount(doc *d);

/* ---- Maps to save ------------------------------------------------------- */

/* A new empty map of units x slots_per_unit slots with R copies a slot (the
 * default key and libc's allocator); the test fails when it cannot be made. */
dch_map *map_with_replicas(uint32_t units, uint32_t slots_per_unit, uint32_t R);

/* ---- Checks built on the oracle ----------------------------------------- */

/* Every getter of a and b agrees: config, epoch, members (name, zone,
 * weight, slots, copies) and every slot's copies in order. */
void assert_same_map(const dch_map *a, const dch_map *b, const char *what,
                     unsigned long long seed);

/* A load of p (len bytes) must give `want`; on an error *out is left as it
 * was. `what` and `detail` name the case in a failure. */
void expect_load(const uint8_t *p, size_t len, int want, const char *what, long detail);

/* bytes (len, what the library wrote for m) hold exactly what m's getters
 * say, field by field as map_file.h lays them out; the documented writer
 * gives the same bytes and the documented fingerprint m's; the other table
 * encoding loads to the same map. @return the encoding bytes used (0 raw,
 * 1 runs). */
uint32_t doc_check_bytes(const dch_map *m, const uint8_t *bytes, size_t len,
                         unsigned long long seed);

/* bytes with the `width`-byte little-endian field at `at` set to v, behind
 * a repaired checksum, fail to load with DCH_ECORRUPT. */
void expect_field_rejected(const uint8_t *bytes, size_t len, size_t at, uint64_t v, int width,
                           const char *what, long detail);

/* The run table at `table` (its encoding byte; runs of `tuple` one-byte
 * entries and a one-byte length first) with a run count off by one either
 * way or 0, a first run of length 0 or past P, or encoding 2: each fails to
 * load. */
void expect_run_table_rejected(const uint8_t *bytes, size_t len, size_t table, size_t tuple);

/* bytes, what the library wrote for m, load to a map equal to m in every
 * getter and fingerprint, which saves to the same bytes. @return the
 * loaded map (the caller frees it). */
dch_map *expect_round_trip(const dch_map *m, const uint8_t *bytes, size_t len,
                           unsigned long long seed);

/* n random maps, map i from make(rng, i) with the stream seeded base + i,
 * each given to check with its seed and ctx, then freed. */
void each_random_map(dch_map *(*make)(uint64_t *rng, unsigned i), uint64_t base, unsigned n,
                     void (*check)(const dch_map *m, unsigned long long seed, void *ctx),
                     void *ctx);

/* doc_check_bytes over each_random_map's maps, each written as format
 * `version`; both table encodings must turn up. */
void expect_layout_of_random_maps(dch_map *(*make)(uint64_t *rng, unsigned i), uint64_t base,
                                  unsigned n, uint32_t version);

/* A load of m's bytes through an allocator that fails at every point in
 * turn (fault_sweep in `mode`): each failure gives DCH_ENOMEM, leaves *out
 * and leaks nothing; a success gives m in the caller's allocator, freed
 * through it. The load must allocate more than min_failures times. */
void expect_load_failures_clean(const dch_map *m, unsigned mode, long min_failures);

/* Every truncation of bytes, and every byte of it flipped whole or one bit
 * at a time, fails to load (a flipped version field as an unknown version
 * where it is one, DCH_EVERSION). */
void expect_damage_rejected(const uint8_t *bytes, size_t len);

/* One hostile change to the parts of a file, behind a valid checksum. */
typedef struct doc_breaker {
    const char *what;
    void (*fn)(doc *d);
    bool recount; /* recount the members' slots and copies after it */
} doc_breaker;

/* Each breaker applied to bytes' parts, written in both table encodings,
 * must fail to load with DCH_ECORRUPT. A breaker that changes the shape
 * gets a table of the new size (the old one repeated) when that size is
 * valid, so that the config alone is refused. */
void expect_breakers_rejected(const uint8_t *bytes, size_t len, const doc_breaker *breakers,
                              size_t n);

/* Damaged bytes behind a repaired checksum either fail to load cleanly
 * (DCH_ECORRUPT; DCH_EVERSION only for an unknown version) or load to the map the documented reader
 * sees (fingerprint and epoch), which saves to bytes that load to the same
 * map; with `same_bytes`, to the very same bytes unless the damage picked
 * the table encoding the writer would not. `seed` and `i` name the case.
 * @return whether the bytes loaded. */
bool expect_damage_clean(const uint8_t *bytes, size_t len, bool same_bytes,
                         unsigned long long seed, unsigned i);

/* Random damage behind a repaired checksum, case by case through
 * expect_damage_clean. */
typedef struct damage_plan {
    const char *name;                /* in the summary line on stderr */
    dch_map *(*make)(uint64_t *rng); /* a random map from the stream */
    uint64_t seed;                   /* of case 0 */
    unsigned cases, per_map;         /* cases in all; cases a map serves */
    size_t from;                     /* first byte damaged; the checksum never is */
    uint32_t edits;                  /* 1 .. edits bytes damaged a case */
    bool fix_length;                 /* in a quarter of the cases, repair the length */
    bool same_bytes;                 /* expect_damage_clean's */
} damage_plan;

/* Run the plan. @return the cases whose damaged bytes still loaded. */
unsigned expect_random_damage_clean(const damage_plan *plan);

/* ---- The map-load fuzzer's seeds ----------------------------------------- */

/* tests/fuzz/corpus_map_load/<name>.dchmap holds exactly the bytes the
 * library writes for m, a map of format `version`. With DCH_WRITE_SEEDS=1
 * in the environment the file is (re)written first; otherwise a format
 * change that forgets the corpus fails here. @return the file's bytes (the
 * caller frees them), their length in *len when len is not NULL. */
char *expect_map_load_seed(const dch_map *m, const char *name, uint32_t version, size_t *len);

#endif /* DCH_TEST_MAPFILE_ORACLE_H */
