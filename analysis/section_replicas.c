/* SPDX-License-Identifier: MIT */
/*
 * 7. Replicas: three copies of every key in three or four zones, under the
 * DCH map (config.replicas = 3, members added in zones) and under the
 * classic ring's two usual placements: the next three distinct members
 * clockwise from the key (dch_ring_successors_hash), and the zone-aware walk
 * that passes over members of a zone already used. Each scheme grows from
 * one member to --nodes and shrinks by a seeded draw; every state's copies
 * are compared exactly with the state before, and the first leaver is also
 * read as a failure: who serves its reads, and who makes its new copies.
 *
 * Copies are kept as pieces of the hash space, each with its copy list:
 * DCH's slots, or the ring's ranges (a ring range has one copy list
 * throughout, since two points of one owner with nothing between them
 * start the same walk). Members are numbered by name, node-01 as 0, so two
 * states compare whatever ids the objects gave; member i is in zone
 * i mod Z, for the map and for the ring's zone walk alike.
 */
#include "sections.h"

#include "progress.h"
#include "replica_figures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Members the zone walk reads before it asks for the whole ring: with Z >= 3
 * zones of similar size the first eight nearly always hold three zones. */
#define WALK_FIRST 8u
/* The seeded stream of the removal order. */
#define STREAM_REPLICAS UINT64_C(0x7265706c69636173)

enum { S_DCH, S_NEXT, S_ZONES, SCHEMES };
/* The text reads case 0 as 3 zones (every zone full with 3 copies) and
 * case 1 as 4 zones. */
static const unsigned ZONE_COUNTS[] = {3, 4};
#define ZONE_CASES (sizeof ZONE_COUNTS / sizeof ZONE_COUNTS[0])
#define CASES (ZONE_CASES * SCHEMES)

/* One scheme under one zone count: the object and how it places copies. */
typedef struct subject {
    int scheme;
    unsigned zones;
    dch_map *map;   /* S_DCH */
    dch_ring *ring; /* S_NEXT, S_ZONES */
    uint32_t *walk; /* S_ZONES: room for a walk over every member */
    size_t walk_cap;
} subject;

static uint32_t number_of(const subject *sj, uint32_t id)
{
    const char *name = sj->map ? dch_map_node_name(sj->map, id)
                               : dch_ring_node_name(sj->ring, id);
    return name ? an_node_number(name) : DCH_NODE_NONE;
}

static int snap_map(const subject *sj, an_placement *p)
{
    const uint32_t slots = dch_map_slot_count(sj->map);
    unsigned bits = 0;
    while ((UINT32_C(1) << bits) < slots)
        bits++;
    for (uint32_t s = 0; s < slots; s++) {
        uint32_t ids[DCH_MAP_MAX_REPLICAS];
        size_t n = dch_map_slot_replicas(sj->map, s, ids, AN_COPIES);
        n = n < AN_COPIES ? n : AN_COPIES;
        for (size_t k = 0; k < n; k++)
            ids[k] = number_of(sj, ids[k]);
        const uint64_t lo = bits ? (uint64_t)s << (64 - bits) : 0;
        const uint64_t hi = s + 1 == slots ? UINT64_MAX
                                           : ((uint64_t)(s + 1) << (64 - bits)) - 1;
        if (an_placement_push(p, lo, hi, ids, n) != DCH_OK)
            return DCH_ENOMEM;
    }
    return DCH_OK;
}

