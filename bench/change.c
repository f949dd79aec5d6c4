/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's growth driver and the sections measured along it: a map (the
 * default config) and a ring grow to each checkpoint, 10 .. 10,000 members,
 * and at each the chosen sections run on them: memory, lookups, the key
 * path, changes (add_node, remove_node, clone) of the map and the ring, and
 * changes of the map on fresh clones (publish.c).
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Member counts the growth section stops at, in order. */
static const uint32_t checkpoints[] = {10, 100, 1000, 10000};
#define NCHECKPOINTS (sizeof checkpoints / sizeof checkpoints[0])

/* Median of a change's timings at each N, kept for the growth check. */
typedef struct change_curve {
    uint32_t n[NCHECKPOINTS];
    double add_ns[NCHECKPOINTS];
    double moved[NCHECKPOINTS];
    uint32_t p;
    size_t count;
} change_curve;

/* One repetition of section_change: the map's and the ring's calls in turn,
 * each timed alone (ns). */
typedef struct change_times {
    double madd, mrm, radd, rrm, mclone, rclone, moved;
} change_times;

static int change_once(bench *b, dch_map *m, dch_ring *r, unsigned i,
                       change_times *t)
{
    char name[48];
    snprintf(name, sizeof name, "bench-extra-%u", i);
    uint32_t mid = 0, rid = 0;
    stopwatch sw = bench_sw_start(b);
    int rc = dch_map_add_node(m, name, 1, &mid);
    t->madd = bench_sw_stop(b, sw);
    t->moved = dch_map_node_slots(m, mid);
    sw = bench_sw_start(b);
    rc = rc ? rc : dch_map_remove_node(m, mid);
    t->mrm = bench_sw_stop(b, sw);
    sw = bench_sw_start(b);
    rc = rc ? rc : dch_ring_add_node(r, name, 1, &rid);
    t->radd = bench_sw_stop(b, sw);
    sw = bench_sw_start(b);
    rc = rc ? rc : dch_ring_remove_node(r, rid);
    t->rrm = bench_sw_stop(b, sw);
    dch_map *mc = NULL;
    dch_ring *rcl = NULL;
    sw = bench_sw_start(b);
    rc = rc ? rc : dch_map_clone(&mc, m);
    t->mclone = bench_sw_stop(b, sw);
    sw = bench_sw_start(b);
    rc = rc ? rc : dch_ring_clone(&rcl, r);
    t->rclone = bench_sw_stop(b, sw);
    dch_map_free(mc);
    dch_ring_free(rcl);
    return rc;
}

/*
 * add_node and remove_node at N members, for the map and the ring, and
 * clones: each repetition adds one member and removes it again (the map is
 * left with N members, as balanced as before; the ring exactly as before),
 * the map's and the ring's calls interleaved.
 */
static void section_change(bench *b, dch_map *m, dch_ring *r, uint32_t n,
                           change_curve *curve)
{
    unsigned reps = n <= 100 ? 31 : n <= 1000 ? 15 : 7;
    if (b->o.quick)
        reps = 3;
    /* Each row: a subject's time per repetition, in ns. */
    static const char *const subjects[6] = {"dch_map_add_node",  "dch_map_remove_node",
                                            "dch_ring_add_node", "dch_ring_remove_node",
                                            "dch_map_clone",     "dch_ring_clone"};
    double v[6][BENCH_MAX_TRIALS], moved[BENCH_MAX_TRIALS], speedup[BENCH_MAX_TRIALS];
    for (unsigned i = 0; i < reps; i++) {
        change_times t;
        const int rc = change_once(b, m, r, i, &t);
        if (rc != DCH_OK) {
            fprintf(stderr, "dch-bench: a change failed at N=%u: %s\n", (unsigned)n,
                    dch_strerror(rc));
            b->failed = 1;
            return;
        }
        const double row[6] = {t.madd, t.mrm, t.radd, t.rrm, t.mclone, t.rclone};
        for (int k = 0; k < 6; k++)
            v[k][i] = row[k];
        moved[i] = t.moved;
        speedup[i] = t.radd / t.madd;
    }
    const uint32_t p = dch_map_slot_count(m);
    const uint32_t pts = dch_ring_point_count(r);
    const double mv = bench_stat_of(moved, reps).median;
    for (int k = 0; k < 6; k++) {
        const bool ring = strstr(subjects[k], "ring") != NULL;
        bench_record_values(b, "change", subjects[k], n, ring ? pts : p, "ns/call",
                            v[k], reps, k < 2 ? mv : -1);
    }

    const double add_med = bench_stat_of(v[0], reps).median;
    curve->n[curve->count] = n;
    curve->add_ns[curve->count] = add_med;
    curve->moved[curve->count] = mv;
    curve->p = p;
    curve->count++;

    char key[64], label[96];
    double us[BENCH_MAX_TRIALS];
    for (unsigned i = 0; i < reps; i++)
        us[i] = v[0][i] / 1e3;
    snprintf(key, sizeof key, "change_map_add_us_n%u", (unsigned)n);
    snprintf(label, sizeof label, "map add_node, median per call, N=%u", (unsigned)n);
    bench_check_values(b, key, label, "us", us, reps,
                       n == 1000 ? BENCH_GOAL_AT_MOST : BENCH_GOAL_NONE, 100);
    snprintf(key, sizeof key, "change_ring_add_over_map_add_n%u", (unsigned)n);
    snprintf(label, sizeof label, "ring add_node / map add_node (speed-up), N=%u",
             (unsigned)n);
    bench_check_values(b, key, label, "x", speedup, reps,
                       n == 1000 ? BENCH_GOAL_AT_LEAST : BENCH_GOAL_NONE, 5);

    printf("\nChanges at N = %u (map P = %u; ring %u points), us per call, "
           "median [min .. max] of %u\n", (unsigned)n, (unsigned)p, (unsigned)pts,
           reps);
    for (int k = 0; k < 6; k++) {
        char s[64];
        for (unsigned i = 0; i < reps; i++)
            us[i] = v[k][i] / 1e3;
        printf("  %-22s %s\n", subjects[k], bench_stat_text(s, sizeof s, us, reps));
    }
    printf("  map add/remove move %.0f slots (P/(N+1) = %.1f)\n", mv,
           (double)p / (n + 1));
}

