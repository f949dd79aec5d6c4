/* SPDX-License-Identifier: MIT */
/*
 * dch-analysis: measure the DCH map against the classic consistent-hash ring
 * on a built-in scenario and write a report (tables on stdout, CSV files,
 * gnuplot charts, SVG ring diagrams and an index.html) to a directory.
 *
 * It uses only the public libdch API (dch/dch.h): what it cannot measure
 * through that API, a user of the library could not measure either.
 */
#define _POSIX_C_SOURCE 200809L

#include "progress.h"
#include "sections.h"

#include <stdio.h>
#include <time.h>

/* The page's opening: what it measures, and the run's settings. */
static void preamble(an_buf *b, const an_options *o, double elapsed)
{
    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    an_buf_printf(b,
             "<p>What the DCH partition map and the classic consistent-hash "
             "ring do when members join, leave and change weight, measured "
             "exactly from their ownership ranges (dch_map_ranges, "
             "dch_ring_ranges) and migration plans (dch_map_diff, "
             "dch_ring_diff) and confirmed with sampled keys. Every table is also a CSV file in this "
             "directory; every chart is drawn from those files by "
             "<a href=\"charts.gp\">charts.gp</a>.</p>"
             "<p>Run of %s with libdch %s, in %.1f s (before charts). "
             "Settings: %u nodes, %u ring points per node, DCH %u units &times; "
             "%u slots, %zu sampled keys, %u views, removals down to %u nodes, "
             "balance up to N = %u, seed %llu, report in <code>",
             date, dch_version(), elapsed, (unsigned)o->nodes,
             (unsigned)o->points, (unsigned)o->units, (unsigned)o->slots, o->keys,
             (unsigned)o->views, (unsigned)o->shrink_to,
             (unsigned)o->balance_max, (unsigned long long)o->seed);
    an_html_escape(b, o->out);
    an_buf_printf(b,
             "</code>. "
             "Reproduce with <code>dch-analysis --nodes %u --points %u "
             "--units %u --slots %u --keys %zu --views %u --shrink-to %u "
             "--balance-max %u --seed %llu</code>.</p>"
             "<p>Shares are fractions of the 64-bit hash space (1.0 is all of "
             "it); for N members of equal weight the fair share is 1/N.</p>",
             (unsigned)o->nodes, (unsigned)o->points, (unsigned)o->units,
             (unsigned)o->slots, o->keys, (unsigned)o->views,
             (unsigned)o->shrink_to, (unsigned)o->balance_max,
             (unsigned long long)o->seed);
}

int main(int argc, char **argv)
{
    an_options o;
    int pr = an_options_parse(argc, argv, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;

    const double t0 = an_now();
    an_report *rp = an_report_new(o.out);
    if (rp == NULL)
        return 1;
    an_run run;
    int rc = an_run_init(&run, &o, rp);
    if (rc == DCH_OK)
        rc = an_sections_run(&run);
    an_run_free(&run);
    if (rc != DCH_OK) {
        an_report_free(rp);
        return 1;
    }
    const double elapsed = an_now() - t0;
    an_buf pre = {0};
    preamble(&pre, &o, elapsed);
    rc = pre.failed ? -1
                    : an_report_finish(rp, o.charts,
                                       "libdch: DCH map against the consistent-hash ring",
                                       an_buf_str(&pre));
    an_buf_free(&pre);
    if (rc == 0)
        printf("\nReport: %s/index.html; charts: %s; analysis %.1f s, "
               "total %.1f s\n",
               o.out, an_report_chart_status(rp), elapsed, an_now() - t0);
    an_report_free(rp);
    return rc == 0 ? 0 : 1;
}
