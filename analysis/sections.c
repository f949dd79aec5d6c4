/*
 * The built-in scenario: each section builds the schemes through the public
 * API, measures them exactly from their ownership ranges (metrics.h), checks
 * the exact figures against sampled keys, and adds its tables, charts and
 * explanations to the report.
 *
 * Every table row is produced by the same code for every scheme; the only
 * per-scheme input is its an_scheme_spec. The order of operations is fixed
 * (names in order, removals and client views drawn from seeded streams), so
 * a run is a pure function of its options.
 */
#include "sections.h"

#include "diagram.h"
#include "progress.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The seeded stream of the removal order (the hash key's and the views'
 * streams are in metrics.c, which the explorer shares). */
#define STREAM_SHRINK UINT64_C(0x736872696e6b2d31)

/* The ring point counts the balance section sweeps (plus --points). */
static const uint32_t SWEEP_POINTS[] = {1, 10, 40, 160, 640};
#define SWEEP_MAX 6

/* N values where balance is measured, up to --balance-max (plus --nodes). */
static const uint32_t BALANCE_NS[] = {2,   3,   4,   5,   8,   10,  16,
                                      20,  32,  50,  64,  100, 128, 200,
                                      256, 500, 512, 1000};
#define BALANCE_NS_MAX 24

/* The source document that describes DCH, named by its file name. */
#define DCH_DESCRIPTION "<code>000_9b3f07b0b8e46b09.txt</code>"

/* Ring diagrams draw rings of more points with this many, so arcs stay
 * visible; the measurements use the configured count. */
#define DIAGRAM_RING_POINTS 16u

/* Chart colours: one per scheme, the same in every chart. */
static const char *const SCHEME_COLOUR[AN_SCHEMES] = {"#d62728", "#1f77b4",
                                                      "#2ca02c", "#ff7f0e"};

/* ---- Small helpers -------------------------------------------------------- */

static int fail(const char *what, int rc)
{
    fprintf(stderr, "dch-analysis: %s: %s\n", what, dch_strerror(rc));
    return rc;
}

/*
 * "a to b" for a range of ratios, or one value when both show the same at
 * four decimals, so that the text does not read "between 1.0000 and 1.0000".
 */
static const char *ratio_range(char *buf, size_t n, double lo, double hi)
{
    char a[32], b[32];
    snprintf(a, sizeof a, "%.4f", lo);
    snprintf(b, sizeof b, "%.4f", hi);
    if (strcmp(a, b) == 0)
        snprintf(buf, n, "%s", a);
    else
        snprintf(buf, n, "%s to %s", a, b);
    return buf;
}

/* "in any scheme" when all three are 0, else the three values: those of the
 * schemes the prose of sections 1 to 3 compares (dch, the ring, ring-1). */
static const char *zero_or_values(char *buf, size_t n, const double v[3])
{
    if (v[0] == 0.0 && v[1] == 0.0 && v[2] == 0.0)
        snprintf(buf, n, "in any scheme");
    else
        snprintf(buf, n, "(%.3g, %.3g and %.3g of the hash space)", v[0], v[1], v[2]);
    return buf;
}

/* "all" for a fraction of 1, else "at least P%": how many members took part. */
static const char *members_part(char *buf, size_t n, double frac)
{
    if (frac >= 1.0)
        snprintf(buf, n, "all");
    else
        snprintf(buf, n, "at least %.0f%%", 100.0 * frac);
    return buf;
}

