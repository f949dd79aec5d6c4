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

/* One cell over `rows` rows: its text, linked to section `id`. */
static void cell(FILE *f, int rows, const char *id, const char *text)
{
    if (rows > 1)
        fprintf(f, "<td class=\"n\" rowspan=\"%d\">", rows);
    else
        fputs("<td class=\"n\">", f);
    fprintf(f, "<a href=\"#%s\">%s</a></td>", id, text);
}

/* A ratio, or its range over the steps when the steps differ. */
static void ratio_cell(FILE *f, int rows, const char *id, double lo, double hi)
{
    char a[32], b[32], text[80];
    snprintf(a, sizeof a, "%.3f", lo);
    snprintf(b, sizeof b, "%.3f", hi);
    if (strcmp(a, b) == 0)
        snprintf(text, sizeof text, "%s", a);
    else
        snprintf(text, sizeof text, "%s&ndash;%s", a, b);
    cell(f, rows, id, text);
}

/* How many members take part in a change: all of them, one, or a share. */
static void members_cell(FILE *f, int rows, const char *id, double frac_min,
                         uint32_t max)
{
    char text[80];
    if (frac_min >= 1.0)
        snprintf(text, sizeof text, "all");
    else if (max == 1)
        snprintf(text, sizeof text, "1");
    else
        snprintf(text, sizeof text, "&ge; %.0f%%", 100.0 * frac_min);
    cell(f, rows, id, text);
}

/* A figure, or a dash when the section did not measure it (NaN). */
static void num_cell(FILE *f, int rows, const char *id, const char *fmt, double v)
{
    if (isnan(v)) {
        fprintf(f, "<td class=\"n\" rowspan=\"%d\">&mdash;</td>", rows);
        return;
    }
    char text[48];
    snprintf(text, sizeof text, fmt, v);
    cell(f, rows, id, text);
}

/* The table's two header rows. */
static void header(FILE *f, const an_run *r)
{
    fprintf(f,
            "<p class=\"lead\">Karger et al.'s four properties of a consistent "
            "hash, and what a change of membership costs, for each scheme measured "
            "in this report (N = %u members of equal weight unless a column says "
            "otherwise). Each figure links to the section that measures it.</p>\n"
            "<table class=\"glance\">\n"
            "<tr><th rowspan=\"2\">scheme</th>"
            "<th colspan=\"2\">balance: largest share over fair share</th>"
            "<th>monotonicity</th>"
            "<th colspan=\"2\">spread / load over %u client views</th>"
            "<th colspan=\"3\">migration per join</th>"
            "<th colspan=\"3\">migration per removal</th></tr>\n"
            "<tr><th>N = %u</th><th>N = %u</th>"
            "<th>share moved between old members, all joins</th>"
            "<th>spread / load</th><th>how each client gets its map or ring</th>"
            "<th>moved / optimum 1/N</th><th>donors among the N&minus;1 old "
            "members</th><th>largest donation / ideal</th>"
            "<th>moved / leaver's share</th><th>receivers among the "
            "N&minus;1 survivors</th><th>largest receipt / ideal</th></tr>\n",
            (unsigned)r->opt.nodes, (unsigned)r->opt.views, (unsigned)r->glance_n1,
            (unsigned)r->glance_n2);
}

/* Spread and load, and (unless NULL) the note that says why they are what
 * they are, over `note_rows` rows. */
static void spread_cells(FILE *f, double spread, double load, const char *note,
                         int note_rows)
{
    char text[64];
    snprintf(text, sizeof text, "%.0f / %.2f", spread, load);
    cell(f, 1, "karger", text);
    if (note != NULL)
        fprintf(f, "<td class=\"why\" rowspan=\"%d\">%s</td>", note_rows, note);
}

/*
 * One scheme's row. DCH takes two: spread and load with the one map every
 * client shares (how DCH is used), then with a map built by each client,
 * which disagree because a map depends on the order of the changes that
 * built it; its other cells span both rows. The rings share one note.
 */
static void scheme_rows(FILE *f, const an_run *r, int s)
{
    const an_glance *g = &r->glance[s];
    const int rows = s == 0 ? 2 : 1;
    if (rows > 1)
        fprintf(f, "<tr><td rowspan=\"%d\">%s</td>", rows, r->label[s]);
    else
        fprintf(f, "<tr><td>%s</td>", r->label[s]);
    num_cell(f, rows, "balance", "%.4f", g->peak_n1);
    num_cell(f, rows, "balance", "%.4f", g->peak_n2);
    num_cell(f, rows, "growth", "%.3g", r->growth_between_old[s]);
    if (s == 0)
        spread_cells(f, r->glance_shared_spread, r->glance_shared_load,
                     "one map shared by every client: how DCH is used", 1);
    else
        spread_cells(f, g->spread_views, g->load_views,
                     s == 1 ? "a ring built by each client: a ring depends "
                              "only on its members, so rings agree"
                            : NULL,
                     AN_SCHEMES - 1);
    ratio_cell(f, rows, "growth", g->join.ratio_min, g->join.ratio_max);
    members_cell(f, rows, "growth", g->join.parties_frac_min, g->join.parties_max);
    num_cell(f, rows, "growth", "%.2f", g->join.largest);
    ratio_cell(f, rows, "shrink", g->leave.ratio_min, g->leave.ratio_max);
    members_cell(f, rows, "shrink", g->leave.parties_frac_min, g->leave.parties_max);
    num_cell(f, rows, "shrink", "%.2f", g->leave.largest);
    fputs("</tr>\n", f);
    if (s == 0) {
        fputs("<tr>", f);
        spread_cells(f, g->spread_views, g->load_views,
                     "a map built by each client: a map depends on the order "
                     "of its changes, so maps built apart disagree",
                     1);
        fputs("</tr>\n", f);
    }
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
        scheme_rows(f, r, s);
    fprintf(f,
            "</table>\n"
            "<p><b>How to read it.</b> Balance is 1.0 when every member owns "
            "exactly its fair share. Monotonicity holds when nothing moves between "
            "old members. Spread is the most members one key is sent to by clients "
            "that see different subsets of the members; load is the most keys one "
            "member is asked for, over keys/N; both are 1 when every client "
            "agrees. The ideal donation or receipt is what each member would move "
            "if all took an equal part. A dash marks a figure that the report does "
            "not measure for the scheme.</p>\n");
    if (fclose(f) != 0 || html == NULL) {
        free(html);
        return DCH_ENOMEM;
    }
    const int rc = an_section_begin(r, "glance", html);
    free(html);
    return rc == 0 ? DCH_OK : DCH_ENOMEM;
}
