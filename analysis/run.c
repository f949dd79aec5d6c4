/* SPDX-License-Identifier: MIT */
/*
 * A run of the built-in scenario: its setup (schemes, hash key, sampled
 * keys) and the helpers every section uses. The order of operations is fixed
 * (names in order, removals and client views drawn from seeded streams), so
 * a run is a pure function of its options.
 */
#include "sections.h"

#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const an_scheme_colour[AN_SCHEMES] = {"#d62728", "#1f77b4",
                                                  "#2ca02c", "#ff7f0e"};
/* Filled circle, square, triangle and diamond. */
const char *const an_scheme_style[AN_SCHEMES] = {
    "linespoints pt 7 ps 0.7 lw 2", "linespoints pt 5 ps 0.7 lw 2",
    "linespoints pt 9 ps 0.8 lw 2", "linespoints pt 13 ps 0.9 lw 2"};
const int an_scheme_draw_order[AN_SCHEMES] = {1, 3, 2, 0};

void an_scheme_series(const an_run *r, an_series *sr, const char *file,
                      unsigned xcol, const char *y, bool dodge,
                      char xs[AN_SCHEMES][32])
{
    for (int k = 0; k < AN_SCHEMES; k++) {
        const int s = an_scheme_draw_order[k];
        const double shift = !dodge ? 0.0 : s == 1 ? -AN_DODGE : s == 3 ? AN_DODGE : 0.0;
        if (shift == 0.0)
            snprintf(xs[s], sizeof xs[s], "%u", xcol);
        else
            snprintf(xs[s], sizeof xs[s], "($%u %+g)", xcol, shift);
        sr[k] = (an_series){file, xs[s], y, r->label[s], an_scheme_style[s],
                            an_scheme_colour[s], r->label[s]};
    }
}

int an_run_init(an_run *r, const an_options *opt, an_report *report)
{
    memset(r, 0, sizeof *r);
    r->opt = *opt;
    r->report = report;
    /* The cluster's SipHash key comes from the seed, so another seed places
     * ring points (and sampled keys) elsewhere. */
    an_hash_key_of_seed(opt->seed, r->hash_key);
    snprintf(r->label[0], sizeof r->label[0], "dch");
    snprintf(r->label[1], sizeof r->label[1], "ring-%u", (unsigned)opt->points);
    snprintf(r->label[2], sizeof r->label[2], "ring-1");
    snprintf(r->label[3], sizeof r->label[3], "libmemcached");
    for (int i = 0; i < AN_SCHEMES; i++) {
        an_scheme_spec *sp = &r->spec[i];
        sp->label = r->label[i];
        sp->kind = i == 0 ? AN_KIND_MAP : AN_KIND_RING;
        sp->units = opt->units;
        sp->slots_per_unit = opt->slots;
        sp->points = i == 1 ? opt->points : i == 3 ? 160 : 1;
        sp->placement = i == 3 ? DCH_RING_PLACE_KETAMA : DCH_RING_PLACE_SIPHASH;
        memcpy(sp->hash_key, r->hash_key, sizeof sp->hash_key);
    }
    an_progress p;
    an_progress_begin(&p, "hashing sampled keys");
    int rc = an_keys_sorted(&r->keys, opt->keys, r->hash_key);
    an_progress_end(&p);
    if (rc != DCH_OK)
        return an_fail("sampled keys", rc);
    r->own_before = malloc(opt->keys * sizeof *r->own_before);
    r->own_after = malloc(opt->keys * sizeof *r->own_after);
    if (r->own_before == NULL || r->own_after == NULL)
        return an_fail("sampled keys", DCH_ENOMEM);
    return DCH_OK;
}

void an_run_free(an_run *r)
{
    for (int i = 0; i < AN_SCHEMES; i++)
        an_scheme_free(&r->grown[i]);
    free(r->keys);
    free(r->own_before);
    free(r->own_after);
    r->keys = NULL;
    r->own_before = r->own_after = NULL;
}

int an_fail(const char *what, int rc)
{
    fprintf(stderr, "dch-analysis: %s: %s\n", what, dch_strerror(rc));
    return rc;
}

const char *an_parties_phrase(const an_change_figures *f, const char *const words[3])
{
    return f->parties_frac_min >= 1.0 ? words[0] : f->parties_max <= 1 ? words[1] : words[2];
}

uint32_t *an_removal_order(const an_run *r, uint64_t stream, uint32_t first,
                           uint32_t count)
{
    const uint32_t nodes = r->opt.nodes;
    uint32_t *left = malloc(nodes * sizeof *left);
    uint32_t *order = malloc((count ? count : 1) * sizeof *order);
    if (left == NULL || order == NULL) {
        free(left);
        free(order);
        return NULL;
    }
    for (uint32_t i = 0; i < nodes; i++)
        left[i] = first + i;
    uint64_t rng = r->opt.seed ^ stream;
    for (uint32_t k = 0, n = nodes; k < count; k++, n--) {
        const uint32_t i = dch__rng_below(&rng, n);
        order[k] = left[i];
        memmove(left + i, left + i + 1, (n - i - 1) * sizeof *left);
    }
    free(left);
    return order;
}

int an_balance_now(const an_scheme *sc, const an_ranges *rs, an_balance *out)
{
    uint32_t limit = an_scheme_id_limit(sc);
    double *share = malloc((limit ? limit : 1) * sizeof *share);
    uint32_t *weight = malloc((limit ? limit : 1) * sizeof *weight);
    int rc = share && weight ? DCH_OK : DCH_ENOMEM;
    if (rc == DCH_OK)
        rc = an_shares(rs, limit, share);
    if (rc == DCH_OK) {
        an_scheme_weights(sc, weight);
        *out = an_balance_of(share, weight, limit);
    }
    free(share);
    free(weight);
    return rc;
}

uint32_t an_position_of(const char *name, const void *list)
{
    const an_name_list *l = list;
    uint32_t at = DCH_NODE_NONE;
    for (uint32_t g = 0; g < l->n; g++)
        if (strcmp(name, l->names[g]) == 0)
            at = g;
    return at;
}

int an_ranges_by_name(const an_scheme *sc, const char *const *names,
                      uint32_t nnames, an_ranges *out)
{
    const an_name_list l = {names, nnames};
    return an_scheme_ranges_named(sc, an_position_of, &l, out);
}

an_change_figures an_change_figures_none(void)
{
    return (an_change_figures){INFINITY, 0.0, INFINITY, 0, 0.0};
}

/* Comparisons rather than fmin/fmax keep a NaN out of every figure. */
void an_change_figures_add(an_change_figures *f, double ratio, double frac,
                           uint32_t parties, double largest)
{
    if (ratio < f->ratio_min)
        f->ratio_min = ratio;
    if (ratio > f->ratio_max)
        f->ratio_max = ratio;
    if (frac < f->parties_frac_min)
        f->parties_frac_min = frac;
    if (parties > f->parties_max)
        f->parties_max = parties;
    if (largest > f->largest)
        f->largest = largest;
}
