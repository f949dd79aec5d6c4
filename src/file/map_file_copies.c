/* SPDX-License-Identifier: MIT */
/*
 * The table of a map file (map_file.h): every slot's n entries, primary
 * first, either raw (n u16 a slot) or as runs of slots holding the same
 * entries (n uleb ids and a uleb length a run). Version 3 stores a slot's
 * copies; versions 1 and 2 are the case n = 1, a slot's owner (65535 for
 * unowned), so one reader and one writer serve every version.
 *
 * A tuple run is version 1's owner run with n owners instead of one, and
 * the writer keeps version 1's rule: runs when strictly smaller than raw.
 * Copies vary from slot to slot far more than primaries do, so runs of one
 * slot are the rule at R >= 2; runs still win while ids fit one uleb byte
 * (below 128), saving a quarter to a third of raw at 65,536 slots, and raw
 * wins beyond. The writer reads a map with one copy a slot from its owner
 * table and any other through dch_map_slot_replicas, so it needs no
 * scratch.
 */
#include "dch/error.h"

#include "map_file_internal.h"
#include "map_internal.h"

#include <string.h>

/* Where a table's entries come from: with one copy a slot the owner table
 * itself (the common case, read at array speed), else the public getter. */
typedef struct source {
    const dch_map *m;
    const uint16_t *own; /* one copy a slot; NULL otherwise */
    uint32_t P, n;
} source;

static source source_of(const dch_map *m, uint32_t n)
{
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    const source src = {m, cfg.replicas == 1 ? dch__map_base_table(m) : NULL,
                        dch_map_slot_count(m), n};
    return src;
}

/* The copies of slot s into c[0 .. n-1], DCH__MAP_UNOWNED past its copy
 * count (every slot of a map has the same count: n, or 0 when no member has
 * weight, which a version 1 table writes as one unowned entry a slot). */
static inline void load_tuple(const source *src, uint32_t s, uint32_t *c)
{
    if (src->own != NULL) {
        c[0] = src->own[s];
        return;
    }
    const size_t have = dch_map_base_replicas(src->m, s, c, DCH_MAP_MAX_REPLICAS);
    for (size_t k = have; k < src->n; k++)
        c[k] = DCH__MAP_UNOWNED;
}

static int same_tuple(const uint32_t *a, const uint32_t *b, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        if (a[k] != b[k])
            return 0;
    return 1;
}

/* The end of the run that starts at slot s, whose copies are in c. */
static inline uint32_t run_end(const source *src, uint32_t s, const uint32_t *c)
{
    uint32_t e = s + 1;
    if (src->own != NULL) {
        const uint16_t *own = src->own, first = own[s];
        const uint32_t P = src->P;
        while (e < P && own[e] == first)
            e++;
        return e;
    }
    uint32_t d[DCH_MAP_MAX_REPLICAS];
    while (e < src->P) {
        load_tuple(src, e, d);
        if (!same_tuple(c, d, src->n))
            break;
        e++;
    }
    return e;
}

size_t dch__copy_table_size(const dch_map *m, uint32_t n, unsigned *encoding)
{
    const source src = source_of(m, n);
    uint32_t c[DCH_MAP_MAX_REPLICAS];
    size_t runs = 4;
    for (uint32_t s = 0; s < src.P;) {
        load_tuple(&src, s, c);
        const uint32_t e = run_end(&src, s, c);
        for (uint32_t k = 0; k < n; k++)
            runs += dch__uleb_size(c[k]);
        runs += dch__uleb_size(e - s);
        s = e;
    }
    const size_t raw = (size_t)src.P * n * 2;
    *encoding = runs < raw ? DCH__MAP_ENC_RUNS : DCH__MAP_ENC_RAW;
    return 1 + (runs < raw ? runs : raw);
}

size_t dch__copy_table_write(const dch_map *m, uint32_t n, unsigned encoding, uint8_t *p)
{
    const source src = source_of(m, n);
    uint32_t c[DCH_MAP_MAX_REPLICAS];
    size_t at = 0;
    p[at++] = (uint8_t)encoding;
    if (encoding == DCH__MAP_ENC_RAW) {
        for (uint32_t s = 0; s < src.P; s++) {
            load_tuple(&src, s, c);
            for (uint32_t k = 0; k < n; k++, at += 2)
                dch__put_u16(p + at, (uint16_t)c[k]);
        }
        return at;
    }
    const size_t count_at = at;
    at += 4;
    uint32_t runs = 0;
    for (uint32_t s = 0; s < src.P; runs++) {
        load_tuple(&src, s, c);
        const uint32_t e = run_end(&src, s, c);
        for (uint32_t k = 0; k < n; k++)
            at += dch__put_uleb(p + at, c[k]);
        at += dch__put_uleb(p + at, e - s);
        s = e;
    }
    dch__put_u32(p + count_at, runs);
    return at;
}

int dch__copy_table_read(const uint8_t *p, size_t at, size_t end, uint32_t P, uint32_t R,
                         uint32_t n, uint16_t *table)
{
    if (at >= end || n > R)
        return DCH_ECORRUPT;
    for (size_t i = 0; n < R && i < (size_t)P * R; i++)
        table[i] = DCH__MAP_UNOWNED;
    const uint8_t encoding = p[at++];
    if (encoding == DCH__MAP_ENC_RAW) {
        if (end - at != (size_t)P * n * 2)
            return DCH_ECORRUPT;
        for (uint32_t s = 0; s < P; s++)
            for (uint32_t k = 0; k < n; k++, at += 2)
                table[(size_t)s * R + k] = dch__get_u16(p + at);
        return DCH_OK;
    }
    if (encoding != DCH__MAP_ENC_RUNS || end - at < 4)
        return DCH_ECORRUPT;
    /* A run count outside 1 .. P fails below: every run holds at least one
     * slot and the runs must fill exactly P. */
    const uint32_t runs = dch__get_u32(p + at);
    at += 4;
    uint32_t s = 0;
    for (uint32_t r = 0; r < runs; r++) {
        uint16_t *t = table + (size_t)s * R;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t id;
            if (s >= P || dch__get_uleb(p, end, &at, UINT16_MAX, &id) != 0)
                return DCH_ECORRUPT;
            t[k] = (uint16_t)id;
        }
        uint32_t len;
        if (s >= P || dch__get_uleb(p, end, &at, P - s, &len) != 0 || len == 0)
            return DCH_ECORRUPT;
        /* Adjacent runs hold different tuples, so the runs are unique. */
        uint32_t same = s > 0;
        for (uint32_t k = 0; same && k < n; k++)
            same = (t - R)[k] == t[k];
        if (same)
            return DCH_ECORRUPT;
        if (R == 1) { /* versions 1 and 2: a plain fill */
            for (uint32_t j = 1; j < len; j++)
                t[j] = t[0];
        } else {
            for (uint32_t j = 1; j < len; j++)
                memcpy(t + (size_t)j * R, t, (size_t)n * sizeof *t);
        }
        s += len;
    }
    return s == P && at == end ? DCH_OK : DCH_ECORRUPT;
}