/*
 * How map add_node grows with N: its median time per unit of the work the
 * model allows, P + moved * log2(N), which must stay flat (within 2x of its
 * value at the smallest N measured) for the cost to grow no faster.
 */
static void check_growth(bench *b, const change_curve *c)
{
    if (c->count == 0)
        return;
    printf("\nmap add_node against the model P + moved * log2 N:\n");
    double unit[NCHECKPOINTS];
    for (size_t i = 0; i < c->count; i++) {
        const double work = c->p + c->moved[i] * log2((double)c->n[i]);
        unit[i] = c->add_ns[i] / work;
        printf("  N = %5u: %9.1f us, moved %6.0f, %.3f ns per unit of work\n",
               (unsigned)c->n[i], c->add_ns[i] / 1e3, c->moved[i], unit[i]);
        char key[64], label[96];
        snprintf(key, sizeof key, "change_map_add_ns_per_work_n%u", (unsigned)c->n[i]);
        snprintf(label, sizeof label,
                 "map add_node ns / (P + moved*log2 N), N=%u", (unsigned)c->n[i]);
        bench_check_values(b, key, label, "ns", &unit[i], 1, BENCH_GOAL_NONE, 0);
    }
    const double growth = unit[c->count - 1] / unit[0];
    char label[96];
    snprintf(label, sizeof label, "map add_node cost growth vs model, N=%u..%u",
             (unsigned)c->n[0], (unsigned)c->n[c->count - 1]);
    bench_check_values(b, "change_map_add_growth", label, "x", &growth,
                       c->count > 1 ? 1 : 0, BENCH_GOAL_AT_MOST, 2);
}

/* Bytes a map and a ring hold at N members. */
static void section_memory(bench *b, const dch_map *m, const dch_ring *r, uint32_t n)
{
    const double mb = (double)dch_map_memory(m), rb = (double)dch_ring_memory(r);
    const uint32_t pts = dch_ring_point_count(r);
    bench_record_values(b, "memory", "dch_map_memory", n, dch_map_slot_count(m),
                        "bytes", &mb, 1, -1);
    bench_record_values(b, "memory", "dch_ring_memory", n, pts, "bytes", &rb, 1, -1);
    /* ring.h: 8 bytes a point, a 256 KiB bucket index, O(members). */
    const double per_member = (rb - 8.0 * pts - 256.0 * 1024) / n;
    printf("  memory at N = %5u: map %9.0f B (%.1f KiB); ring %10.0f B = 8 B x %u "
           "points + 256 KiB index + %.1f B per member\n", (unsigned)n, mb,
           mb / 1024, rb, (unsigned)pts, per_member);
    char key[64], label[96];
    const double kib = mb / 1024;
    snprintf(key, sizeof key, "memory_map_kib_n%u", (unsigned)n);
    snprintf(label, sizeof label, "map memory, default config, N=%u", (unsigned)n);
    bench_check_values(b, key, label, "KiB", &kib, 1,
                       n == 1000 ? BENCH_GOAL_AT_MOST : BENCH_GOAL_NONE, 160);
    snprintf(key, sizeof key, "memory_ring_member_bytes_n%u", (unsigned)n);
    snprintf(label, sizeof label,
             "ring memory beyond 8 B/point + 256 KiB index, per member, N=%u",
             (unsigned)n);
    bench_check_values(b, key, label, "B", &per_member, 1,
                       n == 1000 ? BENCH_GOAL_AT_MOST : BENCH_GOAL_NONE, 128);
}

