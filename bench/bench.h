/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's shared state and method, for the files that hold its sections.
 *
 * Method. Every timing is repeated over several trials after a warm-up; the
 * contenders of one comparison run in turn inside each trial (their order
 * rotating from trial to trial), so a ratio is taken between runs made
 * moments apart, and the report gives the median and the extremes over the
 * trials. Times are the thread's CPU time: the time other processes hold the
 * core is not counted, which on a shared machine is most of the noise.
 *
 * timing.c holds the clocks and the trials, record.c turns timings into the
 * report's measurements and checks, and each section (hash.c, lookup.c,
 * change.c, publish.c) measures one family of calls.
 */
#ifndef DCH_BENCH_H
#define DCH_BENCH_H

#include "report.h"

#include <dch/dch.h>

#include <sched.h> /* CPU_SETSIZE (the target defines _GNU_SOURCE) */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sections, for --only. */
enum {
    SEC_HASH = 1u << 0,    /* SipHash against libsodium; map lookup of a key */
    SEC_LOOKUP = 1u << 1,  /* lookups at N = 10 .. 10,000 */
    SEC_CHANGE = 1u << 2,  /* add, remove, clone */
    SEC_MEMORY = 1u << 3,  /* bytes held */
    SEC_SWEEP = 1u << 4,   /* map lookups at P = 2^12 .. 2^22 */
    SEC_PUBLISH = 1u << 5, /* changes on a fresh clone, against an O(P) floor */
    SEC_REPLICAS = 1u << 6, /* every copy of a hash against its primary alone */
    SEC_WORST = 1u << 7,    /* the engine's worst single-copy call against the floor */
    SEC_REPLICA_COST = 1u << 8, /* replica calls against a clone */
    SEC_LOAD = 1u << 9,         /* dch_load_hit against a bare array */
    SEC_BALANCE = 1u << 10,     /* dch_map_balance_load against a clone */
    SEC_ALL = (1u << 11) - 1
};

/* The hash set: enough hashes that a large table is touched all over. */
#define HASHES_MAX (1u << 20)
#define HASHES_MIN (1u << 14)

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

/** splitmix64: the hash set, keys and messages, reproducible from --seed. */
uint64_t bench_splitmix64(uint64_t *s);

/* ---- Timing (timing.c) ------------------------------------------------- */

/** Monotonic wall time, in nanoseconds. */
double bench_now_ns(void);

/** A timed run: the thread's CPU time, with the wall time kept beside it. */
typedef struct stopwatch {
    double wall, cpu;
} stopwatch;

/** Start a timed run, noting the CPU it starts on. */
stopwatch bench_sw_start(bench *b);

/** CPU nanoseconds since bench_sw_start; adds to the run's totals. */
double bench_sw_stop(bench *b, stopwatch s);

/** A timing loop: `ops` calls of one contender on hashes h[.. & mask]. */
typedef uint64_t (*loop_fn)(const void *obj, const uint64_t *h, uint64_t mask,
                            uint64_t ops);

/** One contender of a comparison and its timings (ns per call, per trial). */
typedef struct contender {
    const char *subject;
    loop_fn loop;
    const void *obj;
    uint64_t ops; /* per trial, set by calibration */
    double ns[BENCH_MAX_TRIALS];
} contender;

/**
 * Calibrate each of the nc contenders, then run b->o.trials trials, the
 * contenders taking turns within each; fills every c[i].ns.
 */
void bench_run_group(bench *b, contender *c, size_t nc, uint64_t mask);

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

/* ---- Recording (record.c) ---------------------------------------------- */

/** A lookup or hash contender's trials, as a measurement (unit ns/op). */
void bench_record(bench *b, const char *section, const contender *c,
                  const char *mode, uint64_t n, uint64_t p, uint64_t len);

/** nv values of one measurement; moved < 0 when no slots move. */
void bench_record_values(bench *b, const char *section, const char *subject,
                         uint64_t n, uint64_t p, const char *unit, const double *v,
                         size_t nv, double moved);

/** r[t] = num.ns[t] / den.ns[t] for each trial t: pairs timed moments apart. */
void bench_ratios(const bench *b, const contender *num, const contender *den,
                  double *r);

/** A check of those ratios (unit "x"). */
void bench_check_ratio(bench *b, const char *key, const char *label,
                       const contender *num, const contender *den, bench_goal goal,
                       double limit);

