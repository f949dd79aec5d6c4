/*
 * dch-bench: what libdch's lookups, changes, hashing and memory cost, each
 * measured against a peer in the same process and the same run, so that the
 * ratios hold on a shared, noisy machine where absolute times do not.
 *
 * Method. Every timing is repeated over several trials after a warm-up; the
 * contenders of one comparison run in turn inside each trial (their order
 * rotating from trial to trial), so a ratio is taken between runs made
 * moments apart, and the report gives the median and the extremes over the
 * trials. Times are the thread's CPU time: the time other processes hold
 * the core is not counted, which on a shared machine is most of the noise.
 * Lookups run on precomputed 64-bit hashes in two modes: independent
 * (throughput: the next hash never waits for an answer) and dependent
 * (latency: the next hash's index is derived from the previous answer).
 * Peers that are not libdch's (the bare-array floor, the branchy binary
 * search, Jump consistent hash) live in bench_kernels.c behind calls the
 * compiler cannot inline, as libdch's own functions are.
 *
 * It uses only the public libdch API, plus libsodium as the reference
 * SipHash-2-4.
 */
#define _GNU_SOURCE /* sched_getcpu, sched_setaffinity */

#include "args.h"
#include "bench_kernels.h"
#include "bench_report.h"

#include <dch/dch.h>
#include <sodium.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROG "dch-bench"

#ifndef DCH_BENCH_BUILD_TYPE
#define DCH_BENCH_BUILD_TYPE "unknown"
#endif

#if defined(__clang__)
#define BENCH_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define BENCH_COMPILER "gcc " __VERSION__
#else
#define BENCH_COMPILER "unknown"
#endif

/* Sections, for --only. */
enum {
    SEC_HASH = 1u << 0,   /* SipHash against libsodium; map lookup of a key */
    SEC_LOOKUP = 1u << 1, /* lookups at N = 10 .. 10,000 */
    SEC_CHANGE = 1u << 2, /* add, remove, clone */
    SEC_MEMORY = 1u << 3, /* bytes held */
    SEC_SWEEP = 1u << 4,  /* map lookups at P = 2^12 .. 2^22 */
    SEC_ALL = (1u << 5) - 1
};

/* Member counts the growth section stops at, in order. */
static const uint32_t checkpoints[] = {10, 100, 1000, 10000};
#define NCHECKPOINTS (sizeof checkpoints / sizeof checkpoints[0])

/* The hash set: enough hashes that a large table is touched all over. */
#define HASHES_MAX (1u << 20)
#define HASHES_MIN (1u << 14)
/* Members of the maps in the P sweep: a lookup's cost does not depend on
 * it, and building a 2^22-slot map costs O(P) per member (about 60 ms each
 * on this project's machine). */
#define SWEEP_NODES 10u
/* Fewest calls a calibrated trial makes (unless --lookups is smaller). */
#define MIN_OPS 100000u
/* Turns each contender takes within a trial (see run_group). */
#define SLICES 8u
/* Messages of the hash section: 256 of them, 16 bytes apart. */
#define MSG_COUNT 256u
#define MSG_STRIDE 16u
#define MSG_MAX 1024u

typedef struct options {
    uint64_t lookups;
    unsigned trials;
    unsigned trial_ms;
    const char *json;
    bool quick;
    uint32_t max_nodes;
    int cpu; /* -1: not pinned */
    uint64_t seed;
    unsigned sections;
} options;

typedef struct bench {
    options o;
    bench_report *rep;
    uint64_t *hashes; /* HASHES_MAX precomputed hashes */
    int last_cpu;
    unsigned migrations;
    bool cpu_seen[CPU_SETSIZE];
    double wall_ns, cpu_ns; /* totals over every timed run */
    volatile uint64_t sink; /* keeps every result alive */
    int failed;             /* a check of correctness failed */
} bench;

/* ---- Timing ----------------------------------------------------------- */

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* CPU time of this thread: unlike wall time, it stops while other
 * processes have the core, which on a shared machine is most of the noise. */
static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Note the CPU a timed run starts on, and count moves between CPUs. */
static void note_cpu(bench *b)
{
    const int cpu = sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return;
    b->cpu_seen[cpu] = true;
    if (b->last_cpu >= 0 && cpu != b->last_cpu)
        b->migrations++;
    b->last_cpu = cpu;
}

/* A timed run: the thread's CPU time, with the wall time kept beside it to
 * tell how much of the run other processes took. */
typedef struct stopwatch {
    double wall, cpu;
} stopwatch;

static stopwatch sw_start(bench *b)
{
    note_cpu(b);
    stopwatch s;
    s.wall = now_ns();
    s.cpu = cpu_ns();
    return s;
}

/* CPU nanoseconds since sw_start. */
static double sw_stop(bench *b, stopwatch s)
{
    const double c = cpu_ns(), w = now_ns();
    b->cpu_ns += c - s.cpu;
    b->wall_ns += w - s.wall;
    return c - s.cpu;
}

/* A timing loop: `ops` calls of one contender on hashes h[.. & mask]. */
typedef uint64_t (*loop_fn)(const void *obj, const uint64_t *h, uint64_t mask,
                            uint64_t ops);

/*
 * The two loops every lookup contender runs, identical but for the call,
 * and each starting on a 64-byte boundary so that all of them sit the same
 * way across instruction fetch blocks. Independent: the hashes are read in
 * order, so calls overlap as far as the core allows. Dependent: the index of
 * the next hash adds the previous answer, so each call waits for the one
 * before it.
 */
#define BENCH_LOOPS(name, type, call)                                          \
    __attribute__((aligned(64))) static uint64_t name##_independent(           \
        const void *obj, const uint64_t *h, uint64_t mask, uint64_t ops)       \
    {                                                                          \
        const type *o = obj;                                                   \
        uint64_t acc = 0;                                                      \
        for (uint64_t i = 0; i < ops; i++)                                     \
            acc += call(o, h[i & mask]);                                       \
        return acc;                                                            \
    }                                                                          \
    __attribute__((aligned(64))) static uint64_t name##_dependent(             \
        const void *obj, const uint64_t *h, uint64_t mask, uint64_t ops)       \
    {                                                                          \
        const type *o = obj;                                                   \
        uint64_t acc = 0;                                                      \
        uint32_t a = 0;                                                        \
        for (uint64_t i = 0; i < ops; i++) {                                   \
            a = call(o, h[(i + a) & mask]);                                    \
            acc += a;                                                          \
        }                                                                      \
        return acc;                                                            \
    }

BENCH_LOOPS(dch, dch_map, dch_map_lookup_hash)
BENCH_LOOPS(floor, bench_floor, bench_floor_lookup)
BENCH_LOOPS(ring, dch_ring, dch_ring_lookup_hash)
BENCH_LOOPS(bsearch, bench_sorted, bench_bsearch_lookup)
BENCH_LOOPS(jump, uint32_t, bench_jump_lookup)

/* One contender of a comparison and its timings. */
typedef struct contender {
    const char *subject;
    loop_fn loop;
    const void *obj;
    uint64_t ops; /* per trial, set by calibration */
    double ns[BENCH_MAX_TRIALS];
} contender;

/* The loop, out of line so that it runs below time_run's padding. */
__attribute__((noinline)) static uint64_t run_loop(const contender *c,
                                                   const uint64_t *h,
                                                   uint64_t mask, uint64_t ops)
{
    return c->loop(c->obj, h, mask, ops);
}

