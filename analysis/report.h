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
 * Like an_report_section, but the section goes first in the page, before
 * every block added so far (a summary written once the details are known).
 */
int an_report_section_first(an_report *rp, const char *id, const char *title,
                            const char *html);

/** A paragraph (or any HTML) in the current section. */
int an_report_html(an_report *rp, const char *html);

/** printf-style HTML paragraph; the arguments must be HTML-safe. */
int an_report_htmlf(an_report *rp, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/**
 * Add a table: print it to stdout, write id.csv, and show it in the HTML.
 * The report takes ownership of t (also on failure). @return 0 or -1.
 */
int an_report_table(an_report *rp, an_table *t);

/**
 * Add a chart: `gp` is the gnuplot body (settings and one plot command,
 * reading CSVs of this directory by their bare names) that draws it; it is
 * rendered to stem.png and stem.svg. The caption is the chart's only title
 * on the page, so `gp` should not set one. @return 0 or -1.
 */
int an_report_chart(an_report *rp, const char *stem, const char *caption,
                    const char *gp);

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

/** How the charts went: "rendered", "skipped: ..." (valid after finish). */
const char *an_report_chart_status(const an_report *rp);

#endif /* DCH_ANALYSIS_REPORT_H */
