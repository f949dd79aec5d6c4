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

/* Does every removal of scheme s move exactly the leaver's share? */
static bool exact(const shrink_summary *ss)
{
    return fabs(ss->fig.ratio_min - 1.0) < 1e-9 && fabs(ss->fig.ratio_max - 1.0) < 1e-9;
}

/* Where a leaver's share goes, in the words of the section's opening. */
static const char *const RECEIVERS_WORDS[3] = {
    "over every survivor",
    "to a single neighbour",
    "over most survivors",
};

static void intro(an_buf *h, const an_run *r, const shrink_summary *ss)
{
    const bool all_exact = exact(&ss[0]) && exact(&ss[1]) && exact(&ss[2]);
    an_buf_printf(h,
              "<p class=\"lead\">From the %u nodes of section 1, members chosen by a "
              "seeded draw leave one at a time until %u remain (the same members in "
              "the same order for every scheme); each removal's moved share is "
              "compared with the leaver's share, and the survivors that received it "
              "are counted. %s the leaver's share, so %s's claim that removing a "
              "node moves no data cannot hold. DCH spreads it %s, %s %s and "
              "unevenly, and the plain ring hands it %s.</p>",
              (unsigned)r->opt.nodes, (unsigned)r->opt.shrink_to,
              all_exact ? "In DCH and both rings every removal moves exactly"
                        : "A removal moves at least",
              AN_DCH_DESCRIPTION, an_parties_phrase(&ss[0].fig, RECEIVERS_WORDS),
              r->label[1], an_parties_phrase(&ss[1].fig, RECEIVERS_WORDS),
              an_parties_phrase(&ss[2].fig, RECEIVERS_WORDS));
    an_buf_printf(h,
              "<p><b>How to read it.</b> <i>moved / share</i> is 1 when exactly "
              "the leaver's share moved; <i>between others</i> is the share that "
              "moved between two survivors; <i>receivers</i> counts the survivors "
              "that got a part, and <i>max receipt / ideal</i> is the largest part "
              "over the leaver's share split evenly over the N&minus;1 survivors. "
              "libmemcached's point counts depend on every member, so its removals "
              "can move keys between survivors too.</p>");
}

/* The removals of each scheme in one row. */
static an_table *summary_table(const an_run *r, const shrink_summary *ss,
                               uint32_t steps)
{
    an_table *t = an_table_for(AN_TABLE_SHRINK_SUMMARY,
                               "2. Shrink in brief: the %u removals of each scheme",
                               (unsigned)steps);
    for (int s = 0; t != NULL && s < AN_SCHEMES; s++) {
        const shrink_summary *x = &ss[s];
        if (an_table_add(t, "tnnnnnin", r->label[s], x->fig.ratio_min, x->fig.ratio_max,
                         x->total_moved, x->between_others, x->fig.parties_frac_min,
                         (long long)x->fig.parties_max, x->fig.largest) != 0) {
            an_table_free(t);
            return NULL;
        }
    }
    return t;
}

static void charts(an_run *r)
{
    an_series sr[AN_SCHEMES + 2];
    char xs[AN_SCHEMES][32];
    sr[0] = (an_series){"shrink.csv", "2", "$6", r->label[0], AN_REFERENCE_STYLE,
                        AN_REFERENCE_COLOUR, "fair share 1/N"};
    sr[1] = (an_series){NULL, "0", NULL, NULL, "lines dt 2 lw 2", "#555555",
                        "claimed: no data moves"};
    an_scheme_series(r, sr + 2, "shrink.csv", 2, "$7", false, xs);
    an_report_chart(r->report, &(an_chart){
        "shrink_moved",
        "Share moved by each removal: the leaver's share, not the zero the DCH description claims",
        "removal", "share of the hash space",
        "set yrange [-0.01:*]\n", sr, AN_SCHEMES + 2});
    /* At most the N-1 survivors can receive; DCH reaches them all, as do
     * the 160-point rings mostly, so those are drawn apart. */
    sr[0] = (an_series){"shrink.csv", "2", "$3 - 1", r->label[0], AN_REFERENCE_STYLE,
                        AN_REFERENCE_COLOUR, "all N-1 survivors"};
    an_scheme_series(r, sr + 1, "shrink.csv", 2, "$10", true, xs);
    an_report_chart(r->report, &(an_chart){
        "shrink_receivers",
        "Survivors that receive part of the leaver's share, against the N-1 that can "
        "(ring-160 and libmemcached drawn slightly left and right, so that schemes "
        "on N-1 all show)",
        "removal", "receivers", "set yrange [0:*]\n", sr,
        AN_SCHEMES + 1});
}

int an_section_shrink(an_run *r)
{
    const uint32_t steps = r->opt.nodes - r->opt.shrink_to;
    uint32_t *order = an_removal_order(r, STREAM_SHRINK, 1, steps);
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
    intro(&h, r, ss);
    an_table *brief = summary_table(r, ss, steps);
    if (an_section_two_tables(r, "shrink", &h, brief, t) != DCH_OK)
        return DCH_ENOMEM;
    charts(r);
    return DCH_OK;
}
