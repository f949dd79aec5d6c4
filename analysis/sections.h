/* SPDX-License-Identifier: MIT */
/*
 * The built-in scenario of dch-analysis: a table of report sections, each in
 * a file of its own (section_*.c), and what they share: the run's state, the
 * step that changes a scheme and measures the change, and a few helpers.
 *
 * Four schemes are measured side by side: the DCH map with its defaults,
 * the classic ring with `points` points per unit of weight (ketama's 160 by
 * default), the plain ring of the descriptions, one point per node, and
 * ketama exactly as libmemcached 1.1 builds it (weighted, MD5), labelled
 * "libmemcached".
 * Members are named node-01, node-02, ... and added in that (name) order.
 */
#ifndef DCH_ANALYSIS_SECTIONS_H
#define DCH_ANALYSIS_SECTIONS_H

#include "columns.h"
#include "options.h"
#include "report.h"
#include "scheme.h"
#include "text.h"

#include <stdbool.h>

/** The schemes compared: DCH, ring with `points` points, ring with 1,
 *  libmemcached's ketama. */
#define AN_SCHEMES 4

/** How the sampled keys agreed with the exact figures in one phase. */
typedef struct an_sample_stats {
    uint32_t steps;
    double max_abs_z;
    size_t mismatched;
    size_t moved_other;
} an_sample_stats;

/** Phases whose steps are checked with sampled keys. */
enum { AN_PHASE_GROWTH, AN_PHASE_SHRINK, AN_PHASE_WEIGHTS, AN_PHASE_MAINTENANCE, AN_PHASES };

/** What the joins (or the removals) of one scheme cost, over all of them. */
typedef struct an_change_figures {
    double ratio_min, ratio_max; /* moved over what had to move */
    double parties_frac_min;     /* donors (receivers) over the N-1 that could */
    uint32_t parties_max;        /* most donors (receivers) of one change */
    double largest;              /* largest donation (receipt) over the ideal */
} an_change_figures;

/** Figures before any change: every minimum infinite, every maximum 0. */
an_change_figures an_change_figures_none(void);

/** Who took part in a scheme's changes, in the words of a section's
 *  opening: words[0] when every one that could did, words[1] when at most
 *  one did, else words[2]. */
const char *an_parties_phrase(const an_change_figures *f, const char *const words[3]);

/** Fold one change into *f; a NaN figure is passed over. */
void an_change_figures_add(an_change_figures *f, double ratio, double frac,
                           uint32_t parties, double largest);

/**
 * One scheme's row of the summary at the top of the report, filled in by
 * the sections that measure each figure.
 */
typedef struct an_glance {
    double peak_n1, peak_n2;      /* balance: peak/avg at glance_n1, glance_n2 */
    double spread_views;          /* spread max, an object per client view */
    double load_views;            /* load max over keys/N, likewise */
    an_change_figures join;       /* over 1/N; donation over 1/(N(N-1)) */
    an_change_figures leave;      /* over the leaver's share; receipt over
                                     share/(N-1) */
} an_glance;

/** State shared by the sections of one run. */
typedef struct an_run {
    an_options opt;
    uint8_t hash_key[16];
    an_scheme_spec spec[AN_SCHEMES];
    char label[AN_SCHEMES][32];
    uint64_t *keys; /* opt.keys sampled hashes, ascending */
    uint32_t *own_before;
    uint32_t *own_after;
    an_report *report;
    an_scheme grown[AN_SCHEMES]; /* each scheme after growth to opt.nodes */
    an_sample_stats stats[AN_SCHEMES][AN_PHASES];
    double growth_between_old[AN_SCHEMES]; /* summed over the joins */
    double grown_peak[AN_SCHEMES];         /* peak/avg at opt.nodes */
    an_glance glance[AN_SCHEMES];
    uint32_t glance_n1, glance_n2;         /* the N of the balance columns */
    double glance_shared_spread;           /* DCH, every view shares one map */
    double glance_shared_load;
} an_run;

/** Set up schemes, hash key and sampled keys. @return DCH_OK or an error. */
int an_run_init(an_run *r, const an_options *opt, an_report *report);

/** Free what an_run_init and the sections allocated. */
void an_run_free(an_run *r);

/* ---- The table of sections ------------------------------------------------ */

#define AN_MAX_NEEDS 4

/** What a section runs: DCH_OK, or an error after a message. Every
 *  section's run has this one signature (the list below the runner). */
typedef int an_section_run(an_run *r);

/**
 * One section of the report: `name` is its anchor and the name others need
 * it by; `run` measures and adds its blocks to the report; `needs` names the
 * sections whose results (in an_run) it reads, which run before it.
 */
typedef struct an_section {
    const char *name;
    const char *title;
    an_section_run *run;
    const char *needs[AN_MAX_NEEDS];
} an_section;

/** The sections in page order (an_sections_count of them). */
extern const an_section an_sections[];
extern const size_t an_sections_count;

/**
 * Run every section once, each after the sections it needs; the page shows
 * them in table order whatever order they ran in.
 * @return DCH_OK, or the first section's error (message on stderr).
 */
int an_sections_run(an_run *r);

/** Start section `name`'s part of the page: its title and intro `html`. */
int an_section_begin(an_run *r, const char *name, const char *html);

