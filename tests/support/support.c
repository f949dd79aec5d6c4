/* SPDX-License-Identifier: MIT */
/*
 * The shared test support declared in support.h. Plain C11 and libc: the
 * ThreadSanitizer and fuzz builds link it without Criterion.
 */
#define _POSIX_C_SOURCE 200809L

#include "support.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <errno.h>
#include <unistd.h>

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
    return s != NULL && s[0] != '\0' ? strtoull(s, NULL, 0) : fallback;
}

/* ---- Random numbers ---------------------------------------------------- */

bool replica_case_next(replica_case *c)
{
    if (!c->started) {
        c->started = true;
        c->R = 1;
        c->zones = 0;
        c->i = 0;
    } else if (++c->i == c->n) {
        c->i = 0;
        c->zones += 3;
        if (c->zones > 3) {
            c->zones = 0;
            c->R++;
        }
    }
    if (c->n == 0 || c->R > 4)
        return false;
    c->seed = c->base + c->i + 1000 * (c->R * 4 + c->zones);
    return true;
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
    *sw = (fault_sweep){f, modes & SWEEP_BOTH, 0, limit, 0, true, 0, 0, 0};
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
            sw->live = sw->f->live;
            return true;
        }
    }
}

void fault_sweep_done(fault_sweep *sw, int rc)
{
    sw->f->fail_at = 0;
    sw->f->fail_after = false;
    sw->leaked = sw->f->live - sw->live;
    if (rc != DCH_OK)
        sw->failed++;
    else if (sw->limit < 0)
        sw->ended |= sw->after ? SWEEP_LATER : SWEEP_ALONE;
}

/* ---- Ranges and changes ------------------------------------------------ */

void *xgrow(void *v, size_t n, size_t *cap, size_t size)
{
    if (n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        v = xrealloc(v, *cap * size);
    }
    return v;
}

