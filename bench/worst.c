/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's worst-case section: the single-copy engine's costliest call
 * over histories chosen to be hard, against the O(P) floor measured in the
 * same process at the same state (cloning the map and counting its owners
 * once through the public API, as publish.c does). The project's goal is
 * every single-copy call within 10 times that floor; map.h states the
 * complexity each call has and docs/placement.md ("Complexity") proves it;
 * this section measures how far the costliest calls stand from the goal.
 *
 * Each call of a history is timed on a fresh clone three times and the
 * least CPU time kept, and so is the floor; the section reports, per
 * history and per P (2^16, 2^18, 2^20; 2^16 with --quick), the worst ratio
 * of any call of the history, and checks the worst over all histories.
 * DCH_BENCH_WORST_VERBOSE names each history's worst call and gives its
 * last call's ratio too (the slow history's last call is issue 24's).
 *
 * The histories: "slow", the 15 calls of heterogeneous weights whose last
 * call once cost quadratic time in the units (64 slots a unit); "one unit",
 * a single unit of P slots shared by 300 members of mixed weights and one
 * heavy member that joins, halves and leaves; "tiny shares", 2,000 members of
 * weight 1 beside one of weight 10^6 that leaves and returns; "random", 80
 * calls of log-uniform weights (1 .. 10^6) over up to 48 members, seeded;
 * "random S=1", the same at one slot a unit (P units: the per-unit passes
 * visit every slot as a unit); "seesaw", 200 members of weight 1 to 3 and
 * a heavy one (10^6) that joins, drops to weight 3, rises and leaves, four
 * times (each call moves nearly every slot, to or from one member, with
 * 200 counterparties of equal quota); "two heavy", two members of 500,000
 * beside 3,000 of weight 1, one heavy leaving and returning, the other
 * falling to 1 and rising (thousands of receivers with a slot or less a
 * unit, the lazy give and the banded take).
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORST_TRIES 3
#define WORST_LIMIT 10.0

typedef struct worst_call {
    char op; /* 'a' add, 'r' remove, 's' set weight */
    char name[16];
    uint32_t weight;
} worst_call;

typedef struct worst_run {
    dch_map *m;
    uint32_t *per_id;
    double worst; /* the worst call / floor so far */
    double last;  /* the last call / floor */
    int rc;
    unsigned calls;   /* calls made so far */
    unsigned at;      /* the worst call's position (0-based) */
    worst_call which; /* the worst call */
} worst_run;

static int apply(dch_map *m, const worst_call *c)
{
    return bench_map_call(m, c->op, c->name, c->weight);
}

/* The floor at m's state: clone it and count its owners (least of tries). */
static double floor_ns(bench *b, worst_run *w)
{
    double best = 0;
    const uint32_t p = dch_map_slot_count(w->m), cap = DCH_MAP_MAX_NODES + 1;
    for (int t = 0; t < WORST_TRIES; t++) {
        dch_map *copy = NULL;
        const stopwatch sw = bench_sw_start(b);
        if (dch_map_clone(&copy, w->m) != DCH_OK)
            return -1;
        memset(w->per_id, 0, (size_t)cap * sizeof *w->per_id);
        for (uint32_t s = 0; s < p; s++) {
            const uint32_t o = dch_map_slot_owner(copy, s);
            w->per_id[o < cap ? o : cap - 1]++;
        }
        const double ns = bench_sw_stop(b, sw);
        b->sink += w->per_id[0];
        dch_map_free(copy);
        best = t == 0 || ns < best ? ns : best;
    }
    return best;
}

/* Time call c on fresh clones (least of tries), then apply it to w->m. */
static void step(bench *b, worst_run *w, const worst_call *c)
{
    if (w->rc != DCH_OK)
        return;
    const double fl = floor_ns(b, w);
    double best = 0;
    for (int t = 0; t < WORST_TRIES && w->rc == DCH_OK; t++) {
        dch_map *copy = NULL;
        w->rc = dch_map_clone(&copy, w->m);
        if (w->rc != DCH_OK)
            break;
        const stopwatch sw = bench_sw_start(b);
        w->rc = apply(copy, c);
        const double ns = bench_sw_stop(b, sw);
        dch_map_free(copy);
        best = t == 0 || ns < best ? ns : best;
    }
    if (w->rc == DCH_OK)
        w->rc = fl > 0 ? apply(w->m, c) : DCH_ENOMEM;
    if (w->rc == DCH_OK)
        w->last = best / fl;
    if (w->rc == DCH_OK && best / fl > w->worst) {
        w->worst = best / fl;
        w->at = w->calls;
        w->which = *c;
    }
    w->calls++;
}