/* Add members node-<have> .. node-<n-1> to both the map and the ring. */
static int grow_to(bench *b, dch_map *m, dch_ring *r, uint32_t *have, uint32_t n)
{
    for (; *have < n; (*have)++) {
        char name[32];
        snprintf(name, sizeof name, "node-%u", (unsigned)*have);
        int rc = dch_map_add_node(m, name, 1, NULL);
        rc = rc ? rc : dch_ring_add_node(r, name, 1, NULL);
        if (rc != DCH_OK) {
            fprintf(stderr, "dch-bench: building N=%u: %s\n", (unsigned)n,
                    dch_strerror(rc));
            b->failed = 1;
            return -1;
        }
    }
    return 0;
}

void bench_section_growth(bench *b)
{
    dch_map *m = NULL;
    dch_ring *r = NULL;
    if (dch_map_new(&m, NULL) != DCH_OK || dch_ring_new(&r, NULL) != DCH_OK) {
        b->failed = 1;
        dch_map_free(m);
        return;
    }
    const uint32_t path_n = b->o.max_nodes < 1000 ? b->o.max_nodes : 1000;
    change_curve curve;
    memset(&curve, 0, sizeof curve);
    publish_curve fresh;
    memset(&fresh, 0, sizeof fresh);
    bool path_done = false;
    uint32_t have = 0;
    /* With only the hash section, growth stops once the path is measured. */
    const bool path_only =
        !(b->o.sections & (SEC_LOOKUP | SEC_CHANGE | SEC_MEMORY | SEC_PUBLISH));
    for (size_t ci = 0; ci < NCHECKPOINTS && !b->failed; ci++) {
        const uint32_t n = checkpoints[ci];
        if (n > b->o.max_nodes || (path_only && path_done))
            break;
        const double t0 = bench_now_ns();
        if (grow_to(b, m, r, &have, n) != 0)
            break;
        printf("\n== N = %u members (built in %.1f s) ==\n", (unsigned)n,
               (bench_now_ns() - t0) / 1e9);
        fflush(stdout);
        if (b->o.sections & SEC_MEMORY)
            section_memory(b, m, r, n);
        if (b->o.sections & SEC_LOOKUP)
            bench_section_lookup(b, m, r, n);
        if ((b->o.sections & SEC_HASH) && n >= path_n && !path_done) {
            bench_section_path(b, m, n);
            path_done = true;
        }
        if ((b->o.sections & SEC_CHANGE) && n >= 100)
            section_change(b, m, r, n, &curve);
        if ((b->o.sections & SEC_PUBLISH) && n >= 100)
            bench_section_publish(b, m, n, &fresh);
        fflush(stdout);
    }
    if (b->o.sections & SEC_CHANGE)
        check_growth(b, &curve);
    if (b->o.sections & SEC_PUBLISH)
        bench_section_publish_growth(b, &fresh);
    dch_map_free(m);
    dch_ring_free(r);
}

/* The targets at N = 1,000, listed as not measured when a run stops short. */
static const struct target {
    unsigned section;
    const char *key, *label, *unit;
    bench_goal goal;
    double limit;
} targets_n1000[] = {
    {SEC_LOOKUP, "lookup_jump_over_dch_independent_n1000",
     "jump / dch lookup_hash (speed-up), throughput, N=1000", "x", BENCH_GOAL_AT_LEAST,
     20},
    {SEC_LOOKUP, "lookup_bsearch_over_ring_independent_n1000",
     "binary search / ring lookup_hash (speed-up), throughput, N=1000", "x",
     BENCH_GOAL_AT_LEAST, 2.5},
    {SEC_CHANGE, "change_map_add_us_n1000", "map add_node, median per call, N=1000",
     "us", BENCH_GOAL_AT_MOST, 100},
    {SEC_CHANGE, "change_ring_add_over_map_add_n1000",
     "ring add_node / map add_node (speed-up), N=1000", "x", BENCH_GOAL_AT_LEAST, 5},
    {SEC_MEMORY, "memory_map_kib_n1000", "map memory, default config, N=1000", "KiB",
     BENCH_GOAL_AT_MOST, 160},
    {SEC_MEMORY, "memory_ring_member_bytes_n1000",
     "ring memory beyond 8 B/point + 256 KiB index, per member, N=1000", "B",
     BENCH_GOAL_AT_MOST, 128},
};

void bench_note_unmeasured(bench *b)
{
    if (b->o.max_nodes >= 1000)
        return;
    for (size_t i = 0; i < sizeof targets_n1000 / sizeof targets_n1000[0]; i++) {
        const struct target *t = &targets_n1000[i];
        if (b->o.sections & t->section)
            bench_check_values(b, t->key, t->label, t->unit, NULL, 0, t->goal,
                               t->limit);
    }
}
