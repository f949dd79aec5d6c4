/* SPDX-License-Identifier: MIT */
/*
 * 5. Karger's properties: balance and monotonicity from the sections before,
 * spread and load over client views that each see a seeded half of the
 * members, and how far two copies with the same members but another history
 * disagree.
 */
#include "sections.h"

#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Spread and load, exact and sampled, over `views` objects whose ids are
 * renumbered to node numbers by to[v][id]. */
static int spread_load(an_run *r, const an_scheme *objs, uint32_t **to,
                       uint32_t views, an_spread_load *exact,
                       an_spread_load *sampled)
{
    const uint32_t nodes = r->opt.nodes;
    an_ranges *rs = calloc(views, sizeof *rs);
    if (rs == NULL)
        return DCH_ENOMEM;
    int rc = DCH_OK;
    for (uint32_t v = 0; v < views && rc == DCH_OK; v++) {
        rc = an_scheme_ranges(&objs[v], &rs[v]);
        if (rc == DCH_OK)
            rc = an_ranges_renumber(&rs[v], to[v], an_scheme_id_limit(&objs[v]));
    }
    if (rc == DCH_OK)
        rc = an_spread_load_exact(rs, views, nodes, exact);
    for (uint32_t v = 0; v < views; v++)
        an_ranges_free(&rs[v]);
    free(rs);
    if (rc != DCH_OK)
        return rc;

    /* Sampled: look keys up in every view, a block of keys at a time. */
    enum { BLOCK = 4096 };
    uint32_t *own = malloc((size_t)views * BLOCK * sizeof *own);
    uint32_t *key_owners = malloc(views * sizeof *key_owners);
    an_key_spread ks;
    rc = own && key_owners ? an_key_spread_init(&ks, nodes) : DCH_ENOMEM;
    if (rc == DCH_OK) {
        for (size_t i = 0; i < r->opt.keys; i += BLOCK) {
            size_t n = r->opt.keys - i < BLOCK ? r->opt.keys - i : BLOCK;
            for (uint32_t v = 0; v < views; v++)
                an_scheme_lookup_many(&objs[v], r->keys + i, n,
                                      own + (size_t)v * BLOCK);
            for (size_t j = 0; j < n; j++) {
                for (uint32_t v = 0; v < views; v++) {
                    uint32_t id = own[(size_t)v * BLOCK + j];
                    key_owners[v] = id == DCH_NODE_NONE ? id : to[v][id];
                }
                an_key_spread_add(&ks, key_owners, views);
            }
        }
        *sampled = an_key_spread_result(&ks);
        an_key_spread_free(&ks);
    }
    free(own);
    free(key_owners);
    return rc;
}

/* The share of the hash space on which two objects holding the same members
 * (by name) disagree: what the library's diff of the two would move. */
static int disagreement(const an_scheme *a, const an_scheme *b,
                        const char *const *names, uint32_t nnames, double *out)
{
    const an_name_list l = {names, nnames};
    an_changes ch = {NULL, 0, 0};
    an_moves mv;
    int rc = an_scheme_diff(&ch, a, b, an_position_of, &l);
    if (rc == DCH_OK)
        rc = an_moves_of(&ch, nnames, DCH_NODE_NONE, &mv);
    if (rc == DCH_OK)
        *out = mv.moved;
    an_changes_free(&ch);
    return rc;
}

/* The names node-01 .. node-<nodes>, in one allocation (free with free()). */
static char **node_names(uint32_t nodes)
{
    const int width = an_name_width(nodes);
    char **names = malloc(nodes * (sizeof *names + 64));
    char *text = names ? (char *)(names + nodes) : NULL;
    for (uint32_t g = 0; names != NULL && g < nodes; g++) {
        names[g] = text + (size_t)g * 64;
        an_node_name(names[g], 64, width, g + 1);
    }
    return names;
}

/* The same members reached by other histories: reverse order, and a
 * temporary extra member that joins midway and leaves at the end. */
