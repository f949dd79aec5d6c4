/* SPDX-License-Identifier: MIT */
/*
 * The settings of a dch-analysis run. One table lists every option once:
 * its name, what it sets, its range and its help line, so the parser and
 * --help cannot drift apart.
 */
#ifndef DCH_ANALYSIS_OPTIONS_H
#define DCH_ANALYSIS_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** Every setting of a run. */
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

/** The defaults: the library's default map and ring, 32 nodes, ... */
void an_options_default(an_options *o);

/**
 * Parse argv into *o (defaults first); values are borrowed from argv.
 * @return 0 to run, 1 after printing --help, -1 after a message on bad usage.
 */
int an_options_parse(int argc, char **argv, an_options *o);

/** The help text, with the defaults in brackets. */
void an_options_usage(FILE *f);

#endif /* DCH_ANALYSIS_OPTIONS_H */
