/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's results: every timing it takes (one value per trial), the
 * checks derived from them (ratios within the run and a few absolute
 * figures, each with its target), a summary table for people and one JSON
 * file for programs, so that both always show the same numbers.
 */
#ifndef DCH_BENCH_REPORT_H
#define DCH_BENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** Most trials (or repetitions) one measurement keeps. */
#define BENCH_MAX_TRIALS 101u

/** Median and extremes of a set of values. */
typedef struct bench_stat {
    double median; /* the mean of the two middle values for an even count */
    double min;
    double max;
} bench_stat;

/** Statistics of v[0 .. n-1]; n >= 1 and at most BENCH_MAX_TRIALS. */
bench_stat bench_stat_of(const double *v, size_t n);

/** One timing (or size): what was measured, and its value in each trial. */
typedef struct bench_measure {
    char section[16]; /* "lookup", "sweep", "siphash", "path", "change", "memory",
                         "publish", "publish_sweep" */
    char subject[40]; /* the function or peer measured */
    char mode[16];    /* "independent", "dependent", or "" */
    uint64_t n;       /* members; 0 when it does not apply */
    uint64_t p;       /* slots (map) or points (ring); 0 when it does not apply */
    uint64_t len;     /* input bytes of a hash; 0 when it does not apply */
    char unit[12];    /* "ns/op", "ns/call", "bytes" */
    uint64_t ops;     /* calls timed in each trial */
    double moved;     /* median slots moved by a change; < 0 when it does not apply */
    size_t trials;
    double v[BENCH_MAX_TRIALS];
} bench_measure;

typedef enum bench_goal {
    BENCH_GOAL_NONE,     /* shown for information */
    BENCH_GOAL_AT_MOST,  /* met when the median is <= limit */
    BENCH_GOAL_AT_LEAST, /* met when the median is >= limit */
} bench_goal;

typedef struct bench_report bench_report;

/** An empty report; NULL when out of memory. */
bench_report *bench_report_new(void);

/** Free a report. NULL is a no-op. */
void bench_report_free(bench_report *r);

/** Record a piece of context (CPU, date, options): a string, or a number. */
int bench_report_info(bench_report *r, const char *key, const char *value);
int bench_report_info_num(bench_report *r, const char *key, double value);

/** Keep a copy of a measurement. @return 0, or -1 when out of memory. */
int bench_report_measure(bench_report *r, const bench_measure *m);

/**
 * Record a check: `label` for people, `key` for programs, `unit` of the
 * values ("x" for a ratio), one value per trial (n >= 1), and its target.
 * With n == 0 the check is listed as not measured in this run.
 * @return 0, or -1 when out of memory.
 */
int bench_report_check(bench_report *r, const char *key, const char *label,
                       const char *unit, const double *v, size_t n,
                       bench_goal goal, double limit);

/**
 * While `smoke` is on, the checks recorded are smoke checks: measured and
 * listed with their target, but given no verdict (shown as "smoke"), since a
 * smoke run's few trials at small sizes cannot judge a target either way.
 */
void bench_report_set_smoke(bench_report *r, bool smoke);

/**
 * Checks with a target: how many were measured and judged, how many of those
 * met it, and how many were measured in smoke mode and not judged.
 */
void bench_report_tally(const bench_report *r, size_t *measured, size_t *met,
                        size_t *smoke);

/** Print every check as an aligned table: value, spread, target, verdict. */
void bench_report_print_checks(const bench_report *r, FILE *f);

/**
 * Write the whole report as one JSON object: info, measurements (with their
 * statistics and every trial's value) and checks (with their verdicts),
 * whole or not at all (analysis/outfile.h: a stopped run leaves the file
 * it found). @return 0, or -1 (with errno set) when it cannot be written.
 */
int bench_report_write_json(const bench_report *r, const char *path);

#endif /* DCH_BENCH_REPORT_H */
