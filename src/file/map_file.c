/* SPDX-License-Identifier: MIT */
/*
 * Map files, versions 1, 2 and 3: the byte format documented in map_file.h,
 * its writer, its hostile-input reader, and the routing fingerprint.
 * Version 2 is version 1 with a transition record before the checksum;
 * version 3 adds the copies a slot has (R), every member's zone and copy
 * count, and a table of every slot's copies instead of its owner. The writer
 * picks the oldest version that holds the map: a settled map with one copy
 * a slot and no zone is always version 1, so its bytes do not depend on this
 * library knowing versions 2 or 3. The slot table of versions 1 and 2 is the
 * copy table (map_file_copies.c) with one entry a slot.
 *
 * The reader checks structure first (magic, version, length, checksum), then
 * parses every record with an explicit bounds check against the bytes left,
 * and only then allocates, with sizes that the checks have already bounded
 * (at most DCH_MAP_MAX_NODES members, DCH_MAP_MAX_SLOTS slots and
 * DCH_MAP_MAX_REPLICAS copies a slot). The map itself is built by
 * dch__map_assemble, which checks names, zones, weights, coverage, the
 * replica rules and, for a settled map, the global balance bound; the
 * stored slot and copy counts are checked here, on the assembled map,
 * before it is handed out.
 */
#include "dch/map_file.h"

#include "dch/error.h"
#include "dch/siphash.h"

#include "alloc.h"
#include "map_file_internal.h"
#include "map_internal.h"
#include "siphash_stream.h"

#include <string.h>

static const uint8_t file_magic[8] = {0x89, 'D', 'C', 'H', 0x0D, 0x0A, 0x1A, 0x0A};
static const uint8_t checksum_key[16] = {'d', 'c', 'h', ' ', 'm', 'a', 'p', ' ',
                                         'c', 'h', 'e', 'c', 'k', 's', 'u', 'm'};
static const uint8_t fingerprint_key[16] = {'d', 'c', 'h', ' ', 'f', 'i', 'n', 'g',
                                            'e', 'r', 'p', 'r', 'i', 'n', 't', '1'};
static const uint8_t fingerprint_key_copies[16] = {'d', 'c', 'h', ' ', 'f', 'i', 'n', 'g',
                                                   'e', 'r', 'p', 'r', 'i', 'n', 't', 'R'};

#define HEADER_SIZE DCH__MAP_FILE_HEADER
#define RECORD_FIXED 11u /* u16 id, u32 weight, u32 slots, u8 length */
#define RECORD_FIXED_V3 15u /* and u32 copies before the length */
#define REPLICAS_SIZE 4u /* version 3: u32 R after the header */
#define CHECKSUM_SIZE 8u
#define TRANSITION_SIZE 16u /* u64 target fingerprint, u32 step, u32 steps */

#define V1 DCH_MAP_FORMAT_VERSION
#define V2 DCH_MAP_FORMAT_VERSION_STEP
#define V3 DCH_MAP_FORMAT_VERSION_REPLICAS
#define V4 DCH_MAP_FORMAT_VERSION_DRAINS
#define V5 DCH_MAP_FORMAT_VERSION_BALANCE
#define DRAIN_SIZE 3u /* versions 4, 5: u16 id, u8 mode */
#define DRAINS_FIXED 4u /* versions 4, 5: u32 count after the drains */
#define MOVES_FIXED 8u /* version 5: u32 copies a move, u32 count, last */
#define MOVE_SIZE(w) (4u + 2u * (w)) /* version 5: u32 slot, w u16 copies */

/* Whether a version has version 3's records and copy table (3 to 5). */
static int has_copies(uint32_t version)
{
    return version == V3 || version == V4 || version == V5;
}

/* Whether a version lists drains after the table (4 and 5). */
static int has_drains(uint32_t version)
{
    return version == V4 || version == V5;
}

/* ---- Writing ---------------------------------------------------------- */