int ranges_push(const dch_range *r, void *ctx)
{
    range_list *rs = ctx;
    rs->v = xgrow(rs->v, rs->n, &rs->cap, sizeof *rs->v);
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

/* The ranges of the map `m` or else the ring `r`: both answer the sizing
 * call alike. */
static dch_range *sized_ranges(const dch_map *m, const dch_ring *r, size_t *count)
{
    size_t n = 0;
    int rc = m ? dch_map_ranges(m, NULL, 0, &n) : dch_ring_ranges(r, NULL, 0, &n);
    if (rc != DCH_EFULL || n < 1)
        die("ranges: the sizing call answered %d with %zu ranges", rc, n);
    dch_range *out = xmalloc(n * sizeof *out);
    size_t again = 0;
    rc = m ? dch_map_ranges(m, out, n, &again) : dch_ring_ranges(r, out, n, &again);
    if (rc != DCH_OK || again != n)
        die("ranges: %d with %zu ranges after sizing %zu", rc, again, n);
    *count = n;
    return out;
}

dch_range *map_ranges_of(const dch_map *m, size_t *count)
{
    return sized_ranges(m, NULL, count);
}

dch_range *ring_ranges_of(const dch_ring *r, size_t *count)
{
    return sized_ranges(NULL, r, count);
}

int changes_push(const dch_range_change *c, void *ctx)
{
    change_list *cs = ctx;
    cs->v = xgrow(cs->v, cs->n, &cs->cap, sizeof *cs->v);
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

/* ---- Maps and rings ---------------------------------------------------- */

dch_map_config map_config(uint32_t units, uint32_t slots_per_unit)
{
    dch_map_config cfg;
    dch_map_config_default(&cfg);
    cfg.units = units;
    cfg.slots_per_unit = slots_per_unit;
    return cfg;
}

dch_map *map_shaped(uint32_t units, uint32_t slots_per_unit)
{
    const dch_map_config cfg = map_config(units, slots_per_unit);
    dch_map *m;
    const int rc = dch_map_new(&m, &cfg);
    if (rc != DCH_OK)
        die("dch_map_new(%u x %u): %d", units, slots_per_unit, rc);
    return m;
}

dch_map *map_clone_of(const dch_map *m)
{
    dch_map *c;
    const int rc = dch_map_clone(&c, m);
    if (rc != DCH_OK)
        die("dch_map_clone: %d", rc);
    return c;
}

void ring_add_members(dch_ring *r, const char *prefix, unsigned count, uint32_t max_weight,
                      uint64_t *rng, uint32_t *ids)
{
    for (unsigned i = 0; i < count; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s%u", prefix, i);
        uint32_t id;
        const int rc = dch_ring_add_node(r, name, 1 + rng_below(rng, max_weight), &id);
        if (rc != DCH_OK)
            die("dch_ring_add_node(%s): %d", name, rc);
        if (ids != NULL)
            ids[i] = id;
    }
}

void map_add_members(dch_map *m, const char *prefix, unsigned count, const uint32_t *weights,
                     size_t nweights)
{
    for (unsigned i = 0; i < count; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s%u", prefix, i);
        const uint32_t w = weights != NULL ? weights[i % nweights] : 1;
        const int rc = dch_map_add_node(m, name, w, NULL);
        if (rc != DCH_OK)
            die("dch_map_add_node(%s): %d", name, rc);
    }
}

uint8_t *map_bytes(const dch_map *m, size_t *len)
{
    int rc = dch_map_save(m, NULL, 0, len);
    if (rc != DCH_OK)
        die("dch_map_save sizing: %d", rc);
    uint8_t *p = xmalloc(*len);
    size_t again = 0;
    rc = dch_map_save(m, p, *len, &again);
    if (rc != DCH_OK || again != *len)
        die("dch_map_save: %d, %zu bytes of %zu", rc, again, *len);
    return p;
}

bool same_map_bytes(const dch_map *a, const dch_map *b)
{
    size_t la, lb;
    uint8_t *pa = map_bytes(a, &la), *pb = map_bytes(b, &lb);
    const bool same = la == lb && memcmp(pa, pb, la) == 0;
    free(pa);
    free(pb);
    return same;
}

/* A member of the map `m` or else the ring `r`. */
static uint32_t random_member(const dch_map *m, const dch_ring *r, uint64_t *rng)
{
    if ((m ? dch_map_node_count(m) : dch_ring_node_count(r)) == 0)
        die("random_member: no member to draw");
    const uint32_t limit = m ? dch_map_id_limit(m) : dch_ring_id_limit(r);
    uint32_t id;
    do
        id = rng_below(rng, limit);
    while ((m ? dch_map_node_name(m, id) : dch_ring_node_name(r, id)) == NULL);
    return id;
}

void map_random_change(dch_map *m, uint64_t *rng, const map_change_rule *rule)
{
    const uint32_t r = rng_below(rng, 100);
    if (dch_map_node_count(m) == 0 || r < rule->add_below) {
        char name[16];
        snprintf(name, sizeof name, "n%u", rng_below(rng, rule->names));
        (void)dch_map_add_node(m, name, rule->weight(rng, r, true), NULL);
        return;
    }
    const uint32_t id = map_random_member(m, rng);
    const int rc = r < rule->remove_below ? dch_map_remove_node(m, id)
                                          : dch_map_set_weight(m, id, rule->weight(rng, r, false));
    if (rc != DCH_OK)
        die("map_random_change: %d", rc);
}

static uint32_t zoned_weight(uint64_t *rng)
{
    if (rng_below(rng, 8) == 0)
        return 0;
    return rng_below(rng, 16) == 0 ? 100 + rng_below(rng, 900) : 1 + rng_below(rng, 8);
}

void map_random_zoned_change(dch_map *m, uint64_t *rng, uint32_t names, uint32_t zones)
{
    const uint32_t r = rng_below(rng, 100);
    if (dch_map_node_count(m) == 0 || r < 50) {
        char name[16], zone[16];
        snprintf(name, sizeof name, "n%u", rng_below(rng, names));
        const bool zoned = zones > 0 && rng_below(rng, 4) != 0;
        if (zoned)
            snprintf(zone, sizeof zone, "z%u", rng_below(rng, zones));
        const int rc = dch_map_add_node_in_zone(m, name, zoned ? zone : NULL, zoned_weight(rng),
                                                NULL);
        if (rc != DCH_OK && rc != DCH_EEXIST)
            die("map_random_zoned_change: add: %d", rc);
        return;
    }
    const uint32_t id = map_random_member(m, rng);
    const int rc = r < 70 ? dch_map_remove_node(m, id) : dch_map_set_weight(m, id, zoned_weight(rng));
    if (rc != DCH_OK)
        die("map_random_zoned_change: %d", rc);
}

uint32_t map_random_member(const dch_map *m, uint64_t *rng)
{
    return random_member(m, NULL, rng);
}

uint32_t ring_random_member(const dch_ring *r, uint64_t *rng)
{
    return random_member(NULL, r, rng);
}

/* ---- Snapshots --------------------------------------------------------- */

/* The members of the map `m` or else the ring `r`. */
static void member_take(member_snap *s, const dch_map *m, const dch_ring *r)
{
    memset(s, 0, sizeof *s);
    s->limit = m ? dch_map_id_limit(m) : dch_ring_id_limit(r);
    s->count = m ? dch_map_node_count(m) : dch_ring_node_count(r);
    s->total = m ? dch_map_total_weight(m) : dch_ring_total_weight(r);
    s->memory = m ? dch_map_memory(m) : dch_ring_memory(r);
    s->names = xcalloc(s->limit + 1, sizeof *s->names);
    s->weights = xcalloc(s->limit + 1, sizeof *s->weights);
    for (uint32_t id = 0; id < s->limit; id++) {
        s->names[id] = xstrdup(m ? dch_map_node_name(m, id) : dch_ring_node_name(r, id));
        s->weights[id] = m ? dch_map_node_weight(m, id) : dch_ring_node_weight(r, id);
    }
    const int rc = m ? dch_map_foreach_range(m, ranges_push, &s->rg)
                     : dch_ring_foreach_range(r, ranges_push, &s->rg);
    if (rc != DCH_OK)
        die("foreach_range: %d", rc);
}

static void member_free(member_snap *s)
{
    for (uint32_t id = 0; id < s->limit; id++)
        free(s->names[id]);
    free(s->names);
    free(s->weights);
    free(s->rg.v);
}

static const char *member_differs(const member_snap *a, const member_snap *b, bool memory)
{
    if (a->limit != b->limit || a->count != b->count || a->total != b->total)
        return "member count, id limit or weight sum";
    if (a->rg.n != b->rg.n || !ranges_equal(a->rg.v, b->rg.v, a->rg.n))
        return "ranges";
    if (memory && a->memory != b->memory)
        return "memory held";
    for (uint32_t id = 0; id < a->limit; id++)
        if ((a->names[id] == NULL) != (b->names[id] == NULL) ||
            (a->names[id] && strcmp(a->names[id], b->names[id]) != 0) ||
            a->weights[id] != b->weights[id])
            return "a member's name or weight";
    return NULL;
}

void map_snap_take(map_snap *s, const dch_map *m)
{
    dch_map_get_config(m, &s->cfg);
    member_take(&s->mb, m, NULL);
    s->slots = dch_map_slot_count(m);
    s->epoch = dch_map_epoch(m);
    s->fingerprint = dch_map_fingerprint(m);
    s->owner = xmalloc(s->slots * sizeof *s->owner);
    for (uint32_t i = 0; i < s->slots; i++)
        s->owner[i] = dch_map_slot_owner(m, i);
    s->counts = xcalloc(s->mb.limit + 1, sizeof *s->counts);
    for (uint32_t id = 0; id < s->mb.limit; id++)
        s->counts[id] = dch_map_node_slots(m, id);
}

void map_snap_free(map_snap *s)
{
    member_free(&s->mb);
    free(s->owner);
    free(s->counts);
}

const char *map_snap_differs(const map_snap *a, const dch_map *m, bool memory)
{
    map_snap b;
    map_snap_take(&b, m);
    const char *why = member_differs(&a->mb, &b.mb, memory);
    if (a->cfg.units != b.cfg.units || a->cfg.slots_per_unit != b.cfg.slots_per_unit ||
        memcmp(a->cfg.hash_key, b.cfg.hash_key, 16) != 0 || a->cfg.allocator != b.cfg.allocator)
        why = "config";
    else if (why == NULL)
        why = a->epoch != b.epoch                                              ? "epoch"
              : memcmp(a->owner, b.owner, a->slots * sizeof *a->owner) != 0    ? "slot table"
              : a->fingerprint != b.fingerprint                                ? "fingerprint"
              : memcmp(a->counts, b.counts, a->mb.limit * sizeof *a->counts) ? "a member's slot count"
                                                                               : NULL;
    map_snap_free(&b);
    return why;
}

void ring_snap_take(ring_snap *s, const dch_ring *r)
{
    dch_ring_get_config(r, &s->cfg);
    member_take(&s->mb, NULL, r);
    s->points = dch_ring_point_count(r);
}

void ring_snap_free(ring_snap *s)
{
    member_free(&s->mb);
}

const char *ring_snap_differs(const ring_snap *a, const dch_ring *r, bool memory)
{
    ring_snap b;
    ring_snap_take(&b, r);
    const char *why = member_differs(&a->mb, &b.mb, memory);
    if (a->cfg.points_per_weight != b.cfg.points_per_weight ||
        a->cfg.placement != b.cfg.placement || memcmp(a->cfg.hash_key, b.cfg.hash_key, 16) != 0 ||
        a->cfg.allocator != b.cfg.allocator)
        why = "config";
    else if (why == NULL && a->points != b.points)
        why = "point count";
    ring_snap_free(&b);
    return why;
}

/* ---- The tool and scratch files ---------------------------------------- */

const char *test_tool_path(void)
{
    const char *path = getenv("DCH_TOOL");
#ifdef DCH_TOOL_PATH
    if (path == NULL || path[0] == '\0')
        path = DCH_TOOL_PATH;
#endif
    if (path == NULL || path[0] == '\0' || access(path, X_OK) != 0)
        die("no dchctl tool at %s; set DCH_TOOL", path ? path : "(none)");
    return path;
}
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

void temp_dir(char *dir, size_t size, const char *name)
{
    snprintf(dir, size, "/tmp/dch-%s-XXXXXX", name);
    if (mkdtemp(dir) == NULL)
        die("cannot create %s", dir);
}

void scratch_make(scratch *s, const char *name, const char *file)
{
    temp_dir(s->dir, sizeof s->dir, name);
    snprintf(s->path, sizeof s->path, "%s/%s", s->dir, file);
}

void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (remove(path) != 0)
            remove_dir(path); /* a directory that is not empty */
    }
    closedir(d);
    rmdir(dir);
}

