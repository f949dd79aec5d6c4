/* SPDX-License-Identifier: MIT */
/*
 * 3. Weights: one member of the grown schemes is raised, lowered, drained
 * and restored; each change's moved share against the change of its target
 * share, what must move.
 */
#include "sections.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const uint32_t WEIGHT_STEPS[] = {2, 4, 1, 0, 1};
#define WEIGHT_NSTEPS (sizeof WEIGHT_STEPS / sizeof WEIGHT_STEPS[0])

/* The sum of the scheme's weights. */
static int total_weight(const an_scheme *sc, double *out)
{
    uint32_t limit = an_scheme_id_limit(sc);
    uint32_t *weights = malloc((limit ? limit : 1) * sizeof *weights);
    if (weights == NULL)
        return DCH_ENOMEM;
    an_scheme_weights(sc, weights);
    double total = 0.0;
    for (uint32_t i = 0; i < limit; i++)
        total += weights[i];
    free(weights);
    *out = total;
    return DCH_OK;
}

/* Change `name`'s weight to w1 and add its row; *ratio is moved/optimal. */
static int weigh_step(an_step *st, an_table *t, const char *label,
                      const char *name, uint32_t w1, double *ratio)
{
    uint32_t id;
    double total0;
    int rc = an_scheme_find(&st->sc, name, &id);
    if (rc == DCH_OK)
        rc = total_weight(&st->sc, &total0);
    const uint32_t w0 = rc == DCH_OK ? an_scheme_weight(&st->sc, id) : 0;
    if (rc == DCH_OK)
        rc = an_step_apply(st, AN_OP_WEIGHT, name, w1);
    if (rc != DCH_OK)
        return rc;
    const double total1 = total0 - w0 + w1;
    const double target0 = w0 / total0, target1 = total1 > 0 ? w1 / total1 : 0;
    const double optimal = fabs(target1 - target0);
    *ratio = optimal > 0 ? st->mv.moved / optimal : NAN;
    char change[96];
    snprintf(change, sizeof change, "%s %u->%u", name, (unsigned)w0, (unsigned)w1);
    return an_table_add(t, "ttnnnnnnnnn", label, change, st->share_before,
                        an_share_of(&st->ranges, id), target1, st->mv.moved,
                        optimal, *ratio, st->mv.moved_other, st->sampled,
                        st->z) == 0
               ? DCH_OK
               : DCH_ENOMEM;
}

static int weigh_one(an_run *r, int s, an_table *t, double *max_ratio,
                     double *between)
{
    char name[64];
    an_node_name(name, sizeof name, an_name_width(r->opt.nodes), 1);
    an_step st;
    int rc = an_step_begin_grown(&st, r, s, AN_PHASE_WEIGHTS);
    *max_ratio = 0.0;
    *between = 0.0;
    for (size_t k = 0; k < WEIGHT_NSTEPS && rc == DCH_OK; k++) {
        double ratio;
        rc = weigh_step(&st, t, r->label[s], name, WEIGHT_STEPS[k], &ratio);
        if (rc != DCH_OK)
            break;
        if (ratio > *max_ratio)
            *max_ratio = ratio;
        *between += st.mv.moved_other;
    }
    an_step_end(&st, NULL);
    return rc == DCH_OK ? DCH_OK : an_fail("weights", rc);
}

int an_section_weights(an_run *r)
{
    an_table *t = an_table_for(AN_TABLE_WEIGHTS,
                               "3. Weights: one member of %u raised, lowered, "
                               "drained and restored",
                               (unsigned)r->opt.nodes);
    double ratio[AN_SCHEMES], between[AN_SCHEMES];
    int rc = t != NULL ? DCH_OK : an_fail("weights", DCH_ENOMEM);
    for (int s = 0; s < AN_SCHEMES && rc == DCH_OK; s++) {
        an_table_gap(t);
        rc = weigh_one(r, s, t, &ratio[s], &between[s]);
    }
    if (rc != DCH_OK) {
        an_table_free(t);
        return rc;
    }
    bool others = false; /* keys moved between other members, but in libmemcached */
    for (int k = 0; k < 3; k++)
        others = others || between[k] > 0.0;
    an_buf h = {0};
    an_buf_printf(&h,
              "<p class=\"lead\">On the %u nodes of section 1 (all of weight 1), "
              "node-01's weight goes 1 &rarr; 2 &rarr; 4 &rarr; 1 &rarr; 0 &rarr; 1, "
              "and each change's moved share is compared with the optimum, the "
              "change of its target share. DCH moves at most %.4f times the optimum; "
              "a ring moves "
              "only the arcs of the points it adds or drops, so %s comes close and "
              "the plain ring misses by up to %.1f times. %s</p>"
              "<p><b>How to read it.</b> The <i>target</i> share is the member's "
              "weight over the sum of weights, and the <i>optimal</i> move the "
              "change of that target (DCH moves whole slots, so it can differ by a "
              "fraction of one). The ring gives a member of weight w w times its "
              "points per weight: ring-1 at weight 2 has two points. <i>between "
              "others</i> is the share that moved between two other members.</p>",
              (unsigned)r->opt.nodes,
              ratio[0], r->label[1], ratio[2],
              others ? "Some keys moved between the other members."
                     : "No scheme but libmemcached, whose point counts depend on "
                       "every member's weight, moves keys between the other members.");
    rc = an_section_begin(r, "weights", an_buf_str(&h));
    an_buf_free(&h);
    if (rc != 0 || an_report_table(r->report, t) != 0)
        return an_fail("weights", DCH_ENOMEM);
    return DCH_OK;
}
