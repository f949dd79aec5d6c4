/* SPDX-License-Identifier: MIT */
/*
 * 4. Balance: peak-to-average and coefficient of variation of ownership for
 * N = 2 .. --balance-max, for DCH and for rings of 1 to 640 points per node,
 * with the CV a ring of random points is expected to have.
 */
#include "sections.h"

#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The ring point counts the balance section sweeps (plus --points). */
static const uint32_t SWEEP_POINTS[] = {1, 10, 40, 160, 640};
#define SWEEP_MAX 6

/* N values where balance is measured, up to --balance-max (plus --nodes). */
static const uint32_t BALANCE_NS[] = {2,   3,   4,   5,   8,   10,  16,
                                      20,  32,  50,  64,  100, 128, 200,
                                      256, 500, 512, 1000};
#define BALANCE_NS_MAX 24

/* Series 0 is DCH, then one ring per point count; measured at ns[0 .. nn-1]. */
typedef struct sweep {
    uint32_t ns[BALANCE_NS_MAX];
    size_t nn;
    uint32_t pts[SWEEP_MAX];
    size_t np;
    size_t nseries;
    an_scheme_spec specs[1 + SWEEP_MAX];
    char labels[1 + SWEEP_MAX][32];
    double peak[1 + SWEEP_MAX][BALANCE_NS_MAX], cv[1 + SWEEP_MAX][BALANCE_NS_MAX];
    size_t kn, km;     /* the columns of N = nodes and N = balance_max */
    size_t i160, i1;   /* the series of --points and of one point */
} sweep;

/* Cost of one add in progress units: ring adds move the points already
 * placed; a map add visits its P slots, which here costs about as much as
 * moving P/128 ring points. */
static double add_cost(const an_scheme_spec *spec, uint32_t n)
{
    if (spec->kind == AN_KIND_RING)
        return (double)spec->points * n;
    return (double)spec->units * spec->slots_per_unit / 128.0;
}

/* Peak/avg and CV of a scheme grown to each N in ns. Names are those of
 * section 1 (node-01, ...), so at N = nodes the cluster is the grown one. */
static int balance_series(const an_scheme_spec *spec, int width,
                          const uint32_t *ns, size_t nn, double *peak,
                          double *cv, an_progress *p, double *done,
                          double total)
{
    an_scheme sc;
    int rc = an_scheme_new(&sc, spec);
    if (rc != DCH_OK)
        return an_fail("balance", rc);
    size_t k = 0;
    for (uint32_t n = 1; n <= ns[nn - 1] && rc == DCH_OK; n++) {
        char name[64];
        an_node_name(name, sizeof name, width, n);
        rc = an_scheme_add(&sc, name, 1, NULL);
        if (rc == DCH_OK && n == ns[k]) {
            an_ranges rs = {NULL, 0};
            an_balance b;
            rc = an_scheme_ranges(&sc, &rs);
            if (rc == DCH_OK)
                rc = an_balance_now(&sc, &rs, &b);
            an_ranges_free(&rs);
            if (rc == DCH_OK) {
                peak[k] = b.peak_to_avg;
                cv[k] = b.cv;
                k++;
            }
        }
        *done += add_cost(spec, n);
        an_progress_update(p, spec->label, *done, total);
    }
    an_scheme_free(&sc);
    return rc == DCH_OK ? DCH_OK : an_fail("balance", rc);
}

static int cmp_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return (a > b) - (a < b);
}

/* Sorted unique values of v[0 .. n-1], in place; returns the new count. */
static size_t sort_unique(uint32_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    return k;
}

/* Exact coefficient of variation of a member's share on a ring of n members
 * with v uniformly placed points each: the share is Beta(v, (n-1)v), whose
 * CV is sqrt((n-1) / (n v + 1)); about 1/sqrt(v) for large n. */
static double ring_cv_expected(uint32_t n, uint32_t v)
{
    return sqrt((n - 1.0) / ((double)n * v + 1.0));
}

