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
    double promoted_part; /* of those, held by a member that had a copy */
    an_spread recopy;   /* the copies made for it, once it is removed */
    double join_promoted, leave_promoted; /* most promoted by one change */
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

/* One change: its new copies (data moved) and, apart, the first copies
 * that changed hands (promotions among them move no data). */
static int step_row(case_ctx *c, const char *phase, uint32_t n_before,
                    uint32_t n_after, const char *member, double moved,
                    double optimum, const an_state_figs *f,
                    const an_primary_change *pc)
{
    return an_table_add(c->t, "tititiitnnnnnnnn", c->label, (long long)c->zones,
                        c->scheme, (long long)++c->step, phase,
                        (long long)n_before, (long long)n_after, member, moved,
                        optimum, optimum > 0.0 ? moved / optimum : NAN,
                        f->copy_max, f->copy_min, f->violations, pc->changed,
                        pc->promoted) == 0
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
            const an_primary_change pc =
                an_primary_changes(&w->before, &w->after, DCH_NODE_NONE);
            cs->join_min = fmin(cs->join_min, moved / opt);
            cs->join_max = fmax(cs->join_max, moved / opt);
            cs->join_promoted = fmax(cs->join_promoted, pc.promoted);
            if ((rc = step_row(c, "join", n - 1, n, name, moved, opt, &f, &pc)) != DCH_OK)
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
        const an_primary_change pc =
            an_primary_changes(&w->before, &w->after, DCH_NODE_NONE);
        cs->leave_promoted = fmax(cs->leave_promoted, pc.promoted);
        if (k == 0) {
            cs->recopy = an_spread_of(w->got, w->present, nodes, leaver);
            an_new_primaries(&w->before, &w->after, leaver, w->got, nodes);
            cs->promoted = an_spread_of(w->got, w->present, nodes, leaver);
            const an_primary_change fp = an_primary_changes(&w->before, &w->after, leaver);
            cs->promoted_part = fp.changed > 0.0 ? fp.promoted / fp.changed : NAN;
        }
        const an_state_figs f = an_state_of(&w->after, w->present, nodes, c->zones, w->copies);
        cs->violations_max = fmax(cs->violations_max, f.violations);
        if (held > 0.0) {
            cs->leave_min = fmin(cs->leave_min, moved / held);
            cs->leave_max = fmax(cs->leave_max, moved / held);
        }
        rc = step_row(c, "remove", nodes - k, nodes - k - 1, name, moved, held, &f, &pc);
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
                         DCH_NODE_NONE, {NAN, 0}, {NAN, 0}, NAN, {NAN, 0}, 0.0, 0.0};
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

/* ---- The page -------------------------------------------------------------------- */

/* The busiest survivor over the mean that an even split of the failed
 * member's re-created copies gives: over every survivor, unless each zone
 * already holds a copy of every key (zones <= copies), when only the failed
 * member's own zone may hold its copies; next-3 ignores zones. */
static double even_split(const an_run *r, int scheme, unsigned zones, uint32_t failed)
{
    const uint32_t N = r->opt.nodes;
    if (failed == DCH_NODE_NONE || N < 2)
        return NAN;
    if (scheme == S_NEXT || zones > AN_COPIES)
        return 1.0;
    uint32_t mates = 0;
    for (uint32_t i = 0; i < N; i++)
        mates += i != failed && i % zones == failed % zones;
    return mates ? (double)(N - 1) / mates : NAN;
}

static int summary_row(an_table *t, const an_run *r, const char *label,
                       unsigned zones, int scheme, const char *scheme_label,
                       const case_summary *cs)
{
    char failed[64] = "-";
    if (cs->failed != DCH_NODE_NONE)
        an_node_name(failed, sizeof failed, an_name_width(r->opt.nodes), cs->failed + 1);
    const bool joins = cs->join_max > 0.0, leaves = cs->leave_max > 0.0;
    return an_table_add(t, "tit" "nnnn" "nn" "nnn" "tni" "nin" "nin", label,
                        (long long)zones, scheme_label,
                        joins ? cs->join_min : NAN, joins ? cs->join_max : NAN,
                        leaves ? cs->leave_min : NAN, leaves ? cs->leave_max : NAN,
                        joins ? cs->join_promoted : NAN,
                        leaves ? cs->leave_promoted : NAN,
                        cs->at_n.copy_max, cs->at_n.copy_min, cs->violations_max,
                        failed, cs->read.max_over_mean, (long long)cs->read.receivers,
                        cs->promoted.max_over_mean, (long long)cs->promoted.receivers,
                        cs->promoted_part, cs->recopy.max_over_mean,
                        (long long)cs->recopy.receivers,
                        even_split(r, scheme, zones, cs->failed)) == 0
               ? DCH_OK
               : DCH_ENOMEM;
}