typedef struct layout {
    uint32_t version;
    uint32_t replicas; /* R */
    uint32_t copies; /* n: entries a slot in the table */
    size_t members; /* bytes of the member records */
    unsigned encoding;
    size_t table; /* bytes of the table, its encoding byte included */
    const dch_map_transition *tr; /* version 2 only */
    size_t drains; /* versions 4, 5: drains in force */
    size_t moves; /* version 5: load moves in force */
    uint32_t width; /* version 5: copies a move gives its slot */
    size_t total;
} layout;

/* Whether any member has a zone. */
static int has_zones(const dch_map *m)
{
    for (uint32_t id = 0; id < dch_map_id_limit(m); id++)
        if (dch_map_node_zone(m, id) != NULL)
            return 1;
    return 0;
}

static void measure(const dch_map *m, layout *l)
{
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    const uint32_t limit = dch_map_id_limit(m);
    l->replicas = cfg.replicas;
    l->tr = dch__map_transition(m);
    /* A step map has one copy a slot and no zone (staging keeps to one copy
     * and builds its steps without zones), so version 2 holds it. */
    l->drains = dch_map_drains(m, NULL, NULL, 0);
    l->moves = dch__map_moves(m, &l->width);
    /* A step map has no layer: staging builds its steps without one. */
    l->version = l->tr != NULL                          ? V2
                 : l->moves > 0                         ? V5
                 : l->drains > 0                        ? V4
                 : l->replicas > 1 || has_zones(m)      ? V3
                                                        : V1;
    l->members = 0;
    for (uint32_t id = 0; id < limit; id++) {
        const char *name = dch_map_node_name(m, id);
        if (name == NULL)
            continue;
        if (has_copies(l->version)) {
            const char *zone = dch_map_node_zone(m, id);
            l->members += RECORD_FIXED_V3 + strlen(name) + 1 + (zone ? strlen(zone) : 0);
        } else {
            l->members += RECORD_FIXED + strlen(name);
        }
    }
    /* Versions 1 and 2 keep one entry a slot even when nobody owns it; in
     * version 3 a slot has as many entries as copies. */
    l->copies = has_copies(l->version) ? (uint32_t)dch_map_base_replicas(m, 0, NULL, 0) : 1;
    l->table = dch__copy_table_size(m, l->copies, &l->encoding);
    l->total = HEADER_SIZE + (has_copies(l->version) ? REPLICAS_SIZE : 0) + l->members +
               l->table + (l->version == V2 ? TRANSITION_SIZE : 0) +
               (has_drains(l->version) ? DRAINS_FIXED + DRAIN_SIZE * l->drains : 0) +
               (l->version == V5 ? MOVES_FIXED + MOVE_SIZE(l->width) * l->moves : 0) +
               CHECKSUM_SIZE;
}

/* Version 5's load moves, then their width and count; the bytes written. */
static size_t write_moves(const dch_map *m, const layout *l, uint8_t *p)
{
    size_t at = 0;
    for (size_t i = 0; i < l->moves; i++) {
        uint32_t slot;
        uint16_t c[DCH_MAP_MAX_REPLICAS];
        dch__map_move_at(m, i, &slot, c);
        dch__put_u32(p + at, slot);
        for (uint32_t k = 0; k < l->width; k++)
            dch__put_u16(p + at + 4 + 2 * k, c[k]);
        at += MOVE_SIZE(l->width);
    }
    dch__put_u32(p + at, l->width);
    dch__put_u32(p + at + 4, (uint32_t)l->moves);
    return at + MOVES_FIXED;
}

