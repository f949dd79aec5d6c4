/*
 * The shared test support declared in support.h. Plain C11 and libc: the
 * ThreadSanitizer and fuzz builds link it without Criterion.
 */
#include "support.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The test itself is broken: say why and stop. */
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("test support: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* ---- Scale and seed ---------------------------------------------------- */

double test_scale(void)
{
    const char *s = getenv("DCH_TEST_SCALE");
    if (s == NULL)
        return 1.0;
    char *end;
    const double v = strtod(s, &end);
    return end != s && v > 0.0 ? v : 1.0;
}

unsigned test_scaled(unsigned n, unsigned floor_n)
{
    const double v = n * test_scale();
    return v < floor_n ? floor_n : (unsigned)v;
}

uint64_t test_seed(uint64_t fallback)
{
    const char *s = getenv("DCH_TEST_SEED");
    return s != NULL ? strtoull(s, NULL, 0) : fallback;
}

/* ---- Random numbers ---------------------------------------------------- */

uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint32_t rng_below(uint64_t *state, uint32_t n)
{
    return (uint32_t)(rng_next(state) % n);
}

/* ---- Memory that cannot fail ------------------------------------------- */

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        die("out of memory (%zu bytes)", n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL)
        die("out of memory (%zu x %zu bytes)", n, size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL)
        die("out of memory (%zu bytes)", n);
    return q;
}

char *xstrdup(const char *s)
{
    if (s == NULL)
        return NULL;
    const size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

/* ---- An allocator that fails on request -------------------------------- */

static bool should_fail(faulty *f)
{
    f->calls++;
    return f->fail_at > 0 &&
           (f->calls == f->fail_at || (f->fail_after && f->calls > f->fail_at));
}

static void *faulty_alloc(void *ctx, size_t n)
{
    faulty *f = ctx;
    if (should_fail(f))
        return NULL;
    void *p = malloc(n ? n : 1);
    f->live += p != NULL;
    return p;
}

static void *faulty_realloc(void *ctx, void *ptr, size_t n)
{
    faulty *f = ctx;
    if (should_fail(f))
        return NULL;
    void *p = realloc(ptr, n ? n : 1);
    f->live += p != NULL && ptr == NULL;
    return p;
}

static void faulty_free(void *ctx, void *ptr)
{
    faulty *f = ctx;
    f->live -= ptr != NULL;
    free(ptr);
}

dch_allocator faulty_allocator(faulty *f)
{
    return (dch_allocator){faulty_alloc, faulty_realloc, faulty_free, f};
}

void faulty_arm(faulty *f, long fail_at, bool fail_after)
{
    f->calls = 0;
    f->fail_at = fail_at;
    f->fail_after = fail_after;
}

void fault_sweep_start(fault_sweep *sw, faulty *f, unsigned modes, long limit)
{
    *sw = (fault_sweep){f, modes & SWEEP_BOTH, 0, limit, 0, true, 0};
}

bool fault_sweep_next(fault_sweep *sw)
{
    for (;;) {
        if (sw->after) {
            sw->at++;
            sw->after = false;
        } else {
            sw->after = true;
        }
        if (sw->limit >= 0 ? sw->at > sw->limit : sw->ended == sw->modes)
            return false;
        const unsigned mode = sw->after ? SWEEP_LATER : SWEEP_ALONE;
        if ((sw->modes & mode) && !(sw->ended & mode)) {
            faulty_arm(sw->f, sw->at, sw->after);
            return true;
        }
    }
}

void fault_sweep_done(fault_sweep *sw, int rc)
{
    sw->f->fail_at = 0;
    sw->f->fail_after = false;
    if (rc != DCH_OK)
        sw->failed++;
    else if (sw->limit < 0)
        sw->ended |= sw->after ? SWEEP_LATER : SWEEP_ALONE;
}

/* ---- Ranges and changes ------------------------------------------------ */

/* Geometric growth: a default-config map has tens of thousands of ranges. */
int ranges_push(const dch_range *r, void *ctx)
{
    range_list *rs = ctx;
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? 2 * rs->cap : 64;
        rs->v = xrealloc(rs->v, rs->cap * sizeof *rs->v);
    }
    rs->v[rs->n++] = *r;
    return 0;
}

bool ranges_equal(const dch_range *a, const dch_range *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].lo != b[i].lo || a[i].hi != b[i].hi || a[i].owner != b[i].owner)
            return false;
    return true;
}

