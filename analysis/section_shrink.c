/* SPDX-License-Identifier: MIT */
/*
 * 2. Shrink: from the grown schemes, members chosen by a seeded draw leave
 * one at a time; each removal's moved share against the leaver's share, and
 * where that share went.
 */
#include "sections.h"

#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The seeded stream of the removal order (the hash key's and the views'
 * streams are in metrics.c, which the explorer shares). */
#define STREAM_SHRINK UINT64_C(0x736872696e6b2d31)

typedef struct shrink_summary {
    an_change_figures fig; /* over the leaver's share; receivers; receipt
                              over share/(N-1) */
    double total_moved;
    double between_others;
} shrink_summary;

/* Fold the removal from n members into the summary (a leaver that held
 * nothing has no ratio, and its receipts no ideal). */
static void summarise(shrink_summary *ss, const an_moves *mv, double share,
                      uint32_t n)
{
    const double ideal = share / (n - 1);
    ss->total_moved += mv->moved;
    ss->between_others += mv->moved_other;
    an_change_figures_add(&ss->fig, share > 0.0 ? mv->moved / share : NAN,
                          (double)mv->receivers / (n - 1), mv->receivers,
                          ideal > 0.0 ? mv->max_receipt / ideal : NAN);
}

static int row(an_table *t, const char *label, const an_step *st, uint32_t k,
               uint32_t n, const char *leaver)
{
    const double share = st->share_before, ideal = share / (n - 1);
    return an_table_add(t, "tiitnnnnninnn", label, (long long)k + 1, (long long)n,
                        leaver, share, 1.0 / n, st->mv.moved,
                        share > 0.0 ? st->mv.moved / share : NAN,
                        st->mv.moved_other, (long long)st->mv.receivers,
                        ideal > 0.0 ? st->mv.max_receipt / ideal : NAN,
                        st->sampled, st->z) == 0
               ? DCH_OK
               : DCH_ENOMEM;
}

static int shrink_one(an_run *r, int s, an_table *t, const uint32_t *order,
                      uint32_t steps, shrink_summary *ss)
{
    const int width = an_name_width(r->opt.nodes);
    an_step st;
    int rc = an_step_begin_grown(&st, r, s, AN_PHASE_SHRINK);
    *ss = (shrink_summary){an_change_figures_none(), 0.0, 0.0};
    for (uint32_t k = 0; k < steps && rc == DCH_OK; k++) {
        char name[64];
        an_node_name(name, sizeof name, width, order[k]);
        const uint32_t n = an_scheme_count(&st.sc);
        rc = an_step_apply(&st, AN_OP_REMOVE, name, 0);
        if (rc != DCH_OK)
            break;
        summarise(ss, &st.mv, st.share_before, n);
        rc = row(t, r->label[s], &st, k, n, name);
    }
    an_step_end(&st, NULL);
    return rc == DCH_OK ? DCH_OK : an_fail("shrink", rc);
}

/* The removal order: a seeded draw among the members still there. */
static uint32_t *removal_order(const an_run *r, uint32_t steps)
{
    const uint32_t nodes = r->opt.nodes;
    uint32_t *left = malloc(nodes * sizeof *left);
    uint32_t *order = malloc((steps ? steps : 1) * sizeof *order);
    if (left == NULL || order == NULL) {
        free(left);
        free(order);
        return NULL;
    }
    for (uint32_t i = 0; i < nodes; i++)
        left[i] = i + 1;
    uint64_t rng = r->opt.seed ^ STREAM_SHRINK;
    for (uint32_t k = 0, n = nodes; k < steps; k++, n--) {
        uint32_t i = an_rng_below(&rng, n);
        order[k] = left[i];
        memmove(left + i, left + i + 1, (n - i - 1) * sizeof *left);
    }
    free(left);
    return order;
}

