/*
 * dch-analysis: measure the DCH map against the classic consistent-hash ring
 * on a built-in scenario and write a report (tables on stdout, CSV files,
 * gnuplot charts, SVG ring diagrams and an index.html) to a directory.
 *
 * It uses only the public libdch API (dch/dch.h): what it cannot measure
 * through that API, a user of the library could not measure either.
 */
#define _POSIX_C_SOURCE 200809L

#include "args.h"
#include "progress.h"
#include "sections.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Limits that keep a run inside the library's limits and this machine's
 * memory: 640 points for each of 20,000 nodes stays under the ring's 2^24
 * points, and the sampled keys take 16 bytes each. */
#define PROG "dch-analysis"
#define MAX_NODES 20000u
#define MAX_KEYS 100000000u
#define MAX_VIEWS 1024u

static void usage(FILE *f, const an_options *d)
{
    fprintf(f,
            "Usage: dch-analysis [options]\n"
            "\n"
            "Measures the DCH partition map against the classic consistent-hash\n"
            "ring (with --points points per node, and with one) on a built-in\n"
            "scenario: growth 1 -> N one join at a time, seeded removals, weight\n"
            "changes, balance for N up to --balance-max and against points per\n"
            "node, and Karger's spread and load over client views. Figures are\n"
            "exact (from ownership ranges) and confirmed with sampled keys.\n"
            "Prints one table per section and writes the report directory:\n"
            "CSV per table, charts (PNG and SVG, if gnuplot is installed), ring\n"
            "diagrams (SVG) and index.html.\n"
            "\n"
            "Options (default in brackets):\n"
            "  --nodes N        grow from 1 to N nodes; views choose among them [%u]\n"
            "  --points N       points per node of the ketama-style ring [%u]\n"
            "  --units N        DCH minimum arc units, a power of two [%u]\n"
            "  --slots N        DCH slots per unit, a power of two [%u]\n"
            "  --keys N         sampled keys that confirm the exact figures [%zu]\n"
            "  --views N        client views for spread and load [%u]\n"
            "  --seed N         seed of the hash key, removal order and views [%llu]\n"
            "  --shrink-to N    removals stop at N nodes [%u, or nodes-1 if fewer]\n"
            "  --balance-max N  measure balance for N = 2 .. this [%u]\n"
            "  --out DIR        report directory, created if missing [%s]\n"
            "  --no-charts      do not run gnuplot (CSV, diagrams, HTML only)\n"
            "  --help           print this help and exit\n"
            "\n"
            "Exit status: 0 on success, 1 if the analysis failed, 2 on bad usage.\n",
            (unsigned)d->nodes, (unsigned)d->points, (unsigned)d->units,
            (unsigned)d->slots, d->keys, (unsigned)d->views,
            (unsigned long long)d->seed, (unsigned)d->shrink_to,
            (unsigned)d->balance_max, d->out);
}

static void defaults(an_options *o)
{
    dch_map_config mc;
    dch_ring_config rc;
    dch_map_config_default(&mc);
    dch_ring_config_default(&rc);
    *o = (an_options){
        .nodes = 32,
        .points = rc.points_per_weight,
        .units = mc.units,
        .slots = mc.slots_per_unit,
        .keys = 1000000,
        .views = 16,
        .shrink_to = 4,
        .balance_max = 1000,
        .seed = 1,
        .out = "report",
        .charts = true,
    };
}

/* Parse argv into *o. @return 0 to run, 1 after --help, -1 on bad usage. */
static int parse_args(int argc, char **argv, an_options *o)
{
    an_options d;
    defaults(&d);
    *o = d;
    bool shrink_given = false;
    static const char *const flags[] = {"--no-charts", NULL};
    for (int i = 1; i < argc;) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout, &d);
            return 1;
        }
        an_arg a;
        if (an_arg_next(PROG, argc, argv, &i, flags, &a) != 0)
            return -1;
        const char *name = a.name, *value = a.value;
        if (value == NULL) { /* --no-charts */
            o->charts = false;
            continue;
        }
        unsigned long long v = 0;
        static const char *const numeric[] = {
            "--nodes", "--points", "--units", "--slots", "--keys",
            "--views", "--seed", "--shrink-to", "--balance-max"};
        bool known = strcmp(name, "--out") == 0;
        for (size_t k = 0; k < sizeof numeric / sizeof numeric[0]; k++)
            known = known || strcmp(name, numeric[k]) == 0;
        if (!known) {
            fprintf(stderr, "dch-analysis: unknown option '%s' (try --help)\n",
                    name);
            return -1;
        }
        if (strcmp(name, "--out") == 0) {
            if (value[0] == '\0') {
                fprintf(stderr, "dch-analysis: --out needs a directory\n");
                return -1;
            }
            o->out = value;
        } else if (strcmp(name, "--nodes") == 0) {
            if (an_arg_number(PROG, name, value, 2, MAX_NODES, &v) != 0)
                return -1;
            o->nodes = (uint32_t)v;
        } else if (strcmp(name, "--points") == 0) {
            if (an_arg_number(PROG, name, value, 1, DCH_RING_MAX_POINTS, &v) != 0)
                return -1;
            o->points = (uint32_t)v;
        } else if (strcmp(name, "--units") == 0) {
            if (an_arg_number(PROG, name, value, 1, DCH_MAP_MAX_SLOTS, &v) != 0)
                return -1;
            o->units = (uint32_t)v;
        } else if (strcmp(name, "--slots") == 0) {
            if (an_arg_number(PROG, name, value, 1, DCH_MAP_MAX_SLOTS, &v) != 0)
                return -1;
            o->slots = (uint32_t)v;
        } else if (strcmp(name, "--keys") == 0) {
            if (an_arg_number(PROG, name, value, 1, MAX_KEYS, &v) != 0)
                return -1;
            o->keys = (size_t)v;
        } else if (strcmp(name, "--views") == 0) {
            if (an_arg_number(PROG, name, value, 1, MAX_VIEWS, &v) != 0)
                return -1;
            o->views = (uint32_t)v;
        } else if (strcmp(name, "--seed") == 0) {
            if (an_arg_number(PROG, name, value, 0, ULLONG_MAX, &v) != 0)
                return -1;
            o->seed = (uint64_t)v;
        } else if (strcmp(name, "--shrink-to") == 0) {
            if (an_arg_number(PROG, name, value, 1, MAX_NODES, &v) != 0)
                return -1;
            o->shrink_to = (uint32_t)v;
            shrink_given = true;
        } else {
            if (an_arg_number(PROG, name, value, 2, MAX_NODES, &v) != 0)
                return -1;
            o->balance_max = (uint32_t)v;
        }
    }
    if (!shrink_given && o->shrink_to >= o->nodes)
        o->shrink_to = o->nodes - 1;
    if (o->shrink_to >= o->nodes) {
        fprintf(stderr, "dch-analysis: --shrink-to must be below --nodes\n");
        return -1;
    }
    /* The map checks its own config; ask it now for a clear message. */
    dch_map_config mc;
    dch_map_config_default(&mc);
    mc.units = o->units;
    mc.slots_per_unit = o->slots;
    dch_map *m = NULL;
    int rc = dch_map_new(&m, &mc);
    dch_map_free(m);
    if (rc != DCH_OK) {
        fprintf(stderr,
                "dch-analysis: --units %u --slots %u: %s (both must be powers "
                "of two, their product at most %u)\n",
                (unsigned)o->units, (unsigned)o->slots, dch_strerror(rc),
                (unsigned)DCH_MAP_MAX_SLOTS);
        return -1;
    }
    return 0;
}