/* The case of scheme s under ZONE_COUNTS[z]. */
static const case_summary *cs_of(const case_summary *cs, size_t z, int s)
{
    return &cs[z * SCHEMES + (size_t)s];
}

/* The section's opening: what it measures and what it found, then how to
 * read the table; the figures are in the table. */
static void intro(an_buf *h, const an_run *r, const case_summary *cs,
                  uint32_t removals)
{
    const char *ring = r->label[1];
    an_buf_printf(h,
              "<p class=\"lead\">Every key has %u copies on different members, in 3 "
              "or 4 failure domains (<i>zones</i>), while each scheme grows from one "
              "member to %u and shrinks to %u. The tables count the copies each "
              "change makes (data moved) apart from the copies that only become "
              "primary (promotions: no data moves), and where a failed member's "
              "work goes. ",
              AN_COPIES, (unsigned)r->opt.nodes,
              (unsigned)(r->opt.nodes - removals));
    if (cs_of(cs, 1, S_DCH)->join_max <= 0.0) {
        an_buf_printf(h, "With %u members or fewer there is nothing to measure "
                         "(--nodes).</p>", AN_COPIES);
        return;
    }
    const case_summary *d3 = cs_of(cs, 0, S_DCH), *d4 = cs_of(cs, 1, S_DCH),
                       *n4 = cs_of(cs, 1, S_NEXT), *z4 = cs_of(cs, 1, S_ZONES);
    const bool dch_zones = d3->violations_max == 0.0 && d4->violations_max == 0.0;
    const bool dch_even = d4->recopy.max_over_mean < z4->recopy.max_over_mean &&
                          d4->recopy.max_over_mean < n4->recopy.max_over_mean;
    an_buf_printf(h,
              "DCH %s, and with 4 zones it re-creates a failed member's copies on "
              "%s survivors%s; next-3 %s, and the zone walk %s.</p>",
              dch_zones ? "never puts two copies of a key in one zone when the zones "
                          "could keep them apart"
                        : "sometimes puts two copies of a key in one zone",
              d4->recopy.receivers + 1 >= r->opt.nodes ? "all" : "most",
              dch_even ? ", more evenly than either ring placement" : "",
              n4->violations_max > 0.0 ? "ignores zones" : "keeps zones apart here",
              z4->recopy.max_over_mean > 2.0
                  ? "keeps zones apart but gives some survivors several times "
                    "their part of a failure's copies"
                  : "keeps zones apart too");
    an_buf_printf(h,
              "<p><b>How to read it.</b> Member i is in zone i mod Z. DCH keeps "
              "the copies of each slot itself (<code>replicas = %u</code>, "
              "<code>dch_map_add_node_in_zone</code>, "
              "<code>dch_map_slot_replicas</code>); %s has two usual recipes: "
              "<i>next-3</i>, the next %u distinct members clockwise "
              "(<code>dch_ring_successors_hash</code>), and the <i>zone walk</i>, "
              "which passes over members of a zone already used. "
              "<i>New copies</i> are copies made on a member that did not hold "
              "them: data that moves. The optimum is %u/N of the hash space for a "
              "join and the leaver's own copies for a removal. A <i>promotion</i> "
              "is a member that already held a copy becoming the first copy "
              "(primary): no data moves. Copy balance is the most and fewest "
              "copies of a member over the mean; <i>zone violations</i> the share "
              "of the hash space whose copies sit in fewer zones than they could. "
              "The first leaver is read as a failure: its reads go to the next "
              "copy until the map or ring is republished; once it is removed, its "
              "keys get new primaries and its copies are re-created. Each is given "
              "as the busiest survivor over the mean of all N&minus;1 survivors, "
              "with how many survivors take part; the <i>even split</i> is what "
              "spreading the re-created copies evenly over the survivors allowed "
              "to hold them gives (with 3 zones and 3 copies, only the failed "
              "member's own zone). Every change is in "
              "<a href=\"replica_steps.csv\">replica_steps.csv</a>.</p>",
              AN_COPIES, ring, AN_COPIES, AN_COPIES);
}