static int snap_ring(subject *sj, an_placement *p)
{
    size_t count = 0;
    (void)dch_ring_ranges(sj->ring, NULL, 0, &count);
    dch_range *rs = malloc((count ? count : 1) * sizeof *rs);
    if (rs == NULL || dch_ring_ranges(sj->ring, rs, count, &count) != DCH_OK) {
        free(rs);
        return DCH_ENOMEM;
    }
    int rc = DCH_OK;
    for (size_t i = 0; i < count && rc == DCH_OK; i++) {
        uint32_t walk[WALK_FIRST], ids[AN_COPIES];
        size_t n = 0;
        if (sj->scheme == S_NEXT) {
            n = dch_ring_successors_hash(sj->ring, rs[i].lo, walk, AN_COPIES);
            memcpy(ids, walk, n * sizeof *ids);
        } else {
            size_t w = dch_ring_successors_hash(sj->ring, rs[i].lo, walk, WALK_FIRST);
            for (size_t k = 0; k < w; k++)
                walk[k] = number_of(sj, walk[k]);
            n = an_pick_zones(walk, w, w < WALK_FIRST, sj->zones, ids);
            if (n == 0 && w > 0) {
                w = dch_ring_successors_hash(sj->ring, rs[i].lo, sj->walk, sj->walk_cap);
                for (size_t k = 0; k < w; k++)
                    sj->walk[k] = number_of(sj, sj->walk[k]);
                n = an_pick_zones(sj->walk, w, true, sj->zones, ids);
            }
        }
        if (sj->scheme == S_NEXT)
            for (size_t k = 0; k < n; k++)
                ids[k] = number_of(sj, ids[k]);
        rc = an_placement_push(p, rs[i].lo, rs[i].hi, ids, n);
    }
    free(rs);
    return rc;
}

static int snapshot(subject *sj, an_placement *p)
{
    p->n = 0;
    return sj->map ? snap_map(sj, p) : snap_ring(sj, p);
}

static int subject_add(subject *sj, const char *name, uint32_t number)
{
    if (sj->map == NULL)
        return dch_ring_add_node(sj->ring, name, 1, NULL);
    char zone[32];
    snprintf(zone, sizeof zone, "zone-%u", (unsigned)(number % sj->zones));
    return dch_map_add_node_in_zone(sj->map, name, zone, 1, NULL);
}

static int subject_remove(subject *sj, const char *name)
{
    uint32_t id;
    int rc = sj->map ? dch_map_find_node(sj->map, name, &id)
                     : dch_ring_find_node(sj->ring, name, &id);
    if (rc != DCH_OK)
        return rc;
    return sj->map ? dch_map_remove_node(sj->map, id) : dch_ring_remove_node(sj->ring, id);
}

/* ---- One scheme under one zone count, through growth and shrink -------------- */

_Static_assert(AN_COPIES <= DCH_MAP_MAX_REPLICAS, "the map holds AN_COPIES copies of a slot");

/* What the section's text and summary table say about one case. */
typedef struct case_summary {
    double join_min, join_max;   /* new copies of a join over 3/N */
    double leave_min, leave_max; /* of a removal over the leaver's copies */
    an_state_figs at_n;             /* after growth */
    double violations_max;       /* over every state measured */
    uint32_t failed;             /* the first leaver, read as a failure */
    an_spread read;     /* its reads, to the next copy, before any change */
    an_spread promoted; /* its first copies, once it is removed */
    an_spread recopy;   /* the copies made for it, once it is removed */
} case_summary;

static const char *const SCHEME_LABEL[SCHEMES] = {"dch", "next-3", "zone walk"};

typedef struct case_ctx {
    an_run *r;
    an_table *t;
    const char *label;  /* the case, e.g. "dch 3 zones" */
    const char *scheme; /* its scheme's label */
    unsigned zones;
    uint32_t step;
} case_ctx;

static int step_row(case_ctx *c, const char *phase, uint32_t n_before,
                    uint32_t n_after, const char *member, double moved,
                    double optimum, const an_state_figs *f)
{
    return an_table_add(c->t, "tititiitnnnnnn", c->label, (long long)c->zones,
                        c->scheme, (long long)++c->step, phase,
                        (long long)n_before, (long long)n_after, member, moved,
                        optimum, optimum > 0.0 ? moved / optimum : NAN,
                        f->copy_max, f->copy_min, f->violations) == 0
               ? DCH_OK
               : DCH_ENOMEM;
}

