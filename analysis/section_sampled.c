/* SPDX-License-Identifier: MIT */
/*
 * 6. Sampled keys: how the lookups of sampled keys before and after every
 * step of growth, shrink, weights and maintenance agreed with the exact
 * range figures.
 */
#include "sections.h"

#include <stdio.h>

int an_section_sampled(an_run *r)
{
    static const char *const phase_name[AN_PHASES] = {"growth", "shrink", "weights",
                                                      "maintenance"};
    an_table *t = an_table_for(AN_TABLE_SAMPLED,
                               "6. Sampled keys against the exact range figures");
    if (t == NULL)
        return an_fail("sampled", DCH_ENOMEM);
    double worst = 0.0;
    size_t steps = 0, mismatched = 0;
    for (int s = 0; s < AN_SCHEMES; s++) {
        an_table_gap(t);
        for (int ph = 0; ph < AN_PHASES; ph++) {
            const an_sample_stats *st = &r->stats[s][ph];
            an_table_add(t, "ttiinii", r->label[s], phase_name[ph],
                         (long long)st->steps, (long long)r->opt.keys,
                         st->max_abs_z, (long long)st->mismatched,
                         (long long)st->moved_other);
            if (st->max_abs_z > worst)
                worst = st->max_abs_z;
            steps += st->steps;
            mismatched += st->mismatched;
        }
    }
    an_buf h = {0};
    an_buf_printf(&h,
              "<p class=\"lead\">Every figure above is exact, from ownership ranges; "
              "%zu sampled keys looked up before and after every step of sections 1 "
              "to 3 and 8 confirm them. Over the %zu steps the sampled moved share stayed "
              "within %.2f standard errors of the exact one, and %s.</p>"
              "<p><b>How to read it.</b> The keys (\"key-0\", \"key-1\", ...) are "
              "hashed with the cluster's SipHash key and looked up with "
              "dch_map_lookup_hash / dch_ring_lookup_hash. The sampled moved share "
              "is a binomial estimate of the exact one: z is their difference in "
              "standard errors, sqrt(p(1&minus;p)/keys), which should mostly lie "
              "within &plusmn;2 (its largest absolute value over many steps grows "
              "slowly, about 3 over a hundred steps). <i>Keys off the plan</i> "
              "counts keys whose move disagrees with the range diff (moved outside "
              "a changed range, or to another owner than the diff says); it must "
              "be 0.</p>",
              r->opt.keys, steps, worst,
              mismatched == 0 ? "no key moved anywhere the plan did not say"
                              : "some keys moved where the plan did not say");
    int rc = an_section_begin(r, "sampled", an_buf_str(&h));
    an_buf_free(&h);
    if (rc != 0 || an_report_table(r->report, t) != 0)
        return an_fail("sampled", DCH_ENOMEM);
    return DCH_OK;
}