/* The N values, point counts and schemes of the sweep. */
static void plan(const an_run *r, sweep *w)
{
    const an_options *o = &r->opt;
    w->nn = 0;
    for (size_t i = 0; i < sizeof BALANCE_NS / sizeof BALANCE_NS[0]; i++)
        if (BALANCE_NS[i] <= o->balance_max)
            w->ns[w->nn++] = BALANCE_NS[i];
    w->ns[w->nn++] = o->balance_max;
    if (o->nodes <= o->balance_max)
        w->ns[w->nn++] = o->nodes;
    w->nn = sort_unique(w->ns, w->nn);
    w->np = 0;
    for (size_t i = 0; i < sizeof SWEEP_POINTS / sizeof SWEEP_POINTS[0]; i++)
        w->pts[w->np++] = SWEEP_POINTS[i];
    w->pts[w->np++] = o->points;
    w->np = sort_unique(w->pts, w->np);
    w->nseries = 1 + w->np;
    w->specs[0] = r->spec[0];
    snprintf(w->labels[0], sizeof w->labels[0], "dch");
    w->i160 = w->i1 = 1;
    for (size_t i = 0; i < w->np; i++) {
        w->specs[1 + i] = r->spec[1];
        w->specs[1 + i].points = w->pts[i];
        snprintf(w->labels[1 + i], sizeof w->labels[1 + i], "ring-%u",
                 (unsigned)w->pts[i]);
        if (w->pts[i] == o->points)
            w->i160 = 1 + i;
        if (w->pts[i] == 1)
            w->i1 = 1 + i;
    }
    for (size_t i = 0; i < w->nseries; i++)
        w->specs[i].label = w->labels[i];
    w->kn = 0;
    w->km = w->nn - 1;
    for (size_t k = 0; k < w->nn; k++)
        if (w->ns[k] == o->nodes)
            w->kn = k;
}

static int measure(const an_run *r, sweep *w)
{
    double total = 0.0, done = 0.0;
    for (size_t i = 0; i < w->nseries; i++)
        for (uint32_t n = 1; n <= w->ns[w->nn - 1]; n++)
            total += add_cost(&w->specs[i], n);
    an_progress p;
    an_progress_begin(&p, "balance");
    int rc = DCH_OK;
    for (size_t i = 0; i < w->nseries && rc == DCH_OK; i++)
        rc = balance_series(&w->specs[i], an_name_width(r->opt.nodes), w->ns,
                            w->nn, w->peak[i], w->cv[i], &p, &done, total);
    an_progress_end(&p);
    return rc;
}

/* 4a and 4b: one row per N, one column per scheme. */
static an_table *by_n(const sweep *w, const char *id, const char *title,
                      double (*v)[BALANCE_NS_MAX])
{
    an_column cols[2 + SWEEP_MAX];
    cols[0] = (an_column){"N", "n", NULL};
    for (size_t i = 0; i < w->nseries; i++)
        cols[1 + i] = (an_column){w->labels[i], w->labels[i], "%.4f"};
    an_table *t = an_table_new(id, title, cols, 1 + w->nseries);
    for (size_t k = 0; t != NULL && k < w->nn; k++) {
        an_table_row(t);
        an_table_int(t, 0, w->ns[k]);
        for (size_t i = 0; i < w->nseries; i++)
            an_table_num(t, 1 + i, v[i][k]);
    }
    return t;
}

/* 4c: against points per node, at N = nodes and N = balance_max. */
static an_table *by_points(const sweep *w)
{
    const uint32_t n1 = w->ns[w->kn], n2 = w->ns[w->km];
    char h[6][64];
    snprintf(h[0], sizeof h[0], "peak/avg N=%u", (unsigned)n1);
    snprintf(h[1], sizeof h[1], "CV N=%u", (unsigned)n1);
    snprintf(h[2], sizeof h[2], "expected CV N=%u", (unsigned)n1);
    snprintf(h[3], sizeof h[3], "peak/avg N=%u", (unsigned)n2);
    snprintf(h[4], sizeof h[4], "CV N=%u", (unsigned)n2);
    snprintf(h[5], sizeof h[5], "expected CV N=%u", (unsigned)n2);
    const an_column pc[8] = {
        {"points/node", "points", NULL},
        {h[0], "peak_to_avg_n1", "%.4f"},
        {h[1], "cv_n1", "%.4f"},
        {h[2], "cv_expected_n1", "%.4f"},
        {h[3], "peak_to_avg_n2", "%.4f"},
        {h[4], "cv_n2", "%.4f"},
        {h[5], "cv_expected_n2", "%.4f"},
        {"1/sqrt(points)", "inverse_sqrt_points", "%.4f"},
    };
    an_table *t = an_table_new("balance_points",
                               "4c. Balance of the ring against points per "
                               "node (DCH for comparison)",
                               pc, 8);
    for (size_t i = 0; t != NULL && i < w->nseries; i++) {
        an_table_row(t);
        if (w->specs[i].kind == AN_KIND_MAP) {
            an_table_text(t, 0, "dch");
        } else {
            an_table_int(t, 0, w->specs[i].points);
            an_table_num(t, 3, ring_cv_expected(n1, w->specs[i].points));
            an_table_num(t, 6, ring_cv_expected(n2, w->specs[i].points));
            an_table_num(t, 7, 1.0 / sqrt(w->specs[i].points));
        }
        an_table_num(t, 1, w->peak[i][w->kn]);
        an_table_num(t, 2, w->cv[i][w->kn]);
        an_table_num(t, 4, w->peak[i][w->km]);
        an_table_num(t, 5, w->cv[i][w->km]);
    }
    return t;
}

