/* SPDX-License-Identifier: MIT */
/*
 * The columns of every fixed table the report writes, in one place: each
 * table's CSV header line is its keys, so this file is the schema a program
 * that reads the report relies on (the balance tables, whose columns follow
 * the swept point counts, build theirs in section_balance.c).
 */
#include "columns.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static const an_column GROWTH[] = {
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

static const an_column SHRINK[] = {
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

static const an_column WEIGHTS[] = {
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

static const an_column UNITS[] = {
    {"S", "slots_per_unit", NULL},
    {"units", "units", NULL},
    {"weights", "mix", NULL},
    {"members", "members", NULL},
    {"W", "weight_sum", NULL},
    {"max |slots-Pw/W|", "global_max", "%.3f"},
    {"unit max", "unit_max", "%.3f"},
    {"unit p99", "unit_p99", "%.3f"},
    {"unit mean", "unit_mean", "%.3f"},
    {"<0.5", "share_below_0_5", "%.4f"},
    {"0.5-1", "share_0_5_to_1", "%.4f"},
    {"1-2", "share_1_to_2", "%.4f"},
    {"2-4", "share_2_to_4", "%.4f"},
    {"4-8", "share_4_to_8", "%.4f"},
    {">=8", "share_8_or_more", "%.4f"},
};

static const an_column KARGER[] = {
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

static const an_column HISTORY[] = {
    {"scheme", "scheme", NULL},
    {"reverse join order", "disagree_reverse_order", "%.4f"},
    {"extra member joined and left", "disagree_join_leave", "%.4f"},
};

static const an_column SAMPLED[] = {
    {"scheme", "scheme", NULL},
    {"phase", "phase", NULL},
    {"steps", "steps", NULL},
    {"keys", "keys", NULL},
    {"max |z|", "max_abs_z", "%.2f"},
    {"keys off the plan", "mismatched_keys", NULL},
    {"keys moved between others", "moved_between_others_keys", NULL},
};

static const an_column REPLICA_STEPS[] = {
    {"case", "case", NULL},
    {"zones", "zones", NULL},
    {"scheme", "scheme", NULL},
    {"step", "step", NULL},
    {"change", "change", NULL},
    {"N before", "n_before", NULL},
    {"N after", "n_after", NULL},
    {"member", "member", NULL},
    {"new copies", "new_copies", "%.5f"},
    {"optimum", "optimum", "%.5f"},
    {"new/optimum", "new_copies_over_optimum", "%.4f"},
    {"copies max/mean", "copy_max_over_mean", "%.4f"},
    {"copies min/mean", "copy_min_over_mean", "%.4f"},
    {"zone violations", "zone_violations", "%.4g"},
};

static const an_column REPLICAS[] = {
    {"case", "case", NULL},
    {"zones", "zones", NULL},
    {"scheme", "scheme", NULL},
    {"join new/opt min", "join_over_optimum_min", "%.4f"},
    {"join new/opt max", "join_over_optimum_max", "%.4f"},
    {"removal new/opt min", "removal_over_optimum_min", "%.4f"},
    {"removal new/opt max", "removal_over_optimum_max", "%.4f"},
    {"copies max/mean at N", "copy_max_over_mean", "%.4f"},
    {"copies min/mean at N", "copy_min_over_mean", "%.4f"},
    {"zone violations max", "zone_violations_max", "%.4g"},
    {"failed", "failed", NULL},
    {"reads max/mean", "read_max_over_mean", "%.3f"},
    {"reads to", "read_receivers", NULL},
    {"new primaries max/mean", "primary_max_over_mean", "%.3f"},
    {"new primaries to", "primary_receivers", NULL},
    {"new copies max/mean", "recopy_max_over_mean", "%.3f"},
    {"new copies to", "recopy_receivers", NULL},
};

typedef struct table_spec {
    const char *id; /* the CSV's file stem */
    const an_column *cols;
    size_t ncols;
} table_spec;

#define SPEC(id, cols) {id, cols, sizeof cols / sizeof cols[0]}

static const table_spec SPECS[] = {
    [AN_TABLE_GROWTH] = SPEC("growth", GROWTH),
    [AN_TABLE_SHRINK] = SPEC("shrink", SHRINK),
    [AN_TABLE_WEIGHTS] = SPEC("weights", WEIGHTS),
    [AN_TABLE_UNITS] = SPEC("units", UNITS),
    [AN_TABLE_KARGER] = SPEC("karger", KARGER),
    [AN_TABLE_HISTORY] = SPEC("history", HISTORY),
    [AN_TABLE_SAMPLED] = SPEC("sampled", SAMPLED),
    [AN_TABLE_REPLICAS] = SPEC("replicas", REPLICAS),
    [AN_TABLE_REPLICA_STEPS] = SPEC("replica_steps", REPLICA_STEPS),
};

an_table *an_table_for(an_table_kind kind, const char *fmt, ...)
{
    const table_spec *sp = &SPECS[kind];
    char title[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(title, sizeof title, fmt, ap);
    va_end(ap);
    return an_table_new(sp->id, title, sp->cols, sp->ncols);
}