int dch_map_save(const dch_map *m, void *buf, size_t cap, size_t *len_out)
{
    if (m == NULL || len_out == NULL)
        return DCH_EINVAL;
    layout l;
    measure(m, &l);
    *len_out = l.total;
    if (buf == NULL)
        return DCH_OK;
    if (cap < l.total)
        return DCH_EFULL;

    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    const uint32_t limit = dch_map_id_limit(m);
    uint8_t *p = buf;

    memcpy(p, file_magic, 8);
    dch__put_u32(p + 8, l.version);
    dch__put_u32(p + 12, dch_map_node_count(m));
    dch__put_u64(p + 16, (uint64_t)l.total);
    dch__put_u32(p + 24, cfg.units);
    dch__put_u32(p + 28, cfg.slots_per_unit);
    memcpy(p + 32, cfg.hash_key, 16);
    dch__put_u64(p + 48, dch_map_epoch(m));
    size_t at = HEADER_SIZE;
    if (has_copies(l.version)) {
        dch__put_u32(p + at, l.replicas);
        at += REPLICAS_SIZE;
    }
    for (uint32_t id = 0; id < limit; id++) {
        const char *name = dch_map_node_name(m, id);
        if (name == NULL)
            continue;
        const size_t len = strlen(name);
        dch__put_u16(p + at, (uint16_t)id);
        dch__put_u32(p + at + 2, dch_map_node_weight(m, id));
        dch__put_u32(p + at + 6, dch__map_base_slots(m, id));
        at += 10;
        if (has_copies(l.version)) {
            dch__put_u32(p + at, dch__map_base_copies(m, id));
            at += 4;
        }
        p[at++] = (uint8_t)len;
        memcpy(p + at, name, len);
        at += len;
        if (has_copies(l.version)) {
            const char *zone = dch_map_node_zone(m, id);
            const size_t zlen = zone ? strlen(zone) : 0;
            p[at++] = (uint8_t)zlen;
            if (zlen > 0)
                memcpy(p + at, zone, zlen);
            at += zlen;
        }
    }
    at += dch__copy_table_write(m, l.copies, l.encoding, p + at);
    if (l.tr != NULL) {
        dch__put_u64(p + at, l.tr->target_fingerprint);
        dch__put_u32(p + at + 8, l.tr->step);
        dch__put_u32(p + at + 12, l.tr->steps);
        at += TRANSITION_SIZE;
    }
    for (size_t i = 0; i < l.drains; i++, at += DRAIN_SIZE) {
        uint32_t id, mode;
        dch__map_drain_at(m, i, &id, &mode);
        dch__put_u16(p + at, (uint16_t)id);
        p[at + 2] = (uint8_t)mode;
    }
    if (has_drains(l.version)) {
        dch__put_u32(p + at, (uint32_t)l.drains);
        at += DRAINS_FIXED;
    }
    if (l.version == V5)
        at += write_moves(m, &l, p + at);
    dch__put_u64(p + at, dch_siphash24(checksum_key, p, at));
    return DCH_OK;
}

/* ---- Reading ---------------------------------------------------------- */