static void html_escape_into(char *out, size_t n, const char *s)
{
    size_t k = 0;
    for (; *s && k + 7 < n; s++) {
        const char *rep = NULL;
        switch (*s) {
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '&': rep = "&amp;"; break;
        case '"': rep = "&quot;"; break;
        default: break;
        }
        if (rep != NULL) {
            size_t len = strlen(rep);
            memcpy(out + k, rep, len);
            k += len;
        } else {
            out[k++] = *s;
        }
    }
    out[k] = '\0';
}

int main(int argc, char **argv)
{
    an_options o;
    int pr = parse_args(argc, argv, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;

    const double t0 = an_now();
    an_report *rp = an_report_new(o.out);
    if (rp == NULL)
        return 1;
    an_run run;
    int rc = an_run_init(&run, &o, rp);
    if (rc == DCH_OK)
        rc = an_section_schemes(&run);
    if (rc == DCH_OK)
        rc = an_section_growth(&run);
    if (rc == DCH_OK)
        rc = an_section_shrink(&run);
    if (rc == DCH_OK)
        rc = an_section_weights(&run);
    if (rc == DCH_OK)
        rc = an_section_balance(&run);
    if (rc == DCH_OK)
        rc = an_section_karger(&run);
    if (rc == DCH_OK)
        rc = an_section_sampled(&run);
    if (rc == DCH_OK)
        rc = an_section_glance(&run);
    an_run_free(&run);
    if (rc != DCH_OK) {
        an_report_free(rp);
        return 1;
    }
    const double elapsed = an_now() - t0;

    char date[64], out_html[1024], preamble[8192];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    html_escape_into(out_html, sizeof out_html, o.out);
    snprintf(preamble, sizeof preamble,
             "<p>What the DCH partition map and the classic consistent-hash "
             "ring do when members join, leave and change weight, measured "
             "exactly from their ownership ranges (dch_map_ranges, "
             "dch_ring_ranges and their diff, dch_range_diff) and confirmed "
             "with sampled keys. Every table is also a CSV file in this "
             "directory; every chart is drawn from those files by "
             "<a href=\"charts.gp\">charts.gp</a>.</p>"
             "<p>Run of %s with libdch %s, in %.1f s (before charts). "
             "Settings: %u nodes, %u ring points per node, DCH %u units &times; "
             "%u slots, %zu sampled keys, %u views, removals down to %u nodes, "
             "balance up to N = %u, seed %llu, report in <code>%s</code>. "
             "Reproduce with <code>dch-analysis --nodes %u --points %u "
             "--units %u --slots %u --keys %zu --views %u --shrink-to %u "
             "--balance-max %u --seed %llu</code>.</p>"
             "<p>Shares are fractions of the 64-bit hash space (1.0 is all of "
             "it); for N members of equal weight the fair share is 1/N.</p>",
             date, dch_version(), elapsed, (unsigned)o.nodes,
             (unsigned)o.points, (unsigned)o.units, (unsigned)o.slots, o.keys,
             (unsigned)o.views, (unsigned)o.shrink_to,
             (unsigned)o.balance_max, (unsigned long long)o.seed, out_html,
             (unsigned)o.nodes, (unsigned)o.points, (unsigned)o.units,
             (unsigned)o.slots, o.keys, (unsigned)o.views,
             (unsigned)o.shrink_to, (unsigned)o.balance_max,
             (unsigned long long)o.seed);
    rc = an_report_finish(rp, o.charts,
                          "libdch: DCH map against the consistent-hash ring",
                          preamble);
    if (rc == 0)
        printf("\nReport: %s/index.html (charts %s); analysis %.1f s, "
               "total %.1f s\n",
               o.out, an_report_chart_status(rp), elapsed, an_now() - t0);
    an_report_free(rp);
    return rc == 0 ? 0 : 1;
}