static int digits(uint32_t n)
{
    int d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

/* Zero-padded so that name order is numeric order: node-01 .. node-32. */
static int name_width(uint32_t max)
{
    int d = digits(max);
    return d < 2 ? 2 : d;
}

static void node_name(char *buf, size_t n, int width, uint32_t i)
{
    /* Widths come from digits() of a uint32_t, so 64 bytes always fit. */
    if (snprintf(buf, n, "node-%0*u", width, (unsigned)i) >= (int)n)
        buf[0] = '\0';
}

/* A growing string, for gnuplot bodies and HTML. */
typedef struct sbuf {
    char *s;
    size_t n;
    size_t cap;
    bool failed;
} sbuf;

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0,
                          fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->failed = true;
            return;
        }
        if (b->s != NULL && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap : 256;
        while (cap <= b->n + (size_t)k)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

static const char *sb_str(const sbuf *b)
{
    return b->failed || b->s == NULL ? "" : b->s;
}

static void sb_free(sbuf *b)
{
    free(b->s);
    *b = (sbuf){NULL, 0, 0, false};
}

/* One gnuplot series: column ycol against xcol of `file`, rows of scheme
 * `label` only (column 1). */
static void gp_series(sbuf *b, bool first, const char *file, int xcol,
                      int ycol, const char *label, const char *style,
                      const char *colour, const char *title)
{
    sb_printf(b,
              "%s'%s' skip 1 using %d:(strcol(1) eq '%s' ? $%d : 1/0) "
              "with %s lc rgb '%s' title '%s'",
              first ? "plot " : ", \\\n     ", file, xcol, label, ycol, style,
              colour, title);
}

/* ---- Run setup ---------------------------------------------------------- */

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
        return fail("sampled keys", rc);
    r->own_before = malloc(opt->keys * sizeof *r->own_before);
    r->own_after = malloc(opt->keys * sizeof *r->own_after);
    if (r->own_before == NULL || r->own_after == NULL)
        return fail("sampled keys", DCH_ENOMEM);
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

/* ---- Shared measurement steps -------------------------------------------- */

/* Balance of a scheme's current ownership (shares against weights). */
static int balance_now(const an_scheme *sc, const an_ranges *rs, an_balance *out)
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

/* Share of one id in a range list. */
static double share_of(const an_ranges *rs, uint32_t id)
{
    an_volume v = {0, 0};
    for (size_t i = 0; i < rs->n; i++)
        if (rs->v[i].owner == id)
            an_volume_add_range(&v, rs->v[i].lo, rs->v[i].hi);
    return an_volume_fraction(v);
}

/* Look up every sampled key after a change and check the moves against its
 * exact change list; own_before holds the owners before and afterwards holds
 * the owners after (the buffers swap). */
static void sample_step(an_run *r, int s, int phase, const an_scheme *sc,
                        const an_changes *ch, uint32_t subject, double exact,
                        double *sampled, double *z)
{
    an_scheme_lookup_many(sc, r->keys, r->opt.keys, r->own_after);
    an_key_moves k = an_key_moves_check(r->keys, r->own_before, r->own_after,
                                        r->opt.keys, ch, subject);
    *sampled = (double)k.moved / (double)k.keys;
    *z = an_binomial_z(exact, k.moved, k.keys);
    an_sample_stats *st = &r->stats[s][phase];
    st->steps++;
    if (fabs(*z) > st->max_abs_z)
        st->max_abs_z = fabs(*z);
    st->mismatched += k.mismatched;
    st->moved_other += k.moved_other;
    uint32_t *t = r->own_before;
    r->own_before = r->own_after;
    r->own_after = t;
}

/* ---- The schemes and their diagrams ---------------------------------------- */

/* Ranges of a scheme renumbered to the common numbering of `names`. */
static int ranges_by_name(const an_scheme *sc, const char *const *names,
                          uint32_t nnames, an_ranges *out)
{
    uint32_t limit = an_scheme_id_limit(sc);
    uint32_t *to = malloc((limit ? limit : 1) * sizeof *to);
    if (to == NULL)
        return DCH_ENOMEM;
    for (uint32_t id = 0; id < limit; id++) {
        const char *name = an_scheme_name(sc, id);
        to[id] = DCH_NODE_NONE;
        for (uint32_t g = 0; name != NULL && g < nnames; g++)
            if (strcmp(name, names[g]) == 0)
                to[id] = g;
    }
    an_ranges rs = {NULL, 0};
    int rc = an_scheme_ranges(sc, &rs);
    if (rc == DCH_OK)
        rc = an_ranges_renumber(&rs, to, limit);
    free(to);
    if (rc != DCH_OK) {
        an_ranges_free(&rs);
        return rc;
    }
    *out = rs;
    return DCH_OK;
}

/* Draw one change (a join of names[nnames-1] to the others, or the removal
 * of names[leaver]) for one scheme. */
static int draw_change(an_run *r, const an_scheme_spec *spec, bool join,
                       uint32_t leaver, const char *file, const char *title)
{
    static const char *const names[] = {"node-01", "node-02", "node-03",
                                        "node-04"};
    const uint32_t nnames = 4;
    an_scheme sc;
    int rc = an_scheme_new(&sc, spec);
    if (rc != DCH_OK)
        return fail("diagram", rc);
    an_ranges before = {NULL, 0}, after = {NULL, 0};
    uint32_t first = join ? nnames - 1 : nnames;
    for (uint32_t g = 0; g < first && rc == DCH_OK; g++)
        rc = an_scheme_add(&sc, names[g], 1, NULL);
    if (rc == DCH_OK)
        rc = ranges_by_name(&sc, names, nnames, &before);
    if (rc == DCH_OK) {
        uint32_t id;
        if (join) {
            rc = an_scheme_add(&sc, names[nnames - 1], 1, NULL);
        } else {
            rc = an_scheme_find(&sc, names[leaver], &id);
            if (rc == DCH_OK)
                rc = an_scheme_remove(&sc, id);
        }
    }
    if (rc == DCH_OK)
        rc = ranges_by_name(&sc, names, nnames, &after);
    an_changes ch = {NULL, 0, 0};
    an_moves mv = {0};
    if (rc == DCH_OK)
        rc = an_changes_diff(&ch, &before, &after);
    if (rc == DCH_OK)
        rc = an_moves_of(&ch, nnames, join ? nnames - 1 : leaver, &mv);
    char note[256], path[4096], before_label[64], after_label[64];
    if (rc == DCH_OK) {
        if (join)
            snprintf(note, sizeof note,
                     "%s joins: %.1f%% of the ring moves (optimum 25%%), "
                     "from %u donor%s",
                     names[nnames - 1], 100.0 * mv.moved, (unsigned)mv.donors,
                     mv.donors == 1 ? "" : "s");
        else
            snprintf(note, sizeof note,
                     "%s leaves: %.1f%% of the ring moves (its share), "
                     "to %u receiver%s",
                     names[leaver], 100.0 * mv.moved, (unsigned)mv.receivers,
                     mv.receivers == 1 ? "" : "s");
        snprintf(before_label, sizeof before_label, "before: %u nodes",
                 (unsigned)(join ? nnames - 1 : nnames));
        snprintf(after_label, sizeof after_label, "after: %u nodes",
                 (unsigned)(join ? nnames : nnames - 1));
        an_diagram d = {title,   before_label, after_label,
                        note,    &before,      &after,
                        names,   nnames,
                        spec->kind == AN_KIND_MAP ? spec->units : 0};
        an_report_path(r->report, file, path, sizeof path);
        rc = an_diagram_write(path, &d);
    }
    an_changes_free(&ch);
    an_ranges_free(&before);
    an_ranges_free(&after);
    an_scheme_free(&sc);
    return rc == DCH_OK ? DCH_OK : fail("diagram", rc);
}

/* A scheme as its diagram draws it: small enough to see each arc, with
 * `drawn` saying how when it differs from the measured scheme. */
static void diagram_spec(const an_run *r, int s, an_scheme_spec *spec, char *drawn,
                         size_t n)
{
    *spec = r->spec[s];
    drawn[0] = '\0';
    if (spec->kind == AN_KIND_MAP) {
        spec->units = 8;
        spec->slots_per_unit = 8;
    } else if (spec->points > DIAGRAM_RING_POINTS) {
        spec->points = DIAGRAM_RING_POINTS;
        snprintf(drawn, n, " (drawn with %u points per node)", DIAGRAM_RING_POINTS);
    }
}

int an_section_schemes(an_run *r)
{
    const an_options *o = &r->opt;
    char html[4096];
    snprintf(html, sizeof html,
             "<p>Four schemes route the same keys, each measured through the "
             "public API of libdch only:</p><ul>"
             "<li><b>dch</b>: the DCH partition map with its defaults here, "
             "%u minimum arc units of %u slots (P = %u slots). Every member "
             "owns a slice of every unit in proportion to its weight; the "
             "table of slot owners is shared state that clients copy.</li>"
             "<li><b>%s</b>: the classic consistent-hash ring with %u points "
             "per unit of weight (ketama's choice is 160). Every client "
             "computes it alone from the member names.</li>"
             "<li><b>ring-1</b>: the plain ring that the DCH description "
             "(" DCH_DESCRIPTION ") compares itself with, one point per "
             "node.</li>"
             "<li><b>libmemcached</b>: ketama exactly as libmemcached 1.1 "
             "builds it in its weighted mode (libdch's ring with ketama "
             "placement: MD5 points named after the servers, point counts "
             "from each server's weight share, in single precision). Its "
             "point counts depend on every member, so a join, a leave or a "
             "weight change can move keys between members it does not "
             "touch.</li></ul>"
             "<p>The diagrams draw each scheme before and after one change "
             "(hash 0 at the top, hashes growing clockwise). Arcs are "
             "coloured by member; the dark band outside the rings marks the "
             "arcs that changed owner. So that the arcs are visible, the DCH "
             "map is drawn with 8 units of 8 slots (dashed lines are unit "
             "boundaries) and %s with %u points per node instead of %u; the "
             "algorithms are the same at any size, and every section below "
             "measures the full-size schemes.</p>",
             (unsigned)o->units, (unsigned)o->slots,
             (unsigned)(o->units * o->slots), r->label[1],
             (unsigned)o->points, r->label[1],
             (unsigned)(o->points < DIAGRAM_RING_POINTS ? o->points : DIAGRAM_RING_POINTS),
             (unsigned)o->points);
    if (an_report_section(r->report, "schemes", "The schemes", html) != 0)
        return DCH_ENOMEM;
    for (int s = 0; s < AN_SCHEMES; s++) {
        an_scheme_spec spec;
        char file[96], title[160], drawn[64];
        diagram_spec(r, s, &spec, drawn, sizeof drawn);
        snprintf(file, sizeof file, "diagram_join_%s.svg", r->label[s]);
        snprintf(title, sizeof title, "%s%s: node-04 joins three nodes",
                 r->label[s], drawn);
        int rc = draw_change(r, &spec, true, 0, file, title);
        if (rc != DCH_OK)
            return rc;
        an_report_image(r->report, file, title);
    }
    for (int s = 0; s < AN_SCHEMES; s++) {
        an_scheme_spec spec;
        char file[96], title[160], drawn[64];
        diagram_spec(r, s, &spec, drawn, sizeof drawn);
        snprintf(file, sizeof file, "diagram_remove_%s.svg", r->label[s]);
        snprintf(title, sizeof title, "%s%s: node-02 leaves four nodes",
                 r->label[s], drawn);
        int rc = draw_change(r, &spec, false, 1, file, title);
        if (rc != DCH_OK)
            return rc;
        an_report_image(r->report, file, title);
    }
    return DCH_OK;
}

/* ---- 1. Growth ------------------------------------------------------------------ */

enum {
    G_SCHEME, G_N, G_MOVED, G_OPT, G_OLD, G_DONORS, G_DONATION, G_PEAK,
    G_CUM, G_HARMONIC, G_HALVING, G_SAMPLED, G_Z, G_COLS
};

/* What the findings paragraph says about one scheme's joins. */
typedef struct growth_summary {
    double max_dev;      /* largest |moved - 1/N| */
    double min_ratio;    /* smallest moved / (1/N) */
    double max_ratio;
    uint32_t max_donors; /* most donors of one join */
    double min_donor_frac; /* smallest donors / (N - 1) */
    double max_donation; /* largest donation over ideal */
    double cumulative;
    double between_old;
} growth_summary;

static int grow_one(an_run *r, int s, an_table *t, an_progress *p,
                    growth_summary *gs)
{
    const uint32_t nodes = r->opt.nodes;
    const int width = name_width(nodes);
    char name[64];
    an_scheme sc;
    int rc = an_scheme_new(&sc, &r->spec[s]);
    if (rc != DCH_OK)
        return fail("growth", rc);
    an_ranges prev = {NULL, 0}, cur = {NULL, 0};
    an_changes ch = {NULL, 0, 0};
    node_name(name, sizeof name, width, 1);
    rc = an_scheme_add(&sc, name, 1, NULL);
    if (rc == DCH_OK)
        rc = an_scheme_ranges(&sc, &prev);
    an_scheme_lookup_many(&sc, r->keys, r->opt.keys, r->own_before);
    *gs = (growth_summary){0.0, INFINITY, 0.0, 0, INFINITY, 0.0, 0.0, 0.0};
    an_balance bal = {1, 1.0, 1.0, 0.0};
    for (uint32_t n = 2; n <= nodes && rc == DCH_OK; n++) {
        uint32_t id;
        node_name(name, sizeof name, width, n);
        rc = an_scheme_add(&sc, name, 1, &id);
        if (rc == DCH_OK)
            rc = an_scheme_ranges(&sc, &cur);
        if (rc == DCH_OK)
            rc = an_changes_diff(&ch, &prev, &cur);
        an_moves mv;
        if (rc == DCH_OK)
            rc = an_moves_of(&ch, an_scheme_id_limit(&sc), id, &mv);
        if (rc == DCH_OK)
            rc = balance_now(&sc, &cur, &bal);
        if (rc != DCH_OK)
            break;
        double sampled, z;
        sample_step(r, s, AN_PHASE_GROWTH, &sc, &ch, id, mv.moved, &sampled,
                    &z);
        double opt = 1.0 / n;
        double ideal = 1.0 / ((double)n * (n - 1));
        gs->cumulative += mv.moved;
        gs->between_old += mv.moved_other;
        if (fabs(mv.moved - opt) > gs->max_dev)
            gs->max_dev = fabs(mv.moved - opt);
        if (mv.moved / opt < gs->min_ratio)
            gs->min_ratio = mv.moved / opt;
        if (mv.moved / opt > gs->max_ratio)
            gs->max_ratio = mv.moved / opt;
        if ((double)mv.donors / (n - 1) < gs->min_donor_frac)
            gs->min_donor_frac = (double)mv.donors / (n - 1);
        if (mv.donors > gs->max_donors)
            gs->max_donors = mv.donors;
        if (mv.max_donation / ideal > gs->max_donation)
            gs->max_donation = mv.max_donation / ideal;
        if (an_table_row(t) != 0) {
            rc = DCH_ENOMEM;
            break;
        }
        an_table_text(t, G_SCHEME, r->label[s]);
        an_table_int(t, G_N, n);
        an_table_num(t, G_MOVED, mv.moved);
        an_table_num(t, G_OPT, opt);
        an_table_num(t, G_OLD, mv.moved_other);
        an_table_int(t, G_DONORS, mv.donors);
        an_table_num(t, G_DONATION, mv.max_donation / ideal);
        an_table_num(t, G_PEAK, bal.peak_to_avg);
        an_table_num(t, G_CUM, gs->cumulative);
        an_table_num(t, G_HARMONIC, an_harmonic_migration(n));
        an_table_num(t, G_HALVING, an_halving_migration(n));
        an_table_num(t, G_SAMPLED, sampled);
        an_table_num(t, G_Z, z);
        an_ranges_free(&prev);
        prev = cur;
        cur = (an_ranges){NULL, 0};
        an_progress_update(p, r->label[s], (double)s * nodes + n,
                           (double)AN_SCHEMES * nodes);
    }
    an_changes_free(&ch);
    an_ranges_free(&prev);
    an_ranges_free(&cur);
    if (rc != DCH_OK) {
        an_scheme_free(&sc);
        return fail("growth", rc);
    }
    r->grown[s] = sc;
    r->grown_peak[s] = bal.peak_to_avg;
    r->growth_between_old[s] = gs->between_old;
    return DCH_OK;
}

int an_section_growth(an_run *r)
{
    const an_column cols[G_COLS] = {
        {"scheme", "scheme", NULL},
        {"N", "n", NULL},
        {"moved", "moved", "%.5f"},
        {"1/N", "optimum", "%.5f"},
        {"old->old", "moved_between_old", "%.3g"},
        {"donors", "donors", NULL},
        {"max donation/ideal", "max_donation_over_ideal", "%.3f"},
        {"peak/avg", "peak_to_avg", "%.4f"},
        {"cumulative", "cumulative", "%.4f"},
        {"1/2+..+1/N", "harmonic_sum", "%.4f"},
        {"halving", "halving_sum", "%.4f"},
        {"sampled", "sampled_moved", "%.5f"},
        {"z", "sampled_z", "%+.2f"},
    };
    char title[256];
    snprintf(title, sizeof title,
             "1. Growth: one join at a time, 1 -> %u nodes (fractions of the "
             "hash space)",
             (unsigned)r->opt.nodes);
    an_table *t = an_table_new("growth", title, cols, G_COLS);
    if (t == NULL)
        return fail("growth", DCH_ENOMEM);
    an_progress p;
    an_progress_begin(&p, "growth");
    growth_summary gs[AN_SCHEMES];
    for (int s = 0; s < AN_SCHEMES; s++) {
        an_table_gap(t);
        int rc = grow_one(r, s, t, &p, &gs[s]);
        if (rc != DCH_OK) {
            an_table_free(t);
            return rc;
        }
    }
    an_progress_end(&p);

    const uint32_t N = r->opt.nodes;
    const double slot = 1.0 / ((double)r->opt.units * r->opt.slots);
    for (int s = 0; s < AN_SCHEMES; s++) {
        an_glance *g = &r->glance[s];
        g->join_ratio_min = gs[s].min_ratio;
        g->join_ratio_max = gs[s].max_ratio;
        g->join_donor_frac_min = gs[s].min_donor_frac;
        g->join_donors_max = gs[s].max_donors;
        g->join_donation_max = gs[s].max_donation;
    }
    char zb[96], mp[2][32];
    sbuf h = {NULL, 0, 0, false};
    sb_printf(&h,
              "<p>Starting from one node, node-02 .. node-%02u join one at a "
              "time. For each join the table gives the share of the hash "
              "space that changed owner (<i>moved</i>) against the optimum "
              "1/N (the joiner's fair share, the least any scheme can move), "
              "the share that moved between two old members "
              "(<i>old-&gt;old</i>: a violation of monotonicity), how many "
              "old members gave something (<i>donors</i>), the largest single "
              "donation over the ideal 1/(N(N&minus;1)) that each of N&minus;1 "
              "equal donors would give, and the peak-to-average ownership "
              "after the join. <i>cumulative</i> sums the moved shares; "
              "<i>1/2+..+1/N</i> is the least possible total and "
              "<i>halving</i> is the sequence 1/2 + 1/4 + 1/4 + 1/8 + ... "
              "that the DCH description (" DCH_DESCRIPTION ") gives for the plain ring. "
              "<i>sampled</i> and <i>z</i> repeat the moved share with %zu "
              "sampled keys (section 6).</p>",
              (unsigned)N, r->opt.keys);
    sb_printf(&h,
              "<p><b>In this run.</b> DCH moved 1/N to within %.2g of the hash "
              "space at every join (one slot is %.3g), so the sequence of its "
              "moves is 1/2, 1/3, 1/4, ... and its total after %u nodes is "
              "%.4f against the least possible %.4f. %s moved between "
              "%.3g and %.3g times the optimum per join, the plain ring between "
              "%.3g and %.3g times; their totals are %.4f and %.4f (halving "
              "sequence: %.4f). Nothing moved between old members %s. "
              "The difference is who pays: under DCH %s of the "
              "old members donate at every join and no donation exceeds "
              "%.2f times the ideal, while the plain ring took each joiner's "
              "share from at most %u neighbour%s (largest donation %.1f times "
              "the ideal); %s drew on %s of the old members at "
              "every join, but unevenly (largest donation %.2f times the "
              "ideal).</p>",
              gs[0].max_dev, slot, (unsigned)N, gs[0].cumulative,
              an_harmonic_migration(N), r->label[1], gs[1].min_ratio,
              gs[1].max_ratio, gs[2].min_ratio, gs[2].max_ratio,
              gs[1].cumulative, gs[2].cumulative, an_halving_migration(N),
              zero_or_values(zb, sizeof zb, (const double[]){gs[0].between_old,
                                                              gs[1].between_old,
                                                              gs[2].between_old}),
              members_part(mp[0], sizeof mp[0], gs[0].min_donor_frac),
              gs[0].max_donation, (unsigned)gs[2].max_donors,
              gs[2].max_donors == 1 ? "" : "s", gs[2].max_donation, r->label[1],
              members_part(mp[1], sizeof mp[1], gs[1].min_donor_frac),
              gs[1].max_donation);
    int rc = an_report_section(r->report, "growth", "1. Growth",
                               sb_str(&h));
    sb_free(&h);
    if (rc != 0 || an_report_table(r->report, t) != 0)
        return fail("growth", DCH_ENOMEM);

    sbuf gp = {NULL, 0, 0, false};
    /* Moved share per join. */
    sb_printf(&gp, "set xlabel 'members after the join (N)'\n"
                   "set ylabel 'moved share (log scale)'\nset logscale y\n"
                   "set format y '10^{%%L}'\nset key top right\n");
    for (int s = 0; s < AN_SCHEMES; s++)
        gp_series(&gp, s == 0, "growth.csv", 2, 3, r->label[s],
                  "linespoints pt 7 ps 0.7 lw 2", SCHEME_COLOUR[s],
                  r->label[s]);
    gp_series(&gp, false, "growth.csv", 2, 4, r->label[0], "lines dt 2 lw 2",
              "#000000", "optimum 1/N");
    sb_printf(&gp, "\n");
    an_report_chart(r->report, "growth_moved",
                    "Share of the hash space moved by each join, against the "
                    "optimum 1/N",
                    sb_str(&gp));
    sb_free(&gp);
    /* Cumulative migration. */
    sb_printf(&gp, "set xlabel 'members (N)'\nset ylabel 'sum of moved shares'\n"
                   "set key top left\n");
    for (int s = 0; s < AN_SCHEMES; s++)
        gp_series(&gp, s == 0, "growth.csv", 2, 9, r->label[s],
                  "linespoints pt 7 ps 0.6 lw 2", SCHEME_COLOUR[s],
                  r->label[s]);
    gp_series(&gp, false, "growth.csv", 2, 10, r->label[0], "lines dt 2 lw 2",
              "#000000", "1/2 + 1/3 + ... + 1/N (DCH)");
    gp_series(&gp, false, "growth.csv", 2, 11, r->label[0], "lines dt 3 lw 2",
              "#7f7f7f", "1/2 + 1/4 + 1/4 + 1/8 ... (halving)");
    sb_printf(&gp, "\n");
    an_report_chart(r->report, "growth_cumulative",
                    "Cumulative migration from 1 node to N nodes, against the "
                    "harmonic and halving sums",
                    sb_str(&gp));
    sb_free(&gp);
    /* Donors. DCH and the 160-point ring both reach all N-1 old members, so
     * DCH is drawn last, as open circles around the ring's filled points. */
    sb_printf(&gp, "set xlabel 'members after the join (N)'\n"
                   "set ylabel 'donors'\nset key top left\n");
    for (int k = 0; k < AN_SCHEMES; k++) {
        const int s = (k + 1) % AN_SCHEMES;
        gp_series(&gp, k == 0, "growth.csv", 2, 6, r->label[s],
                  s == 0 ? "points pt 6 ps 1.6 lw 2" : "linespoints pt 7 ps 0.6 lw 2",
                  SCHEME_COLOUR[s], r->label[s]);
    }
    sb_printf(&gp, ", \\\n     x - 1 with lines dt 2 lc rgb '#000000' title "
                   "'all N-1 old members'\n");
    an_report_chart(r->report, "growth_donors",
                    "Old members that donate to the joiner (DCH's open circles "
                    "and ring-160's points both lie on N-1)",
                    sb_str(&gp));
    sb_free(&gp);
    /* Largest donation. */
    sb_printf(&gp, "set xlabel 'members after the join (N)'\n"
                   "set ylabel 'largest donation / ideal (log scale)'\n"
                   "set logscale y\nset key top left\n");
    for (int s = 0; s < AN_SCHEMES; s++)
        gp_series(&gp, s == 0, "growth.csv", 2, 7, r->label[s],
                  "linespoints pt 7 ps 0.6 lw 2", SCHEME_COLOUR[s],
                  r->label[s]);
    sb_printf(&gp, ", \\\n     x - 1 with lines dt 2 lc rgb '#000000' title "
                   "'N-1: one donor gives it all'\n");
    an_report_chart(r->report, "growth_donation",
                    "Largest single donation of each join over the ideal "
                    "1/(N(N-1))",
                    sb_str(&gp));
    sb_free(&gp);
    return DCH_OK;
}

/* ---- 2. Shrink -------------------------------------------------------------------- */

enum {
    S_SCHEME, S_STEP, S_N, S_LEAVER, S_SHARE, S_FAIR, S_MOVED, S_RATIO,
    S_OTHER, S_RECEIVERS, S_RECEIPT, S_SAMPLED, S_Z, S_COLS
};

typedef struct shrink_summary {
    double min_ratio, max_ratio; /* moved / leaver's share */
    double total_moved;
    double min_receiver_frac;    /* receivers / survivors */
    uint32_t max_receivers;      /* most receivers of one removal */
    double max_receipt;          /* largest receipt over ideal */
    double between_others;
} shrink_summary;

static int shrink_one(an_run *r, int s, an_table *t, const uint32_t *order,
                      uint32_t steps, shrink_summary *ss)
{
    const int width = name_width(r->opt.nodes);
    an_scheme sc;
    int rc = an_scheme_clone(&sc, &r->grown[s]);
    if (rc != DCH_OK)
        return fail("shrink", rc);
    an_ranges prev = {NULL, 0}, cur = {NULL, 0};
    an_changes ch = {NULL, 0, 0};
    rc = an_scheme_ranges(&sc, &prev);
    an_scheme_lookup_many(&sc, r->keys, r->opt.keys, r->own_before);
    *ss = (shrink_summary){INFINITY, 0.0, 0.0, INFINITY, 0, 0.0, 0.0};
    for (uint32_t k = 0; k < steps && rc == DCH_OK; k++) {
        char name[64];
        node_name(name, sizeof name, width, order[k]);
        uint32_t id, n = an_scheme_count(&sc);
        uint32_t limit = an_scheme_id_limit(&sc);
        rc = an_scheme_find(&sc, name, &id);
        double share = 0.0;
        if (rc == DCH_OK) {
            share = share_of(&prev, id);
            rc = an_scheme_remove(&sc, id);
        }
        if (rc == DCH_OK)
            rc = an_scheme_ranges(&sc, &cur);
        if (rc == DCH_OK)
            rc = an_changes_diff(&ch, &prev, &cur);
        an_moves mv;
        if (rc == DCH_OK)
            rc = an_moves_of(&ch, limit, id, &mv);
        if (rc != DCH_OK)
            break;
        double sampled, z;
        sample_step(r, s, AN_PHASE_SHRINK, &sc, &ch, id, mv.moved, &sampled,
                    &z);
        double ideal = share / (n - 1);
        double ratio = share > 0.0 ? mv.moved / share : NAN;
        if (ratio < ss->min_ratio)
            ss->min_ratio = ratio;
        if (ratio > ss->max_ratio)
            ss->max_ratio = ratio;
        ss->total_moved += mv.moved;
        ss->between_others += mv.moved_other;
        if ((double)mv.receivers / (n - 1) < ss->min_receiver_frac)
            ss->min_receiver_frac = (double)mv.receivers / (n - 1);
        if (mv.receivers > ss->max_receivers)
            ss->max_receivers = mv.receivers;
        if (ideal > 0.0 && mv.max_receipt / ideal > ss->max_receipt)
            ss->max_receipt = mv.max_receipt / ideal;
        if (an_table_row(t) != 0) {
            rc = DCH_ENOMEM;
            break;
        }
        an_table_text(t, S_SCHEME, r->label[s]);
        an_table_int(t, S_STEP, k + 1);
        an_table_int(t, S_N, n);
        an_table_text(t, S_LEAVER, name);
        an_table_num(t, S_SHARE, share);
        an_table_num(t, S_FAIR, 1.0 / n);
        an_table_num(t, S_MOVED, mv.moved);
        an_table_num(t, S_RATIO, ratio);
        an_table_num(t, S_OTHER, mv.moved_other);
        an_table_int(t, S_RECEIVERS, mv.receivers);
        an_table_num(t, S_RECEIPT, ideal > 0.0 ? mv.max_receipt / ideal : NAN);
        an_table_num(t, S_SAMPLED, sampled);
        an_table_num(t, S_Z, z);
        an_ranges_free(&prev);
        prev = cur;
        cur = (an_ranges){NULL, 0};
    }
    an_changes_free(&ch);
    an_ranges_free(&prev);
    an_ranges_free(&cur);
    an_scheme_free(&sc);
    return rc == DCH_OK ? DCH_OK : fail("shrink", rc);
}

int an_section_shrink(an_run *r)
{
    const uint32_t nodes = r->opt.nodes;
    const uint32_t steps = nodes - r->opt.shrink_to;
    /* The removal order: a seeded draw among the members still there. */
    uint32_t *left = malloc(nodes * sizeof *left);
    uint32_t *order = malloc((steps ? steps : 1) * sizeof *order);
    if (left == NULL || order == NULL) {
        free(left);
        free(order);
        return fail("shrink", DCH_ENOMEM);
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

    const an_column cols[S_COLS] = {
        {"scheme", "scheme", NULL},
        {"step", "step", NULL},
        {"N", "n_before", NULL},
        {"leaver", "leaver", NULL},
        {"its share", "leaver_share", "%.5f"},
        {"1/N", "fair_share", "%.5f"},
        {"moved", "moved", "%.5f"},
        {"moved/share", "moved_over_share", "%.4f"},
        {"others", "moved_between_others", "%.3g"},
        {"receivers", "receivers", NULL},
        {"max receipt/ideal", "max_receipt_over_ideal", "%.3f"},
        {"sampled", "sampled_moved", "%.5f"},
        {"z", "sampled_z", "%+.2f"},
    };
    char title[256];
    snprintf(title, sizeof title,
             "2. Shrink: seeded removals, %u -> %u nodes", (unsigned)nodes,
             (unsigned)r->opt.shrink_to);
    an_table *t = an_table_new("shrink", title, cols, S_COLS);
    if (t == NULL) {
        free(order);
        return fail("shrink", DCH_ENOMEM);
    }
    an_progress p;
    an_progress_begin(&p, "shrink");
    shrink_summary ss[AN_SCHEMES];
    for (int s = 0; s < AN_SCHEMES; s++) {
        an_table_gap(t);
        int rc = shrink_one(r, s, t, order, steps, &ss[s]);
        if (rc != DCH_OK) {
            an_table_free(t);
            free(order);
            return rc;
        }
        an_progress_update(&p, r->label[s], s + 1.0, AN_SCHEMES);
    }
    an_progress_end(&p);
    free(order);
    for (int s = 0; s < AN_SCHEMES; s++) {
        an_glance *g = &r->glance[s];
        g->leave_ratio_min = ss[s].min_ratio;
        g->leave_ratio_max = ss[s].max_ratio;
        g->leave_receiver_frac_min = ss[s].min_receiver_frac;
        g->leave_receivers_max = ss[s].max_receivers;
        g->leave_receipt_max = ss[s].max_receipt;
    }

    char rr[AN_SCHEMES][80], zb[96], mp[2][32];
    sbuf h = {NULL, 0, 0, false};
    sb_printf(&h,
              "<p>From the %u nodes of section 1, members chosen by a seeded "
              "generator leave one at a time until %u remain (the same "
              "members in the same order for every scheme). For each removal: "
              "the leaver's share before it left, the share that moved, the "
              "share that moved between two survivors (<i>others</i>), how "
              "many survivors received something, and the largest receipt "
              "over the ideal (the leaver's share split equally over the "
              "N&minus;1 survivors).</p>"
              "<p>The DCH description (" DCH_DESCRIPTION ") claims that "
              "removing a node moves no data. It cannot be so: the leaver's keys must go somewhere, so "
              "a removal moves exactly the leaver's share, in every scheme. "
              "What differs is where it goes.</p>",
              (unsigned)nodes, (unsigned)r->opt.shrink_to);
    sb_printf(&h,
              "<p><b>In this run.</b> Every removal moved the leaver's share "
              "(moved/share %s for DCH, %s for %s, %s for ring-1); over the %u "
              "removals DCH moved %.4f of the hash space in all, %s %.4f and "
              "ring-1 %.4f. Nothing moved between survivors %s. "
              "Under DCH %s of the survivors received a part and "
              "no receipt exceeded %.2f times the ideal; the plain ring gave "
              "each leaver's share to at most %u neighbour%s (largest receipt "
              "%.1f times the ideal) and %s to %s of the "
              "survivors (largest receipt %.2f times).</p>",
              ratio_range(rr[0], sizeof rr[0], ss[0].min_ratio, ss[0].max_ratio),
              ratio_range(rr[1], sizeof rr[1], ss[1].min_ratio, ss[1].max_ratio),
              r->label[1],
              ratio_range(rr[2], sizeof rr[2], ss[2].min_ratio, ss[2].max_ratio),
              (unsigned)steps, ss[0].total_moved, r->label[1],
              ss[1].total_moved, ss[2].total_moved,
              zero_or_values(zb, sizeof zb, (const double[]){ss[0].between_others,
                                                              ss[1].between_others,
                                                              ss[2].between_others}),
              members_part(mp[0], sizeof mp[0], ss[0].min_receiver_frac),
              ss[0].max_receipt, (unsigned)ss[2].max_receivers,
              ss[2].max_receivers == 1 ? "" : "s", ss[2].max_receipt, r->label[1],
              members_part(mp[1], sizeof mp[1], ss[1].min_receiver_frac),
              ss[1].max_receipt);
    int rc = an_report_section(r->report, "shrink", "2. Shrink", sb_str(&h));
    sb_free(&h);
    if (rc != 0 || an_report_table(r->report, t) != 0)
        return fail("shrink", DCH_ENOMEM);

    sbuf gp = {NULL, 0, 0, false};
    sb_printf(&gp, "set xlabel 'removal'\nset ylabel 'share of the hash space'\n"
                   "set key top left\nset yrange [-0.005:*]\n");
    for (int s = 0; s < AN_SCHEMES; s++)
        gp_series(&gp, s == 0, "shrink.csv", 2, 7, r->label[s],
                  "linespoints pt 7 ps 0.6 lw 2", SCHEME_COLOUR[s],
                  r->label[s]);
    gp_series(&gp, false, "shrink.csv", 2, 6, r->label[0], "lines dt 2 lw 2",
              "#000000", "fair share 1/N");
    sb_printf(&gp, ", \\\n     0 with lines lw 2 lc rgb '#999999' title "
                   "'claimed by 000\\_9b3f07b0b8e46b09.txt: no data moves'\n");
    an_report_chart(r->report, "shrink_moved",
                    "Share moved by each removal: the leaver's share, not the "
                    "zero the DCH description claims",
                    sb_str(&gp));
    sb_free(&gp);
    /* At most the N-1 survivors can receive; DCH reaches them all, as does
     * the 160-point ring, so DCH is drawn last as open circles. */
    sb_printf(&gp, "set xlabel 'removal'\nset ylabel 'receivers'\n"
                   "set key top right\nset yrange [0:*]\n");
    for (int k = 0; k < AN_SCHEMES; k++) {
        const int s = (k + 1) % AN_SCHEMES;
        gp_series(&gp, k == 0, "shrink.csv", 2, 10, r->label[s],
                  s == 0 ? "points pt 6 ps 1.6 lw 2" : "linespoints pt 7 ps 0.6 lw 2",
                  SCHEME_COLOUR[s], r->label[s]);
    }
    sb_printf(&gp, ", \\\n     'shrink.csv' skip 1 using 2:(strcol(1) eq '%s' ? $3 - 1 : 1/0) "
                   "with lines dt 2 lw 2 lc rgb '#000000' title 'all N-1 survivors'\n",
              r->label[0]);
    an_report_chart(r->report, "shrink_receivers",
                    "Survivors that receive part of the leaver's share, against "
                    "the N-1 that can",
                    sb_str(&gp));
    sb_free(&gp);
    return DCH_OK;
}

/* ---- 3. Weights ---------------------------------------------------------------------- */

enum {
    W_SCHEME, W_CHANGE, W_BEFORE, W_AFTER, W_TARGET, W_MOVED, W_OPTIMAL,
    W_RATIO, W_OTHER, W_SAMPLED, W_Z, W_COLS
};

static const uint32_t WEIGHT_STEPS[] = {2, 4, 1, 0, 1};
#define WEIGHT_NSTEPS (sizeof WEIGHT_STEPS / sizeof WEIGHT_STEPS[0])

static int weigh_one(an_run *r, int s, an_table *t, double *max_ratio,
                     double *between)
{
    const int width = name_width(r->opt.nodes);
    char name[64];
    node_name(name, sizeof name, width, 1);
    an_scheme sc;
    int rc = an_scheme_clone(&sc, &r->grown[s]);
    if (rc != DCH_OK)
        return fail("weights", rc);
    uint32_t id = 0;
    an_ranges prev = {NULL, 0}, cur = {NULL, 0};
    an_changes ch = {NULL, 0, 0};
    rc = an_scheme_find(&sc, name, &id);
    if (rc == DCH_OK)
        rc = an_scheme_ranges(&sc, &prev);
    an_scheme_lookup_many(&sc, r->keys, r->opt.keys, r->own_before);
    *max_ratio = 0.0;
    *between = 0.0;
    for (size_t k = 0; k < WEIGHT_NSTEPS && rc == DCH_OK; k++) {
        uint32_t w0 = an_scheme_weight(&sc, id), w1 = WEIGHT_STEPS[k];
        uint32_t limit = an_scheme_id_limit(&sc);
        uint32_t *weights = malloc(limit * sizeof *weights);
        if (weights == NULL) {
            rc = DCH_ENOMEM;
            break;
        }
        an_scheme_weights(&sc, weights);
        double total0 = 0.0;
        for (uint32_t i = 0; i < limit; i++)
            total0 += weights[i];
        free(weights);
        double total1 = total0 - w0 + w1;
        double target0 = w0 / total0, target1 = total1 > 0 ? w1 / total1 : 0;
        double before = share_of(&prev, id);
        rc = an_scheme_set_weight(&sc, id, w1);
        if (rc == DCH_OK)
            rc = an_scheme_ranges(&sc, &cur);
        if (rc == DCH_OK)
            rc = an_changes_diff(&ch, &prev, &cur);
        an_moves mv;
        if (rc == DCH_OK)
            rc = an_moves_of(&ch, limit, id, &mv);
        if (rc != DCH_OK)
            break;
        double sampled, z;
        sample_step(r, s, AN_PHASE_WEIGHTS, &sc, &ch, id, mv.moved, &sampled,
                    &z);
        double optimal = fabs(target1 - target0);
        double ratio = optimal > 0 ? mv.moved / optimal : NAN;
        if (ratio > *max_ratio)
            *max_ratio = ratio;
        *between += mv.moved_other;
        char change[96];
        snprintf(change, sizeof change, "%s %u->%u", name, (unsigned)w0,
                 (unsigned)w1);
        if (an_table_row(t) != 0) {
            rc = DCH_ENOMEM;
            break;
        }
        an_table_text(t, W_SCHEME, r->label[s]);
        an_table_text(t, W_CHANGE, change);
        an_table_num(t, W_BEFORE, before);
        an_table_num(t, W_AFTER, share_of(&cur, id));
        an_table_num(t, W_TARGET, target1);
        an_table_num(t, W_MOVED, mv.moved);
        an_table_num(t, W_OPTIMAL, optimal);
        an_table_num(t, W_RATIO, ratio);
        an_table_num(t, W_OTHER, mv.moved_other);
        an_table_num(t, W_SAMPLED, sampled);
        an_table_num(t, W_Z, z);
        an_ranges_free(&prev);
        prev = cur;
        cur = (an_ranges){NULL, 0};
    }
    an_changes_free(&ch);
    an_ranges_free(&prev);
    an_ranges_free(&cur);
    an_scheme_free(&sc);
    return rc == DCH_OK ? DCH_OK : fail("weights", rc);
}

int an_section_weights(an_run *r)
{
    const an_column cols[W_COLS] = {
        {"scheme", "scheme", NULL},
        {"change", "change", NULL},
        {"share before", "share_before", "%.5f"},
        {"share after", "share_after", "%.5f"},
        {"target", "target_share", "%.5f"},
        {"moved", "moved", "%.5f"},
        {"optimal", "optimal", "%.5f"},
        {"moved/optimal", "moved_over_optimal", "%.4f"},
        {"others", "moved_between_others", "%.3g"},
        {"sampled", "sampled_moved", "%.5f"},
        {"z", "sampled_z", "%+.2f"},
    };
    char title[256];
    snprintf(title, sizeof title,
             "3. Weights: one member of %u raised, lowered, drained and "
             "restored",
             (unsigned)r->opt.nodes);
    an_table *t = an_table_new("weights", title, cols, W_COLS);
    if (t == NULL)
        return fail("weights", DCH_ENOMEM);
    double ratio[AN_SCHEMES], between[AN_SCHEMES];
    for (int s = 0; s < AN_SCHEMES; s++) {
        an_table_gap(t);
        int rc = weigh_one(r, s, t, &ratio[s], &between[s]);
        if (rc != DCH_OK) {
            an_table_free(t);
            return rc;
        }
    }
    char zb[96];
    sbuf h = {NULL, 0, 0, false};
    sb_printf(&h,
              "<p>On the %u nodes of section 1 (all of weight 1), node-01's "
              "weight goes 1 &rarr; 2 &rarr; 4 &rarr; 1 &rarr; 0 (drained, "
              "still a member) &rarr; 1. The <i>target</i> share is its "
              "weight over the sum of weights; the <i>optimal</i> move is the "
              "change of that target, the least any scheme can move. The ring "
              "gives a member of weight w exactly w times its points per "
              "weight, so ring-1 at weight 2 has two points.</p>"
              "<p><b>In this run.</b> The largest moved/optimal was %.4f for "
              "DCH, %.4f for %s and %.4f for ring-1; nothing moved between "
              "the other members %s. A ring only moves the "
              "arcs of the points it adds or drops, so it meets the optimum "
              "only as far as those arcs happen to match the target.</p>",
              (unsigned)r->opt.nodes, ratio[0], ratio[1], r->label[1],
              ratio[2], zero_or_values(zb, sizeof zb, between));
    int rc = an_report_section(r->report, "weights", "3. Weights",
                               sb_str(&h));
    sb_free(&h);
    if (rc != 0 || an_report_table(r->report, t) != 0)
        return fail("weights", DCH_ENOMEM);
    return DCH_OK;
}

/* ---- 4. Balance ----------------------------------------------------------------------- */

/* Cost of one add in progress units: ring adds move the points already
 * placed; a map add visits its P slots, which here costs about as much as
 * moving P/128 ring points. */
static double add_cost(const an_scheme_spec *spec, uint32_t n)
{
    if (spec->kind == AN_KIND_RING)
        return (double)spec->points * n;
    return (double)spec->units * spec->slots_per_unit / 128.0;
}

/* Peak/avg and CV of a scheme grown to each N in ns. Names are those of
 * section 1 (node-01, ...), so at N = nodes the cluster is the grown one. */
static int balance_series(const an_scheme_spec *spec, int width,
                          const uint32_t *ns, size_t nn, double *peak,
                          double *cv, an_progress *p, double *done,
                          double total)
{
    const uint32_t max = ns[nn - 1];
    an_scheme sc;
    int rc = an_scheme_new(&sc, spec);
    if (rc != DCH_OK)
        return fail("balance", rc);
    size_t k = 0;
    char detail[64];
    snprintf(detail, sizeof detail, "%s", spec->label);
    for (uint32_t n = 1; n <= max && rc == DCH_OK; n++) {
        char name[64];
        node_name(name, sizeof name, width, n);
        rc = an_scheme_add(&sc, name, 1, NULL);
        if (rc != DCH_OK || n != ns[k])
            goto next;
        an_ranges rs = {NULL, 0};
        an_balance b;
        rc = an_scheme_ranges(&sc, &rs);
        if (rc == DCH_OK)
            rc = balance_now(&sc, &rs, &b);
        an_ranges_free(&rs);
        if (rc == DCH_OK) {
            peak[k] = b.peak_to_avg;
            cv[k] = b.cv;
            k++;
        }
    next:
        *done += add_cost(spec, n);
        an_progress_update(p, detail, *done, total);
    }
    an_scheme_free(&sc);
    return rc == DCH_OK ? DCH_OK : fail("balance", rc);
}

static int cmp_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return (a > b) - (a < b);
}

/* Sorted unique values of v[0 .. n-1], in place; returns the new count. */
static size_t sort_unique(uint32_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    return k;
}

/* Exact coefficient of variation of a member's share on a ring of n members
 * with v uniformly placed points each: the share is Beta(v, (n-1)v), whose
 * CV is sqrt((n-1) / (n v + 1)); about 1/sqrt(v) for large n. */
static double ring_cv_expected(uint32_t n, uint32_t v)
{
    return sqrt((n - 1.0) / ((double)n * v + 1.0));
}

int an_section_balance(an_run *r)
{
    const an_options *o = &r->opt;
    uint32_t ns[BALANCE_NS_MAX];
    size_t nn = 0;
    for (size_t i = 0; i < sizeof BALANCE_NS / sizeof BALANCE_NS[0]; i++)
        if (BALANCE_NS[i] <= o->balance_max)
            ns[nn++] = BALANCE_NS[i];
    ns[nn++] = o->balance_max;
    if (o->nodes <= o->balance_max)
        ns[nn++] = o->nodes;
    nn = sort_unique(ns, nn);

    uint32_t pts[SWEEP_MAX];
    size_t np = 0;
    for (size_t i = 0; i < sizeof SWEEP_POINTS / sizeof SWEEP_POINTS[0]; i++)
        pts[np++] = SWEEP_POINTS[i];
    pts[np++] = o->points;
    np = sort_unique(pts, np);

    /* Series 0 is DCH, then one ring per point count. */
    const size_t nseries = 1 + np;
    an_scheme_spec specs[1 + SWEEP_MAX];
    char labels[1 + SWEEP_MAX][32];
    double peak[1 + SWEEP_MAX][BALANCE_NS_MAX], cv[1 + SWEEP_MAX][BALANCE_NS_MAX];
    specs[0] = r->spec[0];
    snprintf(labels[0], sizeof labels[0], "dch");
    for (size_t i = 0; i < np; i++) {
        specs[1 + i] = r->spec[1];
        specs[1 + i].points = pts[i];
        snprintf(labels[1 + i], sizeof labels[1 + i], "ring-%u",
                 (unsigned)pts[i]);
    }
    double total = 0.0, done = 0.0;
    for (size_t i = 0; i < nseries; i++) {
        specs[i].label = labels[i];
        for (uint32_t n = 1; n <= ns[nn - 1]; n++)
            total += add_cost(&specs[i], n);
    }
    an_progress p;
    an_progress_begin(&p, "balance");
    for (size_t i = 0; i < nseries; i++) {
        int rc = balance_series(&specs[i], name_width(o->nodes), ns, nn, peak[i], cv[i], &p,
                                &done, total);
        if (rc != DCH_OK)
            return rc;
    }
    an_progress_end(&p);

    /* Wide tables: one row per N, one column per scheme. */
    an_column cols[2 + SWEEP_MAX];
    cols[0] = (an_column){"N", "n", NULL};
    an_table *tp, *tc;
    for (size_t i = 0; i < nseries; i++)
        cols[1 + i] = (an_column){labels[i], labels[i], "%.4f"};
    tp = an_table_new("balance_peak",
                      "4a. Balance: peak-to-average ownership against N",
                      cols, 1 + nseries);
    tc = an_table_new("balance_cv",
                      "4b. Balance: coefficient of variation of ownership "
                      "against N",
                      cols, 1 + nseries);
    if (tp == NULL || tc == NULL) {
        an_table_free(tp);
        an_table_free(tc);
        return fail("balance", DCH_ENOMEM);
    }
    for (size_t k = 0; k < nn; k++) {
        an_table_row(tp);
        an_table_row(tc);
        an_table_int(tp, 0, ns[k]);
        an_table_int(tc, 0, ns[k]);
        for (size_t i = 0; i < nseries; i++) {
            an_table_num(tp, 1 + i, peak[i][k]);
            an_table_num(tc, 1 + i, cv[i][k]);
        }
    }

    /* Against points per node, at N = nodes and N = balance_max. */
    size_t kn = 0, km = nn - 1;
    for (size_t k = 0; k < nn; k++)
        if (ns[k] == o->nodes)
            kn = k;
    char h[6][64];
    snprintf(h[0], sizeof h[0], "peak/avg N=%u", (unsigned)ns[kn]);
    snprintf(h[1], sizeof h[1], "CV N=%u", (unsigned)ns[kn]);
    snprintf(h[2], sizeof h[2], "expected CV N=%u", (unsigned)ns[kn]);
    snprintf(h[3], sizeof h[3], "peak/avg N=%u", (unsigned)ns[km]);
    snprintf(h[4], sizeof h[4], "CV N=%u", (unsigned)ns[km]);
    snprintf(h[5], sizeof h[5], "expected CV N=%u", (unsigned)ns[km]);
    const an_column pc[8] = {
        {"points/node", "points", NULL},
        {h[0], "peak_to_avg_n1", "%.4f"},
        {h[1], "cv_n1", "%.4f"},
        {h[2], "cv_expected_n1", "%.4f"},
        {h[3], "peak_to_avg_n2", "%.4f"},
        {h[4], "cv_n2", "%.4f"},
        {h[5], "cv_expected_n2", "%.4f"},
        {"1/sqrt(points)", "inverse_sqrt_points", "%.4f"},
    };
    an_table *tv = an_table_new("balance_points",
                                "4c. Balance of the ring against points per "
                                "node (DCH for comparison)",
                                pc, 8);
    if (tv == NULL) {
        an_table_free(tp);
        an_table_free(tc);
        return fail("balance", DCH_ENOMEM);
    }
    for (size_t i = 0; i < nseries; i++) {
        an_table_row(tv);
        if (specs[i].kind == AN_KIND_MAP) {
            an_table_text(tv, 0, "dch");
        } else {
            an_table_int(tv, 0, specs[i].points);
            an_table_num(tv, 3, ring_cv_expected(ns[kn], specs[i].points));
            an_table_num(tv, 6, ring_cv_expected(ns[km], specs[i].points));
            an_table_num(tv, 7, 1.0 / sqrt(specs[i].points));
        }
        an_table_num(tv, 1, peak[i][kn]);
        an_table_num(tv, 2, cv[i][kn]);
        an_table_num(tv, 4, peak[i][km]);
        an_table_num(tv, 5, cv[i][km]);
    }

    /* Findings: DCH's worst, and the rings at the largest N. */
    double dch_worst = 0.0;
    for (size_t k = 0; k < nn; k++)
        if (peak[0][k] > dch_worst)
            dch_worst = peak[0][k];
    size_t i160 = 1, i1 = 1;
    for (size_t i = 0; i < np; i++) {
        if (pts[i] == o->points)
            i160 = 1 + i;
        if (pts[i] == 1)
            i1 = 1 + i;
    }
    const uint32_t P = o->units * o->slots;
    /* The sweep holds DCH and the ring's point counts only; a scheme with no
     * series here (libmemcached's ketama) gets NaN, which the summary shows
     * as not measured rather than another scheme's figure. */
    const size_t glance_series[3] = {0, i160, i1};
    for (int s = 0; s < AN_SCHEMES; s++) {
        r->glance[s].peak_n1 = s < 3 ? peak[glance_series[s]][kn] : NAN;
        r->glance[s].peak_n2 = s < 3 ? peak[glance_series[s]][km] : NAN;
    }
    r->glance_n1 = ns[kn];
    r->glance_n2 = ns[km];
    sbuf hb = {NULL, 0, 0, false};
    sb_printf(&hb,
              "<p><b>Balance</b> (Karger et al.): keys spread evenly over the "
              "members. Measured exactly from the ownership ranges as each "
              "member's share over its fair share 1/N: the peak-to-average "
              "ratio (the fullest member, 1.0 is perfect) and the coefficient "
              "of variation (standard deviation over mean) for N = 2 .. %u. "
              "Each scheme is grown one node at a time and measured at the "
              "listed N; the ring is measured for 1, 10, 40, 160 and 640 "
              "points per node. For a ring with v random points per node the "
              "share of a node is Beta(v, (N&minus;1)v) distributed, so its "
              "expected CV is sqrt((N&minus;1)/(Nv+1)), about 1/sqrt(v): "
              "halving the spread costs four times the points.</p>",
              (unsigned)ns[km]);
    sb_printf(&hb,
              "<p><b>In this run.</b> DCH's peak-to-average never exceeded "
              "%.4f for any N up to %u: with P = %u slots a member owns "
              "floor or ceil of P/N slots, so its excess is at most one slot "
              "(N/P of its share). At N = %u %s's peak-to-average "
              "was %.3f (CV %.3f) and the plain ring's %.3f (CV %.3f); at N "
              "= %u they were %.3f and %.3f.</p>",
              dch_worst, (unsigned)ns[km], (unsigned)P, (unsigned)ns[kn],
              labels[i160], peak[i160][kn], cv[i160][kn], peak[i1][kn],
              cv[i1][kn], (unsigned)ns[km], peak[i160][km], peak[i1][km]);
    int rc = an_report_section(r->report, "balance", "4. Balance",
                               sb_str(&hb));
    sb_free(&hb);
    if (rc != 0 || an_report_table(r->report, tp) != 0 ||
        an_report_table(r->report, tc) != 0 ||
        an_report_table(r->report, tv) != 0)
        return fail("balance", DCH_ENOMEM);

    static const char *const sweep_colour[] = {"#2ca02c", "#9467bd", "#8c564b",
                                               "#1f77b4", "#17becf", "#e377c2"};
    sbuf gp = {NULL, 0, 0, false};
    /* Peaks run from 1.0 to about 10: ticks where the curves are, not only
     * at 1 and 10 as a log axis puts them by default. */
    sb_printf(&gp, "set xlabel 'members (N, log scale)'\n"
                   "set ylabel 'largest share / fair share (log scale)'\n"
                   "set logscale xy\nset key top left\n"
                   "set xrange [1.5:*]\nset yrange [0.95:*]\n"
                   "set ytics (1, 1.1, 1.2, 1.5, 2, 3, 5, 7, 10, 15, 20, 30)\n"
                   "set format x '%%g'\n");
    for (size_t i = 0; i < nseries; i++)
        sb_printf(&gp, "%s'balance_peak.csv' skip 1 using 1:%zu with "
                       "linespoints pt 7 ps 0.6 lw 2 lc rgb '%s' title '%s'",
                  i == 0 ? "plot " : ", \\\n     ", i + 2,
                  i == 0 ? SCHEME_COLOUR[0] : sweep_colour[(i - 1) % 6],
                  labels[i]);
    sb_printf(&gp, "\n");
    an_report_chart(r->report, "balance_n",
                    "Peak-to-average ownership against N: DCH and rings of 1 "
                    "to 640 points per node",
                    sb_str(&gp));
    sb_free(&gp);
    sb_printf(&gp,
              "set xlabel 'points per node (log scale)'\n"
              "set format x '%%g'\nset format y '%%g'\n"
              "set ylabel 'ratio (log scale)'\nset logscale xy\n"
              "set key top right\n"
              "plot 'balance_points.csv' skip 1 using 1:2 with linespoints "
              "pt 7 lw 2 lc rgb '#1f77b4' title 'peak/avg, N=%u', \\\n"
              "     '' skip 1 using 1:5 with linespoints pt 5 lw 2 "
              "lc rgb '#17becf' title 'peak/avg, N=%u', \\\n"
              "     '' skip 1 using 1:3 with linespoints pt 7 lw 2 "
              "lc rgb '#d62728' title 'CV, N=%u', \\\n"
              "     '' skip 1 using 1:6 with linespoints pt 5 lw 2 "
              "lc rgb '#ff7f0e' title 'CV, N=%u', \\\n"
              "     '' skip 1 using 1:8 with lines dt 2 lw 2 "
              "lc rgb '#000000' title '1/sqrt(points)'\n",
              (unsigned)ns[kn], (unsigned)ns[km], (unsigned)ns[kn],
              (unsigned)ns[km]);
    an_report_chart(r->report, "balance_points",
                    "Ring balance against points per node (DCH: one slot "
                    "off at most, not drawn)",
                    sb_str(&gp));
    sb_free(&gp);
    return DCH_OK;
}

/* ---- 5. Karger's properties ---------------------------------------------------------------- */

enum {
    K_SCHEME, K_PEAK, K_MONO, K_SMAX, K_SMEAN, K_LOAD, K_SSMAX, K_SSMEAN,
    K_SLOAD, K_COLS
};

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

/* Build one object per view from the nodes it sees, in name order, and
 * measure spread and load. */
static int views_of(an_run *r, const an_scheme_spec *spec, const bool *sees,
                    an_spread_load *exact, an_spread_load *sampled)
{
    const uint32_t views = r->opt.views, nodes = r->opt.nodes;
    const int width = name_width(nodes);
    an_scheme *objs = calloc(views, sizeof *objs);
    uint32_t **to = calloc(views, sizeof *to);
    int rc = objs && to ? DCH_OK : DCH_ENOMEM;
    for (uint32_t v = 0; v < views && rc == DCH_OK; v++) {
        rc = an_scheme_new(&objs[v], spec);
        to[v] = malloc(nodes * sizeof *to[v]);
        if (to[v] == NULL)
            rc = DCH_ENOMEM;
        for (uint32_t g = 0; g < nodes && rc == DCH_OK; g++) {
            if (!sees[(size_t)v * nodes + g])
                continue;
            char name[64];
            uint32_t id;
            node_name(name, sizeof name, width, g + 1);
            rc = an_scheme_add(&objs[v], name, 1, &id);
            if (rc == DCH_OK)
                to[v][id] = g;
        }
    }
    if (rc == DCH_OK)
        rc = spread_load(r, objs, to, views, exact, sampled);
    for (uint32_t v = 0; objs && to && v < views; v++) {
        an_scheme_free(&objs[v]);
        free(to[v]);
    }
    free(objs);
    free(to);
    return rc;
}

/* Every view uses the one shared map (clones of it). */
static int shared_views(an_run *r, an_spread_load *exact,
                        an_spread_load *sampled)
{
    const uint32_t views = r->opt.views, nodes = r->opt.nodes;
    const int width = name_width(nodes);
    const an_scheme *m = &r->grown[0];
    uint32_t limit = an_scheme_id_limit(m);
    an_scheme *objs = calloc(views, sizeof *objs);
    uint32_t **to = calloc(views, sizeof *to);
    uint32_t *map = malloc((limit ? limit : 1) * sizeof *map);
    int rc = objs && to && map ? DCH_OK : DCH_ENOMEM;
    for (uint32_t id = 0; rc == DCH_OK && id < limit; id++) {
        map[id] = DCH_NODE_NONE;
        for (uint32_t g = 0; g < nodes; g++) {
            char name[64];
            node_name(name, sizeof name, width, g + 1);
            const char *nm = an_scheme_name(m, id);
            if (nm != NULL && strcmp(nm, name) == 0)
                map[id] = g;
        }
    }
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

/* The share of the hash space on which two objects holding the same members
 * (by name) disagree. */
static int disagreement(const an_scheme *a, const an_scheme *b,
                        const char *const *names, uint32_t nnames, double *out)
{
    an_ranges ra = {NULL, 0}, rb = {NULL, 0};
    an_changes ch = {NULL, 0, 0};
    an_moves mv;
    int rc = ranges_by_name(a, names, nnames, &ra);
    if (rc == DCH_OK)
        rc = ranges_by_name(b, names, nnames, &rb);
    if (rc == DCH_OK)
        rc = an_changes_diff(&ch, &ra, &rb);
    if (rc == DCH_OK)
        rc = an_moves_of(&ch, nnames, DCH_NODE_NONE, &mv);
    if (rc == DCH_OK)
        *out = mv.moved;
    an_changes_free(&ch);
    an_ranges_free(&ra);
    an_ranges_free(&rb);
    return rc;
}

/* The same members reached by other histories: reverse order, and a
 * temporary extra member that joins midway and leaves at the end. */
static int histories(an_run *r, int s, double *reverse, double *detour)
{
    const uint32_t nodes = r->opt.nodes;
    const int width = name_width(nodes);
    char **names = calloc(nodes, sizeof *names);
    if (names == NULL)
        return DCH_ENOMEM;
    int rc = DCH_OK;
    for (uint32_t g = 0; g < nodes && rc == DCH_OK; g++) {
        names[g] = malloc(64);
        if (names[g] == NULL)
            rc = DCH_ENOMEM;
        else
            node_name(names[g], 64, width, g + 1);
    }
    an_scheme a = {0}, b = {0}, c = {0};
    if (rc == DCH_OK)
        rc = an_scheme_new(&a, &r->spec[s]);
    if (rc == DCH_OK)
        rc = an_scheme_new(&b, &r->spec[s]);
    if (rc == DCH_OK)
        rc = an_scheme_new(&c, &r->spec[s]);
    for (uint32_t g = 0; g < nodes && rc == DCH_OK; g++) {
        rc = an_scheme_add(&a, names[g], 1, NULL);
        if (rc == DCH_OK)
            rc = an_scheme_add(&b, names[nodes - 1 - g], 1, NULL);
        if (rc == DCH_OK)
            rc = an_scheme_add(&c, names[g], 1, NULL);
        if (rc == DCH_OK && g == nodes / 2)
            rc = an_scheme_add(&c, "node-extra", 1, NULL);
    }
    uint32_t extra;
    if (rc == DCH_OK)
        rc = an_scheme_find(&c, "node-extra", &extra);
    if (rc == DCH_OK)
        rc = an_scheme_remove(&c, extra);
    const char *const *cn = (const char *const *)names;
    if (rc == DCH_OK)
        rc = disagreement(&a, &b, cn, nodes, reverse);
    if (rc == DCH_OK)
        rc = disagreement(&a, &c, cn, nodes, detour);
    an_scheme_free(&a);
    an_scheme_free(&b);
    an_scheme_free(&c);
    for (uint32_t g = 0; g < nodes; g++)
        free(names[g]);
    free(names);
    return rc;
}

int an_section_karger(an_run *r)
{
    const an_options *o = &r->opt;
    bool *sees = an_views_of_seed(o->seed, o->views, o->nodes);
    if (sees == NULL)
        return fail("karger", DCH_ENOMEM);
    double seen_mean = 0.0;
    for (size_t i = 0; i < (size_t)o->views * o->nodes; i++)
        seen_mean += sees[i];
    seen_mean /= o->views;

    /* Rows: DCH with a map per view, DCH with one shared map, the rings. */
    enum { ROWS = AN_SCHEMES + 1 };
    an_spread_load ex[ROWS], sa[ROWS];
    char row_label[ROWS][64];
    int rc = DCH_OK;
    an_progress p;
    an_progress_begin(&p, "spread and load");
    for (int s = 0; s < AN_SCHEMES && rc == DCH_OK; s++) {
        const int row = s == 0 ? 0 : s + 1;
        snprintf(row_label[row], sizeof row_label[row], "%s%s", r->label[s],
                 s == 0 ? " (a map per view)" : "");
        rc = views_of(r, &r->spec[s], sees, &ex[row], &sa[row]);
        an_progress_update(&p, r->label[s], s + 1.0, ROWS);
    }
    snprintf(row_label[1], sizeof row_label[1], "dch (one shared map)");
    if (rc == DCH_OK)
        rc = shared_views(r, &ex[1], &sa[1]);
    an_progress_end(&p);
    free(sees);
    if (rc != DCH_OK)
        return fail("karger", rc);

    const an_column cols[K_COLS] = {
        {"scheme", "scheme", NULL},
        {"balance peak/avg", "peak_to_avg", "%.4f"},
        {"monotonicity old->old", "moved_between_old", "%.3g"},
        {"spread max", "spread_max", "%.0f"},
        {"spread mean", "spread_mean", "%.3f"},
        {"load max", "load_max", "%.3f"},
        {"sampled spread max", "sampled_spread_max", "%.0f"},
        {"sampled spread mean", "sampled_spread_mean", "%.3f"},
        {"sampled load max", "sampled_load_max", "%.3f"},
    };
    char title[256];
    snprintf(title, sizeof title,
             "5. Karger's properties: N = %u, %u client views each seeing "
             "each node with probability 1/2",
             (unsigned)o->nodes, (unsigned)o->views);
    an_table *t = an_table_new("karger", title, cols, K_COLS);
    if (t == NULL)
        return fail("karger", DCH_ENOMEM);
    for (int row = 0; row < ROWS; row++) {
        int s = row == 0 || row == 1 ? 0 : row - 1;
        an_table_row(t);
        an_table_text(t, K_SCHEME, row_label[row]);
        an_table_num(t, K_PEAK, r->grown_peak[s]);
        an_table_num(t, K_MONO, r->growth_between_old[s]);
        an_table_num(t, K_SMAX, ex[row].spread_max);
        an_table_num(t, K_SMEAN, ex[row].spread_mean);
        an_table_num(t, K_LOAD, ex[row].load_max);
        an_table_num(t, K_SSMAX, sa[row].spread_max);
        an_table_num(t, K_SSMEAN, sa[row].spread_mean);
        an_table_num(t, K_SLOAD, sa[row].load_max);
    }

    const an_column hc[3] = {
        {"scheme", "scheme", NULL},
        {"reverse join order", "disagree_reverse_order", "%.4f"},
        {"extra member joined and left", "disagree_join_leave", "%.4f"},
    };
    an_table *th = an_table_new("history",
                                "5b. Same members, other history: share of "
                                "the hash space where two copies disagree",
                                hc, 3);
    if (th == NULL) {
        an_table_free(t);
        return fail("karger", DCH_ENOMEM);
    }
    double rev[AN_SCHEMES], det[AN_SCHEMES];
    for (int s = 0; s < AN_SCHEMES; s++) {
        rc = histories(r, s, &rev[s], &det[s]);
        if (rc != DCH_OK) {
            an_table_free(t);
            an_table_free(th);
            return fail("karger", rc);
        }
        an_table_row(th);
        an_table_text(th, 0, r->label[s]);
        an_table_num(th, 1, rev[s]);
        an_table_num(th, 2, det[s]);
    }

    for (int s = 0; s < AN_SCHEMES; s++) {
        const int row = s == 0 ? 0 : s + 1;
        r->glance[s].spread_views = ex[row].spread_max;
        r->glance[s].load_views = ex[row].load_max;
    }
    r->glance_shared_spread = ex[1].spread_max;
    r->glance_shared_load = ex[1].load_max;
    double ring_disagree = 0.0;
    for (int s = 1; s < AN_SCHEMES; s++)
        ring_disagree = fmax(ring_disagree, fmax(rev[s], det[s]));
    sbuf h = {NULL, 0, 0, false};
    sb_printf(&h,
              "<p>Karger et al. (1997) ask four things of a consistent hash. "
              "<b>Balance</b>: keys spread evenly over the nodes (section 4; "
              "here the peak-to-average at N = %u). <b>Monotonicity</b>: when "
              "nodes are added, keys move only to the new nodes, never "
              "between old ones (section 1; here the share that moved between "
              "old nodes, summed over all joins). <b>Spread</b>: clients that "
              "see different subsets of the nodes may send one key to "
              "different nodes; the spread of a key is how many distinct "
              "nodes it is sent to across the views. <b>Load</b>: how many "
              "distinct keys one node is asked for across the views, here "
              "the largest over the nodes relative to keys/N.</p>"
              "<p>The %u views each see each of the %u nodes with probability "
              "1/2 (at least one; %.1f on average) and build their own map or "
              "ring from the nodes they see, in name order. Spread and load "
              "are computed exactly by walking all views' ownership ranges "
              "together (max and mean over the hash space), then counted "
              "again over %zu sampled keys.</p>",
              (unsigned)o->nodes, (unsigned)o->views, (unsigned)o->nodes,
              seen_mean, o->keys);
    sb_printf(&h,
              "<p><b>In this run.</b> With a ring per view, a key went to at "
              "most %.0f nodes under %s (mean %.3f) and at most %.0f under "
              "ring-1 (mean %.3f): every ring with the same members is the "
              "same ring, so two views disagree only where one of them lacks "
              "the owner. DCH maps built independently per view do much worse "
              "(spread up to %.0f, mean %.3f; load %.2f times keys/N), because "
              "a DCH map is a function of the <i>sequence of operations</i> "
              "that built it, not of the member set: table 5b shows two maps "
              "with the same %u members disagreeing on %.1f%% of the hash "
              "space when the members joined in reverse order, and on %.1f%% "
              "after an extra member joined and left, where the rings "
              "disagree on %.3g%%. DCH is therefore not meant to be recomputed "
              "by each client: clients share the map itself, versioned by its "
              "epoch (dch_map_epoch), and then every client sends every key "
              "to the same node (spread %.0f, load %.3f). That is the trade: "
              "exact balance and evenly spread migration, at the price of "
              "state that clients must share; the ring needs no shared state, "
              "at the price of variance and neighbour-only migration.</p>",
              ex[2].spread_max, r->label[1], ex[2].spread_mean,
              ex[3].spread_max, ex[3].spread_mean, ex[0].spread_max,
              ex[0].spread_mean, ex[0].load_max, (unsigned)o->nodes,
              100.0 * rev[0], 100.0 * det[0], 100.0 * ring_disagree,
              ex[1].spread_max,
              ex[1].load_max);
    rc = an_report_section(r->report, "karger", "5. Karger's properties",
                           sb_str(&h));
    sb_free(&h);
    if (rc != 0 || an_report_table(r->report, t) != 0 ||
        an_report_table(r->report, th) != 0)
        return fail("karger", DCH_ENOMEM);

    sbuf gp = {NULL, 0, 0, false};
    sb_printf(&gp,
              "set style data histograms\n"
              "set style histogram clustered gap 1\n"
              "set style fill solid 0.85 border -1\n"
              "set boxwidth 0.9\nset yrange [0:*]\n"
              "set key outside top center horizontal\n"
              "set ylabel 'nodes per key / keys per node over keys/N'\n"
              "set xtics noenhanced\n"
              "plot 'karger.csv' skip 1 using 4:xtic(1) title 'spread max' "
              "lc rgb '#1f77b4', \\\n"
              "     '' skip 1 using 5 title 'spread mean' lc rgb '#aec7e8', \\\n"
              "     '' skip 1 using 6 title 'load max' lc rgb '#d62728'\n");
    char caption[256];
    snprintf(caption, sizeof caption,
             "Spread and load over %u client views (N = %u): views that build "
             "their own map or ring, and views that share one DCH map",
             (unsigned)o->views, (unsigned)o->nodes);
    an_report_chart(r->report, "karger_spread_load", caption, sb_str(&gp));
    sb_free(&gp);
    return DCH_OK;
}

/* ---- 6. Sampled keys ----------------------------------------------------------------------- */

int an_section_sampled(an_run *r)
{
    static const char *const phase_name[AN_PHASES] = {"growth", "shrink",
                                                      "weights"};
    const an_column cols[7] = {
        {"scheme", "scheme", NULL},
        {"phase", "phase", NULL},
        {"steps", "steps", NULL},
        {"keys", "keys", NULL},
        {"max |z|", "max_abs_z", "%.2f"},
        {"keys off the plan", "mismatched_keys", NULL},
        {"keys moved between others", "moved_between_others_keys", NULL},
    };
    an_table *t = an_table_new("sampled",
                               "6. Sampled keys against the exact range "
                               "figures",
                               cols, 7);
    if (t == NULL)
        return fail("sampled", DCH_ENOMEM);
    double worst = 0.0;
    size_t steps = 0, mismatched = 0;
    for (int s = 0; s < AN_SCHEMES; s++) {
        an_table_gap(t);
        for (int ph = 0; ph < AN_PHASES; ph++) {
            const an_sample_stats *st = &r->stats[s][ph];
            an_table_row(t);
            an_table_text(t, 0, r->label[s]);
            an_table_text(t, 1, phase_name[ph]);
            an_table_int(t, 2, st->steps);
            an_table_int(t, 3, (long long)r->opt.keys);
            an_table_num(t, 4, st->max_abs_z);
            an_table_int(t, 5, (long long)st->mismatched);
            an_table_int(t, 6, (long long)st->moved_other);
            if (st->max_abs_z > worst)
                worst = st->max_abs_z;
            steps += st->steps;
            mismatched += st->mismatched;
        }
    }
    sbuf h = {NULL, 0, 0, false};
    sb_printf(&h,
              "<p>Every figure above is exact, computed from ownership "
              "ranges. To confirm them, %zu keys (\"key-0\", \"key-1\", ...) "
              "are hashed with the cluster's SipHash key and looked up with "
              "dch_map_lookup_hash / dch_ring_lookup_hash before and after "
              "every step. The sampled moved share is a binomial estimate of "
              "the exact one: z is their difference in standard errors, "
              "sqrt(p(1&minus;p)/keys), and should mostly lie within &plusmn;2 "
              "(its largest absolute value over many steps grows slowly, "
              "about 3 over a hundred steps). <i>Keys off the plan</i> counts "
              "keys whose move disagrees with the range diff (moved but not in "
              "a changed range, or moved to another owner than the diff "
              "says); it must be 0.</p>"
              "<p><b>In this run.</b> Over %zu steps the largest |z| was "
              "%.2f, and %zu keys were off the plan.</p>",
              r->opt.keys, steps, worst, mismatched);
    int rc = an_report_section(r->report, "sampled", "6. Sampled keys",
                               sb_str(&h));
    sb_free(&h);
    if (rc != 0 || an_report_table(r->report, t) != 0)
        return fail("sampled", DCH_ENOMEM);
    return DCH_OK;
}