static int subject_new(subject *sj, const an_run *r, int scheme, unsigned zones)
{
    *sj = (subject){scheme, zones, NULL, NULL, NULL, (size_t)r->opt.nodes + 1};
    if (scheme == S_DCH) {
        dch_map_config mc;
        dch_map_config_default(&mc);
        mc.units = r->opt.units;
        mc.slots_per_unit = r->opt.slots;
        memcpy(mc.hash_key, r->hash_key, sizeof mc.hash_key);
        mc.replicas = AN_COPIES;
        return dch_map_new(&sj->map, &mc);
    }
    dch_ring_config gc;
    dch_ring_config_default(&gc);
    gc.points_per_weight = r->opt.points;
    memcpy(gc.hash_key, r->hash_key, sizeof gc.hash_key);
    sj->walk = malloc(sj->walk_cap * sizeof *sj->walk);
    if (sj->walk == NULL)
        return DCH_ENOMEM;
    return dch_ring_new(&sj->ring, &gc);
}

static void subject_free(subject *sj)
{
    dch_map_free(sj->map);
    dch_ring_free(sj->ring);
    free(sj->walk);
}

/* Work arrays of one case, one entry a member number. */
typedef struct case_work {
    bool *present;
    double *copies, *got;
    an_placement before, after;
} case_work;

static void swap_placements(case_work *w)
{
    an_placement t = w->before;
    w->before = w->after;
    w->after = t;
}

static int grow(case_ctx *c, subject *sj, case_work *w, case_summary *cs)
{
    const uint32_t nodes = c->r->opt.nodes;
    const int width = an_name_width(nodes);
    for (uint32_t n = 1; n <= nodes; n++) {
        char name[64];
        an_node_name(name, sizeof name, width, n);
        int rc = subject_add(sj, name, n - 1);
        if (rc != DCH_OK)
            return rc;
        w->present[n - 1] = true;
        if (n < AN_COPIES)
            continue;
        if ((rc = snapshot(sj, &w->after)) != DCH_OK)
            return rc;
        const an_state_figs f = an_state_of(&w->after, w->present, nodes, c->zones, w->copies);
        cs->violations_max = fmax(cs->violations_max, f.violations);
        cs->at_n = f;
        if (n > AN_COPIES) {
            const double moved = an_new_copies(&w->before, &w->after, NULL, nodes);
            const double opt = (double)AN_COPIES / n;
            cs->join_min = fmin(cs->join_min, moved / opt);
            cs->join_max = fmax(cs->join_max, moved / opt);
            if ((rc = step_row(c, "join", n - 1, n, name, moved, opt, &f)) != DCH_OK)
                return rc;
        }
        swap_placements(w);
    }
    return DCH_OK;
}

/* Removals in `order`; the first is also read as a failure. w->copies holds
 * the copies of the state in w->before, as grow leaves it. */
static int shrink(case_ctx *c, subject *sj, case_work *w, const uint32_t *order,
                  uint32_t removals, case_summary *cs)
{
    const uint32_t nodes = c->r->opt.nodes;
    const int width = an_name_width(nodes);
    for (uint32_t k = 0; k < removals; k++) {
        const uint32_t leaver = order[k];
        char name[64];
        an_node_name(name, sizeof name, width, leaver + 1);
        const double held = w->copies[leaver];
        if (k == 0) {
            cs->failed = leaver;
            an_read_load(&w->before, leaver, nodes, w->got);
            cs->read = an_spread_of(w->got, w->present, nodes, leaver);
        }
        int rc = subject_remove(sj, name);
        if (rc == DCH_OK)
            rc = snapshot(sj, &w->after);
        if (rc != DCH_OK)
            return rc;
        w->present[leaver] = false;
        for (uint32_t i = 0; i < nodes; i++)
            w->got[i] = 0.0;
        const double moved = an_new_copies(&w->before, &w->after, w->got, nodes);
        if (k == 0) {
            cs->recopy = an_spread_of(w->got, w->present, nodes, leaver);
            an_new_primaries(&w->before, &w->after, leaver, w->got, nodes);
            cs->promoted = an_spread_of(w->got, w->present, nodes, leaver);
        }
        const an_state_figs f = an_state_of(&w->after, w->present, nodes, c->zones, w->copies);
        cs->violations_max = fmax(cs->violations_max, f.violations);
        if (held > 0.0) {
            cs->leave_min = fmin(cs->leave_min, moved / held);
            cs->leave_max = fmax(cs->leave_max, moved / held);
        }
        rc = step_row(c, "remove", nodes - k, nodes - k - 1, name, moved, held, &f);
        if (rc != DCH_OK)
            return rc;
        swap_placements(w);
    }
    return DCH_OK;
}