static int histories(an_run *r, int s, double *reverse, double *detour)
{
    const uint32_t nodes = r->opt.nodes;
    char **names = node_names(nodes);
    if (names == NULL)
        return DCH_ENOMEM;
    const char *const *cn = (const char *const *)names;
    an_scheme a = {0}, b = {0}, c = {0};
    int rc = an_scheme_of_names(&a, &r->spec[s], cn, NULL, NULL, nodes, false);
    if (rc == DCH_OK)
        rc = an_scheme_of_names(&b, &r->spec[s], cn, NULL, NULL, nodes, true);
    if (rc == DCH_OK)
        rc = an_scheme_new(&c, &r->spec[s]);
    for (uint32_t g = 0; g < nodes && rc == DCH_OK; g++) {
        rc = an_scheme_add(&c, names[g], 1, NULL);
        if (rc == DCH_OK && g == nodes / 2)
            rc = an_scheme_add(&c, "node-extra", 1, NULL);
    }
    uint32_t extra;
    if (rc == DCH_OK)
        rc = an_scheme_apply(&c, AN_OP_REMOVE, "node-extra", 0, &extra);
    if (rc == DCH_OK)
        rc = disagreement(&a, &b, cn, nodes, reverse);
    if (rc == DCH_OK)
        rc = disagreement(&a, &c, cn, nodes, detour);
    an_scheme_free(&a);
    an_scheme_free(&b);
    an_scheme_free(&c);
    free(names);
    return rc;
}

/* Node numbers by id: to[id] is g for node-<g+1>, DCH_NODE_NONE for a free
 * id or another name. NULL when out of memory. */
static uint32_t *ids_to_nodes(const an_scheme *sc)
{
    const uint32_t limit = an_scheme_id_limit(sc);
    uint32_t *to = malloc((limit ? limit : 1) * sizeof *to);
    for (uint32_t id = 0; to != NULL && id < limit; id++)
        to[id] = an_node_number(an_scheme_name(sc, id));
    return to;
}

/* Build one object per view from the nodes it sees, in name order, and
 * measure spread and load. */
static int views_of(an_run *r, const an_scheme_spec *spec, const bool *sees,
                    an_spread_load *exact, an_spread_load *sampled)
{
    const uint32_t views = r->opt.views, nodes = r->opt.nodes;
    char **names = node_names(nodes);
    an_scheme *objs = calloc(views, sizeof *objs);
    uint32_t **to = calloc(views, sizeof *to);
    int rc = names && objs && to ? DCH_OK : DCH_ENOMEM;
    for (uint32_t v = 0; v < views && rc == DCH_OK; v++) {
        rc = an_scheme_of_names(&objs[v], spec, (const char *const *)names,
                                NULL, sees + (size_t)v * nodes, nodes, false);
        if (rc == DCH_OK && (to[v] = ids_to_nodes(&objs[v])) == NULL)
            rc = DCH_ENOMEM;
    }
    if (rc == DCH_OK)
        rc = spread_load(r, objs, to, views, exact, sampled);
    for (uint32_t v = 0; objs && to && v < views; v++) {
        an_scheme_free(&objs[v]);
        free(to[v]);
    }
    free(names);
    free(objs);
    free(to);
    return rc;
}

/* Every view uses the one shared map (clones of it). */
static int shared_views(an_run *r, an_spread_load *exact,
                        an_spread_load *sampled)
{
    const uint32_t views = r->opt.views;
    const an_scheme *m = &r->grown[0];
    an_scheme *objs = calloc(views, sizeof *objs);
    uint32_t **to = calloc(views, sizeof *to);
    uint32_t *map = ids_to_nodes(m);
    int rc = objs && to && map ? DCH_OK : DCH_ENOMEM;
    uint32_t made = 0;
    for (; made < views && rc == DCH_OK; made++) {
        rc = an_scheme_clone(&objs[made], m);
        to[made] = map;
    }
    if (rc == DCH_OK)
        rc = spread_load(r, objs, to, views, exact, sampled);
    for (uint32_t v = 0; objs && v < made; v++)
        an_scheme_free(&objs[v]);
    free(objs);
    free(to);
    free(map);
    return rc;
}