/**
 * Start section `name` with the intro in *html (freed here) and add two
 * tables to it, which the report takes (both are freed here if either is
 * NULL, as after a failed allocation).
 * @return DCH_OK, or DCH_ENOMEM after a message.
 */
int an_section_two_tables(an_run *r, const char *name, an_buf *html, an_table *first,
                          an_table *second);

/* The sections' runs, one per file section_<name>.c. */
an_section_run an_section_schemes, an_section_growth, an_section_shrink, an_section_weights,
    an_section_maintenance, an_section_units, an_section_balance, an_section_karger,
    an_section_sampled, an_section_replicas, an_section_glance, an_section_load;

/* ---- One measured change ------------------------------------------------- */

/**
 * A scheme under a sequence of changes, each measured exactly (the plan
 * from the scheme before to the scheme after, what moved, the ranges after)
 * and confirmed with the run's
 * sampled keys, whose statistics go to r->stats[scheme][phase].
 */
typedef struct an_step {
    an_run *r;
    int scheme, phase;
    an_scheme sc;        /* owned until an_step_end */
    an_ranges ranges;    /* ownership now (after the last change) */
    an_changes ch;       /* the last change's exact plan */
    an_moves mv;         /* what it moved */
    uint32_t subject;    /* the member it changed */
    double share_before; /* the subject's share before it (0 for a join) */
    double sampled, z;   /* moved share over the sampled keys, and its z */
} an_step;

/** Start changing `sc` (taken, also on failure). @return DCH_OK or an error. */
int an_step_begin(an_step *st, an_run *r, int scheme, int phase, an_scheme *sc);

/** an_step_begin on a copy of the scheme as growth left it (r->grown). */
int an_step_begin_grown(an_step *st, an_run *r, int scheme, int phase);

/**
 * Apply one change (weight is the joiner's or the new one) and measure it.
 * @return DCH_OK or the library's error; the step is then only fit for
 *         an_step_end.
 */
int an_step_apply(an_step *st, an_op op, const char *name, uint32_t weight);

/** Free the step; the scheme goes to *keep when keep is not NULL. */
void an_step_end(an_step *st, an_scheme *keep);

/* ---- Helpers the sections share ---------------------------------------------- */

/* The published description of DCH, which the report corrects and compares
 * with; docs/analysis.md ("Removals") says what it claims. */
#define AN_DCH_DESCRIPTION "the published DCH description"

/** Chart colours: one per scheme, the same in every chart. */
extern const char *const an_scheme_colour[AN_SCHEMES];

/** Each scheme's line and point type, the same in every chart. */
extern const char *const an_scheme_style[AN_SCHEMES];

/** The order a chart draws (and its key lists) the schemes in, each over
 *  the ones before: DCH, the main result, last (on top). */
extern const int an_scheme_draw_order[AN_SCHEMES];

/** A reference line (an optimum, a bound): a wide pale band, drawn first so
 *  that a series lying on it shows over it and the band around it. */
#define AN_REFERENCE_STYLE "lines lw 9"
#define AN_REFERENCE_COLOUR "#cfcfcf"

/** How far apart along x a chart draws schemes that coincide (counts such
 *  as donors, where several reach all N-1): ring-160 left, libmemcached
 *  right, the others in place. */
#define AN_DODGE 0.22

/**
 * One series per scheme, in an_scheme_draw_order, to sr[0 .. AN_SCHEMES-1]:
 * column y of `file` against column number `xcol`, only the rows of the
 * scheme (its label in the first column), in an_scheme_style. With `dodge`
 * the x of ring-160 and libmemcached move by AN_DODGE; the expressions are
 * kept in xs, which must outlive sr.
 */
void an_scheme_series(const an_run *r, an_series *sr, const char *file,
                      unsigned xcol, const char *y, bool dodge,
                      char xs[AN_SCHEMES][32]);

/** Print "dch-analysis: what: error" on stderr. @return rc. */
int an_fail(const char *what, int rc);

/**
 * A removal order: `count` members drawn one at a time among the run's
 * opt.nodes members still there, from the seeded stream opt.seed ^ `stream`
 * (each section that removes members has its own stream, so adding one
 * changes no other). Members are numbered from `first` (1 for the names
 * node-01..., 0 for indexes). @return a malloc'd array, or NULL.
 */
uint32_t *an_removal_order(const an_run *r, uint64_t stream, uint32_t first,
                           uint32_t count);

/** Balance of a scheme's ownership `rs` (shares against weights). */
int an_balance_now(const an_scheme *sc, const an_ranges *rs, an_balance *out);

/** Names a section numbers its members by: names[g] is number g. */
typedef struct an_name_list {
    const char *const *names;
    uint32_t n;
} an_name_list;

/** An an_numbering over an an_name_list: the position of name in the list
 *  (the last one if it is there twice), else DCH_NODE_NONE. */
uint32_t an_position_of(const char *name, const void *list);

/** Ranges of a scheme with owners numbered by position in names[]. */
int an_ranges_by_name(const an_scheme *sc, const char *const *names,
                      uint32_t nnames, an_ranges *out);

#endif /* DCH_ANALYSIS_SECTIONS_H */