static const char *const CASE_COLOUR[SCHEMES] = {"#d62728", "#1f77b4", "#2ca02c"};

/* The lines of a chart of replica_steps.csv, y against x: next-3 once (it
 * ignores zones, so its 3- and 4-zone lines are the same), then the zone
 * walk and DCH, 3 zones dashed with open markers, 4 zones solid with
 * filled ones, DCH on top; where two lines meet, the open marker of the
 * one below shows around the filled marker of the one above. */
static size_t case_lines(an_series *sr, char labels[CASES][48], const char *x,
                         const char *y)
{
    static const struct {
        size_t c;
        const char *style;
    } lines[] = {
        {1 * SCHEMES + S_NEXT, "linespoints pt 13 ps 1.3 lw 2"},
        {0 * SCHEMES + S_ZONES, "linespoints dt 2 pt 4 ps 1.2 lw 1.5"},
        {1 * SCHEMES + S_ZONES, "linespoints pt 5 ps 0.8 lw 2"},
        {0 * SCHEMES + S_DCH, "linespoints dt 2 pt 6 ps 1.1 lw 1.5"},
        {1 * SCHEMES + S_DCH, "linespoints pt 7 ps 0.6 lw 2"},
    };
    size_t n = 0;
    for (size_t k = 0; k < sizeof lines / sizeof lines[0]; k++, n++) {
        const size_t c = lines[k].c;
        sr[n] = (an_series){"replica_steps.csv", x, y, labels[c], lines[k].style,
                            CASE_COLOUR[c % SCHEMES],
                            c % SCHEMES == S_NEXT ? "next-3 (3z and 4z: the same)"
                                                  : labels[c]};
    }
    return n;
}

static void charts(an_run *r, char labels[CASES][48])
{
    an_series sr[CASES + 1];
    /* Joins only: every removal in this report makes exactly the leaver's
     * copies or close to it (table, removal min and max), so removals would
     * draw one flat line over another. */
    sr[0] = (an_series){NULL, "1", NULL, NULL, AN_REFERENCE_STYLE, AN_REFERENCE_COLOUR,
                        "optimum"};
    size_t n = 1 + case_lines(sr + 1, labels, "7", "(strcol(5) eq 'join' ? $11 : 1/0)");
    an_report_chart(r->report, &(an_chart){
        "replicas_moved",
        "New copies (data moved) by each join, over the optimum 3/N; removals are in "
        "the table",
        "members after the join (N)", "new copies / optimum",
        "", sr, n});
    sr[0].title = "mean";
    n = 1 + case_lines(sr + 1, labels, "4", "$12");
    an_report_chart(r->report, &(an_chart){
        "replicas_balance", "Copies of the fullest member over the mean, after each change",
        "change (joins 4 .. N, then removals)", "most copies / mean",
        "set yrange [0.9:*]\n", sr, n});
    static const an_series bars[3] = {
        {"replicas.csv", "14:xtic(1)", NULL, NULL, NULL, "#9ecae1",
         "reads: the next copy (no data moved)"},
        {"", "16", NULL, NULL, NULL, "#3182bd", "new primaries, once removed"},
        {"", "19", NULL, NULL, NULL, "#ff7f0e", "re-created copies (data moved)"},
    };
    an_report_chart(r->report, &(an_chart){
        "replicas_failure",
        "Where a failed member's work goes: the busiest survivor over the mean survivor (1 is even)",
        NULL, "busiest survivor / mean",
        "set style data histograms\nset style histogram clustered gap 1\n"
        "set style fill solid 0.9 border -1\nset boxwidth 0.9\nset yrange [0:*]\n"
        "set xtics noenhanced\n",
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
    uint32_t *order = an_removal_order(r, STREAM_REPLICAS, 0, removals);
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
                rc = summary_row(sum, r, labels[c], ZONE_COUNTS[z], s, scheme, &cs[c]);
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
