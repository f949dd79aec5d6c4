/* SPDX-License-Identifier: MIT */
/*
 * What the map file code shares between its files: the little-endian and
 * LEB128 primitives of the byte format (map_file.h), the copy table of
 * version 3 (map_file_copies.c), and what reading a map file from a stream
 * needs (map_file_io.c). Internal to libdch.
 */
#ifndef DCH_SRC_MAP_FILE_INTERNAL_H
#define DCH_SRC_MAP_FILE_INTERNAL_H

#include "dch/map.h"

#include <stddef.h>
#include <stdint.h>

/** Bytes of the fixed header, which holds the file length. */
#define DCH__MAP_FILE_HEADER 56u

/** Table encodings, for the slot table and the copy table alike. */
#define DCH__MAP_ENC_RAW 0u
#define DCH__MAP_ENC_RUNS 1u

/* ---- Little-endian bytes, and unsigned LEB128 --------------------------- */

static inline void dch__put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void dch__put_u32(uint8_t *p, uint32_t v)
{
    for (unsigned i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void dch__put_u64(uint8_t *p, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t dch__get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t dch__get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t dch__get_u64(const uint8_t *p)
{
    return (uint64_t)dch__get_u32(p) | (uint64_t)dch__get_u32(p + 4) << 32;
}

/** Bytes of v as a shortest-form uleb. */
static inline size_t dch__uleb_size(uint32_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/** Write v as a shortest-form uleb at p; the bytes written. */
static inline size_t dch__put_uleb(uint8_t *p, uint32_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/*
 * Read a shortest-form uleb of at most `max` from p[*pos .. end-1]. Returns 0
 * on success; -1 when it runs past end, is longer than needed, or exceeds
 * max. Values here are below 2^25, so at most 4 bytes are ever read.
 */
static inline int dch__get_uleb(const uint8_t *p, size_t end, size_t *pos, uint32_t max,
                                uint32_t *out)
{
    uint32_t v = 0;
    for (unsigned shift = 0; shift < 28; shift += 7) {
        if (*pos >= end)
            return -1;
        const uint8_t b = p[(*pos)++];
        v |= (uint32_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            if (b == 0 && shift > 0)
                return -1; /* a trailing zero group: not the shortest form */
            if (v > max)
                return -1;
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* ---- The table: copies (version 3) or owners (1, 2), map_file_copies.c -- */

/**
 * Bytes the table of `m` takes (its encoding byte included) with n entries
 * a slot: the slot's copies, DCH__MAP_UNOWNED past its copy count (every
 * slot of a map has the same count), and the encoding the writer uses: runs
 * when strictly smaller than raw. O(P * n).
 */
size_t dch__copy_table_size(const dch_map *m, uint32_t n, unsigned *encoding);

/** Write the table measured by dch__copy_table_size at p; the bytes
 *  written. */
size_t dch__copy_table_write(const dch_map *m, uint32_t n, unsigned encoding, uint8_t *p);

/**
 * Decode a table of P slots with n entries each from p[at .. end-1], which
 * it must fill exactly, into table (P * R entries, slot-major, R >= n):
 * entries past n are set to DCH__MAP_UNOWNED. Checks only the encoding (run
 * counts and lengths, shortest ulebs, adjacent runs differing, ids at most
 * 65535); what the ids mean is dch__map_assemble's to check.
 *
 * @return DCH_OK or DCH_ECORRUPT.
 */
int dch__copy_table_read(const uint8_t *p, size_t at, size_t end, uint32_t P, uint32_t R,
                         uint32_t n, uint16_t *table);

/* ---- Streams (map_file_io.c) -------------------------------------------- */

/**
 * The file length a header announces, so that a reader knows how much more
 * to read. `head` holds the first `len` bytes of a file.
 *
 * @return DCH_OK with *file_len set (at least DCH__MAP_FILE_HEADER + 9);
 *         DCH_ECORRUPT (fewer than 12 bytes, bad magic, a header cut short,
 *         or a length no map of the file's version can have); DCH_EVERSION.
 */
int dch__map_file_length(const uint8_t *head, size_t len, uint64_t *file_len);

#endif /* DCH_SRC_MAP_FILE_INTERNAL_H */
