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
    {"max donation / ideal", "max_donation_over_ideal", "%.3f"},
    {"peak / avg", "peak_to_avg", "%.4f"},
    {"this scheme", "cumulative", "%.4f"},
    {"1/2+..+1/N", "harmonic_sum", "%.4f"},
    {"halving", "halving_sum", "%.4f"},
    {"sampled", "sampled_moved", "%.5f"},
    {"z", "sampled_z", "%+.2f"},
};

static const an_column GROWTH_SUMMARY[] = {
    {"scheme", "scheme", NULL},
    {"min", "moved_over_optimum_min", "%.4f"},
    {"max", "moved_over_optimum_max", "%.4f"},
    {"largest |moved - 1/N|", "max_deviation", "%.2g"},
    {"this scheme", "total_moved", "%.4f"},
    {"least possible", "harmonic_sum", "%.4f"},
    {"halving", "halving_sum", "%.4f"},
    {"between old members", "moved_between_old", "%.3g"},
    {"fewest / (N-1)", "donors_min_share", "%.3f"},
    {"most", "donors_max", NULL},
    {"largest donation / ideal", "max_donation_over_ideal", "%.3f"},
};

static const an_column SHRINK_SUMMARY[] = {
    {"scheme", "scheme", NULL},
    {"min", "moved_over_share_min", "%.4f"},
    {"max", "moved_over_share_max", "%.4f"},
    {"this scheme", "total_moved", "%.4f"},
    {"between survivors", "moved_between_others", "%.3g"},
    {"fewest / (N-1)", "receivers_min_share", "%.3f"},
    {"most", "receivers_max", NULL},
    {"largest receipt / ideal", "max_receipt_over_ideal", "%.3f"},
};

static const an_column SHRINK[] = {
    {"scheme", "scheme", NULL},
    {"step", "step", NULL},
    {"N", "n_before", NULL},
    {"leaver", "leaver", NULL},
    {"its share", "leaver_share", "%.5f"},
    {"1/N", "fair_share", "%.5f"},
    {"moved", "moved", "%.5f"},
    {"moved / share", "moved_over_share", "%.4f"},
    {"between others", "moved_between_others", "%.3g"},
    {"receivers", "receivers", NULL},
    {"max receipt / ideal", "max_receipt_over_ideal", "%.3f"},
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
    {"moved / optimal", "moved_over_optimal", "%.4f"},
    {"between others", "moved_between_others", "%.3g"},
    {"sampled", "sampled_moved", "%.5f"},
    {"z", "sampled_z", "%+.2f"},
};

static const an_column MAINTENANCE[] = {
    {"scheme", "scheme", NULL},
    {"maintenance", "maintenance", NULL},
    {"its share", "member_share", "%.5f"},
    {"out", "moved_out", "%.5f"},
    {"back", "moved_back", "%.5f"},
    {"in all", "moved_total", "%.5f"},
    {"between others", "moved_between_others", "%.3g"},
    {"off target", "off_target", "%.5f"},
};

static const an_column UNITS[] = {
    {"S", "slots_per_unit", NULL},
    {"units", "units", NULL},
    {"weights", "mix", NULL},
    {"members", "members", NULL},
    {"W", "weight_sum", NULL},
    {"global max", "global_max", "%.3f"},
    {"unit max", "unit_max", "%.3f"},
    {"unit p99", "unit_p99", "%.3f"},
    {"unit mean", "unit_mean", "%.3f"},
    {"< 0.5", "share_below_0_5", "%.4f"},
    {"0.5 - 1", "share_0_5_to_1", "%.4f"},
    {"1 - 2", "share_1_to_2", "%.4f"},
    {"2 - 4", "share_2_to_4", "%.4f"},
    {"4 - 8", "share_4_to_8", "%.4f"},
    {">= 8", "share_8_or_more", "%.4f"},
};

static const an_column KARGER[] = {
    {"scheme", "scheme", NULL},
    {"balance: peak / avg", "peak_to_avg", "%.4f"},
    {"monotonicity: old->old", "moved_between_old", "%.3g"},
    {"spread max", "spread_max", "%.0f"},
    {"spread mean", "spread_mean", "%.3f"},
    {"load max", "load_max", "%.3f"},
    {"spread max", "sampled_spread_max", "%.0f"},
    {"spread mean", "sampled_spread_mean", "%.3f"},
    {"load max", "sampled_load_max", "%.3f"},
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
    {"primary changed", "primary_changed", "%.5f"},
    {"promoted", "promoted", "%.5f"},
};