static int run_case(case_ctx *c, int scheme, const uint32_t *order,
                    uint32_t removals, case_summary *cs)
{
    const uint32_t nodes = c->r->opt.nodes;
    *cs = (case_summary){INFINITY, 0.0, INFINITY, 0.0, {0.0, 0.0, 0.0}, 0.0,
                         DCH_NODE_NONE, {NAN, 0}, {NAN, 0}, {NAN, 0}};
    subject sj;
    int rc = subject_new(&sj, c->r, scheme, c->zones);
    case_work w = {calloc(nodes, sizeof(bool)), calloc(nodes, sizeof(double)),
                   calloc(nodes, sizeof(double)), {0}, {0}};
    if (rc == DCH_OK && (w.present == NULL || w.copies == NULL || w.got == NULL))
        rc = DCH_ENOMEM;
    if (rc == DCH_OK)
        rc = grow(c, &sj, &w, cs);
    if (rc == DCH_OK)
        rc = shrink(c, &sj, &w, order, removals, cs);
    an_placement_free(&w.before);
    an_placement_free(&w.after);
    free(w.present);
    free(w.copies);
    free(w.got);
    subject_free(&sj);
    return rc;
}

/* The removal order: a seeded draw among the members still there, as
 * member numbers. */
static uint32_t *removal_order(const an_run *r, uint32_t removals)
{
    const uint32_t nodes = r->opt.nodes;
    uint32_t *left = malloc(nodes * sizeof *left);
    uint32_t *order = malloc((removals ? removals : 1) * sizeof *order);
    if (left == NULL || order == NULL) {
        free(left);
        free(order);
        return NULL;
    }
    for (uint32_t i = 0; i < nodes; i++)
        left[i] = i;
    uint64_t rng = r->opt.seed ^ STREAM_REPLICAS;
    for (uint32_t k = 0, n = nodes; k < removals; k++, n--) {
        uint32_t i = an_rng_below(&rng, n);
        order[k] = left[i];
        memmove(left + i, left + i + 1, (n - i - 1) * sizeof *left);
    }
    free(left);
    return order;
}

/* ---- The page -------------------------------------------------------------------- */

static int summary_row(an_table *t, const char *label, unsigned zones,
                       const char *scheme, const case_summary *cs, int width)
{
    char failed[64] = "-";
    if (cs->failed != DCH_NODE_NONE)
        an_node_name(failed, sizeof failed, width, cs->failed + 1);
    const bool joins = cs->join_max > 0.0, leaves = cs->leave_max > 0.0;
    return an_table_add(t, "tit" "nnnn" "nnn" "t" "ni" "ni" "ni", label, (long long)zones,
                        scheme, joins ? cs->join_min : NAN,
                        joins ? cs->join_max : NAN, leaves ? cs->leave_min : NAN,
                        leaves ? cs->leave_max : NAN, cs->at_n.copy_max,
                        cs->at_n.copy_min, cs->violations_max, failed,
                        cs->read.max_over_mean, (long long)cs->read.receivers,
                        cs->promoted.max_over_mean, (long long)cs->promoted.receivers,
                        cs->recopy.max_over_mean, (long long)cs->recopy.receivers) == 0
               ? DCH_OK
               : DCH_ENOMEM;
}

/* The case of scheme s under ZONE_COUNTS[z]. */
static const case_summary *cs_of(const case_summary *cs, size_t z, int s)
{
    return &cs[z * SCHEMES + (size_t)s];
}