/*
 * Nanoseconds per call of one run of `ops` calls.
 *
 * The stack is padded so that the return address each timed call pushes
 * lies 2 KiB, modulo 4 KiB, from the contender's object. A load whose
 * address matches a store still in flight in its low 12 bits is held back
 * as if it depended on it: with the floor's descriptor at the one placement
 * in 256 that matched the pushed return address, the floor measured 1.3x
 * slower, so a figure would depend on where malloc had put the object.
 */
static double time_run(bench *b, const contender *c, uint64_t mask, uint64_t ops)
{
    volatile char here = 0;
    const uintptr_t sp = (uintptr_t)&here;
    const size_t pad = (size_t)((sp - (uintptr_t)c->obj - 2048) & 4095) + 1;
    volatile char room[pad];
    room[0] = here;
    room[pad - 1] = 0;
    const stopwatch sw = sw_start(b);
    b->sink += run_loop(c, b->hashes, mask, ops) + (uint64_t)room[pad - 1];
    return sw_stop(b, sw) / (double)ops;
}

/*
 * Warm up and calibrate each contender (a trial makes --lookups calls, fewer
 * if that would take over --trial-ms), then run the trials. Within a trial
 * the contenders take turns in SLICES slices each, so that a change of the
 * core's clock during the trial (the host changes it, in steps of about
 * 1.2x, every few tens of milliseconds) falls on all of them alike.
 */
static void run_group(bench *b, contender *c, size_t nc, uint64_t mask)
{
    const double budget = (double)b->o.trial_ms * 1e6;
    const uint64_t floor_ops = b->o.lookups < MIN_OPS ? b->o.lookups : MIN_OPS;
    for (size_t i = 0; i < nc; i++) {
        const uint64_t probe = b->o.lookups < 4096 ? b->o.lookups : 4096;
        double est = time_run(b, &c[i], mask, probe);
        /* Warm up for about half a trial, then calibrate on that run. */
        double want = budget / 2 / (est > 0 ? est : 1);
        uint64_t warm = want < (double)b->o.lookups ? (uint64_t)want : b->o.lookups;
        warm = warm > probe ? warm : probe;
        est = time_run(b, &c[i], mask, warm);
        want = budget / (est > 0 ? est : 1);
        c[i].ops = want < (double)b->o.lookups ? (uint64_t)want : b->o.lookups;
        if (c[i].ops < floor_ops)
            c[i].ops = floor_ops;
    }
    for (unsigned t = 0; t < b->o.trials; t++) {
        for (size_t k = 0; k < nc; k++)
            c[k].ns[t] = 0;
        for (unsigned sl = 0; sl < SLICES; sl++)
            for (size_t k = 0; k < nc; k++) {
                contender *x = &c[(k + t + sl) % nc];
                const uint64_t part = x->ops / SLICES + (sl < x->ops % SLICES);
                if (part > 0)
                    x->ns[t] += time_run(b, x, mask, part) * (double)part;
            }
        for (size_t k = 0; k < nc; k++)
            c[k].ns[t] /= (double)c[k].ops;
    }
}

/* ---- Recording -------------------------------------------------------- */

static void record(bench *b, const char *section, const contender *c,
                   const char *mode, uint64_t n, uint64_t p, uint64_t len)
{
    bench_measure m;
    memset(&m, 0, sizeof m);
    snprintf(m.section, sizeof m.section, "%s", section);
    snprintf(m.subject, sizeof m.subject, "%s", c->subject);
    snprintf(m.mode, sizeof m.mode, "%s", mode);
    m.n = n;
    m.p = p;
    m.len = len;
    snprintf(m.unit, sizeof m.unit, "ns/op");
    m.ops = c->ops;
    m.moved = -1;
    m.trials = b->o.trials;
    memcpy(m.v, c->ns, b->o.trials * sizeof *m.v);
    if (bench_report_measure(b->rep, &m) != 0)
        b->failed = 1;
}

static void record_single(bench *b, const char *section, const char *subject,
                          uint64_t n, uint64_t p, const char *unit,
                          const double *v, size_t nv, double moved)
{
    bench_measure m;
    memset(&m, 0, sizeof m);
    snprintf(m.section, sizeof m.section, "%s", section);
    snprintf(m.subject, sizeof m.subject, "%s", subject);
    m.n = n;
    m.p = p;
    snprintf(m.unit, sizeof m.unit, "%s", unit);
    m.moved = moved;
    m.trials = nv;
    memcpy(m.v, v, nv * sizeof *v);
    if (bench_report_measure(b->rep, &m) != 0)
        b->failed = 1;
}

/*
 * A check from two contenders' trials: num.ns[t] / den.ns[t] per trial,
 * each trial's pair measured moments apart.
 */
static void check_ratio(bench *b, const char *key, const char *label,
                        const contender *num, const contender *den,
                        bench_goal goal, double limit)
{
    double r[BENCH_MAX_TRIALS];
    for (unsigned t = 0; t < b->o.trials; t++)
        r[t] = num->ns[t] / den->ns[t];
    if (bench_report_check(b->rep, key, label, "x", r, b->o.trials, goal, limit) != 0)
        b->failed = 1;
}

static void check_values(bench *b, const char *key, const char *label,
                         const char *unit, const double *v, size_t n,
                         bench_goal goal, double limit)
{
    if (bench_report_check(b->rep, key, label, unit, v, n, goal, limit) != 0)
        b->failed = 1;
}

/* "1,234,567" */
static const char *grouped(char *buf, size_t cap, uint64_t v)
{
    char raw[32];
    const int len = snprintf(raw, sizeof raw, "%llu", (unsigned long long)v);
    size_t k = 0;
    for (int i = 0; i < len && k + 2 < cap; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = raw[i];
    }
    buf[k] = '\0';
    return buf;
}

/* "1.52 [1.50 .. 1.61]" with three significant digits. */
static const char *stat_text(char *buf, size_t cap, const double *v, size_t n)
{
    const bench_stat s = bench_stat_of(v, n);
    snprintf(buf, cap, "%7.3g [%.3g .. %.3g]", s.median, s.min, s.max);
    return buf;
}

/* ---- Hashing ---------------------------------------------------------- */

/* On the heap, as the lookup peers are (see peers). */
typedef struct hash_job {
    uint8_t key[16];
    const uint8_t *msgs; /* MSG_COUNT messages, MSG_STRIDE bytes apart */
    size_t len;
    const dch_map *map;
} hash_job;

static uint64_t load_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (unsigned i = 8; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

static uint64_t sip_dch_loop(const void *obj, const uint64_t *h, uint64_t mask,
                             uint64_t ops)
{
    (void)h;
    (void)mask;
    const hash_job *j = obj;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < ops; i++)
        acc += dch_siphash24(j->key, j->msgs + (i % MSG_COUNT) * MSG_STRIDE, j->len);
    return acc;
}

static uint64_t sip_sodium_loop(const void *obj, const uint64_t *h, uint64_t mask,
                                uint64_t ops)
{
    (void)h;
    (void)mask;
    const hash_job *j = obj;
    uint64_t acc = 0;
    unsigned char out[crypto_shorthash_siphash24_BYTES];
    for (uint64_t i = 0; i < ops; i++) {
        crypto_shorthash_siphash24(out, j->msgs + (i % MSG_COUNT) * MSG_STRIDE,
                                   j->len, j->key);
        acc += load_le64(out);
    }
    return acc;
}