static const an_column REPLICAS[] = {
    {"case", "case", NULL},
    {"zones", "zones", NULL},
    {"scheme", "scheme", NULL},
    {"join min", "join_over_optimum_min", "%.4f"},
    {"join max", "join_over_optimum_max", "%.4f"},
    {"removal min", "removal_over_optimum_min", "%.4f"},
    {"removal max", "removal_over_optimum_max", "%.4f"},
    {"join", "join_promoted_max", "%.4f"},
    {"removal", "removal_promoted_max", "%.4f"},
    {"most / mean", "copy_max_over_mean", "%.4f"},
    {"fewest / mean", "copy_min_over_mean", "%.4f"},
    {"zone violations", "zone_violations_max", "%.4g"},
    {"failed", "failed", NULL},
    {"busiest / mean", "read_max_over_mean", "%.3f"},
    {"survivors", "read_receivers", NULL},
    {"busiest / mean", "primary_max_over_mean", "%.3f"},
    {"survivors", "primary_receivers", NULL},
    {"promoted part", "primary_promoted_part", "%.3f"},
    {"busiest / mean", "recopy_max_over_mean", "%.3f"},
    {"survivors", "recopy_receivers", NULL},
    {"even split", "recopy_even_max_over_mean", "%.3f"},
};

static const an_column LOAD[] = {
    {"N", "n", NULL},
    {"loads", "loads", NULL},
    {"floor", "floor", "%.3f"},
    {"count-balanced", "count_max_over_mean", "%.3f"},
    {"ring", "ring_max_over_mean", "%.3f"},
    {"greedy", "greedy_max_over_mean", "%.3f"},
    {"balanced", "dch_max_over_mean", "%.3f"},
    {"lower bound", "moved_floor", "%.4f"},
    {"balanced / bound", "dch_moved_over_floor", "%.3f"},
    {"greedy / bound", "greedy_moved_over_floor", "%.3f"},
    {"balanced", "dch_copies", NULL},
    {"greedy", "greedy_copies", NULL},
    {"balanced", "dch_above_after", NULL},
    {"greedy", "greedy_above_after", NULL},
    {"too heavy", "too_heavy", NULL},
    {"balanced ms", "dch_plan_ms", "%.2f"},
    {"greedy ms", "greedy_plan_ms", "%.2f"},
};

static const an_column LOAD_DRIFT[] = {
    {"N", "n", NULL},
    {"loads", "loads", NULL},
    {"floor", "floor_mean", "%.3f"},
    {"count-balanced", "count_mean", "%.3f"},
    {"ring", "ring_mean", "%.3f"},
    {"greedy", "greedy_mean", "%.3f"},
    {"balanced", "dch_mean", "%.3f"},
    {"drifted", "drifted_mean", "%.4f"},
    {"balanced moved", "dch_moved_mean", "%.4f"},
    {"balanced, worst", "dch_moved_over_drifted_max", "%.3f"},
    {"greedy, worst", "greedy_moved_over_drifted_max", "%.3f"},
    {"balanced", "dch_copies_mean", "%.1f"},
    {"greedy", "greedy_copies_mean", "%.1f"},
    {"balanced", "dch_repeats", NULL},
    {"greedy", "greedy_repeats", NULL},
    {"balanced", "dch_thrash", NULL},
    {"greedy", "greedy_thrash", NULL},
    {"balanced ms", "dch_plan_ms_max", "%.2f"},
};

static const an_column LOAD_GOALS[] = {
    {"goal", "goal", NULL},
    {"target", "target", "%.4g"},
    {"measured", "measured", "%.4g"},
    {"where", "where", NULL},
    {"verdict", "verdict", NULL},
};

static const an_column LOAD_EPOCHS[] = {
    {"scheme", "scheme", NULL},
    {"N", "n", NULL},
    {"loads", "loads", NULL},
    {"epoch", "epoch", NULL},
    {"max/mean", "max_over_mean", "%.4f"},
    {"floor", "floor", "%.4f"},
    {"drifted", "drifted", "%.6g"},
    {"moved load", "moved_load", "%.6g"},
    {"lower bound", "moved_floor", "%.6g"},
    {"copies", "copies", NULL},
    {"above before", "above_before", NULL},
    {"above after", "above_after", NULL},
    {"repeats", "repeats", NULL},
    {"thrash", "thrash", NULL},
    {"plan ms", "plan_ms", "%.3f"},
};

/* A group of columns: from column `first` on, under `caption`. */
typedef struct group_spec {
    size_t first;
    const char *caption;
} group_spec;

#define MAX_GROUP_SPECS 8

typedef struct table_spec {
    const char *id; /* the CSV's file stem */
    const an_column *cols;
    size_t ncols;
    size_t keys; /* leading columns that name a row */
    group_spec groups[MAX_GROUP_SPECS]; /* in order; caption NULL ends */
} table_spec;

