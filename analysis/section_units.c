/* SPDX-License-Identifier: MIT */
/*
 * 3b. Weights within each unit: under unequal weights, how far a member's
 * count of slots in one unit lies from its share of that unit, S*w/W, over
 * every member and every unit of the map. The map promises a global bound
 * (|slots - P*w/W| < 2) and pursues per-unit slices inside it; this section
 * measures what the slices are, through the public API only
 * (dch_map_slot_owner, dch_map_node_weight).
 */
#include "sections.h"

#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The seeded stream of the weights and histories drawn here. */
#define STREAM_UNITS UINT64_C(0x756e6974732d3362)

/* The deviations are counted in these bins (slots): [0, 0.5), [0.5, 1), ... */
static const double BIN_EDGE[] = {0.5, 1.0, 2.0, 4.0, 8.0};
#define NBINS 6

/* A mix of weights: `members` joins with weights drawn from lo .. hi (or
 * alternating lo and hi), then `calls` seeded joins, removals and weight
 * changes. */
typedef struct mix {
    const char *name;
    uint32_t members;
    uint32_t lo, hi;
    bool alternate;
    uint32_t calls;
} mix;

static const mix MIXES[] = {
    {"1 and 4 alternating", 26, 1, 4, true, 0},
    {"1 .. 64 seeded", 26, 1, 64, false, 0},
    {"0 .. 16 over 120 calls", 8, 1, 16, false, 120},
};
#define NMIXES (sizeof MIXES / sizeof MIXES[0])

/* What one map's per-unit deviations came to. */
typedef struct unit_stats {
    uint32_t members, weight_sum;
    double global_max;
    double max, p99, mean;
    double bin[NBINS]; /* share of (member, unit) pairs in each bin */
} unit_stats;

/* One seeded call of a history: a join, a removal or a new weight. */
static int random_call(dch_map *m, uint64_t *rng, uint32_t *next, const mix *x)
{
    const uint32_t n = dch_map_node_count(m), r = dch__rng_below(rng, 4);
    char name[32];
    if (n < 2 || r < 2) {
        snprintf(name, sizeof name, "node-%02u", (unsigned)++*next);
        return dch_map_add_node(m, name, x->lo + dch__rng_below(rng, x->hi - x->lo + 1),
                                NULL);
    }
    uint32_t k = dch__rng_below(rng, n), id = 0;
    for (; id < dch_map_id_limit(m); id++)
        if (dch_map_node_name(m, id) != NULL && k-- == 0)
            break;
    if (r == 2)
        return dch_map_remove_node(m, id);
    return dch_map_set_weight(m, id, dch__rng_below(rng, x->hi + 1));
}

/* The map of mix x under config (units, S). */
static int build(const an_run *r, const mix *x, uint32_t units, uint32_t S,
                 dch_map **out)
{
    dch_map_config cfg;
    dch_map_config_default(&cfg);
    cfg.units = units;
    cfg.slots_per_unit = S;
    memcpy(cfg.hash_key, r->hash_key, sizeof cfg.hash_key);
    dch_map *m = NULL;
    int rc = dch_map_new(&m, &cfg);
    uint64_t rng = r->opt.seed ^ STREAM_UNITS;
    uint32_t next = 0;
    for (uint32_t i = 0; i < x->members && rc == DCH_OK; i++) {
        char name[32];
        snprintf(name, sizeof name, "node-%02u", (unsigned)++next);
        uint32_t w = x->alternate ? (i % 2 ? x->hi : x->lo)
                                  : x->lo + dch__rng_below(&rng, x->hi - x->lo + 1);
        rc = dch_map_add_node(m, name, w, NULL);
    }
    for (uint32_t i = 0; i < x->calls && rc == DCH_OK; i++)
        rc = random_call(m, &rng, &next, x);
    if (rc != DCH_OK) {
        dch_map_free(m);
        return rc;
    }
    *out = m;
    return DCH_OK;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Max, p99, mean and bins of the deviations dev[0 .. n-1] (sorted here). */
static void summarise(double *dev, size_t n, unit_stats *st)
{
    qsort(dev, n, sizeof *dev, cmp_double);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += dev[i];
        size_t b = 0;
        while (b < NBINS - 1 && dev[i] >= BIN_EDGE[b])
            b++;
        st->bin[b] += 1.0 / (double)n;
    }
    st->max = dev[n - 1];
    st->p99 = dev[(size_t)ceil(0.99 * (double)n) - 1];
    st->mean = sum / (double)n;
}

