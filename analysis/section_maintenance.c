/* SPDX-License-Identifier: MIT */
/*
 * 8. Maintenance: one member of the grown schemes goes out of service and
 * comes back (or is removed after all), three ways: a drain and its undrain,
 * a drain and then the member's removal, and a weight of 0 and back to its
 * weight. A ring has no drain: there a drain is the member's removal and an
 * undrain its join again under the same name, so "drain then remove" is a
 * single removal. Each row gives the share of the hash space (of the keys)
 * that moved out with the first change and back with the second, what moved
 * between two other members, and how far the end is from its target: the
 * start for a member that came back, a plain removal for one that left.
 * docs/analysis.md ("Maintenance") reads the figures.
 */
#include "sections.h"

#include <stdio.h>

/* One way through a maintenance: two changes of the member, and what the
 * end should equal. */
typedef struct maint_case {
    const char *label;
    an_op first, second;
    uint32_t first_weight; /* for AN_OP_WEIGHT; the second gives back the old one */
    bool to_removal;       /* the target is the member's removal, else the start */
} maint_case;

static const maint_case CASES[] = {
    {"drain then undrain", AN_OP_DRAIN, AN_OP_UNDRAIN, 0, false},
    {"drain then remove", AN_OP_DRAIN, AN_OP_REMOVE, 0, true},
    {"weight 0 then back", AN_OP_WEIGHT, AN_OP_WEIGHT, 0, false},
};
#define NCASES (sizeof CASES / sizeof CASES[0])

/* What one case moved. */
typedef struct maint_figures {
    double share, out, back, between, off;
} maint_figures;

/* The share of the hash space whose owner differs, by name, between a and b. */
static int off_target(const an_scheme *a, const an_scheme *b, double *off)
{
    an_changes ch = {NULL, 0, 0};
    an_moves mv;
    const uint32_t la = an_scheme_id_limit(a), lb = an_scheme_id_limit(b);
    int rc = an_scheme_diff(&ch, a, b, NULL, NULL);
    if (rc == DCH_OK)
        rc = an_moves_of(&ch, la > lb ? la : lb, DCH_NODE_NONE, &mv);
    an_changes_free(&ch);
    if (rc == DCH_OK)
        *off = mv.moved;
    return rc;
}

/* The target of case c: the grown scheme, or it without `name`. */
static int target_of(const an_run *r, int s, const maint_case *c, const char *name,
                     an_scheme *out)
{
    uint32_t id;
    int rc = an_scheme_clone(out, &r->grown[s]);
    if (rc == DCH_OK && c->to_removal)
        rc = an_scheme_apply(out, AN_OP_REMOVE, name, 0, &id);
    return rc;
}

/* The two changes of case c on a copy of the grown scheme s. */
static int run_case(an_run *r, int s, const maint_case *c, const char *name, maint_figures *f)
{
    an_step st;
    uint32_t id = 0;
    int rc = an_step_begin_grown(&st, r, s, AN_PHASE_MAINTENANCE);
    if (rc == DCH_OK)
        rc = an_scheme_find(&st.sc, name, &id);
    const uint32_t weight = rc == DCH_OK ? an_scheme_weight(&st.sc, id) : 0;
    *f = (maint_figures){0};
    if (rc == DCH_OK) {
        f->share = an_share_of(&st.ranges, id);
        rc = an_step_apply(&st, c->first, name, c->first_weight);
    }
    if (rc == DCH_OK) {
        f->out = st.mv.moved;
        f->between = st.mv.moved_other;
    }
    /* A ring's drain was the removal: there is nothing left to remove. */
    const bool second = !(c->second == AN_OP_REMOVE && st.sc.ring != NULL);
    if (rc == DCH_OK && second)
        rc = an_step_apply(&st, c->second, name, weight);
    if (rc == DCH_OK && second) {
        f->back = st.mv.moved;
        f->between += st.mv.moved_other;
    }
    an_scheme target = {0};
    if (rc == DCH_OK)
        rc = target_of(r, s, c, name, &target);
    if (rc == DCH_OK)
        rc = off_target(&target, &st.sc, &f->off);
    an_scheme_free(&target);
    an_step_end(&st, NULL);
    return rc;
}

/* The lead paragraph, from DCH's figures (row 0 of each case) and the
 * ring's (the ring-160 row). */
static void lead(an_buf *h, const an_run *r, maint_figures f[AN_SCHEMES][NCASES])
{
    an_buf_printf(h,
                  "<p class=\"lead\">One of the %u nodes of section 1 (node-01, all of "
                  "weight 1) goes out of service and comes back. A DCH drain moves "
                  "its share out (%.5f of the keys) and its undrain moves exactly "
                  "that back: the map ends %s it began. A drain followed by the "
                  "member's removal moves %.5f the second time, so the removal costs "
                  "nothing more than its drain. A weight of 0 and back moves as much "
                  "out and in, but the member comes back to other slots: %.5f of the "
                  "keys end on another member than at the start, the data it kept "
                  "is no longer its own, and a second migration follows. The %s, "
                  "where a drain is the member's removal and its return a join under "
                  "the same name, ends where it began too (%.5f off), and so does "
                  "its weight 0 and back: a ring's points are a function of the "
                  "member's name and weight.</p>",
                  (unsigned)r->opt.nodes, f[0][0].out,
                  f[0][0].off == 0.0 ? "exactly where" : "away from where", f[0][1].back,
                  f[0][2].off, r->label[1], f[1][0].off);
    an_buf_printf(h,
                  "<p><b>How to read it.</b> Shares are of the hash space, that is of "
                  "the keys, and exact (from the library's diff by member name). "
                  "<i>out</i> is what the first change moved, <i>back</i> the second, "
                  "<i>between others</i> what either moved between two members other "
                  "than node-01 (0: no bystander is disturbed). <i>off target</i> is "
                  "the share owned at the end by another member than in the target: "
                  "the start when the member comes back, the member's plain removal "
                  "when it leaves. The ring's drain is its removal, so its \"drain then "
                  "remove\" is one removal and its second step moves nothing.</p>");
}

int an_section_maintenance(an_run *r)
{
    an_table *t = an_table_for(AN_TABLE_MAINTENANCE,
                               "8. Maintenance: one member of %u out of service and back",
                               (unsigned)r->opt.nodes);
    int rc = t != NULL ? DCH_OK : DCH_ENOMEM;
    char name[64];
    an_node_name(name, sizeof name, an_name_width(r->opt.nodes), 1);
    maint_figures f[AN_SCHEMES][NCASES];
    for (int s = 0; s < AN_SCHEMES && rc == DCH_OK; s++) {
        an_table_gap(t);
        for (size_t k = 0; k < NCASES && rc == DCH_OK; k++) {
            rc = run_case(r, s, &CASES[k], name, &f[s][k]);
            const maint_figures *x = &f[s][k];
            if (rc == DCH_OK && an_table_add(t, "ttnnnnnn", r->label[s], CASES[k].label,
                                             x->share, x->out, x->back, x->out + x->back,
                                             x->between, x->off) != 0)
                rc = DCH_ENOMEM;
        }
    }
    if (rc != DCH_OK) {
        an_table_free(t);
        return an_fail("maintenance", rc);
    }
    an_buf h = {0};
    lead(&h, r, f);
    rc = an_section_begin(r, "maintenance", an_buf_str(&h));
    an_buf_free(&h);
    if (rc != 0 || an_report_table(r->report, t) != 0)
        return an_fail("maintenance", DCH_ENOMEM);
    return DCH_OK;
}