static void intro(an_buf *h, const an_run *r, const case_summary *cs,
                  uint32_t removals)
{
    const char *ring = r->label[1];
    char jr[3][80], lr[80];
    an_buf_printf(h,
              "<p>Every key has %u copies, each on a different member, and members "
              "sit in failure domains (<i>zones</i>); member i is in zone i mod Z, "
              "for Z = 3 and Z = 4. The DCH map keeps the copies of each slot "
              "itself (<code>replicas = %u</code>, members added with "
              "<code>dch_map_add_node_in_zone</code>, copies read with "
              "<code>dch_map_slot_replicas</code>). The classic ring has two usual "
              "recipes, both run on %s: <i>next-3</i>, the next %u distinct members "
              "clockwise from the key (<code>dch_ring_successors_hash</code>), "
              "and the <i>zone walk</i>, which goes on clockwise past members of "
              "a zone already used. Each scheme grows from one member to %u and "
              "then loses %u members chosen by a seeded draw (the same for every "
              "scheme), down to %u. Every state's copies are compared exactly "
              "with the state before it.</p>"
              "<p>Per change (every one in <a href=\"replica_steps.csv\">replica_steps.csv</a>): <i>new copies</i>, the share of the hash space "
              "copied to a member that did not hold it, counted once a copy, "
              "against the optimum: %u/N for a join (the joiner's fair part of "
              "the copies) and the leaver's own copies for a removal. Per state: "
              "copy balance (most and fewest copies of a member over the mean) "
              "and <i>zone violations</i>, the share of the hash space whose "
              "copies sit in fewer zones than they could (min(copies, zones "
              "present)). The first leaver is also read as a failure: who serves "
              "its reads (the next copy of every key it was first for), who holds "
              "the first copies of those keys once it is removed, and who "
              "receives its new copies, each as the largest part over the mean "
              "part of the N&minus;1 survivors, with the number of survivors "
              "that get any.</p>",
              AN_COPIES, AN_COPIES, ring, AN_COPIES, (unsigned)r->opt.nodes, (unsigned)removals,
              (unsigned)(r->opt.nodes - removals), AN_COPIES);
    if (cs_of(cs, 1, S_DCH)->join_max <= 0.0) {
        an_buf_printf(h, "<p><b>In this run.</b> There are too few members "
                         "(--nodes) for more than %u: nothing to measure.</p>", AN_COPIES);
        return;
    }
    for (int s = 0; s < SCHEMES; s++) {
        double lo = INFINITY, hi = 0.0;
        for (size_t z = 0; z < ZONE_CASES; z++) {
            lo = fmin(lo, cs_of(cs, z, s)->join_min);
            hi = fmax(hi, cs_of(cs, z, s)->join_max);
        }
        an_ratio_range(jr[s], sizeof jr[s], lo, hi);
    }
    double llo = INFINITY, lhi = 0.0;
    for (size_t c = 0; c < CASES; c++) {
        llo = fmin(llo, cs[c].leave_min);
        lhi = fmax(lhi, cs[c].leave_max);
    }
    /* Survivors in the failed member's zone, with 3 zones. */
    const uint32_t N = r->opt.nodes;
    uint32_t same_zone = 0;
    for (uint32_t i = 0; i < N; i++)
        same_zone += i != cs[0].failed && i % ZONE_COUNTS[0] == cs[0].failed % ZONE_COUNTS[0];
    if (same_zone == 0)
        same_zone = 1;
    const case_summary *d4 = cs_of(cs, 1, S_DCH), *n4 = cs_of(cs, 1, S_NEXT),
                       *z4 = cs_of(cs, 1, S_ZONES), *d3 = cs_of(cs, 0, S_DCH),
                       *n3 = cs_of(cs, 0, S_NEXT), *z3 = cs_of(cs, 0, S_ZONES);
    an_buf_printf(h,
              "<p><b>In this run.</b> A join created %s times the optimum of new "
              "copies under DCH, %s times for next-3 and %s times for the zone "
              "walk; a removal created %s times the leaver's copies in every "
              "case with copies to lose. A join below 1 saves nothing: %u/N "
              "assumes the joiner may take a full part, but a zone holds at "
              "most one copy of a key when the copies can spread over enough "
              "zones, so a joiner whose zone is already full shares that "
              "zone's copies with its members and takes less. ",
              jr[0], jr[1], jr[2], an_ratio_range(lr, sizeof lr, llo, lhi), AN_COPIES);
    an_buf_printf(h,
              "At %u members with 4 zones the member with the most copies held "
              "%.3f times the mean under DCH, %.3f under next-3 and %.3f under "
              "the zone walk (fewest: %.3f, %.3f, %.3f). Copies shared a zone "
              "when they need not have on at most %.4g of the hash space under "
              "DCH and %.4g under the zone walk, but on up to %.4f (4 zones) and "
              "%.4f (3 zones) under next-3, which does not look at zones. ",
              (unsigned)r->opt.nodes, d4->at_n.copy_max, n4->at_n.copy_max,
              z4->at_n.copy_max, d4->at_n.copy_min, n4->at_n.copy_min,
              z4->at_n.copy_min, fmax(d4->violations_max, d3->violations_max),
              fmax(z4->violations_max, z3->violations_max), n4->violations_max,
              n3->violations_max);
    if (cs[0].failed == DCH_NODE_NONE) {
        an_buf_printf(h, "No member left, so no failure was read.</p>");
        return;
    }
    an_buf_printf(h,
              "When one member fails (4 zones), its reads go to %u survivors "
              "under DCH, with the busiest taking %.2f times the mean, against "
              "%u (%.2f times) under next-3 and %u (%.2f times) under the zone "
              "walk. Once the map or ring without it is published, the first "
              "copies of its keys are held by %u survivors under DCH (busiest "
              "%.2f times the mean), %u (%.2f) under next-3 and %u (%.2f) under "
              "the zone walk. Its new copies go to %u survivors under DCH (%.2f "
              "times the mean), %u (%.2f) and %u (%.2f) on the ring. With 3 zones and 3 "
              "copies every zone holds one copy of every key, so a failed "
              "member's copies can only be rebuilt in its own zone, by its %u "
              "survivors, and %.2f times the mean over all %u survivors is then "
              "an even split: DCH reached %.2f over %u of them, the zone walk "
              "%.2f over %u, and next-3, which ignores zones, %.2f over %u.</p>",
              (unsigned)d4->read.receivers, d4->read.max_over_mean,
              (unsigned)n4->read.receivers, n4->read.max_over_mean,
              (unsigned)z4->read.receivers, z4->read.max_over_mean,
              (unsigned)d4->promoted.receivers, d4->promoted.max_over_mean,
              (unsigned)n4->promoted.receivers, n4->promoted.max_over_mean,
              (unsigned)z4->promoted.receivers, z4->promoted.max_over_mean,
              (unsigned)d4->recopy.receivers, d4->recopy.max_over_mean,
              (unsigned)n4->recopy.receivers, n4->recopy.max_over_mean,
              (unsigned)z4->recopy.receivers, z4->recopy.max_over_mean,
              (unsigned)same_zone, (double)(N - 1) / same_zone, (unsigned)(N - 1),
              d3->recopy.max_over_mean, (unsigned)d3->recopy.receivers,
              z3->recopy.max_over_mean, (unsigned)z3->recopy.receivers,
              n3->recopy.max_over_mean, (unsigned)n3->recopy.receivers);
}