static int is_pow2(uint32_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

/* Scratch of one load, freed whatever the outcome. */
typedef struct scratch {
    const dch_allocator *a;
    const char **names; /* id_limit entries, pointing into blob */
    const char **zones; /* id_limit entries (version 3), into blob */
    uint32_t *weights; /* id_limit */
    uint32_t *slots; /* id_limit: the stored slot counts */
    uint32_t *copies; /* id_limit: the stored copy counts (version 3) */
    char *blob; /* every name and zone, NUL-terminated */
    uint16_t *table; /* P * R */
} scratch;

static void scratch_free(scratch *sc)
{
    void *const blocks[] = {sc->names, sc->zones, sc->weights, sc->slots,
                            sc->copies, sc->blob, sc->table};
    dch__free_all(sc->a, blocks, sizeof blocks / sizeof *blocks);
}

/* What the member records hold, found before anything is allocated. */
typedef struct records {
    uint32_t limit; /* one past the highest id */
    uint32_t weighted; /* members of positive weight, M */
    int zoned; /* some member has a zone */
    size_t blob; /* bytes of the names and zones with their NULs */
} records;

/* A name or zone of len bytes at p[at ..] inside end, without a 00 byte. */
static int string_fits(const uint8_t *p, size_t at, size_t end, size_t len)
{
    return end - at >= len && memchr(p + at, 0, len) == NULL;
}

/*
 * Walk the member records from `at` without storing anything: every record
 * inside `end`, ids strictly ascending and below DCH_MAP_MAX_NODES, names 1
 * .. 255 bytes and zones 0 .. 255 bytes without a 00. Fills *r and moves
 * `at` to where the table starts.
 */
static int scan_members(const uint8_t *p, size_t end, uint32_t version, uint32_t n,
                        size_t *at, records *r)
{
    const size_t fixed = has_copies(version) ? RECORD_FIXED_V3 : RECORD_FIXED;
    uint32_t next = 0; /* the lowest id the next record may have */
    memset(r, 0, sizeof *r);
    for (uint32_t i = 0; i < n; i++) {
        if (end - *at < fixed)
            return DCH_ECORRUPT;
        const uint32_t id = dch__get_u16(p + *at);
        const size_t len = p[*at + fixed - 1];
        if (id < next || id >= DCH_MAP_MAX_NODES || len == 0 ||
            !string_fits(p, *at + fixed, end, len))
            return DCH_ECORRUPT;
        r->weighted += dch__get_u32(p + *at + 2) > 0;
        next = id + 1;
        r->blob += len + 1;
        *at += fixed + len;
        if (has_copies(version)) {
            if (*at >= end)
                return DCH_ECORRUPT;
            const size_t zlen = p[(*at)++];
            if (!string_fits(p, *at, end, zlen))
                return DCH_ECORRUPT;
            r->zoned |= zlen > 0;
            r->blob += zlen + 1;
            *at += zlen;
        }
    }
    r->limit = next;
    return DCH_OK;
}

/* Store the records scan_members checked, from `at`. */
static void store_members(const uint8_t *p, size_t at, uint32_t version, uint32_t n,
                          scratch *sc)
{
    const size_t fixed = has_copies(version) ? RECORD_FIXED_V3 : RECORD_FIXED;
    size_t b = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint16_t id = dch__get_u16(p + at);
        const size_t nlen = p[at + fixed - 1];
        sc->weights[id] = dch__get_u32(p + at + 2);
        sc->slots[id] = dch__get_u32(p + at + 6);
        if (has_copies(version))
            sc->copies[id] = dch__get_u32(p + at + 10);
        memcpy(sc->blob + b, p + at + fixed, nlen);
        sc->blob[b + nlen] = '\0';
        sc->names[id] = sc->blob + b;
        b += nlen + 1;
        at += fixed + nlen;
        if (has_copies(version)) {
            const size_t zlen = p[at++];
            memcpy(sc->blob + b, p + at, zlen);
            sc->blob[b + zlen] = '\0';
            sc->zones[id] = zlen > 0 ? sc->blob + b : NULL;
            b += zlen + 1;
            at += zlen;
        }
    }
}

/*
 * What the assembled map must also satisfy: each stored slot count (and, in
 * version 3, copy count) is the member's count in the table. The balance
 * bound of a settled map (|slots - P*w/W| < 2, which map.h promises after
 * every call) and the replica rules were checked by dch__map_assemble,
 * which rejects a map outside them with DCH_ECORRUPT.
 */
static int check_counts(const dch_map *m, const uint32_t *slots, const uint32_t *copies)
{
    for (uint32_t id = 0; id < dch_map_id_limit(m); id++)
        if (dch_map_node_name(m, id) != NULL &&
            (dch__map_base_slots(m, id) != slots[id] ||
             (copies != NULL && dch__map_base_copies(m, id) != copies[id])))
            return DCH_ECORRUPT;
    return DCH_OK;
}

/*
 * The largest file a map of `version` can take: the header, DCH_MAP_MAX_NODES
 * records with 255-byte names (and zones), a table of DCH_MAP_MAX_SLOTS runs
 * of at most 3 uleb bytes an id and 4 a length (a valid table is never
 * larger; the writer uses runs only when they beat the raw 2 bytes an
 * entry), and the checksum. Version 2 adds the transition record.
 */
static uint64_t max_file(uint32_t version)
{
    const int v3 = has_copies(version);
    const uint64_t per_slot = v3 ? 3 * DCH_MAP_MAX_REPLICAS + 4 : 7;
    const uint64_t record = v3 ? RECORD_FIXED_V3 + 255 + 1 + 255 : RECORD_FIXED + 255;
    return (uint64_t)HEADER_SIZE + (v3 ? REPLICAS_SIZE : 0) +
           (uint64_t)DCH_MAP_MAX_NODES * record + 1 + 4 +
           (uint64_t)DCH_MAP_MAX_SLOTS * per_slot + (version == V2 ? TRANSITION_SIZE : 0) +
           (has_drains(version) ? DRAINS_FIXED + (uint64_t)DRAIN_SIZE * DCH_MAP_MAX_NODES : 0) +
           (version == V5 ? MOVES_FIXED + (uint64_t)DCH_MAP_MAX_SLOTS *
                                              MOVE_SIZE(DCH_MAP_MAX_REPLICAS) : 0) +
           CHECKSUM_SIZE;
}