tool_fixture the_tool;

void tool_fixture_init(void)
{
    the_tool.tool = test_tool_path();
    temp_dir(the_tool.dir, sizeof the_tool.dir, "tool");
}

void tool_fixture_fini(void)
{
    remove_dir(the_tool.dir);
}

void write_file(const char *path, const void *p, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(p, 1, len, f) != len || fclose(f) != 0)
        die("cannot write %s", path);
}

/* ---- The fields of map files ------------------------------------------- */

uint64_t le_read(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

void le_write(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint32_t uleb_read(const uint8_t *p, size_t *at)
{
    uint32_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        const uint8_t b = p[(*at)++];
        v |= (uint32_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
}

size_t uleb_write(uint8_t *p, uint32_t v)
{
    size_t n = 0;
    do {
        p[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            p[n] |= 0x80;
        n++;
    } while (v);
    return n;
}

/* ---- Running the tool ---------------------------------------------------- */

void tool_exec(int in, int out, int err, char *const *args)
{
    if (in < 0)
        in = open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 ||
        chdir(the_tool.dir) != 0)
        _exit(127);
    char *argv[64];
    int n = 0;
    argv[n++] = (char *)the_tool.tool;
    for (; args[n - 1] != NULL && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    execv(the_tool.tool, argv);
    _exit(127);
}

int tool_wait(pid_t pid)
{
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) {
            perror("waitpid");
            abort();
        }
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* Stop the test, saying why, when a run went wrong in a way no test
 * expects. */
static void tool_check(const tool_result *r, const char *why)
{
    if (why == NULL)
        why = r->status == 127 ? "could not be run"
              : r->out == NULL || r->err == NULL ? "left no readable output"
              : strstr(r->err, "Sanitizer") || strstr(r->err, "runtime error") ||
                      strstr(r->err, "ERROR SUMMARY: 1") || strstr(r->err, "definitely lost")
                  ? "reported a memory or undefined-behaviour error"
                  : NULL;
    if (why != NULL) {
        fprintf(stderr, "support: the tool %s %s:\n%s\n", the_tool.tool, why,
                r->err ? r->err : "");
        abort();
    }
}

tool_result tool_collect(int status, const char *po, const char *pe)
{
    tool_result r = {status, NULL, NULL, 0};
    r.out = slurp(po, &r.outlen);
    r.err = slurp(pe, NULL);
    unlink(po);
    unlink(pe);
    tool_check(&r, NULL);
    return r;
}

int tool_capture(const char *path)
{
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "support: cannot create %s: %s\n", path, strerror(errno));
        abort();
    }
    return fd;
}

tool_result tool_run_in(const char *in, char *const *args)
{
    char po[128], pe[128];
    snprintf(po, sizeof po, "%s/.stdout", the_tool.dir);
    snprintf(pe, sizeof pe, "%s/.stderr", the_tool.dir);
    const int i = in != NULL ? open(in, O_RDONLY | O_CLOEXEC) : -1;
    if (in != NULL && i < 0) {
        fprintf(stderr, "support: cannot open %s: %s\n", in, strerror(errno));
        abort();
    }
    const int o = tool_capture(po), e = tool_capture(pe);
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == -1) {
        perror("fork");
        abort();
    }
    if (pid == 0)
        tool_exec(i, o, e, args);
    if (i >= 0)
        close(i);
    close(o);
    close(e);
    return tool_collect(tool_wait(pid), po, pe);
}

tool_result tool_run(char *const *args)
{
    tool_result r = tool_run_in(NULL, args);
    if (r.status == -1)
        tool_check(&r, "did not exit normally");
    return r;
}

/* Stop the test unless r ended with `status` and `text` (unless NULL) in
 * its standard error, printing the command and what it wrote there. */
static void tool_require(tool_result *r, int status, const char *text, char *const *args)
{
    if (r->status != status || (text != NULL && strstr(r->err, text) == NULL)) {
        fprintf(stderr, "support: dchctl");
        for (size_t i = 0; args[i] != NULL; i++)
            fprintf(stderr, " %s", args[i]);
        fprintf(stderr, ": exit status %d, want %d%s%s:\n%s\n", r->status, status,
                text != NULL ? " saying " : "", text != NULL ? text : "", r->err);
        abort();
    }
    tool_result_free(r);
}

void tool_expect(int status, const char *in, char *const *args)
{
    tool_result r = tool_run_in(in, args);
    tool_require(&r, status, NULL, args);
}

void tool_expect_err(int status, const char *text, char *const *args)
{
    tool_result r = tool_run(args);
    tool_require(&r, status, text, args);
}

void tool_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", the_tool.dir, name);
}

