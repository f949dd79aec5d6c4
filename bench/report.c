/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's results (see report.h). Values are kept per trial so that
 * the JSON file holds everything the summary was computed from; the verdict
 * of a check is always taken on its median.
 */
#include "report.h"

#include "outfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct info {
    char key[32];
    char text[256]; /* the value when is_num is false */
    double num;
    bool is_num;
} info;

typedef struct check {
    char key[64];
    char label[72];
    char unit[8];
    bench_goal goal;
    double limit;
    size_t trials; /* 0: not measured in this run */
    bool smoke;    /* measured in a smoke run: listed, not judged */
    double v[BENCH_MAX_TRIALS];
} check;

struct bench_report {
    info *infos;
    size_t ninfos, infos_cap;
    bench_measure *measures;
    size_t nmeasures, measures_cap;
    check *checks;
    size_t nchecks, checks_cap;
    bool smoke;
};

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bench_stat bench_stat_of(const double *v, size_t n)
{
    double s[BENCH_MAX_TRIALS];
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    bench_stat st;
    st.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    st.min = s[0];
    st.max = s[n - 1];
    return st;
}

/* Make room for one more element of size `size` in *arr (count n, cap *cap). */
static int grow(void **arr, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return 0;
    const size_t c = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, c * size);
    if (p == NULL)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

bench_report *bench_report_new(void)
{
    return calloc(1, sizeof(bench_report));
}

void bench_report_free(bench_report *r)
{
    if (r == NULL)
        return;
    free(r->infos);
    free(r->measures);
    free(r->checks);
    free(r);
}

static info *info_slot(bench_report *r, const char *key)
{
    if (grow((void **)&r->infos, r->ninfos, &r->infos_cap, sizeof *r->infos) != 0)
        return NULL;
    info *in = &r->infos[r->ninfos++];
    memset(in, 0, sizeof *in);
    snprintf(in->key, sizeof in->key, "%s", key);
    return in;
}

int bench_report_info(bench_report *r, const char *key, const char *value)
{
    info *in = info_slot(r, key);
    if (in == NULL)
        return -1;
    snprintf(in->text, sizeof in->text, "%s", value);
    return 0;
}

int bench_report_info_num(bench_report *r, const char *key, double value)
{
    info *in = info_slot(r, key);
    if (in == NULL)
        return -1;
    in->num = value;
    in->is_num = true;
    return 0;
}

int bench_report_measure(bench_report *r, const bench_measure *m)
{
    if (grow((void **)&r->measures, r->nmeasures, &r->measures_cap,
             sizeof *r->measures) != 0)
        return -1;
    r->measures[r->nmeasures++] = *m;
    return 0;
}

int bench_report_check(bench_report *r, const char *key, const char *label,
                       const char *unit, const double *v, size_t n,
                       bench_goal goal, double limit)
{
    if (grow((void **)&r->checks, r->nchecks, &r->checks_cap, sizeof *r->checks) != 0)
        return -1;
    check *c = &r->checks[r->nchecks++];
    memset(c, 0, sizeof *c);
    snprintf(c->key, sizeof c->key, "%s", key);
    snprintf(c->label, sizeof c->label, "%s", label);
    snprintf(c->unit, sizeof c->unit, "%s", unit);
    c->goal = goal;
    c->limit = limit;
    c->smoke = r->smoke;
    c->trials = n < BENCH_MAX_TRIALS ? n : BENCH_MAX_TRIALS;
    if (c->trials > 0)
        memcpy(c->v, v, c->trials * sizeof *v);
    return 0;
}

void bench_report_set_smoke(bench_report *r, bool smoke)
{
    r->smoke = smoke;
}

/* A target measured in a smoke run: shown, not judged. */
static bool smoke_target(const check *c)
{
    return c->smoke && c->goal != BENCH_GOAL_NONE && c->trials > 0;
}

/* 1 met, 0 missed, -1 no target, not measured, or smoke. */
static int verdict(const check *c)
{
    if (c->goal == BENCH_GOAL_NONE || c->trials == 0 || c->smoke)
        return -1;
    const double med = bench_stat_of(c->v, c->trials).median;
    return c->goal == BENCH_GOAL_AT_MOST ? med <= c->limit : med >= c->limit;
}

void bench_report_tally(const bench_report *r, size_t *measured, size_t *met,
                        size_t *smoke)
{
    *measured = 0;
    *met = 0;
    *smoke = 0;
    for (size_t i = 0; i < r->nchecks; i++) {
        const int v = verdict(&r->checks[i]);
        *measured += v >= 0;
        *met += v == 1;
        *smoke += smoke_target(&r->checks[i]);
    }
}

/* A value for a table cell: 3 significant digits, thousands kept whole. */
static void fmt_value(char *buf, size_t cap, double v)
{
    if (fabs(v) >= 1000)
        snprintf(buf, cap, "%.0f", v);
    else if (fabs(v) >= 100)
        snprintf(buf, cap, "%.1f", v);
    else
        snprintf(buf, cap, "%.3g", v);
}

