/*
 * Map files, versions 1 and 2: the byte format documented in map_file.h, its
 * writer, its hostile-input reader, and the routing fingerprint. Version 2 is
 * version 1 with a transition record before the checksum; a settled map is
 * always written as version 1, so its bytes do not depend on this library
 * knowing version 2.
 *
 * The reader checks structure first (magic, version, length, checksum), then
 * parses every record with an explicit bounds check against the bytes left,
 * and only then allocates, with sizes that the checks have already bounded
 * (at most DCH_MAP_MAX_NODES members and DCH_MAP_MAX_SLOTS slots). The map
 * itself is built by dch__map_assemble, which checks names, weights,
 * coverage and, for a settled map, the global balance bound; the stored slot
 * counts are checked here, on the assembled map, before it is handed out.
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

#define HEADER_SIZE DCH__MAP_FILE_HEADER
#define RECORD_FIXED 11u /* u16 id, u32 weight, u32 slots, u8 length */
#define CHECKSUM_SIZE 8u
#define TRANSITION_SIZE 16u /* u64 target fingerprint, u32 step, u32 steps */
#define ENC_RAW 0u
#define ENC_RUNS 1u

/* ---- Little-endian bytes ---------------------------------------------- */

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (unsigned i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const uint8_t *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static size_t uleb_size(uint32_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t put_uleb(uint8_t *p, uint32_t v)
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
static int get_uleb(const uint8_t *p, size_t end, size_t *pos, uint32_t max,
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

/* ---- Writing ---------------------------------------------------------- */

typedef struct layout {
    size_t members; /* bytes of the member records */
    uint32_t runs; /* R */
    size_t runs_bytes; /* bytes of the runs after R */
    unsigned encoding;
    const dch_map_transition *tr; /* NULL: settled, version 1 */
    size_t total;
} layout;

static void measure(const dch_map *m, layout *l)
{
    const uint32_t limit = dch_map_id_limit(m);
    const uint32_t P = dch_map_slot_count(m);
    const uint16_t *own = dch__map_owner_table(m);
    l->members = 0;
    for (uint32_t id = 0; id < limit; id++) {
        const char *name = dch_map_node_name(m, id);
        if (name != NULL)
            l->members += RECORD_FIXED + strlen(name);
    }
    l->runs = 0;
    l->runs_bytes = 0;
    for (uint32_t s = 0; s < P;) {
        uint32_t e = s + 1;
        while (e < P && own[e] == own[s])
            e++;
        l->runs++;
        l->runs_bytes += uleb_size(own[s]) + uleb_size(e - s);
        s = e;
    }
    const size_t raw = (size_t)P * 2;
    const size_t runs = 4 + l->runs_bytes;
    l->encoding = runs < raw ? ENC_RUNS : ENC_RAW;
    l->tr = dch__map_transition(m);
    l->total = HEADER_SIZE + l->members + 1 + (l->encoding == ENC_RUNS ? runs : raw) +
               (l->tr != NULL ? TRANSITION_SIZE : 0) + CHECKSUM_SIZE;
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
    const uint32_t P = dch_map_slot_count(m);
    const uint16_t *own = dch__map_owner_table(m);
    uint8_t *p = buf;

    memcpy(p, file_magic, 8);
    put_u32(p + 8, l.tr != NULL ? DCH_MAP_FORMAT_VERSION_STEP : DCH_MAP_FORMAT_VERSION);
    put_u32(p + 12, dch_map_node_count(m));
    put_u64(p + 16, (uint64_t)l.total);
    put_u32(p + 24, cfg.units);
    put_u32(p + 28, cfg.slots_per_unit);
    memcpy(p + 32, cfg.hash_key, 16);
    put_u64(p + 48, dch_map_epoch(m));
    size_t at = HEADER_SIZE;
    for (uint32_t id = 0; id < limit; id++) {
        const char *name = dch_map_node_name(m, id);
        if (name == NULL)
            continue;
        const size_t len = strlen(name);
        put_u16(p + at, (uint16_t)id);
        put_u32(p + at + 2, dch_map_node_weight(m, id));
        put_u32(p + at + 6, dch_map_node_slots(m, id));
        p[at + 10] = (uint8_t)len;
        memcpy(p + at + RECORD_FIXED, name, len);
        at += RECORD_FIXED + len;
    }
    p[at++] = (uint8_t)l.encoding;
    if (l.encoding == ENC_RAW) {
        for (uint32_t s = 0; s < P; s++, at += 2)
            put_u16(p + at, own[s]);
    } else {
        put_u32(p + at, l.runs);
        at += 4;
        for (uint32_t s = 0; s < P;) {
            uint32_t e = s + 1;
            while (e < P && own[e] == own[s])
                e++;
            at += put_uleb(p + at, own[s]);
            at += put_uleb(p + at, e - s);
            s = e;
        }
    }
    if (l.tr != NULL) {
        put_u64(p + at, l.tr->target_fingerprint);
        put_u32(p + at + 8, l.tr->step);
        put_u32(p + at + 12, l.tr->steps);
        at += TRANSITION_SIZE;
    }
    put_u64(p + at, dch_siphash24(checksum_key, p, at));
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
    uint32_t *weights; /* id_limit */
    uint32_t *slots; /* id_limit: the stored slot counts */
    char *blob; /* every name, NUL-terminated */
    uint16_t *owner; /* P */
} scratch;

static void scratch_free(scratch *sc)
{
    void *const blocks[] = {sc->names, sc->weights, sc->slots, sc->blob, sc->owner};
    dch__free_all(sc->a, blocks, sizeof blocks / sizeof *blocks);
}

/*
 * Walk the member records from `at` without storing anything: every record
 * inside `end`, ids strictly ascending and below DCH_MAP_MAX_NODES, names 1
 * .. 255 bytes without a 00. Sets the id limit, the bytes the names need with
 * their NULs, and where the table starts.
 */
static int scan_members(const uint8_t *p, size_t end, uint32_t n, size_t *at,
                        uint32_t *limit, size_t *blob)
{
    uint32_t next = 0; /* the lowest id the next record may have */
    *blob = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (end - *at < RECORD_FIXED)
            return DCH_ECORRUPT;
        const uint32_t id = get_u16(p + *at);
        const size_t len = p[*at + 10];
        if (id < next || id >= DCH_MAP_MAX_NODES || len == 0 ||
            end - *at - RECORD_FIXED < len ||
            memchr(p + *at + RECORD_FIXED, 0, len) != NULL)
            return DCH_ECORRUPT;
        next = id + 1;
        *blob += len + 1;
        *at += RECORD_FIXED + len;
    }
    *limit = next;
    return DCH_OK;
}

/* Decode the slot table at p[at .. end-1], which it must fill exactly. */
static int read_table(const uint8_t *p, size_t at, size_t end, uint32_t P,
                      uint16_t *owner)
{
    if (at >= end)
        return DCH_ECORRUPT;
    const uint8_t encoding = p[at++];
    if (encoding == ENC_RAW) {
        if (end - at != (size_t)P * 2)
            return DCH_ECORRUPT;
        for (uint32_t s = 0; s < P; s++, at += 2)
            owner[s] = get_u16(p + at);
        return DCH_OK;
    }
    if (encoding != ENC_RUNS || end - at < 4)
        return DCH_ECORRUPT;
    /* R outside 1 .. P fails below: every run holds at least one slot and
     * the runs must fill exactly P. */
    const uint32_t runs = get_u32(p + at);
    at += 4;
    uint32_t s = 0;
    for (uint32_t r = 0; r < runs; r++) {
        uint32_t o, len;
        if (get_uleb(p, end, &at, UINT16_MAX, &o) != 0 ||
            get_uleb(p, end, &at, P - s, &len) != 0 || len == 0 ||
            (s > 0 && owner[s - 1] == o))
            return DCH_ECORRUPT;
        for (uint32_t k = 0; k < len; k++)
            owner[s + k] = (uint16_t)o;
        s += len;
    }
    return s == P && at == end ? DCH_OK : DCH_ECORRUPT;
}

/*
 * What the assembled map must also satisfy: each stored slot count is the
 * member's count in the table. The balance bound of a settled map
 * (|slots - P*w/W| < 2, which map.h promises after every call) was checked
 * by dch__map_assemble, which rejects a settled map outside it with
 * DCH_ECORRUPT.
 */
static int check_counts(const dch_map *m, const uint32_t *slots)
{
    for (uint32_t id = 0; id < dch_map_id_limit(m); id++)
        if (dch_map_node_name(m, id) != NULL && dch_map_node_slots(m, id) != slots[id])
            return DCH_ECORRUPT;
    return DCH_OK;
}

/*
 * The largest file a version 1 map can take: the header, DCH_MAP_MAX_NODES
 * records with 255-byte names, a table of DCH_MAP_MAX_SLOTS runs of at most
 * 3 + 4 uleb bytes each (a valid table is never larger; the writer uses runs
 * only when they beat the raw 2 bytes a slot), and the checksum. Version 2
 * adds the transition record.
 */
#define MAX_FILE ((uint64_t)HEADER_SIZE + (uint64_t)DCH_MAP_MAX_NODES * (RECORD_FIXED + 255) + \
                  1 + 4 + (uint64_t)DCH_MAP_MAX_SLOTS * 7 + CHECKSUM_SIZE)

/* Bytes between the slot table and the checksum in a file of `version`. */
static size_t trailer_size(uint32_t version)
{
    return version == DCH_MAP_FORMAT_VERSION_STEP ? TRANSITION_SIZE : 0;
}

/*
 * Magic, then version: the order in which dch_map_load_with judges them.
 * Sets *version on success.
 */
static int check_start(const uint8_t *p, size_t len, uint32_t *version)
{
    if (len < 12 || memcmp(p, file_magic, 8) != 0)
        return DCH_ECORRUPT;
    *version = get_u32(p + 8);
    if (*version != DCH_MAP_FORMAT_VERSION && *version != DCH_MAP_FORMAT_VERSION_STEP)
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
    const uint64_t n = get_u64(head + 16);
    const size_t trailer = trailer_size(version);
    if (n < HEADER_SIZE + 1 + trailer + CHECKSUM_SIZE || n > MAX_FILE + trailer)
        return DCH_ECORRUPT;
    *file_len = n;
    return DCH_OK;
}

int dch_map_load(dch_map **out, const void *buf, size_t len)
{
    return dch_map_load_with(out, buf, len, NULL);
}

int dch_map_load_with(dch_map **out, const void *buf, size_t len,
                      const dch_allocator *allocator)
{
    if (out == NULL || (buf == NULL && len > 0) || !dch__allocator_valid(allocator))
        return DCH_EINVAL;
    const uint8_t *p = buf;
    uint32_t version;
    const int start = check_start(p, len, &version);
    if (start != DCH_OK)
        return start;
    const size_t trailer = trailer_size(version);
    if (len < HEADER_SIZE + 1 + trailer + CHECKSUM_SIZE ||
        get_u64(p + 16) != (uint64_t)len)
        return DCH_ECORRUPT;
    if (dch_siphash24(checksum_key, p, len - CHECKSUM_SIZE) != get_u64(p + len - CHECKSUM_SIZE))
        return DCH_ECORRUPT;
    /* `end` is where the slot table must end: the transition record, if
     * any, sits between it and the checksum. A step map is never the first
     * or the last step (those are settled maps). */
    const size_t end = len - CHECKSUM_SIZE - trailer;
    dch_map_transition tr = {0, 0, 0};
    if (trailer != 0) {
        tr.target_fingerprint = get_u64(p + end);
        tr.step = get_u32(p + end + 8);
        tr.steps = get_u32(p + end + 12);
        if (tr.step == 0 || tr.step >= tr.steps)
            return DCH_ECORRUPT;
    }

    dch_map_config cfg;
    dch_map_config_default(&cfg);
    const uint32_t n = get_u32(p + 12);
    cfg.units = get_u32(p + 24);
    cfg.slots_per_unit = get_u32(p + 28);
    memcpy(cfg.hash_key, p + 32, 16);
    cfg.allocator = allocator;
    const uint64_t epoch = get_u64(p + 48);
    if (!is_pow2(cfg.units) || !is_pow2(cfg.slots_per_unit) ||
        (uint64_t)cfg.units * cfg.slots_per_unit > DCH_MAP_MAX_SLOTS ||
        n > DCH_MAP_MAX_NODES)
        return DCH_ECORRUPT;
    const uint32_t P = cfg.units * cfg.slots_per_unit;

    size_t at = HEADER_SIZE;
    uint32_t limit;
    size_t blob_size;
    int rc = scan_members(p, end, n, &at, &limit, &blob_size);
    if (rc != DCH_OK)
        return rc;
    const size_t table_at = at;

    scratch sc = {allocator, NULL, NULL, NULL, NULL, NULL};
    sc.owner = dch__alloc_array(allocator, P, sizeof *sc.owner);
    if (limit > 0) {
        sc.names = dch__alloc_array(allocator, limit, sizeof *sc.names);
        sc.weights = dch__alloc_array(allocator, limit, sizeof *sc.weights);
        sc.slots = dch__alloc_array(allocator, limit, sizeof *sc.slots);
        sc.blob = dch__alloc(allocator, blob_size);
    }
    if (sc.owner == NULL ||
        (limit > 0 && (!sc.names || !sc.weights || !sc.slots || !sc.blob))) {
        scratch_free(&sc);
        return DCH_ENOMEM;
    }
    for (uint32_t id = 0; id < limit; id++) {
        sc.names[id] = NULL;
        sc.weights[id] = 0;
        sc.slots[id] = 0;
    }
    /* The records were checked by scan_members; now store them. */
    at = HEADER_SIZE;
    size_t b = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint16_t id = get_u16(p + at);
        const size_t nlen = p[at + 10];
        sc.weights[id] = get_u32(p + at + 2);
        sc.slots[id] = get_u32(p + at + 6);
        memcpy(sc.blob + b, p + at + RECORD_FIXED, nlen);
        sc.blob[b + nlen] = '\0';
        sc.names[id] = sc.blob + b;
        b += nlen + 1;
        at += RECORD_FIXED + nlen;
    }

    rc = read_table(p, table_at, end, P, sc.owner);
    dch_map *m = NULL;
    if (rc == DCH_OK)
        rc = dch__map_assemble(&m, &cfg, epoch, limit, sc.names, NULL, sc.weights, sc.owner,
                               trailer != 0 ? &tr : NULL);
    if (rc == DCH_OK) {
        rc = check_counts(m, sc.slots);
        if (rc != DCH_OK)
            dch_map_free(m);
    }
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

uint64_t dch_map_fingerprint(const dch_map *m)
{
    if (m == NULL)
        return 0;
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    dch__sipstream st;
    dch__sipstream_init(&st, fingerprint_key);
    dch__sipstream_u32(&st, cfg.units);
    dch__sipstream_u32(&st, cfg.slots_per_unit);
    dch__sipstream_update(&st, cfg.hash_key, 16);
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
    }
    /* The table in chunks of little-endian u16, so no allocation. */
    const uint16_t *own = dch__map_owner_table(m);
    const uint32_t P = dch_map_slot_count(m);
    uint8_t chunk[512];
    for (uint32_t s = 0; s < P;) {
        size_t n = 0;
        for (; s < P && n < sizeof chunk; s++, n += 2)
            put_u16(chunk + n, own[s]);
        dch__sipstream_update(&st, chunk, n);
    }
    return dch__sipstream_final(&st);
}