/** A check of n values (n == 0: not measured in this run). */
void bench_check_values(bench *b, const char *key, const char *label,
                        const char *unit, const double *v, size_t n, bench_goal goal,
                        double limit);

/** v with thousands separated: "1,234,567". */
const char *bench_grouped(char *buf, size_t cap, uint64_t v);

/** Median and extremes: "1.52 [1.50 .. 1.61]" with three significant digits. */
const char *bench_stat_text(char *buf, size_t cap, const double *v, size_t n);

/* ---- Sections ---------------------------------------------------------- */

/**
 * A map over p slots, 64 a unit, with members node-0 .. node-(n-1) of
 * weight 1; NULL (after a message) on failure (lookup.c).
 */
dch_map *bench_map_of(uint32_t p, uint32_t n);

/**
 * One call of a scripted history on m: op 'a' adds name with weight, 'r'
 * removes it, anything else sets its weight (lookup.c).
 */
int bench_map_call(dch_map *m, char op, const char *name, uint32_t weight);

/** Fill the message buffer the hash sections read (hash.c). */
void bench_fill_messages(uint64_t *seed);

/** SipHash-2-4 against libsodium at 8 .. 1024 bytes (hash.c). */
void bench_section_siphash(bench *b);

/** dch_map_lookup on 16-byte keys against dch_siphash24 alone (hash.c). */
void bench_section_path(bench *b, const dch_map *m, uint32_t n);

/** Lookups at n members: map, floor, ring, binary search, Jump (lookup.c). */
void bench_section_lookup(bench *b, const dch_map *m, const dch_ring *r, uint32_t n);

/** Map lookups at P = 2^12 .. 2^22 against the floor (lookup.c). */
void bench_section_sweep(bench *b);

/** All copies of a hash against its primary alone, on one map with 3 copies
 *  of every slot (replicas.c). */
void bench_section_replicas(bench *b);

/**
 * Grow a map and a ring to each checkpoint (10 .. 10,000 members) and run
 * there the sections chosen: memory, lookups, the key path, changes, and
 * changes on fresh clones (change.c).
 */
void bench_section_growth(bench *b);

/** List the N = 1,000 targets as not measured when --max-nodes stops short. */
void bench_note_unmeasured(bench *b);

/** Medians of changes on fresh clones, at each N or each P. */
#define PUBLISH_POINTS 9
typedef struct publish_curve {
    uint32_t x[PUBLISH_POINTS]; /* N, or P */
    double join_ns[PUBLISH_POINTS], remove_ns[PUBLISH_POINTS], floor_ns[PUBLISH_POINTS];
    double bare_ns[PUBLISH_POINTS]; /* the bare reference (publish.c) */
    double join_ratio[PUBLISH_POINTS], remove_ratio[PUBLISH_POINTS]; /* to the floor */
    uint32_t p; /* P of every point of an N curve */
    size_t count;
} publish_curve;

/**
 * Membership changes on a freshly cloned map of n members (the publish
 * pattern: clone, change the clone, publish it, free the old map), join and
 * removal timed apart, against the O(P) floor of cloning the map and
 * counting its owners once; adds the medians to `curve` (publish.c).
 */
void bench_section_publish(bench *b, const dch_map *m, uint32_t n,
                           publish_curve *curve);

/** How the fresh-clone change cost grew over the N curve (publish.c). */
void bench_section_publish_growth(bench *b, const publish_curve *curve);

/**
 * Fresh-clone changes at P = 2^14 .. 2^22 (2^16 with --quick), 64 slots a
 * unit, 1,000 members (fewer with --max-nodes), and their growth with P.
 */
void bench_section_publish_sweep(bench *b);

/** The worst single-copy call of hard histories against the O(P) floor, at
 *  P = 2^16, 2^18 and 2^20 (worst.c). */
void bench_section_worst(bench *b);

/** A replica join, removal, weight change and the join to M = 512 at the
 *  default shape, R = 3, N = 1,000, against cloning the map
 *  (replica_cost.c). */
void bench_section_replica_cost(bench *b);

/** dch_load_hit against incrementing a bare array at the hash's slot, at
 *  the default P (load.c). */
void bench_section_load(bench *b);

/** One dch_map_balance_load on a count-balanced map of the default shape,
 *  N = 1,000, loads of Zipf s = 1.0 from keys, against one clone of the map
 *  (balance.c). */
void bench_section_balance(bench *b);

/** List the fresh-clone targets at N a shortened run did not reach. */
void bench_publish_unmeasured(bench *b);

#endif /* DCH_BENCH_H */
