/*
 * The built-in scenario of dch-analysis, one function per report section.
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

#include "report.h"
#include "scheme.h"

#include <stdbool.h>

/** The schemes compared: DCH, ring with `points` points, ring with 1,
 *  libmemcached's ketama. */
#define AN_SCHEMES 4

/** Every setting of a run; main.c documents and parses them. */
typedef struct an_options {
    uint32_t nodes;       /* growth goes 1 -> nodes; views choose from them */
    uint32_t points;      /* points per weight of the ketama-style ring */
    uint32_t units;       /* DCH minimum arc units */
    uint32_t slots;       /* DCH slots per unit */
    size_t keys;          /* sampled keys */
    uint32_t views;       /* client views for spread and load */
    uint32_t shrink_to;   /* removals stop at this many members */
    uint32_t balance_max; /* balance is measured for N = 2 .. this */
    uint64_t seed;        /* hash key, removal order, views */
    const char *out;      /* report directory */
    bool charts;          /* render charts with gnuplot */
} an_options;

/** How the sampled keys agreed with the exact figures in one phase. */
typedef struct an_sample_stats {
    uint32_t steps;
    double max_abs_z;
    size_t mismatched;
    size_t moved_other;
} an_sample_stats;

/** Phases whose steps are checked with sampled keys. */
enum { AN_PHASE_GROWTH, AN_PHASE_SHRINK, AN_PHASE_WEIGHTS, AN_PHASES };

/**
 * One scheme's row of the summary at the top of the report, filled in by
 * the sections that measure each figure.
 */
typedef struct an_glance {
    double peak_n1, peak_n2;      /* balance: peak/avg at glance_n1, glance_n2 */
    double spread_views;          /* spread max, an object per client view */
    double load_views;            /* load max over keys/N, likewise */
    double join_ratio_min, join_ratio_max; /* moved / optimum 1/N */
    double join_donor_frac_min;   /* donors / old members, fewest */
    uint32_t join_donors_max;
    double join_donation_max;     /* largest donation over 1/(N(N-1)) */
    double leave_ratio_min, leave_ratio_max; /* moved / the leaver's share */
    double leave_receiver_frac_min; /* receivers / survivors, fewest */
    uint32_t leave_receivers_max;
    double leave_receipt_max;     /* largest receipt over share/(N-1) */
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

/** The schemes and their ring diagrams (one join, one removal). */
int an_section_schemes(an_run *r);
/** 1. Growth from 1 to opt.nodes members, one join at a time. */
int an_section_growth(an_run *r);
/** 2. Removals in seeded order down to opt.shrink_to members. */
int an_section_shrink(an_run *r);
/** 3. One member's weight raised, lowered and drained. */
int an_section_weights(an_run *r);
/** 4. Balance against N and against points per node. */
int an_section_balance(an_run *r);
/** 5. Karger's four properties, with client views for spread and load. */
int an_section_karger(an_run *r);
/** 6. How sampled keys confirm the exact figures. */
int an_section_sampled(an_run *r);
/**
 * The four properties at a glance: one table of every scheme's figures,
 * each linking to its section, put first in the page. Runs after the
 * sections that measure them (growth, shrink, balance, karger).
 */
int an_section_glance(an_run *r);

#endif /* DCH_ANALYSIS_SECTIONS_H */