static void call(bench *b, worst_run *w, char op, const char *name, uint32_t weight)
{
    worst_call c = {op, "", weight};
    snprintf(c.name, sizeof c.name, "%s", name);
    step(b, w, &c);
}

/* The calls h[0 .. n-1], in order. */
static void calls(bench *b, worst_run *w, const worst_call *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        step(b, w, &h[i]);
}

#define CALLS(h) calls(b, w, h, sizeof h / sizeof h[0])

/* The weight of the i-th member of a crowd; s is the crowd's seeded stream. */
typedef uint32_t crowd_weight(uint32_t i, uint64_t *s);

static uint32_t weight_1(uint32_t i, uint64_t *s)
{
    (void)i;
    (void)s;
    return 1;
}

static uint32_t weight_1_to_3(uint32_t i, uint64_t *s)
{
    (void)s;
    return 1 + i % 3;
}

static uint32_t weight_1_to_1000(uint32_t i, uint64_t *s)
{
    (void)i;
    return 1 + (uint32_t)(bench_splitmix64(s) % 1000);
}

/* n members join one by one, <prefix>0 .. <prefix>n-1, the i-th of weight
 * weight(i, &s) with s starting at `seed`. */
static void crowd(bench *b, worst_run *w, const char *prefix, uint32_t n, crowd_weight *weight,
                  uint64_t seed)
{
    char name[16];
    uint64_t s = seed;
    for (uint32_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s%u", prefix, i);
        call(b, w, 'a', name, weight(i, &s));
    }
}

static void history_slow(bench *b, worst_run *w)
{
    static const worst_call h[] = {
        {'a', "n0", 7},      {'a', "n1", 116},  {'r', "n1", 0},    {'a', "n2", 419256},
        {'s', "n0", 722},    {'r', "n0", 0},    {'a', "n3", 1830}, {'a', "n4", 84},
        {'a', "n5", 31},     {'a', "n6", 30},   {'a', "n8", 347},  {'a', "n10", 7255},
        {'a', "n11", 3},     {'s', "n6", 11},   {'s', "n6", 718866}};
    CALLS(h);
}

static void history_one_unit(bench *b, worst_run *w)
{
    static const worst_call heavy[] = {
        {'a', "heavy", 150000},  {'s', "heavy", 75000}, {'r', "m7", 0},   {'r', "heavy", 0},
        {'a', "heavy", 1000000}, {'s', "m3", 200000},   {'r', "heavy", 0}};
    crowd(b, w, "m", 300, weight_1_to_1000, 24);
    CALLS(heavy);
}

static void history_tiny(bench *b, worst_run *w)
{
    static const worst_call big[] = {{'a', "big", 1000000}};
    static const worst_call after[] = {
        {'r', "big", 0}, {'a', "big", 1000000}, {'s', "big", 1}, {'s', "t5", 500000}};
    CALLS(big);
    crowd(b, w, "t", 2000, weight_1, 0);
    CALLS(after);
}

/* A weight log-uniform in 1 .. 10^6. */
static uint32_t log_weight(uint64_t *s)
{
    const uint32_t digits = (uint32_t)(bench_splitmix64(s) % 6);
    uint32_t w = 1;
    for (uint32_t d = 0; d < digits; d++)
        w *= 10;
    return w + (uint32_t)(bench_splitmix64(s) % (9 * (uint64_t)w + 1));
}

static void history_random(bench *b, worst_run *w)
{
    uint64_t s = 2024;
    unsigned char in[48] = {0};
    char name[16];
    for (int i = 0; i < 80 && w->rc == DCH_OK; i++) {
        const uint32_t k = (uint32_t)(bench_splitmix64(&s) % 48);
        const uint32_t r = (uint32_t)(bench_splitmix64(&s) % 3);
        snprintf(name, sizeof name, "r%u", k);
        if (!in[k]) {
            call(b, w, 'a', name, log_weight(&s));
            in[k] = 1;
        } else if (r == 0) {
            call(b, w, 'r', name, 0);
            in[k] = 0;
        } else {
            call(b, w, 's', name, log_weight(&s));
        }
    }
}