/* The smallest: no member, and a table of its encoding byte alone. */
static uint64_t min_file(uint32_t version)
{
    return HEADER_SIZE + (has_copies(version) ? REPLICAS_SIZE : 0) + 1 +
           (version == V2 ? TRANSITION_SIZE : 0) +
           (version == V4 ? DRAINS_FIXED + DRAIN_SIZE : 0) +
           (version == V5 ? DRAINS_FIXED + MOVES_FIXED + MOVE_SIZE(1) : 0) + CHECKSUM_SIZE;
}

/*
 * Magic, then version: the order in which dch_map_load_with judges them.
 * Sets *version on success.
 */
static int check_start(const uint8_t *p, size_t len, uint32_t *version)
{
    if (len < 12 || memcmp(p, file_magic, 8) != 0)
        return DCH_ECORRUPT;
    *version = dch__get_u32(p + 8);
    if (*version < V1 || *version > V5)
        return DCH_EVERSION;
    return DCH_OK;
}

int dch__map_file_length(const uint8_t *head, size_t len, uint64_t *file_len)
{
    uint32_t version;
    const int rc = check_start(head, len, &version);
    if (rc != DCH_OK)
        return rc;
    if (len < HEADER_SIZE)
        return DCH_ECORRUPT;
    const uint64_t n = dch__get_u64(head + 16);
    if (n < min_file(version) || n > max_file(version))
        return DCH_ECORRUPT;
    *file_len = n;
    return DCH_OK;
}

int dch_map_load(dch_map **out, const void *buf, size_t len)
{
    return dch_map_load_with(out, buf, len, NULL);
}

/* Where the sections after the table lie: versions 4 and 5's drains,
 * version 5's load moves. */
typedef struct tail {
    size_t drains_at, moves_at;
    uint32_t drains, moves, width;
} tail;

/* Take `bytes` off the end of the part of a file that must still hold its
 * records and table (at least `floor` bytes); 0 if they do not fit. */
static int cut(size_t *end, size_t floor, uint64_t bytes)
{
    if (*end < floor || bytes > *end - floor)
        return 0;
    *end -= (size_t)bytes;
    return 1;
}

/* The drains and load moves before *end, counts last (versions 4, 5): at
 * least one drain in version 4 and one move in version 5, each moving at
 * most DCH_MAP_MAX_REPLICAS copies, all inside the file. */
static int check_tail(const uint8_t *p, uint32_t version, size_t *end, tail *t)
{
    const size_t floor = HEADER_SIZE + REPLICAS_SIZE + 1;
    memset(t, 0, sizeof *t);
    if (version == V5) {
        if (!cut(end, floor, MOVES_FIXED))
            return DCH_ECORRUPT;
        t->width = dch__get_u32(p + *end);
        t->moves = dch__get_u32(p + *end + 4);
        if (t->width == 0 || t->width > DCH_MAP_MAX_REPLICAS || t->moves == 0 ||
            !cut(end, floor, (uint64_t)t->moves * MOVE_SIZE(t->width)))
            return DCH_ECORRUPT;
        t->moves_at = *end;
    }
    if (!has_drains(version))
        return DCH_OK;
    if (!cut(end, floor, DRAINS_FIXED))
        return DCH_ECORRUPT;
    t->drains = dch__get_u32(p + *end);
    if ((version == V4 && t->drains == 0) ||
        !cut(end, floor, (uint64_t)t->drains * DRAIN_SIZE))
        return DCH_ECORRUPT;
    t->drains_at = *end;
    return DCH_OK;
}