/* The sweep holds DCH and the ring's point counts only; a scheme with no
 * series here (libmemcached's ketama) gets NaN, which the summary shows as
 * not measured rather than another scheme's figure. */
static void fill_glance(an_run *r, const sweep *w)
{
    const size_t glance_series[3] = {0, w->i160, w->i1};
    for (int s = 0; s < AN_SCHEMES; s++) {
        r->glance[s].peak_n1 = s < 3 ? w->peak[glance_series[s]][w->kn] : NAN;
        r->glance[s].peak_n2 = s < 3 ? w->peak[glance_series[s]][w->km] : NAN;
    }
    r->glance_n1 = w->ns[w->kn];
    r->glance_n2 = w->ns[w->km];
}

static void intro(an_buf *hb, const an_run *r, const sweep *w)
{
    const size_t km = w->km, i160 = w->i160;
    double dch_worst = 0.0;
    for (size_t k = 0; k < w->nn; k++)
        dch_worst = fmax(dch_worst, w->peak[0][k]);
    an_buf_printf(hb,
              "<p class=\"lead\"><b>Balance</b> (Karger et al.): how evenly the "
              "members own the hash space as N grows to %u, for DCH and for rings "
              "of 1 to 640 points per node. DCH gives every member its share to "
              "within one slot (peak-to-average at most %.4f); a ring's spread "
              "falls only as 1/sqrt(points), so %s still leaves the fullest of "
              "%u members %.0f%% over its share.</p>",
              (unsigned)w->ns[km], dch_worst, w->labels[i160], (unsigned)w->ns[km],
              100.0 * (w->peak[i160][km] - 1.0));
    an_buf_printf(hb,
              "<p><b>How to read it.</b> Shares are exact, from the ownership "
              "ranges: <i>peak-to-average</i> is the fullest member's share over "
              "the fair share 1/N (1.0 is perfect), the <i>coefficient of "
              "variation</i> the standard deviation of the shares over their mean. "
              "With P = %u slots a DCH member owns floor or ceil of P/N slots. On a "
              "ring with v random points per node a member's share is "
              "Beta(v, (N&minus;1)v) distributed, so its expected CV is "
              "sqrt((N&minus;1)/(Nv+1)), about 1/sqrt(v): halving the spread costs "
              "four times the points.</p>",
              (unsigned)(r->opt.units * r->opt.slots));
}

/* Two measures, two charts: the peak, and the CV with what theory expects
 * of it; in each a curve for N = ns[kn] and one for ns[km]. */
static void points_charts(an_run *r, const sweep *w)
{
    static const struct {
        const char *stem, *caption, *ylabel, *settings;
        const char *reference; /* the column of what theory expects, or NULL */
        const char *col[2], *colour[2];
    } measure[2] = {
        {"balance_points",
         "Ring balance against points per node: the fullest member's share over its "
         "fair share (DCH: at most one slot over, not drawn)",
         "largest share / fair share (log scale)",
         "set ytics (1, 1.1, 1.2, 1.5, 2, 3, 5, 7, 10)\n", NULL,
         {"2", "5"}, {"#1f77b4", "#17becf"}},
        {"balance_points_cv",
         "Ring balance against points per node: the coefficient of variation of the "
         "members' shares, against 1/sqrt(points)",
         "coefficient of variation (log scale)", "", "8",
         {"3", "6"}, {"#d62728", "#ff7f0e"}},
    };
    static const char *const style[2] = {"linespoints pt 7 ps 0.9 lw 2",
                                         "linespoints pt 5 ps 0.9 lw 2"};
    char t[2][32];
    for (int k = 0; k < 2; k++)
        snprintf(t[k], sizeof t[k], "N = %u", (unsigned)w->ns[k == 0 ? w->kn : w->km]);
    for (int m = 0; m < 2; m++) {
        an_series sr[3];
        size_t n = 0;
        if (measure[m].reference != NULL)
            sr[n++] = (an_series){"", "1", measure[m].reference, NULL, AN_REFERENCE_STYLE,
                                  AN_REFERENCE_COLOUR, "1/sqrt(points), what theory expects"};
        for (int k = 0; k < 2; k++)
            sr[n++] = (an_series){"", "1", measure[m].col[k], NULL, style[k],
                                  measure[m].colour[k], t[k]};
        sr[0].file = "balance_points.csv";
        char settings[160];
        snprintf(settings, sizeof settings,
                 "set format x '%%g'\nset format y '%%g'\nset logscale xy\n%s",
                 measure[m].settings);
        an_report_chart(r->report,
                        &(an_chart){measure[m].stem, measure[m].caption,
                                    "points per node (log scale)", measure[m].ylabel,
                                    settings, sr, n});
    }
}