static uint64_t path_lookup_loop(const void *obj, const uint64_t *h, uint64_t mask,
                                 uint64_t ops)
{
    (void)h;
    (void)mask;
    const hash_job *j = obj;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < ops; i++)
        acc += dch_map_lookup(j->map, j->msgs + (i % MSG_COUNT) * MSG_STRIDE, j->len);
    return acc;
}

/* The messages: random bytes, room for MSG_COUNT messages of MSG_MAX bytes. */
static uint8_t msg_buf[(MSG_COUNT - 1) * MSG_STRIDE + MSG_MAX];

static void section_siphash(bench *b)
{
    static const size_t lens[] = {8, 16, 64, 1024};
    hash_job *job = malloc(sizeof *job);
    if (job == NULL) {
        b->failed = 1;
        return;
    }
    const uint8_t *key = job->key;
    for (unsigned i = 0; i < 16; i++)
        job->key[i] = (uint8_t)(b->hashes[i] >> 7);
    job->msgs = msg_buf;
    job->map = NULL;
    printf("\nSipHash-2-4: dch_siphash24 against libsodium's "
           "crypto_shorthash_siphash24 (throughput, ns per hash)\n");
    printf("  %6s  %-26s %-26s %-26s %s\n", "bytes", "dch_siphash24", "libsodium",
           "dch / libsodium", "GB/s (dch)");
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        const size_t len = lens[li];
        job->len = len;
        /* Exactness first: both must give the reference output. */
        for (unsigned i = 0; i < MSG_COUNT; i++) {
            unsigned char out[crypto_shorthash_siphash24_BYTES];
            crypto_shorthash_siphash24(out, msg_buf + i * MSG_STRIDE, len, key);
            if (dch_siphash24(key, msg_buf + i * MSG_STRIDE, len) != load_le64(out)) {
                fprintf(stderr, "dch-bench: dch_siphash24 differs from libsodium "
                                "on a %zu-byte message\n", len);
                b->failed = 1;
                free(job);
                return;
            }
        }
        contender c[2] = {{"dch_siphash24", sip_dch_loop, job, 0, {0}},
                          {"libsodium siphash24", sip_sodium_loop, job, 0, {0}}};
        run_group(b, c, 2, 0);
        record(b, "siphash", &c[0], "independent", 0, 0, len);
        record(b, "siphash", &c[1], "independent", 0, 0, len);
        char key_s[64], label[96], s0[64], s1[64], s2[64];
        snprintf(key_s, sizeof key_s, "siphash_dch_over_sodium_%zu", len);
        snprintf(label, sizeof label, "dch_siphash24 / libsodium, %zu-byte input", len);
        bench_goal goal = BENCH_GOAL_NONE;
        double limit = 0;
        if (len == 16) {
            goal = BENCH_GOAL_AT_MOST;
            limit = 1.0;
        } else if (len == 1024) {
            goal = BENCH_GOAL_AT_MOST;
            limit = 1.1;
        }
        check_ratio(b, key_s, label, &c[0], &c[1], goal, limit);
        double r[BENCH_MAX_TRIALS];
        for (unsigned t = 0; t < b->o.trials; t++)
            r[t] = c[0].ns[t] / c[1].ns[t];
        const double med = bench_stat_of(c[0].ns, b->o.trials).median;
        printf("  %6zu  %-26s %-26s %-26s %.2f\n", len,
               stat_text(s0, sizeof s0, c[0].ns, b->o.trials),
               stat_text(s1, sizeof s1, c[1].ns, b->o.trials),
               stat_text(s2, sizeof s2, r, b->o.trials), (double)len / med);
    }
    free(job);
}

/* The full path: dch_map_lookup on 16-byte keys against dch_siphash24 alone. */
static void section_path(bench *b, const dch_map *m, uint32_t n)
{
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    hash_job *job = malloc(sizeof *job);
    if (job == NULL) {
        b->failed = 1;
        return;
    }
    memcpy(job->key, cfg.hash_key, sizeof job->key);
    job->msgs = msg_buf;
    job->len = 16;
    job->map = m;
    for (unsigned i = 0; i < MSG_COUNT; i++) {
        const uint8_t *k = msg_buf + i * MSG_STRIDE;
        if (dch_map_lookup(m, k, 16) !=
            dch_map_lookup_hash(m, dch_siphash24(cfg.hash_key, k, 16))) {
            fprintf(stderr, "dch-bench: dch_map_lookup is not the lookup of the "
                            "key's hash\n");
            b->failed = 1;
            free(job);
            return;
        }
    }
    contender c[2] = {{"dch_map_lookup", path_lookup_loop, job, 0, {0}},
                      {"dch_siphash24", sip_dch_loop, job, 0, {0}}};
    run_group(b, c, 2, 0);
    free(job);
    record(b, "path", &c[0], "independent", n, dch_map_slot_count(m), 16);
    record(b, "path", &c[1], "independent", n, dch_map_slot_count(m), 16);
    char label[96], s0[64], s1[64];
    snprintf(label, sizeof label,
             "dch_map_lookup (16-byte key) / dch_siphash24 alone, N=%u", (unsigned)n);
    check_ratio(b, "path_lookup_over_siphash", label, &c[0], &c[1],
                BENCH_GOAL_AT_MOST, 1.2);
    printf("  full path, 16-byte keys, N = %u: dch_map_lookup %s ns, "
           "dch_siphash24 alone %s ns\n", (unsigned)n,
           stat_text(s0, sizeof s0, c[0].ns, b->o.trials),
           stat_text(s1, sizeof s1, c[1].ns, b->o.trials));
}

/* ---- Peers built from the library's state ----------------------------- */

/* The floor's table: a copy of the map's, so both give the same answers. */
static uint16_t *floor_table(const dch_map *m)
{
    const uint32_t p = dch_map_slot_count(m);
    uint16_t *t = malloc((size_t)p * sizeof *t);
    if (t == NULL)
        return NULL;
    for (uint32_t s = 0; s < p; s++)
        t[s] = (uint16_t)dch_map_slot_owner(m, s);
    return t;
}

static unsigned floor_shift(uint32_t p)
{
    unsigned bits = 0;
    while ((1u << bits) < p)
        bits++;
    return 32u - bits;
}

typedef struct point {
    uint64_t pos;
    uint32_t id;
    uint32_t j;
} point;

/* The ring whose names break ties in point_cmp (qsort has no context). */
static const dch_ring *sort_ring;

/* Ring order (ring.h): position, then name bytes, then j. */
static int point_cmp(const void *pa, const void *pb)
{
    const point *a = pa, *b = pb;
    if (a->pos != b->pos)
        return a->pos < b->pos ? -1 : 1;
    if (a->id != b->id) {
        const int c = strcmp(dch_ring_node_name(sort_ring, a->id),
                             dch_ring_node_name(sort_ring, b->id));
        if (c != 0)
            return c;
    }
    return (a->j > b->j) - (a->j < b->j);
}

/*
 * The ring's points, recomputed from ring.h's placement rule (point j of
 * `name` sits at SipHash-2-4 of "name#j"), sorted, as positions and owners.
 */