/*
 * The frame of a file, in the order the reader judges it: magic, version,
 * length, checksum and, in version 2, the transition record (a step map is
 * never the first or the last step: those are settled maps), in versions 4
 * and 5 the sections after the table. Sets *version, *tr, *t and *end,
 * where the table must end: the transition record or the sections, if
 * any, sit between it and the checksum.
 */
static int check_frame(const uint8_t *p, size_t len, uint32_t *version, dch_map_transition *tr,
                       size_t *end, tail *t)
{
    const int start = check_start(p, len, version);
    if (start != DCH_OK)
        return start;
    if (len < min_file(*version) || dch__get_u64(p + 16) != (uint64_t)len)
        return DCH_ECORRUPT;
    if (dch_siphash24(checksum_key, p, len - CHECKSUM_SIZE) !=
        dch__get_u64(p + len - CHECKSUM_SIZE))
        return DCH_ECORRUPT;
    *end = len - CHECKSUM_SIZE - (*version == V2 ? TRANSITION_SIZE : 0);
    const int rc = check_tail(p, *version, end, t);
    if (rc != DCH_OK)
        return rc;
    if (*version == V2) {
        tr->target_fingerprint = dch__get_u64(p + *end);
        tr->step = dch__get_u32(p + *end + 8);
        tr->steps = dch__get_u32(p + *end + 12);
        if (tr->step == 0 || tr->step >= tr->steps)
            return DCH_ECORRUPT;
    }
    return DCH_OK;
}

/*
 * The header's map: its config (with `allocator`), member count *n and
 * epoch, each inside what a map can have.
 */
static int read_header(const uint8_t *p, uint32_t version, const dch_allocator *allocator,
                       dch_map_config *cfg, uint32_t *n, uint64_t *epoch)
{
    dch_map_config_default(cfg);
    *n = dch__get_u32(p + 12);
    cfg->units = dch__get_u32(p + 24);
    cfg->slots_per_unit = dch__get_u32(p + 28);
    memcpy(cfg->hash_key, p + 32, 16);
    cfg->allocator = allocator;
    cfg->replicas = has_copies(version) ? dch__get_u32(p + HEADER_SIZE) : 1;
    *epoch = dch__get_u64(p + 48);
    if (!is_pow2(cfg->units) || !is_pow2(cfg->slots_per_unit) ||
        (uint64_t)cfg->units * cfg->slots_per_unit > DCH_MAP_MAX_SLOTS ||
        *n > DCH_MAP_MAX_NODES || cfg->replicas == 0 || cfg->replicas > DCH_MAP_MAX_REPLICAS)
        return DCH_ECORRUPT;
    return DCH_OK;
}

/*
 * Allocate the scratch of a load (sc->a set, every pointer NULL): a table
 * of P * R entries and, for r->limit ids, the member arrays (zones and
 * copies in version 3), every member entry empty. On DCH_ENOMEM nothing is
 * left allocated.
 */
static int scratch_alloc(scratch *sc, const records *r, int v3, uint32_t P, uint32_t R)
{
    const dch_allocator *a = sc->a;
    sc->table = dch__alloc_array(a, P, (size_t)R * sizeof *sc->table);
    if (r->limit > 0) {
        sc->names = dch__alloc_array(a, r->limit, sizeof *sc->names);
        sc->weights = dch__alloc_array(a, r->limit, sizeof *sc->weights);
        sc->slots = dch__alloc_array(a, r->limit, sizeof *sc->slots);
        sc->blob = dch__alloc(a, r->blob);
        if (v3) {
            sc->zones = dch__alloc_array(a, r->limit, sizeof *sc->zones);
            sc->copies = dch__alloc_array(a, r->limit, sizeof *sc->copies);
        }
    }
    if (sc->table == NULL ||
        (r->limit > 0 && (!sc->names || !sc->weights || !sc->slots || !sc->blob ||
                          (v3 && (!sc->zones || !sc->copies))))) {
        scratch_free(sc);
        return DCH_ENOMEM;
    }
    for (uint32_t id = 0; id < r->limit; id++) {
        sc->names[id] = NULL;
        sc->weights[id] = 0;
        sc->slots[id] = 0;
        if (v3) {
            sc->zones[id] = NULL;
            sc->copies[id] = 0;
        }
    }
    return DCH_OK;
}

