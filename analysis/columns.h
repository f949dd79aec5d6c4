/* SPDX-License-Identifier: MIT */
/*
 * The report's fixed tables: each kind names its CSV file and columns
 * (columns.c), so every section that writes one states only its title.
 */
#ifndef DCH_ANALYSIS_COLUMNS_H
#define DCH_ANALYSIS_COLUMNS_H

#include "table.h"

typedef enum an_table_kind {
    AN_TABLE_GROWTH,  /* growth.csv: one row per join and scheme */
    AN_TABLE_GROWTH_SUMMARY, /* growth_summary.csv: the joins, per scheme */
    AN_TABLE_SHRINK,  /* shrink.csv: one row per removal and scheme */
    AN_TABLE_SHRINK_SUMMARY, /* shrink_summary.csv: the removals, per scheme */
    AN_TABLE_WEIGHTS, /* weights.csv: one row per weight change and scheme */
    AN_TABLE_MAINTENANCE, /* maintenance.csv: drain and return, per scheme and case */
    AN_TABLE_UNITS,   /* units.csv: per-unit deviation, per config and mix */
    AN_TABLE_KARGER,  /* karger.csv: spread and load, per scheme */
    AN_TABLE_HISTORY, /* history.csv: disagreement of two histories */
    AN_TABLE_SAMPLED, /* sampled.csv: sampled keys against the exact figures */
    AN_TABLE_REPLICAS, /* replicas.csv: R copies in zones, per scheme and zone count */
    AN_TABLE_REPLICA_STEPS, /* replica_steps.csv: each change of those cases */
    AN_TABLE_LOAD,        /* load.csv: one balancing call, per N and load model */
    AN_TABLE_LOAD_DRIFT,  /* load_drift.csv: 30 epochs of drift, likewise */
    AN_TABLE_LOAD_GOALS,  /* load_goals.csv: the Load section's goals */
    AN_TABLE_LOAD_EPOCHS  /* load_epochs.csv: every epoch of every scheme */
} an_table_kind;

/**
 * A new empty table of this kind, titled by printf-style `fmt`.
 * @return it, or NULL when out of memory.
 */
an_table *an_table_for(an_table_kind kind, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif /* DCH_ANALYSIS_COLUMNS_H */
