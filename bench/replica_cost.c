/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's replica-cost section: what one replica call costs against
 * cloning the same map, measured in the same process at the same state.
 * The map is the default shape (1024 units of 64 slots) with R = 3 copies
 * and N = 1,000 members of weight 1 (100 with --quick, or --max-nodes);
 * the calls are a join (N to N + 1), a removal, a weight change (1 to 2)
 * and the join to M = 512 (M = 64 with --quick), on a map grown to one
 * fewer. Each call is timed on fresh clones, the least CPU time of
 * COST_TRIES kept, and so is the clone. docs/replicas.md ("Cost") says
 * what bounds the ratio; the target is 20 times the clone.
 */
#include "bench.h"

#include <stdio.h>
#include <string.h>

#define COST_TRIES 5
#define COST_LIMIT 20.0

typedef struct cost_call {
    const char *what;
    char op; /* 'a' add, 'r' remove, 's' set weight */
    const char *name;
    uint32_t weight;
} cost_call;

static int apply(dch_map *m, const cost_call *c)
{
    return bench_map_call(m, c->op, c->name, c->weight);
}

/* Least CPU time of cloning m (op 0) or of call c on a fresh clone. */
static double least_ns(bench *b, const dch_map *m, const cost_call *c, int *rc)
{
    double best = 0;
    for (int t = 0; t < COST_TRIES && *rc == DCH_OK; t++) {
        dch_map *copy = NULL;
        stopwatch sw = bench_sw_start(b);
        *rc = dch_map_clone(&copy, m);
        double ns = bench_sw_stop(b, sw);
        if (*rc == DCH_OK && c != NULL) {
            sw = bench_sw_start(b);
            *rc = apply(copy, c);
            ns = bench_sw_stop(b, sw);
        }
        b->sink += dch_map_slot_owner(copy, 0);
        dch_map_free(copy);
        best = t == 0 || ns < best ? ns : best;
    }
    return best;
}

/* Time c on m against the clone of m; print and check the ratio. */
static void measure(bench *b, const dch_map *m, const cost_call *c, const char *key)
{
    int rc = DCH_OK;
    const double clone = least_ns(b, m, NULL, &rc);
    const double ns = least_ns(b, m, c, &rc);
    if (rc != DCH_OK) {
        fprintf(stderr, "dch-bench: replica cost, %s: error %d\n", c->what, rc);
        b->failed = 1;
        return;
    }
    const double ratio = ns / clone;
    printf("%-22s %6u  %10.3f  %10.3f  %8.1fx\n", c->what, dch_map_node_count(m), ns / 1e6,
           clone / 1e6, ratio);
    char label[96];
    snprintf(label, sizeof label, "replica %s / clone, R = 3, default shape (target 20)",
             c->what);
    bench_check_values(b, key, label, "x", &ratio, 1, BENCH_GOAL_AT_MOST, COST_LIMIT);
}

void bench_section_replica_cost(bench *b)
{
    uint32_t n = b->o.quick ? 100 : b->o.max_nodes < 1000 ? b->o.max_nodes : 1000;
    n = n < 4 ? 4 : n;
    const uint32_t grown = b->o.quick || n < 512 ? (n < 64 ? n : 64) : 512;
    dch_map_config cfg;
    dch_map_config_default(&cfg);
    cfg.replicas = 3;
    dch_map *m = NULL, *before = NULL;
    int rc = dch_map_new(&m, &cfg);
    char name[32];
    for (uint32_t i = 0; i < n && rc == DCH_OK; i++) {
        if (i + 1 == grown)
            rc = dch_map_clone(&before, m);
        snprintf(name, sizeof name, "node-%u", i);
        if (rc == DCH_OK)
            rc = dch_map_add_node(m, name, 1, NULL);
    }
    if (rc != DCH_OK || before == NULL) {
        fprintf(stderr, "dch-bench: replica cost: growing the map: error %d\n", rc);
        b->failed = 1;
        dch_map_free(m);
        dch_map_free(before);
        return;
    }
    printf("\n== Replica calls against cloning the map (R = 3, %u slots) ==\n",
           dch_map_slot_count(m));
    printf("%-22s %6s  %10s  %10s  %9s\n", "call", "M", "call ms", "clone ms", "ratio");
    snprintf(name, sizeof name, "node-%u", grown - 1);
    const cost_call calls[] = {{"join", 'a', "joiner", 1},
                               {"removal", 'r', "node-0", 0},
                               {"weight change", 's', "node-1", 2}};
    const char *keys[] = {"replica_join_over_clone", "replica_remove_over_clone",
                          "replica_weight_over_clone"};
    for (size_t i = 0; i < 3 && !b->failed; i++)
        measure(b, m, &calls[i], keys[i]);
    char what[32];
    snprintf(what, sizeof what, "join to M = %u", grown);
    const cost_call to_grown = {what, 'a', name, 1};
    if (!b->failed)
        measure(b, before, &to_grown, "replica_join_512_over_clone");
    dch_map_free(m);
    dch_map_free(before);
}
