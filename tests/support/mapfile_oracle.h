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

#endif /* DCH_TEST_MAPFILE_ORACLE_H */
