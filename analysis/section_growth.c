/* SPDX-License-Identifier: MIT */
/*
 * 1. Growth: from one node to --nodes, one join at a time, for every scheme;
 * each join's moved share against the optimum 1/N, who donated and how much.
 * The grown schemes are kept for the sections that start from them.
 */
#include "sections.h"

#include "progress.h"

#include <math.h>
#include <stdio.h>

/* What the findings paragraph says about one scheme's joins. */
typedef struct growth_summary {
    double max_dev;        /* largest |moved - 1/N| */
    an_change_figures fig; /* over 1/N; donors; donation over 1/(N(N-1)) */
    double cumulative;
    double between_old;
} growth_summary;

/* Fold the join to n members into the summary. */
static void summarise(growth_summary *gs, const an_moves *mv, uint32_t n)
{
    const double opt = 1.0 / n, ideal = 1.0 / ((double)n * (n - 1));
    gs->cumulative += mv->moved;
    gs->between_old += mv->moved_other;
    gs->max_dev = fmax(gs->max_dev, fabs(mv->moved - opt));
    an_change_figures_add(&gs->fig, mv->moved / opt, (double)mv->donors / (n - 1),
                          mv->donors, mv->max_donation / ideal);
}

static int row(an_table *t, const char *label, const an_step *st, uint32_t n,
               double peak, double cumulative)
{
    const double ideal = 1.0 / ((double)n * (n - 1));
    return an_table_add(t, "tinnninnnnnnn", label, (long long)n, st->mv.moved,
                        1.0 / n, st->mv.moved_other, (long long)st->mv.donors,
                        st->mv.max_donation / ideal, peak, cumulative,
                        an_harmonic_migration(n), an_halving_migration(n),
                        st->sampled, st->z) == 0
               ? DCH_OK
               : DCH_ENOMEM;
}

static int grow_one(an_run *r, int s, an_table *t, an_progress *p,
                    growth_summary *gs)
{
    const uint32_t nodes = r->opt.nodes;
    const int width = an_name_width(nodes);
    char name[64];
    an_scheme sc;
    int rc = an_scheme_new(&sc, &r->spec[s]);
    if (rc != DCH_OK)
        return an_fail("growth", rc);
    an_node_name(name, sizeof name, width, 1);
    rc = an_scheme_add(&sc, name, 1, NULL);
    an_step st;
    int brc = an_step_begin(&st, r, s, AN_PHASE_GROWTH, &sc);
    rc = rc == DCH_OK ? brc : rc;
    *gs = (growth_summary){0.0, an_change_figures_none(), 0.0, 0.0};
    an_balance bal = {1, 1.0, 1.0, 0.0};
    for (uint32_t n = 2; n <= nodes && rc == DCH_OK; n++) {
        an_node_name(name, sizeof name, width, n);
        rc = an_step_apply(&st, AN_OP_ADD, name, 1);
        if (rc == DCH_OK)
            rc = an_balance_now(&st.sc, &st.ranges, &bal);
        if (rc != DCH_OK)
            break;
        summarise(gs, &st.mv, n);
        rc = row(t, r->label[s], &st, n, bal.peak_to_avg, gs->cumulative);
        an_progress_update(p, r->label[s], (double)s * nodes + n,
                           (double)AN_SCHEMES * nodes);
    }
    an_step_end(&st, rc == DCH_OK ? &r->grown[s] : NULL);
    if (rc != DCH_OK)
        return an_fail("growth", rc);
    r->grown_peak[s] = bal.peak_to_avg;
    r->growth_between_old[s] = gs->between_old;
    return DCH_OK;
}

/* Who gives to a joiner, in the words of the section's opening. */
static const char *const DONORS_WORDS[3] = {
    "from every old member",
    "from a single neighbour",
    "from some of the old members",
};

static void intro(an_buf *h, const an_run *r, const growth_summary *gs)
{
    const uint32_t N = r->opt.nodes;
    const double slot = 1.0 / ((double)r->opt.units * r->opt.slots);
    an_buf_printf(h,
              "<p class=\"lead\">Members join one at a time, from 1 to %u; each "
              "join's moved share is compared with the optimum 1/N (the joiner's "
              "fair share), and the old members that gave it are counted. DCH "
              "moves %s at every join, %s, so its total is the least possible; "
              "%s takes each joiner's share %s, unevenly, and the plain ring "
              "takes it %s, %s.</p>",
              (unsigned)N, gs[0].max_dev <= slot ? "1/N to within one slot" : "close to 1/N",
              an_parties_phrase(&gs[0].fig, DONORS_WORDS), r->label[1],
              an_parties_phrase(&gs[1].fig, DONORS_WORDS),
              an_parties_phrase(&gs[2].fig, DONORS_WORDS),
              gs[2].fig.ratio_max > 1.5 || gs[2].fig.ratio_min < 0.5
                  ? "and moves far more or far less than 1/N"
                  : "and moves about 1/N");
    an_buf_printf(h,
              "<p><b>How to read it.</b> <i>moved</i> is the share of the hash "
              "space that changed owner, against 1/N: what must move to give the "
              "joiner its share (DCH moves whole slots of 1/%u, so it can move a "
              "fraction of a slot less). <i>old-&gt;old</i> is the share that moved "
              "between two old members, a breach of monotonicity. <i>donors</i> "
              "counts the old members that gave something, and <i>max donation / "
              "ideal</i> is the largest gift over 1/(N(N&minus;1)), what each of "
              "N&minus;1 equal donors would give. The totals sum the moved shares "
              "from one node: 1/2 + 1/3 + ... + 1/N is the least possible, and "
              "<i>halving</i>, 1/2 + 1/4 + 1/4 + 1/8 + ..., is what %s credits "
              "the plain ring with. <i>sampled</i> and <i>z</i> repeat the moved "
              "share over %zu sampled keys (section 6).</p>",
              (unsigned)(r->opt.units * r->opt.slots), AN_DCH_DESCRIPTION,
              r->opt.keys);
}