static int sorted_points(const dch_ring *r, bench_sorted *out, uint64_t **pos_out,
                         uint16_t **owner_out)
{
    dch_ring_config cfg;
    dch_ring_get_config(r, &cfg);
    const uint32_t n = dch_ring_point_count(r);
    point *pts = malloc((size_t)n * sizeof *pts);
    uint64_t *pos = malloc((size_t)n * sizeof *pos);
    uint16_t *owner = malloc((size_t)n * sizeof *owner);
    if (pts == NULL || pos == NULL || owner == NULL || n == 0) {
        free(pts);
        free(pos);
        free(owner);
        return -1;
    }
    uint32_t k = 0;
    char buf[DCH_NAME_MAX + 16];
    for (uint32_t id = 0; id < dch_ring_id_limit(r); id++) {
        const char *name = dch_ring_node_name(r, id);
        if (name == NULL)
            continue;
        const uint64_t pts_of =
            (uint64_t)cfg.points_per_weight * dch_ring_node_weight(r, id);
        for (uint32_t j = 0; j < pts_of && k < n; j++) {
            const int len = snprintf(buf, sizeof buf, "%s#%u", name, (unsigned)j);
            pts[k].pos = dch_siphash24(cfg.hash_key, buf, (size_t)len);
            pts[k].id = id;
            pts[k].j = j;
            k++;
        }
    }
    sort_ring = r;
    qsort(pts, k, sizeof *pts, point_cmp);
    for (uint32_t i = 0; i < k; i++) {
        pos[i] = pts[i].pos;
        owner[i] = (uint16_t)pts[i].id;
    }
    free(pts);
    out->pos = pos;
    out->owner = owner;
    out->n = k;
    *pos_out = pos;
    *owner_out = owner;
    return k == n ? 0 : -1;
}

/* ---- Lookups ---------------------------------------------------------- */

static uint64_t mask_for(uint32_t p)
{
    uint64_t h = p < HASHES_MIN ? HASHES_MIN : p > HASHES_MAX ? HASHES_MAX : p;
    return h - 1;
}

/* The map and the floor must give the same answer for every hash used. */
static int same_as_floor(bench *b, const dch_map *m, const bench_floor *f,
                         uint64_t mask)
{
    for (uint64_t i = 0; i <= mask; i++)
        if (dch_map_lookup_hash(m, b->hashes[i]) !=
            bench_floor_lookup(f, b->hashes[i])) {
            fprintf(stderr, "dch-bench: the floor table disagrees with the map\n");
            b->failed = 1;
            return 0;
        }
    return 1;
}

static const char *const modes[2] = {"independent", "dependent"};

/*
 * The peers' descriptors. They live on the heap, as the library's objects
 * do: with the floor's descriptor on the caller's stack, its loads inside
 * the call were measured slower on this project's machine (1.9 against
 * 1.4 ns a lookup, at every P), which would tilt the comparison.
 */
typedef struct peers {
    bench_floor fl;
    bench_sorted sorted;
    uint32_t buckets;
} peers;

/* Lookups at N members: the map, its floor, the ring, its baseline, Jump. */
static void section_lookup(bench *b, const dch_map *m, const dch_ring *r, uint32_t n)
{
    const uint32_t p = dch_map_slot_count(m);
    const uint64_t mask = mask_for(p);
    uint16_t *table = floor_table(m);
    peers *pe = malloc(sizeof *pe);
    uint64_t *pos = NULL;
    uint16_t *owner = NULL;
    if (table == NULL || pe == NULL ||
        sorted_points(r, &pe->sorted, &pos, &owner) != 0) {
        fprintf(stderr, "dch-bench: out of memory for the lookup peers\n");
        b->failed = 1;
        free(table);
        free(pe);
        free(pos);
        free(owner);
        return;
    }
    pe->fl = (bench_floor){table, floor_shift(p)};
    pe->buckets = n;
    const bench_floor *fl = &pe->fl;
    const bench_sorted *sorted = &pe->sorted;
    const uint32_t *buckets = &pe->buckets;
    int ok = same_as_floor(b, m, fl, mask);
    /* The baseline must agree with the ring on the hash set and at every
     * point's exact position (a hash equal to a point belongs to it). */
    for (uint64_t i = 0; ok && i <= mask; i++)
        ok = dch_ring_lookup_hash(r, b->hashes[i]) ==
             bench_bsearch_lookup(sorted, b->hashes[i]);
    for (uint32_t i = 0; ok && i < sorted->n; i += 7)
        ok = dch_ring_lookup_hash(r, sorted->pos[i]) ==
             bench_bsearch_lookup(sorted, sorted->pos[i]);
    for (uint64_t i = 0; ok && i <= mask; i++)
        ok = bench_jump_lookup(buckets, b->hashes[i]) < n;
    if (!ok) {
        fprintf(stderr, "dch-bench: a lookup peer disagrees with libdch at N=%u\n",
                (unsigned)n);
        b->failed = 1;
        free(table);
        free(pe);
        free(pos);
        free(owner);
        return;
    }

    char g1[32], g2[32], g3[32];
    printf("\nLookups at N = %s (map P = %s; ring %s points), ns per lookup, "
           "median [min .. max]\n", grouped(g1, sizeof g1, n),
           grouped(g2, sizeof g2, p),
           grouped(g3, sizeof g3, dch_ring_point_count(r)));
    contender c[2][5];
    for (int mode = 0; mode < 2; mode++) {
        contender *x = c[mode];
        x[0] = (contender){"dch_map_lookup_hash", mode ? dch_dependent : dch_independent,
                           m, 0, {0}};
        x[1] = (contender){"floor", mode ? floor_dependent : floor_independent,
                           fl, 0, {0}};
        x[2] = (contender){"dch_ring_lookup_hash",
                           mode ? ring_dependent : ring_independent, r, 0, {0}};
        x[3] = (contender){"branchy binary search",
                           mode ? bsearch_dependent : bsearch_independent, sorted,
                           0, {0}};
        x[4] = (contender){"jump consistent hash",
                           mode ? jump_dependent : jump_independent, buckets, 0, {0}};
        run_group(b, x, 5, mask);
        for (int i = 0; i < 5; i++)
            record(b, "lookup", &x[i], modes[mode], n, i >= 2 && i <= 3 ?
                   dch_ring_point_count(r) : i == 4 ? 0 : p, 0);
    }
    printf("  %-24s %-28s %-28s\n", "", "independent (throughput)",
           "dependent (latency)");
    for (int i = 0; i < 5; i++) {
        char s0[64], s1[64];
        printf("  %-24s %-28s %-28s\n", c[0][i].subject,
               stat_text(s0, sizeof s0, c[0][i].ns, b->o.trials),
               stat_text(s1, sizeof s1, c[1][i].ns, b->o.trials));
    }

    for (int mode = 0; mode < 2; mode++) {
        const contender *x = c[mode];
        const char *mw = mode ? "latency" : "throughput";
        char key[64], label[96];
        snprintf(key, sizeof key, "lookup_dch_over_floor_%s_n%u", modes[mode],
                 (unsigned)n);
        snprintf(label, sizeof label, "dch lookup_hash / floor, %s, N=%u", mw,
                 (unsigned)n);
        check_ratio(b, key, label, &x[0], &x[1],
                    mode ? BENCH_GOAL_NONE : BENCH_GOAL_AT_MOST, 1.5);
        snprintf(key, sizeof key, "lookup_jump_over_dch_%s_n%u", modes[mode],
                 (unsigned)n);
        snprintf(label, sizeof label, "jump / dch lookup_hash (speed-up), %s, N=%u",
                 mw, (unsigned)n);
        const bool jump_target = mode == 0 && n == 1000;
        check_ratio(b, key, label, &x[4], &x[0],
                    jump_target ? BENCH_GOAL_AT_LEAST : BENCH_GOAL_NONE, 20);
        snprintf(key, sizeof key, "lookup_bsearch_over_ring_%s_n%u", modes[mode],
                 (unsigned)n);
        snprintf(label, sizeof label,
                 "binary search / ring lookup_hash (speed-up), %s, N=%u", mw,
                 (unsigned)n);
        check_ratio(b, key, label, &x[3], &x[2],
                    jump_target ? BENCH_GOAL_AT_LEAST : BENCH_GOAL_NONE, 2.5);
    }
    free(table);
    free(pe);
    free(pos);
    free(owner);
}

