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

static void intro(an_buf *h, const an_run *r, const growth_summary *gs)
{
    const uint32_t N = r->opt.nodes;
    const double slot = 1.0 / ((double)r->opt.units * r->opt.slots);
    char zb[96], mp[2][32];
    an_buf_printf(h,
              "<p>Starting from one node, node-02 .. node-%02u join one at a "
              "time. For each join the table gives the share of the hash "
              "space that changed owner (<i>moved</i>) against the optimum "
              "1/N (the joiner's fair share: what must move to give it that share, "
              "less a fraction of a slot at most for DCH, which moves whole slots), "
              "the share that moved between two old members "
              "(<i>old-&gt;old</i>: a violation of monotonicity), how many "
              "old members gave something (<i>donors</i>), the largest single "
              "donation over the ideal 1/(N(N&minus;1)) that each of N&minus;1 "
              "equal donors would give, and the peak-to-average ownership "
              "after the join. <i>cumulative</i> sums the moved shares; "
              "<i>1/2+..+1/N</i> is the least possible total and "
              "<i>halving</i> is the sequence 1/2 + 1/4 + 1/4 + 1/8 + ... "
              "that the DCH description (" AN_DCH_DESCRIPTION ") gives for the plain ring. "
              "<i>sampled</i> and <i>z</i> repeat the moved share with %zu "
              "sampled keys (section 6).</p>",
              (unsigned)N, r->opt.keys);
    an_buf_printf(h,
              "<p><b>In this run.</b> DCH moved 1/N to within %.2g of the hash "
              "space at every join (one slot is %.3g), so the sequence of its "
              "moves is 1/2, 1/3, 1/4, ... and its total after %u nodes is "
              "%.4f against the least possible %.4f. %s moved between "
              "%.3g and %.3g times the optimum per join, the plain ring between "
              "%.3g and %.3g times; their totals are %.4f and %.4f (halving "
              "sequence: %.4f). Nothing moved between old members %s. "
              "The difference is who pays: under DCH %s of the "
              "old members donate at every join and no donation exceeds "
              "%.2f times the ideal, while the plain ring took each joiner's "
              "share from at most %u neighbour%s (largest donation %.1f times "
              "the ideal); %s drew on %s of the old members at "
              "every join, but unevenly (largest donation %.2f times the "
              "ideal).</p>",
              gs[0].max_dev, slot, (unsigned)N, gs[0].cumulative,
              an_harmonic_migration(N), r->label[1], gs[1].fig.ratio_min,
              gs[1].fig.ratio_max, gs[2].fig.ratio_min, gs[2].fig.ratio_max,
              gs[1].cumulative, gs[2].cumulative, an_halving_migration(N),
              an_zero_or_values(zb, sizeof zb, (const double[]){gs[0].between_old,
                                                                 gs[1].between_old,
                                                                 gs[2].between_old}),
              an_members_part(mp[0], sizeof mp[0], gs[0].fig.parties_frac_min),
              gs[0].fig.largest, (unsigned)gs[2].fig.parties_max,
              gs[2].fig.parties_max == 1 ? "" : "s", gs[2].fig.largest, r->label[1],
              an_members_part(mp[1], sizeof mp[1], gs[1].fig.parties_frac_min),
              gs[1].fig.largest);
}

/* One series per scheme of column y of growth.csv against N. With `dch_last`
 * DCH is drawn last, as open circles around the points it shares with the
 * 160-point ring. */
static void scheme_series(const an_run *r, an_series *sr, const char *y,
                          const char *style, bool dch_last)
{
    for (int k = 0; k < AN_SCHEMES; k++) {
        const int s = dch_last ? (k + 1) % AN_SCHEMES : k;
        sr[k] = (an_series){"growth.csv", "2", y, r->label[s],
                            dch_last && s == 0 ? "points pt 6 ps 1.6 lw 2" : style,
                            an_scheme_colour[s], r->label[s]};
    }
}

static void charts(an_run *r)
{
    const char *dch = r->label[0];
    an_series sr[AN_SCHEMES + 2];
    scheme_series(r, sr, "$3", "linespoints pt 7 ps 0.7 lw 2", false);
    sr[4] = (an_series){"growth.csv", "2", "$4", dch, "lines dt 2 lw 2", "#000000", "optimum 1/N"};
    an_report_chart(r->report, &(an_chart){
        "growth_moved", "Share of the hash space moved by each join, against the optimum 1/N",
        "members after the join (N)", "moved share (log scale)",
        "set logscale y\nset format y '10^{%L}'\nset key top right\n", sr, 5});
    scheme_series(r, sr, "$9", "linespoints pt 7 ps 0.6 lw 2", false);
    sr[4] = (an_series){"growth.csv", "2", "$10", dch, "lines dt 2 lw 2", "#000000",
                        "1/2 + 1/3 + ... + 1/N (DCH)"};
    sr[5] = (an_series){"growth.csv", "2", "$11", dch, "lines dt 3 lw 2", "#7f7f7f",
                        "1/2 + 1/4 + 1/4 + 1/8 ... (halving)"};
    an_report_chart(r->report, &(an_chart){
        "growth_cumulative",
        "Cumulative migration from 1 node to N nodes, against the harmonic and halving sums",
        "members (N)", "sum of moved shares", "set key top left\n", sr, 6});
    scheme_series(r, sr, "$6", "linespoints pt 7 ps 0.6 lw 2", true);
    sr[4] = (an_series){NULL, "x - 1", NULL, NULL, "lines dt 2", "#000000", "all N-1 old members"};
    an_report_chart(r->report, &(an_chart){
        "growth_donors",
        "Old members that donate to the joiner (DCH's open circles and ring-160's points both lie on N-1)",
        "members after the join (N)", "donors", "set key top left\n", sr, 5});
    scheme_series(r, sr, "$7", "linespoints pt 7 ps 0.6 lw 2", false);
    sr[4] = (an_series){NULL, "x - 1", NULL, NULL, "lines dt 2", "#000000",
                        "N-1: one donor gives it all"};
    an_report_chart(r->report, &(an_chart){
        "growth_donation", "Largest single donation of each join over the ideal 1/(N(N-1))",
        "members after the join (N)", "largest donation / ideal (log scale)",
        "set logscale y\nset key top left\n", sr, 5});
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
    int rc = an_section_begin(r, "growth", an_buf_str(&h));
    an_buf_free(&h);
    if (rc != 0 || an_report_table(r->report, t) != 0)
        return an_fail("growth", DCH_ENOMEM);
    charts(r);
    return DCH_OK;
}