/* The drains and load moves of a version 4 or 5 file (where check_tail
 * found them), put in force on m. */
static int read_layer(dch_map *m, const uint8_t *p, const tail *t)
{
    const uint32_t n = t->drains, nmv = t->moves, w = t->width;
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    const dch_allocator *a = cfg.allocator;
    uint32_t *ids = dch__alloc_array(a, (size_t)n + nmv + 1, 2 * sizeof *ids);
    uint16_t *copies = dch__alloc_array(a, (size_t)nmv * w + 1, sizeof *copies);
    int rc = DCH_ENOMEM;
    if (ids != NULL && copies != NULL) {
        uint32_t *modes = ids + n, *slots = ids + 2 * n;
        for (uint32_t i = 0; i < n; i++) {
            ids[i] = dch__get_u16(p + t->drains_at + i * DRAIN_SIZE);
            modes[i] = p[t->drains_at + i * DRAIN_SIZE + 2];
        }
        for (uint32_t i = 0; i < nmv; i++) {
            const size_t at = t->moves_at + (size_t)i * MOVE_SIZE(w);
            slots[i] = dch__get_u32(p + at);
            for (uint32_t k = 0; k < w; k++)
                copies[(size_t)i * w + k] = dch__get_u16(p + at + 4 + 2 * k);
        }
        rc = dch__map_set_layer(m, ids, modes, n, slots, copies, nmv, w);
    }
    dch__free(a, ids);
    dch__free(a, copies);
    return rc;
}