/* Map lookups at P = 2^12 .. 2^22 slots (64 slots a unit), against the floor. */
static void section_sweep(bench *b)
{
    const unsigned lo = 12, hi = b->o.quick ? 14 : 22;
    printf("\nMap lookups against P (N = %u, 64 slots a unit), ns per lookup, "
           "median [min .. max]\n", SWEEP_NODES);
    printf("  %10s  %-26s %-26s %-26s %-26s\n", "P", "dch (throughput)",
           "floor (throughput)", "dch (latency)", "floor (latency)");
    for (unsigned k = lo; k <= hi; k++) {
        const uint32_t p = 1u << k;
        dch_map_config cfg;
        dch_map_config_default(&cfg);
        cfg.slots_per_unit = 64;
        cfg.units = p / 64;
        dch_map *m = NULL;
        if (dch_map_new(&m, &cfg) != DCH_OK) {
            fprintf(stderr, "dch-bench: cannot make a map of %u slots\n", (unsigned)p);
            b->failed = 1;
            return;
        }
        char name[32];
        for (uint32_t i = 0; i < SWEEP_NODES; i++) {
            snprintf(name, sizeof name, "node-%u", (unsigned)i);
            if (dch_map_add_node(m, name, 1, NULL) != DCH_OK) {
                b->failed = 1;
                dch_map_free(m);
                return;
            }
        }
        uint16_t *table = floor_table(m);
        const uint64_t mask = mask_for(p);
        bench_floor *fl = malloc(sizeof *fl); /* on the heap: see peers */
        if (fl != NULL)
            *fl = (bench_floor){table, floor_shift(p)};
        if (table == NULL || fl == NULL || !same_as_floor(b, m, fl, mask)) {
            b->failed = 1;
            free(table);
            free(fl);
            dch_map_free(m);
            return;
        }
        contender c[2][2];
        for (int mode = 0; mode < 2; mode++) {
            c[mode][0] = (contender){"dch_map_lookup_hash",
                                     mode ? dch_dependent : dch_independent, m, 0, {0}};
            c[mode][1] = (contender){"floor", mode ? floor_dependent : floor_independent,
                                     fl, 0, {0}};
            run_group(b, c[mode], 2, mask);
            record(b, "sweep", &c[mode][0], modes[mode], SWEEP_NODES, p, 0);
            record(b, "sweep", &c[mode][1], modes[mode], SWEEP_NODES, p, 0);
            char key[64], label[96];
            snprintf(key, sizeof key, "sweep_dch_over_floor_%s_p2e%u", modes[mode], k);
            snprintf(label, sizeof label, "dch lookup_hash / floor, %s, P=2^%u",
                     mode ? "latency" : "throughput", k);
            check_ratio(b, key, label, &c[mode][0], &c[mode][1],
                        mode ? BENCH_GOAL_NONE : BENCH_GOAL_AT_MOST, 1.5);
        }
        char g[32], s[4][64];
        printf("  %10s  %-26s %-26s %-26s %-26s\n", grouped(g, sizeof g, p),
               stat_text(s[0], sizeof s[0], c[0][0].ns, b->o.trials),
               stat_text(s[1], sizeof s[1], c[0][1].ns, b->o.trials),
               stat_text(s[2], sizeof s[2], c[1][0].ns, b->o.trials),
               stat_text(s[3], sizeof s[3], c[1][1].ns, b->o.trials));
        const double bytes = (double)dch_map_memory(m);
        record_single(b, "sweep", "dch_map_memory", SWEEP_NODES, p, "bytes", &bytes,
                      1, -1);
        free(table);
        free(fl);
        dch_map_free(m);
    }
}

/* ---- Changes and memory ----------------------------------------------- */

/* Median of a change's timings at each N, kept for the growth check. */
typedef struct change_curve {
    uint32_t n[NCHECKPOINTS];
    double add_ns[NCHECKPOINTS];
    double moved[NCHECKPOINTS];
    uint32_t p;
    size_t count;
} change_curve;

/*
 * add_node and remove_node at N members, for the map and the ring, and
 * clones: each repetition adds one member and removes it again (the map is
 * left with N members, as balanced as before; the ring exactly as before),
 * the map's and the ring's calls interleaved.
 */
static void section_change(bench *b, dch_map *m, dch_ring *r, uint32_t n,
                           change_curve *curve)
{
    unsigned reps = n <= 100 ? 31 : n <= 1000 ? 15 : 7;
    if (b->o.quick)
        reps = 3;
    double madd[BENCH_MAX_TRIALS], mrm[BENCH_MAX_TRIALS], radd[BENCH_MAX_TRIALS],
        rrm[BENCH_MAX_TRIALS], mclone[BENCH_MAX_TRIALS], rclone[BENCH_MAX_TRIALS],
        moved[BENCH_MAX_TRIALS], speedup[BENCH_MAX_TRIALS];
    for (unsigned i = 0; i < reps; i++) {
        char name[48];
        snprintf(name, sizeof name, "bench-extra-%u", i);
        uint32_t mid = 0, rid = 0;
        stopwatch sw = sw_start(b);
        int rc = dch_map_add_node(m, name, 1, &mid);
        madd[i] = sw_stop(b, sw);
        moved[i] = dch_map_node_slots(m, mid);
        sw = sw_start(b);
        rc = rc ? rc : dch_map_remove_node(m, mid);
        mrm[i] = sw_stop(b, sw);
        sw = sw_start(b);
        rc = rc ? rc : dch_ring_add_node(r, name, 1, &rid);
        radd[i] = sw_stop(b, sw);
        sw = sw_start(b);
        rc = rc ? rc : dch_ring_remove_node(r, rid);
        rrm[i] = sw_stop(b, sw);
        dch_map *mc = NULL;
        dch_ring *rcl = NULL;
        sw = sw_start(b);
        rc = rc ? rc : dch_map_clone(&mc, m);
        mclone[i] = sw_stop(b, sw);
        sw = sw_start(b);
        rc = rc ? rc : dch_ring_clone(&rcl, r);
        rclone[i] = sw_stop(b, sw);
        dch_map_free(mc);
        dch_ring_free(rcl);
        if (rc != DCH_OK) {
            fprintf(stderr, "dch-bench: a change failed at N=%u: %s\n", (unsigned)n,
                    dch_strerror(rc));
            b->failed = 1;
            return;
        }
        speedup[i] = radd[i] / madd[i];
    }
    const uint32_t p = dch_map_slot_count(m);
    const uint32_t pts = dch_ring_point_count(r);
    const double mv = bench_stat_of(moved, reps).median;
    record_single(b, "change", "dch_map_add_node", n, p, "ns/call", madd, reps, mv);
    record_single(b, "change", "dch_map_remove_node", n, p, "ns/call", mrm, reps, mv);
    record_single(b, "change", "dch_ring_add_node", n, pts, "ns/call", radd, reps, -1);
    record_single(b, "change", "dch_ring_remove_node", n, pts, "ns/call", rrm, reps, -1);
    record_single(b, "change", "dch_map_clone", n, p, "ns/call", mclone, reps, -1);
    record_single(b, "change", "dch_ring_clone", n, pts, "ns/call", rclone, reps, -1);

    const double add_med = bench_stat_of(madd, reps).median;
    curve->n[curve->count] = n;
    curve->add_ns[curve->count] = add_med;
    curve->moved[curve->count] = mv;
    curve->p = p;
    curve->count++;

    char key[64], label[96];
    double us[BENCH_MAX_TRIALS];
    for (unsigned i = 0; i < reps; i++)
        us[i] = madd[i] / 1e3;
    snprintf(key, sizeof key, "change_map_add_us_n%u", (unsigned)n);
    snprintf(label, sizeof label, "map add_node, median per call, N=%u", (unsigned)n);
    check_values(b, key, label, "us", us, reps,
                 n == 1000 ? BENCH_GOAL_AT_MOST : BENCH_GOAL_NONE, 100);
    snprintf(key, sizeof key, "change_ring_add_over_map_add_n%u", (unsigned)n);
    snprintf(label, sizeof label, "ring add_node / map add_node (speed-up), N=%u",
             (unsigned)n);
    check_values(b, key, label, "x", speedup, reps,
                 n == 1000 ? BENCH_GOAL_AT_LEAST : BENCH_GOAL_NONE, 5);

    printf("\nChanges at N = %u (map P = %u; ring %u points), us per call, "
           "median [min .. max] of %u\n", (unsigned)n, (unsigned)p, (unsigned)pts,
           reps);
    const struct {
        const char *what;
        const double *v;
    } rows[] = {{"dch_map_add_node", madd},   {"dch_map_remove_node", mrm},
                {"dch_ring_add_node", radd},  {"dch_ring_remove_node", rrm},
                {"dch_map_clone", mclone},    {"dch_ring_clone", rclone}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        double v[BENCH_MAX_TRIALS];
        char s[64];
        for (unsigned k = 0; k < reps; k++)
            v[k] = rows[i].v[k] / 1e3;
        printf("  %-22s %s\n", rows[i].what, stat_text(s, sizeof s, v, reps));
    }
    printf("  map add/remove move %.0f slots (P/(N+1) = %.1f)\n", mv,
           (double)p / (n + 1));
}