static void charts(an_run *r, const sweep *w)
{
    /* Rings by point count, then DCH on top; a point type per series. */
    static const char *const sweep_colour[] = {"#2ca02c", "#9467bd", "#8c564b",
                                               "#1f77b4", "#17becf", "#e377c2"};
    static const char *const sweep_style[] = {
        "linespoints pt 9 ps 0.8 lw 2",  "linespoints pt 11 ps 0.8 lw 2",
        "linespoints pt 13 ps 0.9 lw 2", "linespoints pt 5 ps 0.7 lw 2",
        "linespoints pt 15 ps 0.9 lw 2", "linespoints pt 3 ps 0.8 lw 2"};
    char col[1 + SWEEP_MAX][8];
    an_series sr[1 + SWEEP_MAX];
    size_t n = 0;
    for (size_t k = 1; k <= w->nseries; k++) {
        const size_t i = k % w->nseries; /* 1, 2, ..., then 0 (DCH) */
        snprintf(col[i], sizeof col[i], "%zu", i + 2);
        sr[n++] = (an_series){"balance_peak.csv", "1", col[i], NULL,
                              i == 0 ? an_scheme_style[0] : sweep_style[(i - 1) % 6],
                              i == 0 ? an_scheme_colour[0] : sweep_colour[(i - 1) % 6],
                              w->labels[i]};
    }
    /* Peaks run from 1.0 to about 10: ticks where the curves are, not only
     * at 1 and 10 as a log axis puts them by default. */
    an_report_chart(r->report, &(an_chart){
        "balance_n",
        "Peak-to-average ownership against N: DCH and rings of 1 to 640 points per node",
        "members (N, log scale)", "largest share / fair share (log scale)",
        "set logscale xy\nset yrange [0.95:*]\n"
        "set ytics (1, 1.1, 1.2, 1.5, 2, 3, 5, 7, 10, 15, 20, 30)\nset format x '%g'\n",
        sr, n});
    points_charts(r, w);
}


int an_section_balance(an_run *r)
{
    sweep *w = calloc(1, sizeof *w);
    if (w == NULL)
        return an_fail("balance", DCH_ENOMEM);
    plan(r, w);
    int rc = measure(r, w);
    an_table *tp = NULL, *tc = NULL, *tv = NULL;
    if (rc == DCH_OK) {
        tp = by_n(w, "balance_peak",
                  "4a. Balance: peak-to-average ownership against N", w->peak);
        tc = by_n(w, "balance_cv",
                  "4b. Balance: coefficient of variation of ownership against N",
                  w->cv);
        tv = by_points(w);
        rc = tp && tc && tv ? DCH_OK : an_fail("balance", DCH_ENOMEM);
    }
    if (rc == DCH_OK) {
        fill_glance(r, w);
        an_buf hb = {0};
        intro(&hb, r, w);
        rc = an_section_begin(r, "balance", an_buf_str(&hb)) == 0 ? DCH_OK : DCH_ENOMEM;
        an_buf_free(&hb);
    }
    if (rc == DCH_OK) {
        int failed = an_report_table(r->report, tp);
        failed |= an_report_table(r->report, tc);
        failed |= an_report_table(r->report, tv);
        tp = tc = tv = NULL;
        rc = failed ? an_fail("balance", DCH_ENOMEM) : DCH_OK;
    }
    if (rc == DCH_OK)
        charts(r, w);
    an_table_free(tp);
    an_table_free(tc);
    an_table_free(tv);
    free(w);
    return rc;
}
