/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's timings as report entries (see report.h): measurements keep
 * every trial's value, checks carry a target, and a failure to record marks
 * the run as failed rather than losing a figure silently.
 */
#include "bench.h"

#include <stdio.h>
#include <string.h>

static void keep(bench *b, const char *section, const char *subject,
                 const char *mode, uint64_t n, uint64_t p, uint64_t len,
                 const char *unit, uint64_t ops, const double *v, size_t nv,
                 double moved)
{
    bench_measure m;
    memset(&m, 0, sizeof m);
    snprintf(m.section, sizeof m.section, "%s", section);
    snprintf(m.subject, sizeof m.subject, "%s", subject);
    snprintf(m.mode, sizeof m.mode, "%s", mode);
    m.n = n;
    m.p = p;
    m.len = len;
    snprintf(m.unit, sizeof m.unit, "%s", unit);
    m.ops = ops;
    m.moved = moved;
    m.trials = nv;
    memcpy(m.v, v, nv * sizeof *v);
    if (bench_report_measure(b->rep, &m) != 0)
        b->failed = 1;
}

void bench_record(bench *b, const char *section, const contender *c,
                  const char *mode, uint64_t n, uint64_t p, uint64_t len)
{
    keep(b, section, c->subject, mode, n, p, len, "ns/op", c->ops, c->ns,
         b->o.trials, -1);
}

void bench_record_values(bench *b, const char *section, const char *subject,
                         uint64_t n, uint64_t p, const char *unit, const double *v,
                         size_t nv, double moved)
{
    keep(b, section, subject, "", n, p, 0, unit, 0, v, nv, moved);
}

void bench_ratios(const bench *b, const contender *num, const contender *den,
                  double *r)
{
    for (unsigned t = 0; t < b->o.trials; t++)
        r[t] = num->ns[t] / den->ns[t];
}

void bench_check_ratio(bench *b, const char *key, const char *label,
                       const contender *num, const contender *den, bench_goal goal,
                       double limit)
{
    double r[BENCH_MAX_TRIALS];
    bench_ratios(b, num, den, r);
    bench_check_values(b, key, label, "x", r, b->o.trials, goal, limit);
}

void bench_check_values(bench *b, const char *key, const char *label,
                        const char *unit, const double *v, size_t n, bench_goal goal,
                        double limit)
{
    if (bench_report_check(b->rep, key, label, unit, v, n, goal, limit) != 0)
        b->failed = 1;
}

const char *bench_grouped(char *buf, size_t cap, uint64_t v)
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

const char *bench_stat_text(char *buf, size_t cap, const double *v, size_t n)
{
    const bench_stat s = bench_stat_of(v, n);
    snprintf(buf, cap, "%7.3g [%.3g .. %.3g]", s.median, s.min, s.max);
    return buf;
}