/* The joins of each scheme in one row. */
static an_table *summary_table(const an_run *r, const growth_summary *gs)
{
    const uint32_t N = r->opt.nodes;
    an_table *t = an_table_for(AN_TABLE_GROWTH_SUMMARY,
                               "1. Growth in brief: the %u joins of each scheme",
                               (unsigned)(N - 1));
    for (int s = 0; t != NULL && s < AN_SCHEMES; s++) {
        const growth_summary *g = &gs[s];
        if (an_table_add(t, "tnnnnnnnnin", r->label[s], g->fig.ratio_min,
                         g->fig.ratio_max, g->max_dev, g->cumulative,
                         an_harmonic_migration(N), an_halving_migration(N),
                         g->between_old, g->fig.parties_frac_min,
                         (long long)g->fig.parties_max, g->fig.largest) != 0) {
            an_table_free(t);
            return NULL;
        }
    }
    return t;
}

/* The growth charts: reference lines first (pale bands; drawn for DCH's
 * rows only where `dch_rows`), then one series per scheme of column `col`
 * (at N, or dodged slightly left and right of it where `dodge`) with DCH
 * on top; the key lists DCH first. */
typedef struct growth_chart {
    const char *stem, *caption, *xlabel, *ylabel, *settings;
    an_series ref[2];
    size_t nref;
    bool dch_rows;
    const char *col;
    bool dodge;
} growth_chart;

static const growth_chart growth_charts[] = {
    {"growth_moved", "Share of the hash space moved by each join, against the optimum 1/N",
     "members after the join (N)", "moved share (log scale)",
     "set logscale y\nset format y '10^{%L}'\n",
     {{"growth.csv", "2", "$4", NULL, AN_REFERENCE_STYLE, AN_REFERENCE_COLOUR,
       "optimum 1/N"}},
     1, true, "$3", false},
    {"growth_cumulative",
     "Share moved in all from 1 node to N nodes, against the harmonic and halving sums",
     "members (N)", "sum of moved shares", "",
     {{"growth.csv", "2", "$10", NULL, AN_REFERENCE_STYLE, AN_REFERENCE_COLOUR,
       "least possible: 1/2 + 1/3 + ... + 1/N"},
      {"growth.csv", "2", "$11", NULL, "lines dt 3 lw 2", "#555555",
       "halving: 1/2 + 1/4 + 1/4 + 1/8 ..."}},
     2, true, "$9", false},
    {"growth_donors",
     "Old members that donate to the joiner (ring-160 and libmemcached drawn "
     "slightly left and right of N, so that schemes on N-1 all show)",
     "members after the join (N)", "donors", "set yrange [0:*]\n",
     {{NULL, "x - 1", NULL, NULL, AN_REFERENCE_STYLE, AN_REFERENCE_COLOUR,
       "all N-1 old members"}},
     1, false, "$6", true},
    {"growth_donation", "Largest single donation of each join over the ideal 1/(N(N-1))",
     "members after the join (N)", "largest donation / ideal (log scale)", "set logscale y\n",
     {{NULL, "x - 1", NULL, NULL, AN_REFERENCE_STYLE, AN_REFERENCE_COLOUR,
       "N-1: one donor gives it all"}},
     1, false, "$7", false},
};

static void charts(an_run *r)
{
    an_series sr[AN_SCHEMES + 2];
    char xs[AN_SCHEMES][32];
    for (size_t c = 0; c < sizeof growth_charts / sizeof growth_charts[0]; c++) {
        const growth_chart *g = &growth_charts[c];
        for (size_t k = 0; k < g->nref; k++) {
            sr[k] = g->ref[k];
            sr[k].only = g->dch_rows ? r->label[0] : NULL;
        }
        an_scheme_series(r, sr + g->nref, "growth.csv", 2, g->col, g->dodge, xs);
        an_report_chart(r->report, &(an_chart){g->stem, g->caption, g->xlabel, g->ylabel,
                                                g->settings, sr, AN_SCHEMES + g->nref});
    }
}

int an_section_growth(an_run *r)
{
    an_table *t = an_table_for(AN_TABLE_GROWTH,
                               "1. Growth: one join at a time, 1 -> %u nodes "
                               "(fractions of the hash space)",
                               (unsigned)r->opt.nodes);
    if (t == NULL)
        return an_fail("growth", DCH_ENOMEM);
    an_progress p;
    an_progress_begin(&p, "growth");
    growth_summary gs[AN_SCHEMES];
    for (int s = 0; s < AN_SCHEMES; s++) {
        an_table_gap(t);
        int rc = grow_one(r, s, t, &p, &gs[s]);
        if (rc != DCH_OK) {
            an_table_free(t);
            return rc;
        }
    }
    an_progress_end(&p);
    for (int s = 0; s < AN_SCHEMES; s++)
        r->glance[s].join = gs[s].fig;
    an_buf h = {0};
    intro(&h, r, gs);
    an_table *brief = summary_table(r, gs);
    if (an_section_two_tables(r, "growth", &h, brief, t) != DCH_OK)
        return DCH_ENOMEM;
    charts(r);
    return DCH_OK;
}