/* Both structures answer the sizing call alike; `get` is either's. */
static dch_range *sized_ranges(const void *obj,
                               int (*get)(const void *, dch_range *, size_t, size_t *),
                               size_t *count)
{
    size_t n = 0;
    int rc = get(obj, NULL, 0, &n);
    if (rc != DCH_EFULL || n < 1)
        die("ranges: the sizing call answered %d with %zu ranges", rc, n);
    dch_range *out = xmalloc(n * sizeof *out);
    size_t again = 0;
    rc = get(obj, out, n, &again);
    if (rc != DCH_OK || again != n)
        die("ranges: %d with %zu ranges after sizing %zu", rc, again, n);
    *count = n;
    return out;
}

static int get_map_ranges(const void *m, dch_range *out, size_t cap, size_t *n)
{
    return dch_map_ranges(m, out, cap, n);
}

static int get_ring_ranges(const void *r, dch_range *out, size_t cap, size_t *n)
{
    return dch_ring_ranges(r, out, cap, n);
}

dch_range *map_ranges_of(const dch_map *m, size_t *count)
{
    return sized_ranges(m, get_map_ranges, count);
}

dch_range *ring_ranges_of(const dch_ring *r, size_t *count)
{
    return sized_ranges(r, get_ring_ranges, count);
}

int changes_push(const dch_range_change *c, void *ctx)
{
    change_list *cs = ctx;
    if (cs->n == cs->cap) {
        cs->cap = cs->cap ? 2 * cs->cap : 64;
        cs->v = xrealloc(cs->v, cs->cap * sizeof *cs->v);
    }
    cs->v[cs->n++] = *c;
    return 0;
}

change_list changes_between(const dch_range *a, size_t na, const dch_range *b, size_t nb)
{
    change_list cs = {NULL, 0, 0};
    const int rc = dch_range_diff(a, na, b, nb, changes_push, &cs);
    if (rc != DCH_OK)
        die("dch_range_diff: %d", rc);
    return cs;
}

/* ---- Snapshots --------------------------------------------------------- */

/* The names and weights of ids [0, limit); NULL names for free ids. */
static void take_members(char ***names, uint32_t **weights, uint32_t limit, const void *obj,
                         const char *(*name)(const void *, uint32_t),
                         uint32_t (*weight)(const void *, uint32_t))
{
    *names = xcalloc(limit + 1, sizeof **names);
    *weights = xcalloc(limit + 1, sizeof **weights);
    for (uint32_t id = 0; id < limit; id++) {
        (*names)[id] = xstrdup(name(obj, id));
        (*weights)[id] = weight(obj, id);
    }
}

static bool same_members(char *const *a, char *const *b, const uint32_t *wa, const uint32_t *wb,
                         uint32_t limit)
{
    for (uint32_t id = 0; id < limit; id++)
        if ((a[id] == NULL) != (b[id] == NULL) || (a[id] && strcmp(a[id], b[id]) != 0) ||
            wa[id] != wb[id])
            return false;
    return true;
}

static void free_names(char **names, uint32_t limit)
{
    for (uint32_t id = 0; id < limit; id++)
        free(names[id]);
    free(names);
}

static bool same_ranges(const range_list *a, const range_list *b)
{
    return a->n == b->n && ranges_equal(a->v, b->v, a->n);
}

static const char *map_name(const void *m, uint32_t id)
{
    return dch_map_node_name(m, id);
}

static uint32_t map_weight(const void *m, uint32_t id)
{
    return dch_map_node_weight(m, id);
}

void map_snap_take(map_snap *s, const dch_map *m)
{
    memset(s, 0, sizeof *s);
    dch_map_get_config(m, &s->cfg);
    s->slots = dch_map_slot_count(m);
    s->limit = dch_map_id_limit(m);
    s->count = dch_map_node_count(m);
    s->total = dch_map_total_weight(m);
    s->epoch = dch_map_epoch(m);
    s->fingerprint = dch_map_fingerprint(m);
    s->memory = dch_map_memory(m);
    s->owner = xmalloc(s->slots * sizeof *s->owner);
    for (uint32_t i = 0; i < s->slots; i++)
        s->owner[i] = dch_map_slot_owner(m, i);
    take_members(&s->names, &s->weights, s->limit, m, map_name, map_weight);
    s->counts = xcalloc(s->limit + 1, sizeof *s->counts);
    for (uint32_t id = 0; id < s->limit; id++)
        s->counts[id] = dch_map_node_slots(m, id);
    const int rc = dch_map_foreach_range(m, ranges_push, &s->rg);
    if (rc != DCH_OK)
        die("dch_map_foreach_range: %d", rc);
}