#define SPEC(id, cols, keys, ...) {id, cols, sizeof cols / sizeof cols[0], keys, __VA_ARGS__}

static const table_spec SPECS[] = {
    [AN_TABLE_GROWTH] = SPEC("growth", GROWTH, 2,
                             {{2, "the join"},
                              {8, "moved in all since 1 node"},
                              {11, "sampled keys (section 6)"}}),
    [AN_TABLE_GROWTH_SUMMARY] = SPEC("growth_summary", GROWTH_SUMMARY, 1,
                                     {{1, "moved / optimum 1/N, per join"},
                                      {4, "moved in all, 1 node to N"},
                                      {7, "who gave: old members that donate"}}),
    [AN_TABLE_SHRINK_SUMMARY] = SPEC("shrink_summary", SHRINK_SUMMARY, 1,
                                     {{1, "moved / the leaver's share, per removal"},
                                      {3, "moved in all"},
                                      {5, "who received: survivors"}}),
    [AN_TABLE_SHRINK] = SPEC("shrink", SHRINK, 2,
                             {{2, "the removal"}, {11, "sampled keys (section 6)"}}),
    [AN_TABLE_WEIGHTS] = SPEC("weights", WEIGHTS, 2,
                              {{2, "the change"}, {9, "sampled keys (section 6)"}}),
    [AN_TABLE_MAINTENANCE] = SPEC("maintenance", MAINTENANCE, 2,
                                  {{2, "the member"},
                                   {3, "keys moved: share of the hash space"},
                                   {7, "the end"}}),
    [AN_TABLE_UNITS] = SPEC("units", UNITS, 3,
                            {{3, "the map"},
                             {5, "deviation from the share, in slots"},
                             {9, "(member, unit) pairs by deviation in slots"}}),
    [AN_TABLE_KARGER] = SPEC("karger", KARGER, 1,
                             {{1, "sections 4 and 1"},
                              {3, "over the views, exact"},
                              {6, "over the sampled keys"}}),
    [AN_TABLE_HISTORY] = SPEC("history", HISTORY, 1, {{0, NULL}}),
    [AN_TABLE_SAMPLED] = SPEC("sampled", SAMPLED, 2, {{0, NULL}}),
    [AN_TABLE_REPLICAS] = SPEC("replicas", REPLICAS, 1,
                               {{1, "the case"},
                                {3, "new copies per change / optimum (data moved)"},
                                {7, "largest share promoted by one change (no data moved)"},
                                {9, "copies after growth to N, and zones"},
                                {12, "a member fails: reads go to the next copy"},
                                {15, "it is removed: its keys' new primaries"},
                                {18, "and its copies are re-created (data moved)"}}),
    [AN_TABLE_REPLICA_STEPS] = SPEC("replica_steps", REPLICA_STEPS, 1, {{0, NULL}}),
    [AN_TABLE_LOAD] = SPEC("load", LOAD, 2,
                           {{2, "max/mean load after one balancing call"},
                            {7, "load moved, share of the total, against the lower bound"},
                            {10, "copies moved"},
                            {12, "members above bound after"},
                            {15, "plan time"}}),
    [AN_TABLE_LOAD_DRIFT] = SPEC("load_drift", LOAD_DRIFT, 2,
                                 {{2, "max/mean load, mean over the epochs"},
                                  {7, "load per epoch, share of the total"},
                                  {9, "moved / drifted across bounds"},
                                  {11, "copies moved per epoch"},
                                  {13, "slots moved twice in 5 epochs"},
                                  {15, "of them, from a member within bound"},
                                  {17, "plan time"}}),
    [AN_TABLE_LOAD_GOALS] = SPEC("load_goals", LOAD_GOALS, 1, {{0, NULL}}),
    [AN_TABLE_LOAD_EPOCHS] = SPEC("load_epochs", LOAD_EPOCHS, 4, {{0, NULL}}),
};

an_table *an_table_for(an_table_kind kind, const char *fmt, ...)
{
    const table_spec *sp = &SPECS[kind];
    char title[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(title, sizeof title, fmt, ap);
    va_end(ap);
    an_table *t = an_table_new(sp->id, title, sp->cols, sp->ncols);
    if (t == NULL)
        return NULL;
    an_table_keys(t, sp->keys);
    for (size_t g = 0; g < MAX_GROUP_SPECS && sp->groups[g].caption != NULL; g++)
        if (an_table_group(t, sp->groups[g].first, sp->groups[g].caption) != 0) {
            an_table_free(t);
            return NULL;
        }
    return t;
}