/* Every member's count in every unit, against S*w/W. */
static int measure(const dch_map *m, uint32_t S, unit_stats *st)
{
    const uint32_t P = dch_map_slot_count(m), U = P / S;
    const uint32_t limit = dch_map_id_limit(m), W = dch_map_total_weight(m);
    *st = (unit_stats){.members = dch_map_node_count(m), .weight_sum = W};
    uint32_t *count = calloc((size_t)limit * U + 1, sizeof *count);
    double *dev = malloc(((size_t)st->members * U + 1) * sizeof *dev);
    if (count == NULL || dev == NULL || W == 0) {
        free(count);
        free(dev);
        return W == 0 ? DCH_EINVAL : DCH_ENOMEM;
    }
    for (uint32_t s = 0; s < P; s++) {
        uint32_t o = dch_map_slot_owner(m, s);
        if (o < limit)
            count[(size_t)o * U + s / S]++;
    }
    size_t n = 0;
    for (uint32_t id = 0; id < limit; id++) {
        if (dch_map_node_name(m, id) == NULL)
            continue;
        const double w = dch_map_node_weight(m, id);
        double slots = 0.0;
        for (uint32_t u = 0; u < U; u++) {
            const uint32_t c = count[(size_t)id * U + u];
            slots += c;
            dev[n++] = fabs(c - (double)S * w / W);
        }
        st->global_max = fmax(st->global_max, fabs(slots - (double)P * w / W));
    }
    summarise(dev, n, st);
    free(count);
    free(dev);
    return DCH_OK;
}

static void row(an_table *t, uint32_t S, uint32_t units, const mix *x,
                const unit_stats *st)
{
    an_table_add(t, "iitiinnnnnnnnnn", (long long)S, (long long)units, x->name,
                 (long long)st->members, (long long)st->weight_sum,
                 st->global_max, st->max, st->p99, st->mean, st->bin[0],
                 st->bin[1], st->bin[2], st->bin[3], st->bin[4], st->bin[5]);
}

/* The configs measured: the run's, and S = 8 with the same P. */
static size_t configs(const an_run *r, uint32_t units[2], uint32_t S[2])
{
    const uint32_t P = r->opt.units * r->opt.slots;
    units[0] = r->opt.units;
    S[0] = r->opt.slots;
    if (r->opt.slots == 8 || P < 8)
        return 1;
    units[1] = P / 8;
    S[1] = 8;
    return 2;
}

static void intro(an_buf *h, const uint32_t *units, const uint32_t *S,
                  size_t nc, const double *worst)
{
    const double most = nc > 1 ? fmax(worst[0], worst[1]) : worst[0];
    an_buf_printf(h,
        "<p class=\"lead\">Under unequal weights this section measures how far "
        "each member's slots in each unit are from its share of that unit, "
        "S&middot;w/W slots, for three mixes of weights (%u units of %u slots",
        (unsigned)units[0], (unsigned)S[0]);
    if (nc > 1)
        an_buf_printf(h, ", and the same P as %u units of %u slots",
                      (unsigned)units[1], (unsigned)S[1]);
    an_buf_printf(h,
        "). The map promises each member only its global share, to within 2 "
        "slots, and pursues the per-unit shares inside that promise; %s</p>",
        most < 2.0 ? "in these mixes no member was 2 slots or more off its share "
                     "of any unit."
                   : "in these mixes some member was 2 slots or more off its "
                     "share of a unit.");
    an_buf_printf(h,
        "<p><b>How to read it.</b> Each row builds one map through the public "
        "API and reads every slot's owner (dch_map_slot_owner). Over all "
        "(member, unit) pairs the table gives the largest deviation |slots in the "
        "unit &minus; S&middot;w/W|, the 99th percentile and the mean, and the "
        "share of pairs in each band of deviation; <i>global max</i> is |slots "
        "&minus; P&middot;w/W| over the members, the promise's own measure. "
        "Counts are whole slots, so a deviation below 1 is rounding. <i>unit "
        "max</i> bounds every member in every unit, and <i>unit p99</i> beside it "
        "says whether that worst is typical or rare.</p>");
}

int an_section_units(an_run *r)
{
    uint32_t units[2], S[2];
    const size_t nc = configs(r, units, S);
    an_table *t = an_table_for(AN_TABLE_UNITS,
                               "3b. Unequal weights: |slots of a member in a "
                               "unit - S*w/W| over every member and unit");
    if (t == NULL)
        return an_fail("units", DCH_ENOMEM);
    double worst[2] = {0.0, 0.0};
    int rc = DCH_OK;
    an_progress p;
    an_progress_begin(&p, "weights within units");
    for (size_t c = 0; c < nc && rc == DCH_OK; c++) {
        an_table_gap(t);
        for (size_t k = 0; k < NMIXES && rc == DCH_OK; k++) {
            dch_map *m = NULL;
            unit_stats st;
            rc = build(r, &MIXES[k], units[c], S[c], &m);
            if (rc == DCH_OK)
                rc = measure(m, S[c], &st);
            dch_map_free(m);
            if (rc == DCH_OK) {
                row(t, S[c], units[c], &MIXES[k], &st);
                worst[c] = fmax(worst[c], st.max);
            }
            an_progress_update(&p, MIXES[k].name, (double)(c * NMIXES + k + 1),
                               (double)(nc * NMIXES));
        }
    }
    an_progress_end(&p);
    if (rc != DCH_OK) {
        an_table_free(t);
        return an_fail("units", rc);
    }
    an_buf h = {0};
    intro(&h, units, S, nc, worst);
    rc = an_section_begin(r, "units", an_buf_str(&h));
    an_buf_free(&h);
    if (rc != 0 || an_report_table(r->report, t) != 0)
        return an_fail("units", DCH_ENOMEM);
    return DCH_OK;
}
