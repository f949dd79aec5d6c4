/* SPDX-License-Identifier: MIT */
/*
 * dch-analysis's options: one table drives the parser and the help text.
 * Words are read by an_arg_next (args.c, shared with dch-bench); numbers by
 * an_arg_number, against each option's range.
 */
#include "options.h"

#include "args.h"
#include "dch/dch.h"

#include <limits.h>
#include <string.h>

#define PROG "dch-analysis"

/* Limits that keep a run inside the library's limits and this machine's
 * memory: 640 points for each of 20,000 nodes stays under the ring's 2^24
 * points, and the sampled keys take 16 bytes each. */
#define MAX_NODES 20000u
#define MAX_KEYS 100000000u
#define MAX_VIEWS 1024u

/* What an option sets. */
typedef enum kind { K_U32, K_SIZE, K_U64, K_DIR, K_FLAG } kind;

typedef struct option {
    const char *name;
    kind kind;
    size_t field; /* offsetof(an_options, ...) */
    unsigned long long lo, hi;
    const char *help;
    const char *default_note; /* shown instead of the default, if set */
} option;

#define AT(f) offsetof(an_options, f)

/* A number option named after its field ("--nodes" sets nodes), so that
 * the two cannot differ; the other rows name theirs. */
#define NUM(kind, f, lo, hi, help) {"--" #f, kind, AT(f), lo, hi, help, NULL}

static const option OPTIONS[] = {
    NUM(K_U32, nodes, 2, MAX_NODES, "grow from 1 to N nodes; views choose among them"),
    NUM(K_U32, points, 1, DCH_RING_MAX_POINTS, "points per node of the ketama-style ring"),
    NUM(K_U32, units, 1, DCH_MAP_MAX_SLOTS, "DCH minimum arc units, a power of two"),
    NUM(K_U32, slots, 1, DCH_MAP_MAX_SLOTS, "DCH slots per unit, a power of two"),
    NUM(K_SIZE, keys, 1, MAX_KEYS, "sampled keys that confirm the exact figures"),
    NUM(K_U32, views, 1, MAX_VIEWS, "client views for spread and load"),
    NUM(K_U64, seed, 0, ULLONG_MAX, "seed of the hash key, removal order and views"),
    {"--shrink-to", K_U32, AT(shrink_to), 1, MAX_NODES, "removals stop at N nodes",
     "4, or nodes-1 if fewer"},
    {"--balance-max", K_U32, AT(balance_max), 2, MAX_NODES, "measure balance for N = 2 .. this",
     NULL},
    {"--out", K_DIR, AT(out), 0, 0, "report directory, created if missing", NULL},
    {"--no-charts", K_FLAG, AT(charts), 0, 0, "do not run gnuplot (CSV, diagrams, HTML only)",
     NULL},
};
#define NOPTIONS (sizeof OPTIONS / sizeof OPTIONS[0])

void an_options_default(an_options *o)
{
    dch_map_config mc;
    dch_ring_config rc;
    dch_map_config_default(&mc);
    dch_ring_config_default(&rc);
    *o = (an_options){
        .nodes = 32,
        .points = rc.points_per_weight,
        .units = mc.units,
        .slots = mc.slots_per_unit,
        .keys = 1000000,
        .views = 16,
        .shrink_to = 4,
        .balance_max = 1000,
        .seed = 1,
        .out = "report",
        .charts = true,
    };
}

/* The value of option `op` in *o, as text. */
static void value_text(const option *op, const an_options *o, char *buf,
                       size_t n)
{
    const char *p = (const char *)o + op->field;
    uint32_t u32;
    size_t sz;
    uint64_t u64;
    const char *s;
    switch (op->kind) {
    case K_U32: memcpy(&u32, p, sizeof u32); snprintf(buf, n, "%u", (unsigned)u32); break;
    case K_SIZE: memcpy(&sz, p, sizeof sz); snprintf(buf, n, "%zu", sz); break;
    case K_U64: memcpy(&u64, p, sizeof u64); snprintf(buf, n, "%llu", (unsigned long long)u64); break;
    case K_DIR: memcpy(&s, p, sizeof s); snprintf(buf, n, "%s", s); break;
    case K_FLAG: buf[0] = '\0'; break;
    }
}