/*
 * How map add_node grows with N: its median time per unit of the work the
 * model allows, P + moved * log2(N), which must stay flat (within 2x of its
 * value at the smallest N measured) for the cost to grow no faster.
 */
static void check_growth(bench *b, const change_curve *c)
{
    if (c->count == 0)
        return;
    printf("\nmap add_node against the model P + moved * log2 N:\n");
    double unit[NCHECKPOINTS];
    for (size_t i = 0; i < c->count; i++) {
        const double work = c->p + c->moved[i] * log2((double)c->n[i]);
        unit[i] = c->add_ns[i] / work;
        printf("  N = %5u: %9.1f us, moved %6.0f, %.3f ns per unit of work\n",
               (unsigned)c->n[i], c->add_ns[i] / 1e3, c->moved[i], unit[i]);
        char key[64], label[96];
        snprintf(key, sizeof key, "change_map_add_ns_per_work_n%u", (unsigned)c->n[i]);
        snprintf(label, sizeof label,
                 "map add_node ns / (P + moved*log2 N), N=%u", (unsigned)c->n[i]);
        check_values(b, key, label, "ns", &unit[i], 1, BENCH_GOAL_NONE, 0);
    }
    const double growth = unit[c->count - 1] / unit[0];
    char label[96];
    snprintf(label, sizeof label, "map add_node cost growth vs model, N=%u..%u",
             (unsigned)c->n[0], (unsigned)c->n[c->count - 1]);
    check_values(b, "change_map_add_growth", label, "x", &growth, c->count > 1 ? 1 : 0,
                 BENCH_GOAL_AT_MOST, 2);
}

/* Bytes a map and a ring hold at N members. */
static void section_memory(bench *b, const dch_map *m, const dch_ring *r, uint32_t n)
{
    const double mb = (double)dch_map_memory(m), rb = (double)dch_ring_memory(r);
    const uint32_t pts = dch_ring_point_count(r);
    record_single(b, "memory", "dch_map_memory", n, dch_map_slot_count(m), "bytes",
                  &mb, 1, -1);
    record_single(b, "memory", "dch_ring_memory", n, pts, "bytes", &rb, 1, -1);
    /* ring.h: 8 bytes a point, a 256 KiB bucket index, O(members). */
    const double per_member = (rb - 8.0 * pts - 256.0 * 1024) / n;
    printf("  memory at N = %5u: map %9.0f B (%.1f KiB); ring %10.0f B = 8 B x %u "
           "points + 256 KiB index + %.1f B per member\n", (unsigned)n, mb,
           mb / 1024, rb, (unsigned)pts, per_member);
    char key[64], label[96];
    const double kib = mb / 1024;
    snprintf(key, sizeof key, "memory_map_kib_n%u", (unsigned)n);
    snprintf(label, sizeof label, "map memory, default config, N=%u", (unsigned)n);
    check_values(b, key, label, "KiB", &kib, 1,
                 n == 1000 ? BENCH_GOAL_AT_MOST : BENCH_GOAL_NONE, 160);
    snprintf(key, sizeof key, "memory_ring_member_bytes_n%u", (unsigned)n);
    snprintf(label, sizeof label,
             "ring memory beyond 8 B/point + 256 KiB index, per member, N=%u",
             (unsigned)n);
    check_values(b, key, label, "B", &per_member, 1,
                 n == 1000 ? BENCH_GOAL_AT_MOST : BENCH_GOAL_NONE, 128);
}

/* Grow the map and the ring to each checkpoint and measure there. */
static void section_growth(bench *b)
{
    dch_map *m = NULL;
    dch_ring *r = NULL;
    if (dch_map_new(&m, NULL) != DCH_OK || dch_ring_new(&r, NULL) != DCH_OK) {
        b->failed = 1;
        dch_map_free(m);
        return;
    }
    const uint32_t path_n = b->o.max_nodes < 1000 ? b->o.max_nodes : 1000;
    change_curve curve;
    memset(&curve, 0, sizeof curve);
    bool path_done = false;
    uint32_t have = 0;
    /* With only the hash section, growth stops once the path is measured. */
    const bool path_only = !(b->o.sections & (SEC_LOOKUP | SEC_CHANGE | SEC_MEMORY));
    for (size_t ci = 0; ci < NCHECKPOINTS && !b->failed; ci++) {
        const uint32_t n = checkpoints[ci];
        if (n > b->o.max_nodes || (path_only && path_done))
            break;
        const double t0 = now_ns();
        for (; have < n; have++) {
            char name[32];
            snprintf(name, sizeof name, "node-%u", (unsigned)have);
            int rc = dch_map_add_node(m, name, 1, NULL);
            rc = rc ? rc : dch_ring_add_node(r, name, 1, NULL);
            if (rc != DCH_OK) {
                fprintf(stderr, "dch-bench: building N=%u: %s\n", (unsigned)n,
                        dch_strerror(rc));
                b->failed = 1;
                break;
            }
        }
        if (b->failed)
            break;
        printf("\n== N = %u members (built in %.1f s) ==\n", (unsigned)n,
               (now_ns() - t0) / 1e9);
        fflush(stdout);
        if (b->o.sections & SEC_MEMORY)
            section_memory(b, m, r, n);
        if (b->o.sections & SEC_LOOKUP)
            section_lookup(b, m, r, n);
        if ((b->o.sections & SEC_HASH) && n >= path_n && !path_done) {
            section_path(b, m, n);
            path_done = true;
        }
        if ((b->o.sections & SEC_CHANGE) && n >= 100)
            section_change(b, m, r, n, &curve);
        fflush(stdout);
    }
    if (b->o.sections & SEC_CHANGE)
        check_growth(b, &curve);
    dch_map_free(m);
    dch_ring_free(r);
}