/* Rows: DCH with a map per view, DCH with one shared map, the rings. */
enum { ROWS = AN_SCHEMES + 1 };

/* What the section measured. */
typedef struct karger {
    double seen_mean; /* nodes a view sees, on average */
    an_spread_load ex[ROWS], sa[ROWS];
    char row_label[ROWS][64];
    double rev[AN_SCHEMES], det[AN_SCHEMES];
} karger;

/* The table row of scheme s (DCH's second row is its shared map). */
static int row_of(int s)
{
    return s == 0 ? 0 : s + 1;
}

static int measure_views(an_run *r, karger *k)
{
    const an_options *o = &r->opt;
    bool *sees = an_views_of_seed(o->seed, o->views, o->nodes);
    if (sees == NULL)
        return DCH_ENOMEM;
    k->seen_mean = 0.0;
    for (size_t i = 0; i < (size_t)o->views * o->nodes; i++)
        k->seen_mean += sees[i];
    k->seen_mean /= o->views;
    int rc = DCH_OK;
    an_progress p;
    an_progress_begin(&p, "spread and load");
    for (int s = 0; s < AN_SCHEMES && rc == DCH_OK; s++) {
        const int row = row_of(s);
        snprintf(k->row_label[row], sizeof k->row_label[row], "%s%s",
                 r->label[s], s == 0 ? " (a map per view)" : "");
        rc = views_of(r, &r->spec[s], sees, &k->ex[row], &k->sa[row]);
        an_progress_update(&p, r->label[s], s + 1.0, ROWS);
    }
    snprintf(k->row_label[1], sizeof k->row_label[1], "dch (one shared map)");
    if (rc == DCH_OK)
        rc = shared_views(r, &k->ex[1], &k->sa[1]);
    an_progress_end(&p);
    free(sees);
    for (int s = 0; s < AN_SCHEMES && rc == DCH_OK; s++)
        rc = histories(r, s, &k->rev[s], &k->det[s]);
    return rc;
}

static an_table *properties_table(const an_run *r, const karger *k)
{
    an_table *t = an_table_for(AN_TABLE_KARGER,
                               "5. Karger's properties: N = %u, %u client "
                               "views each seeing each node with probability 1/2",
                               (unsigned)r->opt.nodes, (unsigned)r->opt.views);
    for (int row = 0; t != NULL && row < ROWS; row++) {
        int s = row == 0 || row == 1 ? 0 : row - 1;
        const an_spread_load *ex = &k->ex[row], *sa = &k->sa[row];
        an_table_add(t, "tnnnnnnnn", k->row_label[row], r->grown_peak[s],
                     r->growth_between_old[s], ex->spread_max, ex->spread_mean,
                     ex->load_max, sa->spread_max, sa->spread_mean,
                     sa->load_max);
    }
    return t;
}

static an_table *history_table(const an_run *r, const karger *k)
{
    an_table *t = an_table_for(AN_TABLE_HISTORY,
                               "5b. Same members, other history: share of "
                               "the hash space where two copies disagree");
    for (int s = 0; t != NULL && s < AN_SCHEMES; s++)
        an_table_add(t, "tnn", r->label[s], k->rev[s], k->det[s]);
    return t;
}

static void fill_glance(an_run *r, const karger *k)
{
    for (int s = 0; s < AN_SCHEMES; s++) {
        r->glance[s].spread_views = k->ex[row_of(s)].spread_max;
        r->glance[s].load_views = k->ex[row_of(s)].load_max;
    }
    r->glance_shared_spread = k->ex[1].spread_max;
    r->glance_shared_load = k->ex[1].load_max;
}