void map_snap_free(map_snap *s)
{
    free_names(s->names, s->limit);
    free(s->weights);
    free(s->counts);
    free(s->owner);
    free(s->rg.v);
}

const char *map_snap_differs(const map_snap *a, const dch_map *m, bool memory)
{
    map_snap b;
    map_snap_take(&b, m);
    const char *why = NULL;
    if (a->cfg.units != b.cfg.units || a->cfg.slots_per_unit != b.cfg.slots_per_unit ||
        memcmp(a->cfg.hash_key, b.cfg.hash_key, 16) != 0 || a->cfg.allocator != b.cfg.allocator)
        why = "config";
    else if (a->limit != b.limit || a->count != b.count || a->total != b.total)
        why = "member count, id limit or weight sum";
    else if (a->epoch != b.epoch)
        why = "epoch";
    else if (memcmp(a->owner, b.owner, a->slots * sizeof *a->owner) != 0)
        why = "slot table";
    else if (a->fingerprint != b.fingerprint)
        why = "fingerprint";
    else if (!same_ranges(&a->rg, &b.rg))
        why = "ranges";
    else if (memory && a->memory != b.memory)
        why = "memory held";
    else if (!same_members(a->names, b.names, a->weights, b.weights, a->limit) ||
             memcmp(a->counts, b.counts, a->limit * sizeof *a->counts) != 0)
        why = "a member's name, weight or slot count";
    map_snap_free(&b);
    return why;
}

static const char *ring_name(const void *r, uint32_t id)
{
    return dch_ring_node_name(r, id);
}

static uint32_t ring_weight(const void *r, uint32_t id)
{
    return dch_ring_node_weight(r, id);
}

void ring_snap_take(ring_snap *s, const dch_ring *r)
{
    memset(s, 0, sizeof *s);
    dch_ring_get_config(r, &s->cfg);
    s->limit = dch_ring_id_limit(r);
    s->count = dch_ring_node_count(r);
    s->total = dch_ring_total_weight(r);
    s->points = dch_ring_point_count(r);
    s->memory = dch_ring_memory(r);
    take_members(&s->names, &s->weights, s->limit, r, ring_name, ring_weight);
    const int rc = dch_ring_foreach_range(r, ranges_push, &s->rg);
    if (rc != DCH_OK)
        die("dch_ring_foreach_range: %d", rc);
}

void ring_snap_free(ring_snap *s)
{
    free_names(s->names, s->limit);
    free(s->weights);
    free(s->rg.v);
}

const char *ring_snap_differs(const ring_snap *a, const dch_ring *r, bool memory)
{
    ring_snap b;
    ring_snap_take(&b, r);
    const char *why = NULL;
    if (a->cfg.points_per_weight != b.cfg.points_per_weight ||
        a->cfg.placement != b.cfg.placement || memcmp(a->cfg.hash_key, b.cfg.hash_key, 16) != 0 ||
        a->cfg.allocator != b.cfg.allocator)
        why = "config";
    else if (a->limit != b.limit || a->count != b.count || a->total != b.total ||
             a->points != b.points)
        why = "member count, id limit, weight sum or point count";
    else if (!same_ranges(&a->rg, &b.rg))
        why = "ranges";
    else if (memory && a->memory != b.memory)
        why = "memory held";
    else if (!same_members(a->names, b.names, a->weights, b.weights, a->limit))
        why = "a member's name or weight";
    ring_snap_free(&b);
    return why;
}

/* ---- Files ------------------------------------------------------------- */

char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = xmalloc(cap);
    for (size_t got; (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (cap - n < 2)
            buf = xrealloc(buf, cap *= 2);
    }
    const bool failed = ferror(f) != 0;
    fclose(f);
    if (failed) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    if (len != NULL)
        *len = n;
    return buf;
}

void write_file(const char *path, const void *p, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(p, 1, len, f) != len || fclose(f) != 0)
        die("cannot write %s", path);
}