void bench_report_print_checks(const bench_report *r, FILE *f)
{
    fprintf(f, "%-68s %11s %-21s %-12s %s\n", "check", "median", "  [min .. max]",
            "target", "verdict");
    for (size_t i = 0; i < r->nchecks; i++) {
        const check *c = &r->checks[i];
        char med[24] = "-", lo[24] = "", hi[24] = "", spread[56] = "", target[48];
        if (c->trials > 0) {
            const bench_stat st = bench_stat_of(c->v, c->trials);
            fmt_value(med, sizeof med, st.median);
            fmt_value(lo, sizeof lo, st.min);
            fmt_value(hi, sizeof hi, st.max);
            snprintf(spread, sizeof spread, "  [%s .. %s]", lo, hi);
        }
        if (c->goal == BENCH_GOAL_NONE) {
            snprintf(target, sizeof target, "-");
        } else {
            char lim[24];
            fmt_value(lim, sizeof lim, c->limit);
            snprintf(target, sizeof target, "%s %s %s",
                     c->goal == BENCH_GOAL_AT_MOST ? "<=" : ">=", lim, c->unit);
        }
        const int v = verdict(c);
        const char *word = v == 1              ? "met"
                           : v == 0            ? "MISSED"
                           : c->trials == 0    ? "not measured"
                           : smoke_target(c)   ? "smoke"
                                               : "";
        char value[40];
        snprintf(value, sizeof value, "%s %s", med, c->trials > 0 ? c->unit : "");
        fprintf(f, "%-68s %11s %-21s %-12s %s\n", c->label, value, spread, target,
                word);
    }
}

/* ---- JSON ------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        const unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* JSON has no NaN or infinity: those become null. */
static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fputs("null", f);
}

/* `"name": v`, after `sep` (a comma, or nothing). */
static void json_number_field(FILE *f, const char *sep, const char *name, double v)
{
    fprintf(f, "%s\"%s\": ", sep, name);
    json_number(f, v);
}

static void json_stats(FILE *f, const double *v, size_t n)
{
    const bench_stat st = bench_stat_of(v, n);
    json_number_field(f, "", "median", st.median);
    json_number_field(f, ", ", "min", st.min);
    json_number_field(f, ", ", "max", st.max);
    fputs(", \"trials\": [", f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        json_number(f, v[i]);
    }
    fputc(']', f);
}

/* `"name": "value"`, after `sep` (the opening brace or a comma). */
static void json_text_field(FILE *f, const char *sep, const char *name,
                            const char *value)
{
    fprintf(f, "%s\"%s\": ", sep, name);
    json_string(f, value);
}

/* `, "name": v`, left out when v is 0 (the field does not apply). */
static void json_count_field(FILE *f, const char *name, uint64_t v)
{
    if (v)
        fprintf(f, ", \"%s\": %llu", name, (unsigned long long)v);
}

static void json_measure(FILE *f, const bench_measure *m)
{
    json_text_field(f, "    {", "section", m->section);
    json_text_field(f, ", ", "subject", m->subject);
    if (m->mode[0])
        json_text_field(f, ", ", "mode", m->mode);
    json_count_field(f, "n", m->n);
    json_count_field(f, "p", m->p);
    json_count_field(f, "len", m->len);
    json_text_field(f, ", ", "unit", m->unit);
    json_count_field(f, "ops_per_trial", m->ops);
    if (m->moved >= 0)
        json_number_field(f, ", ", "moved_slots", m->moved);
    fputs(", ", f);
    json_stats(f, m->v, m->trials);
    fputc('}', f);
}

static void json_check(FILE *f, const check *c)
{
    json_text_field(f, "    {", "key", c->key);
    json_text_field(f, ", ", "label", c->label);
    json_text_field(f, ", ", "unit", c->unit);
    fputs(", \"goal\": ", f);
    if (c->goal == BENCH_GOAL_NONE) {
        fputs("null", f);
    } else {
        fprintf(f, "\"%s\", \"limit\": ", c->goal == BENCH_GOAL_AT_MOST ? "<=" : ">=");
        json_number(f, c->limit);
    }
    const int v = verdict(c);
    fprintf(f, ", \"met\": %s, \"smoke\": %s", v == 1 ? "true" : v == 0 ? "false" : "null",
            c->smoke ? "true" : "false");
    if (c->trials > 0) {
        fputs(", ", f);
        json_stats(f, c->v, c->trials);
    } else {
        fputs(", \"median\": null", f);
    }
    fputc('}', f);
}

static void write_json(FILE *f, const void *ctx)
{
    const bench_report *r = ctx;
    size_t measured, met, smoke;
    bench_report_tally(r, &measured, &met, &smoke);
    fputs("{\n  \"info\": {", f);
    for (size_t i = 0; i < r->ninfos; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        json_string(f, r->infos[i].key);
        fputs(": ", f);
        if (r->infos[i].is_num)
            json_number(f, r->infos[i].num);
        else
            json_string(f, r->infos[i].text);
    }
    fputs("\n  },\n  \"measurements\": [\n", f);
    for (size_t i = 0; i < r->nmeasures; i++) {
        json_measure(f, &r->measures[i]);
        fputs(i + 1 < r->nmeasures ? ",\n" : "\n", f);
    }
    fputs("  ],\n  \"checks\": [\n", f);
    for (size_t i = 0; i < r->nchecks; i++) {
        json_check(f, &r->checks[i]);
        fputs(i + 1 < r->nchecks ? ",\n" : "\n", f);
    }
    fprintf(f, "  ],\n  \"targets_measured\": %zu,\n  \"targets_met\": %zu,\n"
               "  \"targets_missed\": %zu,\n  \"targets_smoke\": %zu\n}\n",
            measured, met, measured - met, smoke);
}

int bench_report_write_json(const bench_report *r, const char *path)
{
    return an_outfile_write(path, write_json, r);
}