int dch_map_load_with(dch_map **out, const void *buf, size_t len,
                      const dch_allocator *allocator)
{
    if (out == NULL || (buf == NULL && len > 0) || !dch__allocator_valid(allocator))
        return DCH_EINVAL;
    const uint8_t *p = buf;
    uint32_t version;
    dch_map_transition tr = {0, 0, 0};
    size_t end;
    tail t;
    int rc = check_frame(p, len, &version, &tr, &end, &t);
    if (rc != DCH_OK)
        return rc;
    dch_map_config cfg;
    uint32_t n;
    uint64_t epoch;
    rc = read_header(p, version, allocator, &cfg, &n, &epoch);
    if (rc != DCH_OK)
        return rc;
    const uint32_t P = cfg.units * cfg.slots_per_unit;
    const uint32_t R = cfg.replicas;

    size_t at = HEADER_SIZE + (has_copies(version) ? REPLICAS_SIZE : 0);
    const size_t members_at = at;
    records r;
    rc = scan_members(p, end, version, n, &at, &r);
    if (rc != DCH_OK)
        return rc;
    /* The writer uses version 3 only for what version 1 cannot hold, so a
     * version 3 map with one copy a slot and no zone was not written by it. */
    if (version == V3 && R == 1 && !r.zoned)
        return DCH_ECORRUPT;
    const size_t table_at = at;
    /* Entries a slot: versions 1 and 2 keep one even for an unowned slot. */
    const uint32_t copies = has_copies(version) ? (r.weighted < R ? r.weighted : R) : 1;

    scratch sc = {allocator, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    rc = scratch_alloc(&sc, &r, has_copies(version), P, R);
    if (rc != DCH_OK)
        return rc;
    store_members(p, members_at, version, n, &sc);

    rc = dch__copy_table_read(p, table_at, end, P, R, copies, sc.table);
    dch_map *m = NULL;
    if (rc == DCH_OK)
        rc = dch__map_assemble(&m, &cfg, epoch, r.limit, sc.names, sc.zones, sc.weights,
                               sc.table, version == V2 ? &tr : NULL);
    if (rc == DCH_OK)
        rc = check_counts(m, sc.slots, sc.copies);
    if (rc == DCH_OK && has_drains(version))
        rc = read_layer(m, p, &t);
    if (rc != DCH_OK)
        dch_map_free(m);
    scratch_free(&sc);
    /* The checks above make a bad config impossible here; whatever the
     * assembly still rejects is a property of the bytes. */
    if (rc == DCH_EINVAL || rc == DCH_EFULL)
        rc = DCH_ECORRUPT;
    if (rc == DCH_OK)
        *out = m;
    return rc;
}

/* ---- Fingerprint ------------------------------------------------------ */

/* The load moves last, after a tag: a map with none hashes as before they
 * existed. */
static void hash_moves(const dch_map *m, dch__sipstream *st)
{
    uint32_t width;
    const uint32_t moves = dch__map_moves(m, &width);
    if (moves > 0) {
        dch__sipstream_u32(st, 0x4c4f4144u); /* "LOAD" */
        dch__sipstream_u32(st, moves);
        dch__sipstream_u32(st, width);
    }
    for (uint32_t i = 0; i < moves; i++) {
        uint32_t slot;
        uint16_t c[DCH_MAP_MAX_REPLICAS];
        dch__map_move_at(m, i, &slot, c);
        dch__sipstream_u32(st, slot);
        for (uint32_t k = 0; k < width; k++)
            dch__sipstream_u16(st, c[k]);
    }
}

uint64_t dch_map_fingerprint(const dch_map *m)
{
    if (m == NULL)
        return 0;
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    const uint32_t R = cfg.replicas;
    dch__sipstream st;
    dch__sipstream_init(&st, R > 1 ? fingerprint_key_copies : fingerprint_key);
    dch__sipstream_u32(&st, cfg.units);
    dch__sipstream_u32(&st, cfg.slots_per_unit);
    dch__sipstream_update(&st, cfg.hash_key, 16);
    if (R > 1)
        dch__sipstream_u32(&st, R);
    dch__sipstream_u32(&st, dch_map_node_count(m));
    for (uint32_t id = 0; id < dch_map_id_limit(m); id++) {
        const char *name = dch_map_node_name(m, id);
        if (name == NULL)
            continue;
        const size_t len = strlen(name);
        dch__sipstream_u16(&st, (uint16_t)id);
        dch__sipstream_u32(&st, dch_map_node_weight(m, id));
        dch__sipstream_u8(&st, (uint8_t)len);
        dch__sipstream_update(&st, name, len);
        if (R > 1) {
            const char *zone = dch_map_node_zone(m, id);
            const size_t zlen = zone ? strlen(zone) : 0;
            dch__sipstream_u8(&st, (uint8_t)zlen);
            dch__sipstream_update(&st, zone, zlen);
        }
    }
    /* The table, R entries a slot, in chunks of little-endian u16, so no
     * allocation; with one copy a slot, straight from the owner table. */
    const uint16_t *own = R == 1 ? dch__map_base_table(m) : NULL;
    const uint32_t P = dch_map_slot_count(m);
    uint8_t chunk[512];
    for (uint32_t s = 0; own != NULL && s < P;) { /* one copy: the plain loop */
        size_t n = 0;
        for (; s < P && n < sizeof chunk; s++, n += 2)
            dch__put_u16(chunk + n, own[s]);
        dch__sipstream_update(&st, chunk, n);
    }
    for (uint32_t s = 0; own == NULL && s < P;) {
        size_t n = 0;
        for (; s < P && n + 2 * R <= sizeof chunk; s++) {
            uint32_t c[DCH_MAP_MAX_REPLICAS];
            const size_t have = dch_map_base_replicas(m, s, c, DCH_MAP_MAX_REPLICAS);
            for (uint32_t k = 0; k < R; k++, n += 2)
                dch__put_u16(chunk + n, k < have ? (uint16_t)c[k] : DCH__MAP_UNOWNED);
        }
        dch__sipstream_update(&st, chunk, n);
    }
    /* The drains, in order, after everything else: a map with none hashes
     * exactly as before drains existed. */
    const size_t drains = dch_map_drains(m, NULL, NULL, 0);
    for (size_t i = 0; i < drains; i++) {
        uint32_t id, mode;
        dch__map_drain_at(m, i, &id, &mode);
        if (i == 0)
            dch__sipstream_u32(&st, (uint32_t)drains);
        dch__sipstream_u16(&st, (uint16_t)id);
        dch__sipstream_u8(&st, (uint8_t)mode);
    }
    hash_moves(m, &st);
    return dch__sipstream_final(&st);
}