static void intro(an_buf *h, const an_run *r, const karger *k)
{
    const an_options *o = &r->opt;
    const an_spread_load *ex = k->ex;
    an_buf_printf(h,
              "<p class=\"lead\">Karger et al. (1997) ask four things of a "
              "consistent hash: balance, monotonicity, spread and load; here "
              "%u client views each see a random half of the %u members and build "
              "their own map or ring. Rings built apart agree wherever both views "
              "see the owner, but DCH maps built apart disagree %s, because a map "
              "depends on the order of the changes that built it (table 5b); so "
              "DCH clients share one map, and then every view agrees (spread %.0f, "
              "load %.2f).</p>",
              (unsigned)o->views, (unsigned)o->nodes,
              ex[0].spread_max > ex[2].spread_max ? "more than rings do" : "as rings do",
              ex[1].spread_max, ex[1].load_max);
    an_buf_printf(h,
              "<p><b>How to read it.</b> <b>Balance</b>: keys spread evenly over "
              "the nodes (section 4; the peak-to-average at N = %u). "
              "<b>Monotonicity</b>: when nodes are added, keys move only to the new "
              "nodes (section 1; the share moved between old nodes over all joins). "
              "<b>Spread</b>: the number of distinct nodes one key is sent to across "
              "the views. <b>Load</b>: the most distinct keys one node is asked for "
              "across the views, over keys/N. Each view sees each node with "
              "probability 1/2 (at least one; %.1f on average) and adds them in name "
              "order. Spread and load are exact, from all views' ownership ranges "
              "walked together, and counted again over %zu sampled keys. A map "
              "is a function of the <i>sequence</i> of operations that built it, "
              "not of its member set: table 5b compares two maps with the same "
              "members built in another order, where rings cannot differ.</p>",
              (unsigned)o->nodes, k->seen_mean, o->keys);
}

/* Spread (members a key is sent to) and load (keys asked of a member) are
 * two measures in two units: two charts. */
static void chart(an_run *r)
{
    static const char *const bars_style =
        "set style data histograms\nset style histogram clustered gap 1\n"
        "set style fill solid 0.9 border -1\nset boxwidth 0.9\nset yrange [0:*]\n"
        "set xtics noenhanced\n"
        "set bmargin 4\n";
    /* Row labels such as "dch (one shared map)" break before the "(". */
#define LABEL "xtic(strstrt(strcol(1), ' (') ? " \
              "strcol(1)[1:strstrt(strcol(1), ' (') - 1] . \"\\n\" . " \
              "strcol(1)[strstrt(strcol(1), ' (') + 1:] : strcol(1))"
    static const an_series spread[2] = {
        {"karger.csv", "4:" LABEL, NULL, NULL, NULL, "#1f77b4",
         "most members, over the keys"},
        {"", "5", NULL, NULL, NULL, "#aec7e8", "mean over the keys"},
    };
    static const an_series load[1] = {
        {"karger.csv", "6:" LABEL, NULL, NULL, NULL, "#d62728", "the busiest member"},
    };
#undef LABEL
    char caption[256];
    snprintf(caption, sizeof caption,
             "Spread: how many members one key is sent to across %u client views "
             "(N = %u); 1 is every view agreeing",
             (unsigned)r->opt.views, (unsigned)r->opt.nodes);
    an_report_chart(r->report, &(an_chart){
        "karger_spread", caption, NULL, "members a key is sent to", bars_style,
        spread, 2});
    snprintf(caption, sizeof caption,
             "Load: the most keys one member is asked for across %u client views, "
             "over keys/N; 1 is every view agreeing",
             (unsigned)r->opt.views);
    an_report_chart(r->report, &(an_chart){
        "karger_load", caption, NULL, "keys asked of a member / (keys/N)", bars_style,
        load, 1});
}

int an_section_karger(an_run *r)
{
    karger *k = calloc(1, sizeof *k);
    int rc = k != NULL ? measure_views(r, k) : DCH_ENOMEM;
    if (rc != DCH_OK) {
        free(k);
        return an_fail("karger", rc);
    }
    an_table *t = properties_table(r, k), *th = history_table(r, k);
    fill_glance(r, k);
    an_buf h = {0};
    intro(&h, r, k);
    free(k);
    if (an_section_two_tables(r, "karger", &h, t, th) != DCH_OK)
        return DCH_ENOMEM;
    chart(r);
    return DCH_OK;
}