/* Targets at N = 1,000 that a shortened run did not reach. */
static void note_unmeasured(bench *b)
{
    if (b->o.max_nodes >= 1000)
        return;
    if (b->o.sections & SEC_LOOKUP) {
        check_values(b, "lookup_jump_over_dch_independent_n1000",
                     "jump / dch lookup_hash (speed-up), throughput, N=1000", "x",
                     NULL, 0, BENCH_GOAL_AT_LEAST, 20);
        check_values(b, "lookup_bsearch_over_ring_independent_n1000",
                     "binary search / ring lookup_hash (speed-up), throughput, N=1000",
                     "x", NULL, 0, BENCH_GOAL_AT_LEAST, 2.5);
    }
    if (b->o.sections & SEC_CHANGE) {
        check_values(b, "change_map_add_us_n1000",
                     "map add_node, median per call, N=1000", "us", NULL, 0,
                     BENCH_GOAL_AT_MOST, 100);
        check_values(b, "change_ring_add_over_map_add_n1000",
                     "ring add_node / map add_node (speed-up), N=1000", "x", NULL, 0,
                     BENCH_GOAL_AT_LEAST, 5);
    }
    if (b->o.sections & SEC_MEMORY) {
        check_values(b, "memory_map_kib_n1000", "map memory, default config, N=1000",
                     "KiB", NULL, 0, BENCH_GOAL_AT_MOST, 160);
        check_values(b, "memory_ring_member_bytes_n1000",
                     "ring memory beyond 8 B/point + 256 KiB index, per member, N=1000",
                     "B", NULL, 0, BENCH_GOAL_AT_MOST, 128);
    }
}

/* ---- Machine and options ---------------------------------------------- */

/* The first "model name" of /proc/cpuinfo, or "unknown". */
static void cpu_model(char *buf, size_t cap)
{
    snprintf(buf, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *v = strchr(line, ':');
        if (v == NULL)
            continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(buf, cap, "%s", v);
        buf[strcspn(buf, "\n")] = '\0';
        break;
    }
    fclose(f);
}

/* The 1-minute load average, or -1. */
static double load_average(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f != NULL) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: dch-bench [options]\n"
            "\n"
            "Measures libdch against peers within one run and prints every ratio\n"
            "with its target: lookups on precomputed hashes (DCH map, bare-array\n"
            "floor, ring, branchy binary search, Jump consistent hash) at N = 10 ..\n"
            "10,000 members and over P = 2^12 .. 2^22 slots; dch_map_lookup on keys;\n"
            "SipHash-2-4 against libsodium; add_node, remove_node and clone; memory.\n"
            "\n"
            "Options (default in brackets):\n"
            "  --lookups N    calls per trial, fewer if a trial would pass --trial-ms\n"
            "                 [10000000]\n"
            "  --trials N     trials per measurement, 1 .. %u [7]\n"
            "  --trial-ms N   longest trial of one contender, in ms [100]\n"
            "  --max-nodes N  grow to the checkpoints 10, 100, 1000, 10000 up to N\n"
            "                 [10000]\n"
            "  --only LIST    comma-separated sections: hash, lookup, change, memory,\n"
            "                 sweep [all]\n"
            "  --cpu N        pin the process to CPU N [not pinned]\n"
            "  --seed N       seed of the hashes and keys [1]\n"
            "  --json PATH    write the results as JSON [bench.json]\n"
            "  --quick        a smoke run: 3 trials, N up to 100, P up to 2^14\n"
            "  --help         print this help and exit\n"
            "\n"
            "Exit status: 0 when the run completed (targets may be missed), 1 if a\n"
            "measurement failed or a peer disagreed with libdch, 2 on bad usage\n"
            "(an unknown option, a value out of range, a --json path that cannot\n"
            "be written).\n",
            (unsigned)BENCH_MAX_TRIALS);
}

static int parse_sections(const char *s, unsigned *out)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"hash", SEC_HASH},     {"lookup", SEC_LOOKUP}, {"change", SEC_CHANGE},
                 {"memory", SEC_MEMORY}, {"sweep", SEC_SWEEP}};
    unsigned bits = 0;
    while (*s) {
        const size_t len = strcspn(s, ",");
        bool known = false;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == len && strncmp(s, names[i].name, len) == 0) {
                bits |= names[i].bit;
                known = true;
            }
        if (!known) {
            fprintf(stderr, "dch-bench: --only: unknown section '%.*s'\n", (int)len, s);
            return -1;
        }
        s += len + (s[len] == ',');
    }
    if (bits == 0) {
        fprintf(stderr, "dch-bench: --only needs at least one section\n");
        return -1;
    }
    *out = bits;
    return 0;
}

/* @return 0 to run, 1 after --help, -1 on bad usage. */
static int parse_args(int argc, char **argv, options *o)
{
    *o = (options){10000000, 7, 100, "bench.json", false, 10000, -1, 1, SEC_ALL};
    bool trials_given = false, nodes_given = false;
    static const char *const flags[] = {"--quick", NULL};
    for (int i = 1; i < argc;) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 1;
        }
        an_arg a;
        if (an_arg_next(PROG, argc, argv, &i, flags, &a) != 0)
            return -1;
        const char *name = a.name, *value = a.value;
        if (value == NULL) { /* --quick */
            o->quick = true;
            continue;
        }
        unsigned long long v = 0;
        if (strcmp(name, "--json") == 0) {
            if (value[0] == '\0') {
                fprintf(stderr, "dch-bench: --json needs a path\n");
                return -1;
            }
            o->json = value;
        } else if (strcmp(name, "--only") == 0) {
            if (parse_sections(value, &o->sections) != 0)
                return -1;
        } else if (strcmp(name, "--lookups") == 0) {
            if (an_arg_number(PROG, name, value, 1, UINT64_C(1) << 40, &v) != 0)
                return -1;
            o->lookups = v;
        } else if (strcmp(name, "--trials") == 0) {
            if (an_arg_number(PROG, name, value, 1, BENCH_MAX_TRIALS, &v) != 0)
                return -1;
            o->trials = (unsigned)v;
            trials_given = true;
        } else if (strcmp(name, "--trial-ms") == 0) {
            if (an_arg_number(PROG, name, value, 1, 60000, &v) != 0)
                return -1;
            o->trial_ms = (unsigned)v;
        } else if (strcmp(name, "--max-nodes") == 0) {
            if (an_arg_number(PROG, name, value, 10, 10000, &v) != 0)
                return -1;
            o->max_nodes = (uint32_t)v;
            nodes_given = true;
        } else if (strcmp(name, "--cpu") == 0) {
            if (an_arg_number(PROG, name, value, 0, CPU_SETSIZE - 1, &v) != 0)
                return -1;
            o->cpu = (int)v;
        } else if (strcmp(name, "--seed") == 0) {
            if (an_arg_number(PROG, name, value, 0, ULLONG_MAX, &v) != 0)
                return -1;
            o->seed = v;
        } else {
            fprintf(stderr, "dch-bench: unknown option '%s' (try --help)\n", name);
            return -1;
        }
    }
    if (o->quick) {
        if (!trials_given)
            o->trials = 3;
        if (!nodes_given)
            o->max_nodes = 100;
    }
    return 0;
}