static const char *const CASE_COLOUR[SCHEMES] = {"#d62728", "#1f77b4", "#2ca02c"};

static void charts(an_run *r, char labels[CASES][48])
{
    an_series sr[CASES + 1];
    for (size_t c = 0; c < CASES; c++) {
        const bool three = c < SCHEMES;
        sr[c] = (an_series){c ? "" : "replica_steps.csv", "4", "$11", labels[c],
                            three ? "linespoints dt 2 pt 6 ps 0.6 lw 1.5"
                                  : "linespoints pt 7 ps 0.6 lw 2",
                            CASE_COLOUR[c % SCHEMES], labels[c]};
    }
    sr[CASES] = (an_series){NULL, "1", NULL, NULL, "lines dt 3 lw 2", "#000000",
                            "optimum"};
    an_report_chart(r->report, &(an_chart){
        "replicas_moved",
        "New copies made by each join (left) and removal (right), over the optimum",
        "change (joins 4 .. N, then removals)", "new copies / optimum",
        "set key outside right\nset yrange [0:*]\n", sr, CASES + 1});
    for (size_t c = 0; c < CASES; c++)
        sr[c].y = "$12";
    sr[CASES] = (an_series){NULL, "1", NULL, NULL, "lines dt 3 lw 2", "#000000",
                            "mean"};
    an_report_chart(r->report, &(an_chart){
        "replicas_balance", "Copies of the fullest member over the mean, after each change",
        "change (joins 4 .. N, then removals)", "most copies / mean",
        "set key outside right\nset yrange [0.9:*]\n", sr, CASES + 1});
    static const an_series bars[3] = {
        {"replicas.csv", "12:xtic(1)", NULL, NULL, NULL, "#1f77b4",
         "reads (next copy)"},
        {"", "14", NULL, NULL, NULL, "#aec7e8", "new primaries (after removal)"},
        {"", "16", NULL, NULL, NULL, "#ff7f0e", "new copies"},
    };
    an_report_chart(r->report, &(an_chart){
        "replicas_failure",
        "Where a failed member's load goes: the busiest survivor over the mean survivor",
        NULL, "busiest / mean (1 is even)",
        "set style data histograms\nset style histogram clustered gap 1\n"
        "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset yrange [0:*]\n"
        "set key outside top center horizontal\nset xtics noenhanced rotate by -20\n",
        bars, 3});
}