int dir_count(const char *dir, bool hidden)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        die("cannot open %s", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        const char *name = e->d_name;
        n += strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && strcmp(name, ".stdout") != 0 &&
             strcmp(name, ".stderr") != 0 && (hidden || name[0] != '.');
    }
    closedir(d);
    return n;
}

int tool_count_files(void)
{
    return dir_count(the_tool.dir, false);
}

char *file_bytes(const char *path, size_t *len)
{
    char *s = slurp(path, len);
    if (s == NULL)
        die("cannot read %s", path);
    return s;
}

bool file_holds(const char *path, const void *bytes, size_t len)
{
    size_t n;
    char *s = slurp(path, &n);
    const bool same = s != NULL && n == len && memcmp(s, bytes, len) == 0;
    free(s);
    return same;
}

unsigned long long json_number(const char *text, const char *field)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", field);
    const char *s = strstr(text, pat);
    if (s == NULL)
        die("no %s in %s", field, text);
    return strtoull(s + strlen(pat), NULL, 10);
}

dch_map *map_load_path(const char *path)
{
    dch_map *m = NULL;
    const int rc = dch_map_load_file(&m, path);
    if (rc != DCH_OK)
        die("%s does not load: %s", path, dch_strerror(rc));
    return m;
}

void tool_result_free(tool_result *r)
{
    free(r->out);
    free(r->err);
}