/* splitmix64: the hash set and keys, reproducible from --seed. */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Keep a core busy for a while so that it leaves any low-power state. */
static void warm_up(bench *b)
{
    const double end = now_ns() + 2e8;
    uint64_t s = b->o.seed, acc = 0;
    while (now_ns() < end)
        for (int i = 0; i < 10000; i++)
            acc += splitmix64(&s);
    b->sink += acc;
}

int main(int argc, char **argv)
{
    static bench b;
    const int pr = parse_args(argc, argv, &b.o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    if (sodium_init() < 0) {
        fprintf(stderr, "dch-bench: libsodium failed to initialise\n");
        return 1;
    }
    if (b.o.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET((size_t)b.o.cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            fprintf(stderr, "dch-bench: cannot pin to CPU %d: %s\n", b.o.cpu,
                    strerror(errno));
            return 2;
        }
    }
    /* A path that cannot be written is found now, not after the run. */
    FILE *probe = fopen(b.o.json, "w");
    if (probe == NULL) {
        fprintf(stderr, "dch-bench: cannot write %s: %s\n", b.o.json, strerror(errno));
        return 2;
    }
    fclose(probe);
    b.last_cpu = -1;
    b.rep = bench_report_new();
    b.hashes = malloc(HASHES_MAX * sizeof *b.hashes);
    if (b.rep == NULL || b.hashes == NULL) {
        fprintf(stderr, "dch-bench: out of memory\n");
        return 1;
    }
    uint64_t s = b.o.seed;
    for (uint32_t i = 0; i < HASHES_MAX; i++)
        b.hashes[i] = splitmix64(&s);
    for (size_t i = 0; i < sizeof msg_buf; i++)
        msg_buf[i] = (uint8_t)splitmix64(&s);

    char model[256], date[32], g[32];
    cpu_model(model, sizeof model);
    const time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    const int start_cpu = sched_getcpu();
    const double load0 = load_average();
    dch_ring_config rcfg;
    dch_ring_config_default(&rcfg);

    printf("dch-bench: libdch %s (%s build), compiler %s\n", dch_version(),
           DCH_BENCH_BUILD_TYPE, BENCH_COMPILER);
    printf("%s, CPU: %s, %ld online, started on CPU %d%s, load average %.2f\n", date,
           model, sysconf(_SC_NPROCESSORS_ONLN), start_cpu,
           b.o.cpu >= 0 ? " (pinned)" : "", load0);
    printf("%u trials per figure, median [min .. max] of thread CPU time; up to %s "
           "calls per trial, at most %u ms per contender per trial\n", b.o.trials,
           grouped(g, sizeof g, b.o.lookups), b.o.trial_ms);
    printf("ring: %u points per weight. Figures are this machine's in this run: "
           "compare the ratios.\n", (unsigned)rcfg.points_per_weight);
    fflush(stdout);

    bench_report_info(b.rep, "program", "dch-bench");
    bench_report_info(b.rep, "libdch_version", dch_version());
    bench_report_info(b.rep, "build_type", DCH_BENCH_BUILD_TYPE);
    bench_report_info(b.rep, "compiler", BENCH_COMPILER);
    bench_report_info(b.rep, "date", date);
    bench_report_info(b.rep, "cpu_model", model);
    bench_report_info_num(b.rep, "cpus_online", (double)sysconf(_SC_NPROCESSORS_ONLN));
    bench_report_info_num(b.rep, "start_cpu", start_cpu);
    bench_report_info_num(b.rep, "pinned_cpu", b.o.cpu);
    bench_report_info_num(b.rep, "load_average_start", load0);
    bench_report_info_num(b.rep, "trials", b.o.trials);
    bench_report_info_num(b.rep, "lookups", (double)b.o.lookups);
    bench_report_info_num(b.rep, "trial_ms", b.o.trial_ms);
    bench_report_info_num(b.rep, "max_nodes", b.o.max_nodes);
    bench_report_info_num(b.rep, "seed", (double)b.o.seed);
    bench_report_info_num(b.rep, "quick", b.o.quick);
    bench_report_info_num(b.rep, "ring_points_per_weight", rcfg.points_per_weight);

    /* A smoke run proves the program runs; its timings judge nothing. */
    bench_report_set_smoke(b.rep, b.o.quick);
    const double t0 = now_ns();
    warm_up(&b);
    if (b.o.sections & SEC_HASH)
        section_siphash(&b);
    if (!b.failed && (b.o.sections & (SEC_HASH | SEC_LOOKUP | SEC_CHANGE | SEC_MEMORY)))
        section_growth(&b);
    if (!b.failed && (b.o.sections & SEC_SWEEP))
        section_sweep(&b);
    note_unmeasured(&b);

    char seen[256] = "";
    size_t k = 0;
    for (int c = 0; c < CPU_SETSIZE && k + 8 < sizeof seen; c++)
        if (b.cpu_seen[c])
            k += (size_t)snprintf(seen + k, sizeof seen - k, "%s%d", k ? "," : "", c);
    const double load1 = load_average();
    const double secs = (now_ns() - t0) / 1e9;
    bench_report_info(b.rep, "cpus_seen", seen);
    bench_report_info_num(b.rep, "cpu_migrations", b.migrations);
    bench_report_info_num(b.rep, "load_average_end", load1);
    bench_report_info_num(b.rep, "seconds", secs);
    /* Timings are CPU time; the share of wall time they had says how busy
     * the machine was with other work. */
    const double share = b.wall_ns > 0 ? b.cpu_ns / b.wall_ns : 1;
    bench_report_info(b.rep, "clock", "CLOCK_THREAD_CPUTIME_ID");
    bench_report_info_num(b.rep, "cpu_share_of_wall", share);

    size_t measured, met, smoke;
    bench_report_tally(b.rep, &measured, &met, &smoke);
    printf("\n== Checks: ratios within this run (x), and absolute figures ==\n");
    bench_report_print_checks(b.rep, stdout);
    printf("\ntargets met: %zu of %zu measured", met, measured);
    if (smoke > 0)
        printf(" (%zu more measured as smoke, not judged at this size)", smoke);
    printf("; ran on CPUs %s (%u moves between timed runs), load average %.2f -> "
           "%.2f, %.0f s\n", seen[0] ? seen : "?", b.migrations, load0, load1, secs);
    printf("timings are the thread's CPU time; timed runs had the CPU %.0f%% of "
           "their wall time\n", 100 * share);
    if (bench_report_write_json(b.rep, b.o.json) != 0) {
        fprintf(stderr, "dch-bench: cannot write %s: %s\n", b.o.json, strerror(errno));
        b.failed = 1;
    } else {
        printf("results: %s\n", b.o.json);
    }
    free(b.hashes);
    bench_report_free(b.rep);
    return b.failed ? 1 : 0;
}
