/* SPDX-License-Identifier: MIT */
/*
 * The report directory: one CSV per table, charts rendered by gnuplot (PNG
 * and SVG), SVG diagrams, and an index.html that holds them all with a short
 * explanation of each, using relative links only so it reads offline.
 *
 * Tables are printed to stdout and written as CSV as soon as they are added;
 * charts are collected into one gnuplot script (charts.gp, kept in the
 * directory so the figures can be re-rendered) that an_report_finish runs
 * once. Without gnuplot the CSVs, diagrams, charts.gp and HTML are still
 * written and the page says that the charts were skipped.
 */
#ifndef DCH_ANALYSIS_REPORT_H
#define DCH_ANALYSIS_REPORT_H

#include "table.h"

#include <stdbool.h>

typedef struct an_report an_report;

/**
 * Start a report in directory `dir` (created if missing, with parents).
 * @return the report, or NULL (message on stderr) if the directory cannot be
 *         made or memory runs out.
 */
an_report *an_report_new(const char *dir);

/** Free the report and every table it holds. NULL is a no-op. */
void an_report_free(an_report *rp);

/** The report directory. */
const char *an_report_dir(const an_report *rp);

/** The path of `file` inside the report directory, written to buf (n bytes). */
void an_report_path(const an_report *rp, const char *file, char *buf,
                    size_t n);

/** Start a section: an <h2> with anchor `id`, then `html` as its intro. */
int an_report_section(an_report *rp, const char *id, const char *title,
                      const char *html);

/**
 * Give the blocks added from now on the place `rank` in the page: the page
 * shows blocks by rank (in the order added within one rank), so a summary
 * written once the details are known can still come first.
 */
void an_report_rank(an_report *rp, int rank);

/**
 * Add a table: print it to stdout, write id.csv, and show it in the HTML.
 * The report takes ownership of t (also on failure). @return 0 or -1.
 */
int an_report_table(an_report *rp, an_table *t);

/**
 * One line of a chart. From a CSV of the report: `file` (by its bare name;
 * "" repeats the previous series' file), plotted as `x`:`y` (gnuplot using
 * expressions: "2", "$3 - 1", "4:xtic(1)" with y NULL), only the rows whose
 * first column is `only` when that is set. With `file` NULL the line is the
 * function `x` of the axis ("x - 1"). `style` follows "with" (NULL: the
 * chart's default style).
 */
typedef struct an_series {
    const char *file;
    const char *x, *y;
    const char *only;
    const char *style;
    const char *colour;
    const char *title;
} an_series;

/**
 * A chart, rendered to stem.png and stem.svg. The caption is its only title
 * on the page; `settings` holds further gnuplot "set" lines (each ending in a
 * line break) after the axis labels, and may override the defaults every
 * chart starts from (report.c: the x axis ends with the data, the y axis
 * has headroom, keys are laid out alike).
 *
 * Every series a chart lists must show: series are drawn in the order
 * given, each over the ones before, so a reference line (an optimum) comes
 * first, as a wide pale band that stays visible under a series on it, and
 * the main result (DCH) last; series that can coincide get distinct point
 * types and sizes, so each marker shows around the next.
 */
typedef struct an_chart {
    const char *stem;
    const char *caption;
    const char *xlabel, *ylabel; /* NULL: none */
    const char *settings;        /* NULL: none */
    const an_series *series;
    size_t nseries;
} an_chart;

/** Add a chart (copied into the report's gnuplot script). @return 0 or -1. */
int an_report_chart(an_report *rp, const an_chart *c);

/**
 * Show an image file of the directory (e.g. an SVG diagram that draws its own
 * title); `description` is its alt text.
 */
int an_report_image(an_report *rp, const char *file, const char *description);

/**
 * Write charts.gp and render the charts with it (unless `charts` is false or
 * gnuplot is missing), then write index.html with `title` and `preamble`
 * (HTML) on top.
 * @return 0, or -1 if index.html could not be written. Chart failures are
 *         reported on stderr and in the page, not as errors.
 */
int an_report_finish(an_report *rp, bool charts, const char *title,
                     const char *preamble);

/** How the charts went: "12 rendered", "skipped: ...", "partly failed: ...",
 *  "none" (valid after finish). It holds no parentheses, so a message may
 *  put it in some. */
const char *an_report_chart_status(const an_report *rp);

#endif /* DCH_ANALYSIS_REPORT_H */
