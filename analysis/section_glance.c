/* SPDX-License-Identifier: MIT */
/*
 * The four properties at a glance: the summary that opens the report. Karger
 * et al.'s balance, monotonicity, spread and load, plus what a membership
 * change costs (moved share, how many members take part, the largest single
 * transfer), one row per scheme, every cell a link to the section that
 * measures it. The figures are those the sections computed (an_run.glance),
 * so the summary cannot disagree with the details below it.
 */
#define _POSIX_C_SOURCE 200809L

#include "sections.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One cell: its text, linked to section `id`. */
static void cell(FILE *f, const char *id, const char *text)
{
    fprintf(f, "<td class=\"n\"><a href=\"#%s\">%s</a></td>", id, text);
}

/* A ratio, or its range over the steps when the steps differ. */
static void ratio_cell(FILE *f, const char *id, double lo, double hi)
{
    char a[32], b[32], text[80];
    snprintf(a, sizeof a, "%.3f", lo);
    snprintf(b, sizeof b, "%.3f", hi);
    if (strcmp(a, b) == 0)
        snprintf(text, sizeof text, "%s", a);
    else
        snprintf(text, sizeof text, "%s&ndash;%s", a, b);
    cell(f, id, text);
}

/* How many members take part in a change: all of them, one, or a share. */
static void members_cell(FILE *f, const char *id, double frac_min, uint32_t max,
                         const char *all)
{
    char text[80];
    if (frac_min >= 1.0)
        snprintf(text, sizeof text, "%s", all);
    else if (max == 1)
        snprintf(text, sizeof text, "1");
    else
        snprintf(text, sizeof text, "&ge; %.0f%% of them", 100.0 * frac_min);
    cell(f, id, text);
}

/* A figure, or a dash when the section did not measure it (NaN). */
static void num_cell(FILE *f, const char *id, const char *fmt, double v)
{
    if (isnan(v)) {
        fputs("<td class=\"n\">&mdash;</td>", f);
        return;
    }
    char text[48];
    snprintf(text, sizeof text, fmt, v);
    cell(f, id, text);
}

/* The table's two header rows. */
static void header(FILE *f, const an_run *r)
{
    fprintf(f,
            "<p>Karger et al.'s four properties of a consistent hash, and what "
            "a change of membership costs, for each scheme measured in "
            "this report (N = %u members of equal weight unless a column says "
            "otherwise). Each figure links to the section that measures it "
            "and explains it.</p>\n"
            "<table class=\"glance\">\n"
            "<tr><th rowspan=\"2\">scheme</th>"
            "<th colspan=\"2\">balance: largest share over fair share</th>"
            "<th>monotonicity</th>"
            "<th colspan=\"2\">spread / load over %u client views</th>"
            "<th colspan=\"3\">migration per join</th>"
            "<th colspan=\"3\">migration per removal</th></tr>\n"
            "<tr><th>N = %u</th><th>N = %u</th>"
            "<th>share moved between old members, all joins</th>"
            "<th>a map or ring per view</th><th>one shared map</th>"
            "<th>moved / optimum 1/N</th><th>donors among the N&minus;1 old "
            "members</th><th>largest donation / ideal</th>"
            "<th>moved / leaver's share</th><th>receivers among the "
            "N&minus;1 survivors</th><th>largest receipt / ideal</th></tr>\n",
            (unsigned)r->opt.nodes, (unsigned)r->opt.views, (unsigned)r->glance_n1,
            (unsigned)r->glance_n2);
}

/* One scheme's row; a dash where its section does not apply to it. */
static void scheme_row(FILE *f, const an_run *r, int s)
{
    const an_glance *g = &r->glance[s];
    char text[96];
    fprintf(f, "<tr><td>%s</td>", r->label[s]);
    num_cell(f, "balance", "%.4f", g->peak_n1);
    num_cell(f, "balance", "%.4f", g->peak_n2);
    num_cell(f, "growth", "%.3g", r->growth_between_old[s]);
    snprintf(text, sizeof text, "%.0f / %.2f", g->spread_views, g->load_views);
    cell(f, "karger", text);
    if (s == 0) {
        snprintf(text, sizeof text, "%.0f / %.2f", r->glance_shared_spread,
                 r->glance_shared_load);
        cell(f, "karger", text);
    } else {
        fputs("<td class=\"n\">&mdash;</td>", f);
    }
    ratio_cell(f, "growth", g->join.ratio_min, g->join.ratio_max);
    members_cell(f, "growth", g->join.parties_frac_min, g->join.parties_max, "all");
    num_cell(f, "growth", "%.2f", g->join.largest);
    ratio_cell(f, "shrink", g->leave.ratio_min, g->leave.ratio_max);
    members_cell(f, "shrink", g->leave.parties_frac_min, g->leave.parties_max,
                 "all");
    num_cell(f, "shrink", "%.2f", g->leave.largest);
    fputs("</tr>\n", f);
}

int an_section_glance(an_run *r)
{
    char *html = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&html, &len);
    if (f == NULL)
        return DCH_ENOMEM;
    header(f, r);
    for (int s = 0; s < AN_SCHEMES; s++)
        scheme_row(f, r, s);
    fprintf(f,
            "</table>\n"
            "<p>Balance is 1.0 when every member owns exactly its fair share. "
            "Monotonicity holds when nothing moves between old members. "
            "Spread is the most members one key is sent to by clients that "
            "see different subsets of the members; load is the most keys one "
            "member is asked for, over keys/N; both are 1 when every client "
            "agrees. A ring is a function of its member set, so clients build "
            "their own; a DCH map depends on the order of the changes that "
            "built it, so clients share one map (the shared-map column). The "
            "ideal donation or receipt is what each member would move if all "
            "took an equal part. A dash marks a figure that does not apply "
            "to the scheme or that the report does not measure for it.</p>\n");
    if (fclose(f) != 0 || html == NULL) {
        free(html);
        return DCH_ENOMEM;
    }
    const int rc = an_section_begin(r, "glance", html);
    free(html);
    return rc == 0 ? DCH_OK : DCH_ENOMEM;
}