static void intro(an_buf *h, const an_run *r, const shrink_summary *ss,
                  uint32_t steps)
{
    char rr[AN_SCHEMES][80], zb[96], mp[2][32];
    an_buf_printf(h,
              "<p>From the %u nodes of section 1, members chosen by a seeded "
              "generator leave one at a time until %u remain (the same "
              "members in the same order for every scheme). For each removal: "
              "the leaver's share before it left, the share that moved, the "
              "share that moved between two survivors (<i>others</i>), how "
              "many survivors received something, and the largest receipt "
              "over the ideal (the leaver's share split equally over the "
              "N&minus;1 survivors).</p>"
              "<p>The DCH description (" AN_DCH_DESCRIPTION ") claims that "
              "removing a node moves no data. It cannot be so: the leaver's keys must go somewhere, so "
              "a removal moves exactly the leaver's share, in every scheme. "
              "What differs is where it goes.</p>",
              (unsigned)r->opt.nodes, (unsigned)r->opt.shrink_to);
    an_buf_printf(h,
              "<p><b>In this run.</b> Every removal moved the leaver's share "
              "(moved/share %s for DCH, %s for %s, %s for ring-1); over the %u "
              "removals DCH moved %.4f of the hash space in all, %s %.4f and "
              "ring-1 %.4f. ",
              an_ratio_range(rr[0], sizeof rr[0], ss[0].fig.ratio_min, ss[0].fig.ratio_max),
              an_ratio_range(rr[1], sizeof rr[1], ss[1].fig.ratio_min, ss[1].fig.ratio_max),
              r->label[1],
              an_ratio_range(rr[2], sizeof rr[2], ss[2].fig.ratio_min, ss[2].fig.ratio_max),
              (unsigned)steps, ss[0].total_moved, r->label[1],
              ss[1].total_moved, ss[2].total_moved);
    const double between[3] = {ss[0].between_others, ss[1].between_others,
                               ss[2].between_others};
    an_buf_printf(h, "Nothing moved between survivors %s. ",
                  an_zero_or_values(zb, sizeof zb, between));
    an_buf_printf(h,
              "Under DCH %s of the survivors received a part and "
              "no receipt exceeded %.2f times the ideal; the plain ring gave "
              "each leaver's share to at most %u neighbour%s (largest receipt "
              "%.1f times the ideal) and %s to %s of the "
              "survivors (largest receipt %.2f times).</p>",
              an_members_part(mp[0], sizeof mp[0], ss[0].fig.parties_frac_min),
              ss[0].fig.largest, (unsigned)ss[2].fig.parties_max,
              ss[2].fig.parties_max == 1 ? "" : "s", ss[2].fig.largest, r->label[1],
              an_members_part(mp[1], sizeof mp[1], ss[1].fig.parties_frac_min),
              ss[1].fig.largest);
}

static void charts(an_run *r)
{
    an_series sr[AN_SCHEMES + 2];
    for (int s = 0; s < AN_SCHEMES; s++)
        sr[s] = (an_series){"shrink.csv", "2", "$7", r->label[s],
                            "linespoints pt 7 ps 0.6 lw 2", an_scheme_colour[s],
                            r->label[s]};
    sr[4] = (an_series){"shrink.csv", "2", "$6", r->label[0], "lines dt 2 lw 2",
                        "#000000", "fair share 1/N"};
    sr[5] = (an_series){NULL, "0", NULL, NULL, "lines lw 2", "#999999",
                        "claimed by 000\\_9b3f07b0b8e46b09.txt: no data moves"};
    an_report_chart(r->report, &(an_chart){
        "shrink_moved",
        "Share moved by each removal: the leaver's share, not the zero the DCH description claims",
        "removal", "share of the hash space",
        "set key top left\nset yrange [-0.005:*]\n", sr, 6});
    /* At most the N-1 survivors can receive; DCH reaches them all, as does
     * the 160-point ring, so DCH is drawn last as open circles. */
    for (int k = 0; k < AN_SCHEMES; k++) {
        const int s = (k + 1) % AN_SCHEMES;
        sr[k] = (an_series){"shrink.csv", "2", "$10", r->label[s],
                            s == 0 ? "points pt 6 ps 1.6 lw 2" : "linespoints pt 7 ps 0.6 lw 2",
                            an_scheme_colour[s], r->label[s]};
    }
    sr[4] = (an_series){"shrink.csv", "2", "$3 - 1", r->label[0], "lines dt 2 lw 2",
                        "#000000", "all N-1 survivors"};
    an_report_chart(r->report, &(an_chart){
        "shrink_receivers",
        "Survivors that receive part of the leaver's share, against the N-1 that can",
        "removal", "receivers", "set key top right\nset yrange [0:*]\n", sr, 5});
}

int an_section_shrink(an_run *r)
{
    const uint32_t steps = r->opt.nodes - r->opt.shrink_to;
    uint32_t *order = removal_order(r, steps);
    an_table *t = order == NULL
                      ? NULL
                      : an_table_for(AN_TABLE_SHRINK,
                                     "2. Shrink: seeded removals, %u -> %u nodes",
                                     (unsigned)r->opt.nodes,
                                     (unsigned)r->opt.shrink_to);
    if (t == NULL) {
        free(order);
        return an_fail("shrink", DCH_ENOMEM);
    }
    an_progress p;
    an_progress_begin(&p, "shrink");
    shrink_summary ss[AN_SCHEMES];
    int rc = DCH_OK;
    for (int s = 0; s < AN_SCHEMES && rc == DCH_OK; s++) {
        an_table_gap(t);
        rc = shrink_one(r, s, t, order, steps, &ss[s]);
        an_progress_update(&p, r->label[s], s + 1.0, AN_SCHEMES);
    }
    an_progress_end(&p);
    free(order);
    if (rc != DCH_OK) {
        an_table_free(t);
        return rc;
    }
    for (int s = 0; s < AN_SCHEMES; s++)
        r->glance[s].leave = ss[s].fig;
    an_buf h = {0};
    intro(&h, r, ss, steps);
    rc = an_section_begin(r, "shrink", an_buf_str(&h));
    an_buf_free(&h);
    if (rc != 0 || an_report_table(r->report, t) != 0)
        return an_fail("shrink", DCH_ENOMEM);
    charts(r);
    return DCH_OK;
}
