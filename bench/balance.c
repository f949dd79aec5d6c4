/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's balance section: the plan time of one dch_map_balance_load
 * (dch/balance.h) beside one dch_map_clone of the same map, in the same
 * process. The map is the default shape (1024 units of 64 slots, P =
 * 65,536), N = 1,000 members of weight 1 (100 with --quick, or
 * --max-nodes), count-balanced (no load move yet); the loads come from
 * 1,000,000 keys (100,000 with --quick) "key-0", "key-1", ... of Zipf
 * popularity s = 1.0 (key i of rank i), hashed to slots with the map's
 * hash, as in the analysis report's Load section. Each trial balances a
 * fresh clone (the clone is timed apart, then the call), so every call
 * plans from the same count-balanced map. Before timing, one call is
 * checked: it must leave no member above its bound (promise 1) and report
 * the loads' total. The goal: the call under 10 ms at N = 1,000.
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BALANCE_GOAL_MS 10.0

/* Slot loads of `keys` keys of Zipf popularity 1/(rank+1), near 2^36 in all. */
static uint64_t *zipf_loads(const dch_map *m, uint32_t keys, uint64_t *total)
{
    const uint32_t p = dch_map_slot_count(m);
    uint64_t *load = calloc(p, sizeof *load);
    if (load == NULL)
        return NULL;
    double h = 0.0;
    for (uint32_t r = keys; r > 0; r--)
        h += 1.0 / r;
    *total = 0;
    for (uint32_t k = 0; k < keys; k++) {
        char name[32];
        const int len = snprintf(name, sizeof name, "key-%u", (unsigned)k);
        const double pop = 68719476736.0 / h / (k + 1.0);
        const uint64_t l = pop < 1.0 ? 1u : (uint64_t)llround(pop);
        load[dch_map_slot_of(m, dch_map_hash(m, name, (size_t)len))] += l;
        *total += l;
    }
    return load;
}

/* One balancing call on a fresh clone: the clone's and the call's CPU ns. */
static int timed_call(bench *b, const dch_map *m, const uint64_t *load,
                      dch_balance_report *rep, double *clone_ns, double *call_ns)
{
    dch_map *copy = NULL;
    stopwatch sw = bench_sw_start(b);
    int rc = dch_map_clone(&copy, m);
    *clone_ns = bench_sw_stop(b, sw);
    if (rc == DCH_OK) {
        sw = bench_sw_start(b);
        rc = dch_map_balance_load(copy, load, dch_map_slot_count(m), NULL, rep);
        *call_ns = bench_sw_stop(b, sw);
    }
    b->sink += dch_map_slot_owner(copy, 0);
    dch_map_free(copy);
    return rc;
}

void bench_section_balance(bench *b)
{
    uint32_t n = b->o.quick ? 100 : b->o.max_nodes < 1000 ? b->o.max_nodes : 1000;
    n = n < 2 ? 2 : n;
    const uint32_t keys = b->o.quick ? 100000u : 1000000u;
    dch_map *m = bench_map_of(65536, n);
    uint64_t total = 0;
    uint64_t *load = m ? zipf_loads(m, keys, &total) : NULL;
    dch_balance_report rep;
    double clone_ns[BENCH_MAX_TRIALS], call_ns[BENCH_MAX_TRIALS], ratio[BENCH_MAX_TRIALS];
    int rc = load != NULL ? timed_call(b, m, load, &rep, &clone_ns[0], &call_ns[0])
                          : DCH_ENOMEM;
    if (rc != DCH_OK || rep.above_after != 0 || rep.total_load != total) {
        fprintf(stderr, "dch-bench: balance: error %d, or %u members left above their "
                        "bounds, or a wrong total\n", rc, rc == DCH_OK ? rep.above_after : 0);
        b->failed = 1;
        free(load);
        dch_map_free(m);
        return;
    }
    const unsigned trials = b->o.trials;
    for (unsigned t = 0; t < trials && rc == DCH_OK; t++) {
        rc = timed_call(b, m, load, &rep, &clone_ns[t], &call_ns[t]);
        ratio[t] = call_ns[t] / clone_ns[t];
        clone_ns[t] /= 1e6;
        call_ns[t] /= 1e6;
    }
    if (rc != DCH_OK) {
        fprintf(stderr, "dch-bench: balance: error %d\n", rc);
        b->failed = 1;
    } else {
        char g[32], s[64];
        printf("\nBalancing by load: one dch_map_balance_load on a fresh count-balanced "
               "map against one clone of it, N = %u, P = 65,536, %s keys of Zipf s = 1.0 "
               "(copies moved: %u); median [min .. max] over %u trials\n",
               (unsigned)n, bench_grouped(g, sizeof g, keys), rep.moves, trials);
        printf("  %-32s %s ms\n", "dch_map_balance_load",
               bench_stat_text(s, sizeof s, call_ns, trials));
        printf("  %-32s %s ms\n", "dch_map_clone", bench_stat_text(s, sizeof s, clone_ns,
                                                                  trials));
        bench_record_values(b, "balance", "dch_map_balance_load", n, 65536, "ms", call_ns,
                            trials, -1);
        bench_record_values(b, "balance", "dch_map_clone", n, 65536, "ms", clone_ns, trials,
                            -1);
        bench_check_values(b, "balance_plan_ms",
                           "dch_map_balance_load, ms, N=1000, P=65536, Zipf 1.0", "ms",
                           n == 1000 ? call_ns : NULL, n == 1000 ? trials : 0,
                           BENCH_GOAL_AT_MOST, BALANCE_GOAL_MS);
        bench_check_values(b, "balance_over_clone", "dch_map_balance_load / dch_map_clone",
                           "x", ratio, trials, BENCH_GOAL_NONE, 0);
    }
    free(load);
    dch_map_free(m);
}