static int write_steps(an_run *r, an_table *t)
{
    char path[4096];
    an_report_path(r->report, "replica_steps.csv", path, sizeof path);
    int rc = an_table_write_csv(t, path);
    an_table_free(t);
    return rc == 0 ? DCH_OK : DCH_EIO;
}

int an_section_replicas(an_run *r)
{
    const uint32_t nodes = r->opt.nodes;
    const uint32_t stop = r->opt.shrink_to > AN_COPIES ? r->opt.shrink_to : AN_COPIES;
    const uint32_t removals = nodes > stop ? nodes - stop : 0;
    uint32_t *order = removal_order(r, removals);
    an_table *t = an_table_for(AN_TABLE_REPLICA_STEPS,
                               "7. Replicas: every join and removal, %u copies", AN_COPIES);
    an_table *sum = an_table_for(AN_TABLE_REPLICAS,
                                 "7. Replicas: %u copies, 1 -> %u -> %u members",
                                 AN_COPIES, (unsigned)nodes, (unsigned)(nodes - removals));
    case_summary cs[CASES];
    char labels[CASES][48];
    int rc = order && t && sum ? DCH_OK : DCH_ENOMEM;
    an_progress p;
    an_progress_begin(&p, "replicas");
    for (size_t z = 0; z < ZONE_CASES && rc == DCH_OK; z++) {
        for (int s = 0; s < SCHEMES && rc == DCH_OK; s++) {
            const size_t c = z * SCHEMES + (size_t)s;
            char scheme[48];
            snprintf(scheme, sizeof scheme, s == S_DCH ? "%s" : "%s %s",
                     s == S_DCH ? r->label[0] : r->label[1], SCHEME_LABEL[s]);
            snprintf(labels[c], sizeof labels[c], "%s %uz", SCHEME_LABEL[s],
                     ZONE_COUNTS[z]);
            case_ctx ctx = {r, t, labels[c], scheme, ZONE_COUNTS[z], 0};
            rc = run_case(&ctx, s, order, removals, &cs[c]);
            if (rc == DCH_OK)
                rc = summary_row(sum, labels[c], ZONE_COUNTS[z], scheme, &cs[c],
                                 an_name_width(nodes));
            an_progress_update(&p, labels[c], (double)c + 1.0, (double)CASES);
        }
    }
    an_progress_end(&p);
    free(order);
    if (rc == DCH_OK)
        rc = write_steps(r, t);
    else
        an_table_free(t);
    if (rc != DCH_OK) {
        an_table_free(sum);
        return an_fail("replicas", rc);
    }
    an_buf h = {0};
    intro(&h, r, cs, removals);
    rc = an_section_begin(r, "replicas", an_buf_str(&h));
    an_buf_free(&h);
    if (rc != 0 || an_report_table(r->report, sum) != 0)
        return an_fail("replicas", DCH_ENOMEM);
    if (cs_of(cs, 1, S_DCH)->join_max > 0.0)
        charts(r, labels);
    return DCH_OK;
}