void an_options_usage(FILE *f)
{
    an_options d;
    an_options_default(&d);
    fputs("Usage: dch-analysis [options]\n"
          "\n"
          "Measures the DCH partition map against the classic consistent-hash\n"
          "ring (with --points points per node, and with one) on a built-in\n"
          "scenario: growth 1 -> N one join at a time, seeded removals, weight\n"
          "changes, balance for N up to --balance-max and against points per\n"
          "node, and Karger's spread and load over client views. Figures are\n"
          "exact (from ownership ranges) and confirmed with sampled keys.\n"
          "Prints one table per section and writes the report directory:\n"
          "CSV per table, charts (PNG and SVG, if gnuplot is installed), ring\n"
          "diagrams (SVG) and index.html.\n"
          "\n"
          "Options (default in brackets):\n",
          f);
    for (size_t i = 0; i < NOPTIONS; i++) {
        const option *op = &OPTIONS[i];
        char word[48], def[64];
        snprintf(word, sizeof word, "%s%s", op->name,
                 op->kind == K_FLAG ? "" : op->kind == K_DIR ? " DIR" : " N");
        value_text(op, &d, def, sizeof def);
        if (op->kind == K_FLAG)
            fprintf(f, "  %-15s  %s\n", word, op->help);
        else
            fprintf(f, "  %-15s  %s [%s]\n", word, op->help,
                    op->default_note ? op->default_note : def);
    }
    fputs("  --help           print this help and exit\n"
          "\n"
          "Exit status: 0 on success, 1 if the analysis failed, 2 on bad usage.\n",
          f);
}

/* Set option `op` of *o from `value` (NULL for a flag). @return 0 or -1. */
static int set_option(const option *op, const char *value, an_options *o)
{
    char *p = (char *)o + op->field;
    unsigned long long v = 0;
    if (op->kind == K_FLAG) {
        const bool off = false; /* --no-charts */
        memcpy(p, &off, sizeof off);
        return 0;
    }
    if (op->kind == K_DIR) {
        if (value[0] == '\0') {
            fprintf(stderr, PROG ": %s needs a directory\n", op->name);
            return -1;
        }
        memcpy(p, &value, sizeof value);
        return 0;
    }
    if (an_arg_number(PROG, op->name, value, op->lo, op->hi, &v) != 0)
        return -1;
    const uint32_t u32 = (uint32_t)v;
    const size_t sz = (size_t)v;
    const uint64_t u64 = (uint64_t)v;
    if (op->kind == K_U32)
        memcpy(p, &u32, sizeof u32);
    else if (op->kind == K_SIZE)
        memcpy(p, &sz, sizeof sz);
    else
        memcpy(p, &u64, sizeof u64);
    return 0;
}

/* Settings that depend on each other, checked once all are read. */
static int check(an_options *o, bool shrink_given)
{
    if (!shrink_given && o->shrink_to >= o->nodes)
        o->shrink_to = o->nodes - 1;
    if (o->shrink_to >= o->nodes) {
        fprintf(stderr, PROG ": --shrink-to must be below --nodes\n");
        return -1;
    }
    /* The map checks its own config; ask it now for a clear message. */
    dch_map_config mc;
    dch_map_config_default(&mc);
    mc.units = o->units;
    mc.slots_per_unit = o->slots;
    dch_map *m = NULL;
    int rc = dch_map_new(&m, &mc);
    dch_map_free(m);
    if (rc != DCH_OK) {
        fprintf(stderr,
                PROG ": --units %u --slots %u: %s (both must be powers of "
                     "two, their product at most %u)\n",
                (unsigned)o->units, (unsigned)o->slots, dch_strerror(rc),
                (unsigned)DCH_MAP_MAX_SLOTS);
        return -1;
    }
    return 0;
}

/* The table's entry for `name`, or NULL after a message. */
static const option *find_option(const char *name)
{
    for (size_t k = 0; k < NOPTIONS; k++)
        if (strcmp(name, OPTIONS[k].name) == 0)
            return &OPTIONS[k];
    fprintf(stderr, PROG ": unknown option '%s' (try --help)\n", name);
    return NULL;
}

int an_options_parse(int argc, char **argv, an_options *o)
{
    an_options_default(o);
    const char *flags[NOPTIONS + 1];
    size_t nflags = 0;
    for (size_t k = 0; k < NOPTIONS; k++)
        if (OPTIONS[k].kind == K_FLAG)
            flags[nflags++] = OPTIONS[k].name;
    flags[nflags] = NULL;
    bool shrink_given = false;
    for (int i = 1; i < argc;) {
        const bool help = strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
        an_arg a;
        const option *op = NULL;
        if (help)
            an_options_usage(stdout);
        else if (an_arg_next(PROG, argc, argv, &i, flags, &a) == 0)
            op = find_option(a.name);
        if (help || op == NULL || set_option(op, a.value, o) != 0)
            return help ? 1 : -1;
        shrink_given = shrink_given || op->field == AT(shrink_to);
    }
    return check(o, shrink_given);
}