static void history_seesaw(bench *b, worst_run *w)
{
    static const worst_call swing[] = {
        {'a', "heavy", 1000000}, {'s', "heavy", 3}, {'s', "heavy", 1000000}, {'r', "heavy", 0}};
    crowd(b, w, "s", 200, weight_1_to_3, 0);
    for (int r = 0; r < 4; r++)
        CALLS(swing);
}

static void history_two_heavy(bench *b, worst_run *w)
{
    static const worst_call heavy[] = {{'a', "A", 500000}, {'a', "B", 500000}};
    static const worst_call after[] = {
        {'r', "A", 0}, {'a', "A", 500000}, {'s', "B", 1}, {'s', "B", 700000}};
    CALLS(heavy);
    crowd(b, w, "t", 3000, weight_1, 0);
    CALLS(after);
}

typedef struct worst_history {
    const char *name;
    int spu_log; /* -1: one unit of every slot */
    void (*run)(bench *b, worst_run *w);
} worst_history;

static const worst_history histories[] = {
    {"slow", 6, history_slow},
    {"one unit", -1, history_one_unit},
    {"tiny shares", 6, history_tiny},
    {"random", 6, history_random},
    {"random S=1", 0, history_random},
    {"seesaw", 6, history_seesaw},
    {"two heavy", 6, history_two_heavy},
};

/* The worst ratio of one history at 2^plog slots; < 0 on failure. */
static double run_history(bench *b, const worst_history *h, uint32_t plog)
{
    dch_map_config cfg;
    dch_map_config_default(&cfg);
    cfg.slots_per_unit = h->spu_log >= 0 ? 1u << h->spu_log : 1u << plog;
    cfg.units = (1u << plog) / cfg.slots_per_unit;
    worst_run w = {NULL, calloc(DCH_MAP_MAX_NODES + 1, sizeof(uint32_t)), 0, 0, DCH_OK, 0, 0,
                   {0, "", 0}};
    w.rc = w.per_id == NULL ? DCH_ENOMEM : dch_map_new(&w.m, &cfg);
    if (w.rc == DCH_OK)
        h->run(b, &w);
    dch_map_free(w.m);
    free(w.per_id);
    if (w.rc == DCH_OK && getenv("DCH_BENCH_WORST_VERBOSE") != NULL)
        printf("  %s at 2^%u: worst call %u (%c %s %u): %.2fx; last call %.2fx\n", h->name,
               plog, w.at, w.which.op, w.which.name, w.which.weight, w.worst, w.last);
    if (w.rc != DCH_OK) {
        fprintf(stderr, "dch-bench: worst-case history '%s' at 2^%u: error %d\n", h->name,
                plog, w.rc);
        return -1;
    }
    return w.worst;
}

void bench_section_worst(bench *b)
{
    const size_t nh = sizeof histories / sizeof histories[0];
    const uint32_t top = b->o.quick ? 16 : 20;
    printf("\n== Worst single-copy call against the floor (clone + count owners) ==\n");
    printf("%-12s", "history");
    for (uint32_t plog = 16; plog <= top; plog += 2)
        printf("  %8s", plog == 16 ? "P=2^16" : plog == 18 ? "P=2^18" : "P=2^20");
    printf("\n");
    double worst[3] = {0, 0, 0};
    double per[sizeof histories / sizeof histories[0]][3];
    for (size_t i = 0; i < nh && !b->failed; i++) {
        for (uint32_t plog = 16, k = 0; plog <= top; plog += 2, k++) {
            per[i][k] = run_history(b, &histories[i], plog);
            if (per[i][k] < 0)
                b->failed = 1;
            worst[k] = per[i][k] > worst[k] ? per[i][k] : worst[k];
        }
        printf("%-12s", histories[i].name);
        for (uint32_t plog = 16, k = 0; plog <= top; plog += 2, k++)
            printf("  %7.2fx", per[i][k]);
        printf("\n");
    }
    for (uint32_t plog = 16, k = 0; plog <= top && !b->failed; plog += 2, k++) {
        char key[40], label[96];
        snprintf(key, sizeof key, "worst_call_over_floor_p%u", plog);
        snprintf(label, sizeof label,
                 "worst single-copy call / floor, P = 2^%u (goal: at most 10)", plog);
        bench_check_values(b, key, label, "x", &worst[k], 1, BENCH_GOAL_AT_MOST, WORST_LIMIT);
    }
}
