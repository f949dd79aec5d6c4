/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's publish section: what a membership change costs on a freshly
 * cloned map, the pattern map.h documents for sharing a map (clone the
 * published map, change the clone, publish it, free the old one once no
 * reader holds it). Only the change call on the fresh clone is timed; the
 * clone is the caller's cost either way and is timed apart.
 *
 * Its floor is the O(P) work any change that copies and reads the table
 * once must do, measured in the same repetition: clone the map and count
 * each member's slots through the public API (dch_map_slot_owner of every
 * slot, into a per-id counter). The counts are checked against
 * dch_map_node_slots after each timing, so the floor does the work it
 * stands for. That walk pays a call per slot; the bare reference beside it
 * copies and counts a plain array of the table, what touching the table
 * once costs at memory speed.
 *
 * Each repetition publishes a join (a new member) and then a removal (a
 * member drawn from the seed), so the map keeps N members; the ratios are
 * taken per repetition, between calls made moments apart.
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each change on a fresh clone must take at most this long (median, us). */
#define GOAL_US 100.0
/* Members of the maps in the P sweep, and its largest P (as 2^k). */
#define SWEEP_NODES 1000u
#define SWEEP_LO 14u
#define SWEEP_HI 22u
#define SWEEP_HI_QUICK 16u

/* Per repetition: the two changes, the floor and its parts, in ns, and the
 * slots each change moved. */
typedef struct publish_times {
    unsigned reps;
    double join[BENCH_MAX_TRIALS], remove[BENCH_MAX_TRIALS];
    double clone[BENCH_MAX_TRIALS], count[BENCH_MAX_TRIALS], floor[BENCH_MAX_TRIALS];
    double bare[BENCH_MAX_TRIALS];
    double join_moved[BENCH_MAX_TRIALS], remove_moved[BENCH_MAX_TRIALS];
} publish_times;

/* ---- The floor: clone, then count owners once -------------------------- */

typedef struct owner_count {
    uint32_t *per_id;      /* slots of each id */
    uint32_t cap;          /* entries of per_id */
    uint32_t none;         /* slots no member owns */
    uint16_t *table, *copy; /* P owners each, for the bare reference */
} owner_count;

static void tally(owner_count *c, uint32_t id)
{
    if (id < c->cap)
        c->per_id[id]++;
    else
        c->none++;
}

/* One pass over the table: dch_map_slot_owner of every slot into the
 * counter. (dch_map_foreach_range reads the table inside the library, but
 * at the default config nearly every slot is a range of its own, and its
 * callback per range measured twice the cost of this walk.) */
static void count_owners(const dch_map *m, owner_count *c)
{
    const uint32_t p = dch_map_slot_count(m);
    memset(c->per_id, 0, (size_t)c->cap * sizeof *c->per_id);
    c->none = 0;
    for (uint32_t s = 0; s < p; s++)
        tally(c, dch_map_slot_owner(m, s));
}

/* Every member's count is its dch_map_node_slots, and no slot is unowned
 * while the map has members. */
static bool counts_agree(const dch_map *m, const owner_count *c)
{
    const uint32_t limit = dch_map_id_limit(m);
    for (uint32_t id = 0; id < c->cap; id++) {
        const uint32_t want = id < limit ? dch_map_node_slots(m, id) : 0;
        if (c->per_id[id] != want)
            return false;
    }
    return c->none == 0 || dch_map_node_count(m) == 0;
}

/*
 * One floor: clone `m` and count its owners; *clone_ns and *count_ns get
 * the two parts. The counter is zeroed inside the timing, as a change that
 * counts would have to.
 */
static int time_floor(bench *b, const dch_map *m, owner_count *c, double *clone_ns,
                      double *count_ns)
{
    dch_map *copy = NULL;
    stopwatch sw = bench_sw_start(b);
    int rc = dch_map_clone(&copy, m);
    *clone_ns = bench_sw_stop(b, sw);
    if (rc != DCH_OK)
        return rc;
    sw = bench_sw_start(b);
    count_owners(copy, c);
    *count_ns = bench_sw_stop(b, sw);
    if (!counts_agree(copy, c)) {
        fprintf(stderr, "dch-bench: counting a clone's owners disagrees with "
                        "dch_map_node_slots\n");
        rc = DCH_ECORRUPT;
    }
    dch_map_free(copy);
    return rc;
}

/*
 * The bare reference, beside the floor: the same copy and count on a plain
 * array of P 16-bit owners (the table as the map keeps it), read from m
 * through the public API before the timing. It is what O(P) costs at memory
 * speed, with no call per slot: how far a change is from reading and
 * writing its table once.
 */
static int time_bare(bench *b, const dch_map *m, owner_count *c, double *ns)
{
    const uint32_t p = dch_map_slot_count(m);
    for (uint32_t s = 0; s < p; s++)
        c->table[s] = (uint16_t)dch_map_slot_owner(m, s); /* none: 0xFFFF */
    const stopwatch sw = bench_sw_start(b);
    memcpy(c->copy, c->table, (size_t)p * sizeof *c->copy);
    memset(c->per_id, 0, (size_t)c->cap * sizeof *c->per_id);
    c->none = 0;
    for (uint32_t s = 0; s < p; s++)
        tally(c, c->copy[s]);
    *ns = bench_sw_stop(b, sw);
    if (!counts_agree(m, c)) {
        fprintf(stderr, "dch-bench: counting a copy of the table disagrees with "
                        "dch_map_node_slots\n");
        return DCH_ECORRUPT;
    }
    return DCH_OK;
}

/* ---- Publishing changes ------------------------------------------------ */

/* Clone *cur, apply one change to the clone (timed), publish the clone and
 * free the old map. join: add `name`; otherwise remove member `id`. */
static int publish(bench *b, dch_map **cur, bool join, const char *name, uint32_t id,
                   double *ns, double *moved)
{
    dch_map *fresh = NULL;
    int rc = dch_map_clone(&fresh, *cur);
    if (rc != DCH_OK)
        return rc;
    if (!join)
        *moved = dch_map_node_slots(fresh, id);
    const stopwatch sw = bench_sw_start(b);
    rc = join ? dch_map_add_node(fresh, name, 1, &id) : dch_map_remove_node(fresh, id);
    *ns = bench_sw_stop(b, sw);
    if (rc != DCH_OK) {
        dch_map_free(fresh);
        return rc;
    }
    if (join)
        *moved = dch_map_node_slots(fresh, id);
    dch_map_free(*cur);
    *cur = fresh;
    return DCH_OK;
}

/* A member of m (which has members) drawn from the run's seed. */
static uint32_t pick_member(const dch_map *m, uint64_t *seed)
{
    uint32_t left = (uint32_t)(bench_splitmix64(seed) % dch_map_node_count(m));
    uint32_t id = 0;
    for (; id < dch_map_id_limit(m); id++)
        if (dch_map_node_name(m, id) != NULL && left-- == 0)
            break;
    return id;
}

/* `reps` repetitions of join, removal and floor on clones of m (m itself is
 * left as it is). @return DCH_OK or the failing call's code. */
static int run_publish(bench *b, const dch_map *m, unsigned reps, publish_times *t)
{
    dch_map *cur = NULL;
    int rc = dch_map_clone(&cur, m);
    const size_t p = dch_map_slot_count(m);
    owner_count c = {NULL, dch_map_id_limit(m) + 1, 0, NULL, NULL};
    c.per_id = malloc((size_t)c.cap * sizeof *c.per_id);
    c.table = malloc(p * sizeof *c.table);
    c.copy = malloc(p * sizeof *c.copy);
    if (c.per_id == NULL || c.table == NULL || c.copy == NULL)
        rc = rc ? rc : DCH_ENOMEM;
    uint64_t seed = b->o.seed ^ dch_map_slot_count(m) ^ dch_map_node_count(m);
    t->reps = reps;
    for (unsigned i = 0; i < reps && rc == DCH_OK; i++) {
        char name[48];
        snprintf(name, sizeof name, "bench-fresh-%u", i);
        rc = publish(b, &cur, true, name, 0, &t->join[i], &t->join_moved[i]);
        if (rc == DCH_OK)
            rc = publish(b, &cur, false, NULL, pick_member(cur, &seed), &t->remove[i],
                         &t->remove_moved[i]);
        /* The id limit can have grown by the join; the counter follows. */
        if (rc == DCH_OK && dch_map_id_limit(cur) + 1 > c.cap) {
            uint32_t *grown =
                realloc(c.per_id, (size_t)(dch_map_id_limit(cur) + 1) * sizeof *grown);
            if (grown == NULL) {
                rc = DCH_ENOMEM;
            } else {
                c.per_id = grown;
                c.cap = dch_map_id_limit(cur) + 1;
            }
        }
        if (rc == DCH_OK)
            rc = time_floor(b, cur, &c, &t->clone[i], &t->count[i]);
        if (rc == DCH_OK)
            t->floor[i] = t->clone[i] + t->count[i];
        if (rc == DCH_OK)
            rc = time_bare(b, cur, &c, &t->bare[i]);
    }
    free(c.per_id);
    free(c.table);
    free(c.copy);
    dch_map_free(cur);
    return rc;
}

/* r[i] = v[i] / floor[i]: each change against the floor of its repetition. */
static void over_floor(const publish_times *t, const double *v, double *r)
{
    for (unsigned i = 0; i < t->reps; i++)
        r[i] = v[i] / t->floor[i];
}

/* Add the medians of t at x to the curve (if it has room). */
static void curve_add(publish_curve *c, uint32_t x, const publish_times *t)
{
    if (c->count >= PUBLISH_POINTS)
        return;
    const size_t k = c->count++;
    double r[BENCH_MAX_TRIALS];
    c->x[k] = x;
    c->join_ns[k] = bench_stat_of(t->join, t->reps).median;
    c->remove_ns[k] = bench_stat_of(t->remove, t->reps).median;
    c->floor_ns[k] = bench_stat_of(t->floor, t->reps).median;
    c->bare_ns[k] = bench_stat_of(t->bare, t->reps).median;
    over_floor(t, t->join, r);
    c->join_ratio[k] = bench_stat_of(r, t->reps).median;
    over_floor(t, t->remove, r);
    c->remove_ratio[k] = bench_stat_of(r, t->reps).median;
}

/* ---- Reporting --------------------------------------------------------- */

/* v / 1e3 into us. */
static void to_us(const double *v, unsigned n, double *us)
{
    for (unsigned i = 0; i < n; i++)
        us[i] = v[i] / 1e3;
}

/* Record the five series of one run under `section` at (n, p). */
static void record_times(bench *b, const char *section, uint32_t n, uint32_t p,
                         const publish_times *t)
{
    const double jm = bench_stat_of(t->join_moved, t->reps).median;
    const double rm = bench_stat_of(t->remove_moved, t->reps).median;
    bench_record_values(b, section, "dch_map_add_node", n, p, "ns/call", t->join,
                        t->reps, jm);
    bench_record_values(b, section, "dch_map_remove_node", n, p, "ns/call", t->remove,
                        t->reps, rm);
    bench_record_values(b, section, "floor: clone + count", n, p, "ns/call", t->floor,
                        t->reps, -1);
    bench_record_values(b, section, "dch_map_clone", n, p, "ns/call", t->clone, t->reps,
                        -1);
    bench_record_values(b, section, "count owners", n, p, "ns/call", t->count, t->reps,
                        -1);
    bench_record_values(b, section, "bare table: copy + count", n, p, "ns/call",
                        t->bare, t->reps, -1);
}

/*
 * The checks of one run: each change in us (with the goal when `goal`) and
 * against the floor, the floor and the bare reference themselves. `at`
 * names the point: "n1000" or "p2e16", and `where` says it for people:
 * "N=1000" or "P=2^16, N=1000".
 */
static void check_times(bench *b, const char *at, const char *where,
                        const publish_times *t, bool goal)
{
    static const char *const what[2] = {"join", "remove"};
    static const char *const call[2] = {"add_node", "remove_node"};
    const double *v[2] = {t->join, t->remove};
    char key[64], label[96];
    double us[BENCH_MAX_TRIALS], r[BENCH_MAX_TRIALS];
    for (int k = 0; k < 2; k++) {
        to_us(v[k], t->reps, us);
        snprintf(key, sizeof key, "publish_%s_us_%s", what[k], at);
        snprintf(label, sizeof label, "map %s on a fresh clone, median, %s", call[k],
                 where);
        bench_check_values(b, key, label, "us", us, t->reps,
                           goal ? BENCH_GOAL_AT_MOST : BENCH_GOAL_NONE, GOAL_US);
        over_floor(t, v[k], r);
        snprintf(key, sizeof key, "publish_%s_over_floor_%s", what[k], at);
        snprintf(label, sizeof label, "map %s on a fresh clone / floor, %s", call[k],
                 where);
        bench_check_values(b, key, label, "x", r, t->reps, BENCH_GOAL_NONE, 0);
    }
    to_us(t->floor, t->reps, us);
    snprintf(key, sizeof key, "publish_floor_us_%s", at);
    snprintf(label, sizeof label, "floor: clone + count owners once, %s", where);
    bench_check_values(b, key, label, "us", us, t->reps, BENCH_GOAL_NONE, 0);
    to_us(t->bare, t->reps, us);
    snprintf(key, sizeof key, "publish_bare_us_%s", at);
    snprintf(label, sizeof label, "bare table: copy + count once, %s", where);
    bench_check_values(b, key, label, "us", us, t->reps, BENCH_GOAL_NONE, 0);
}

/* One row of a table: join, removal, floor (us), the two ratios, and the
 * bare reference's median (us). */
static void print_row(const char *head, const publish_times *t)
{
    double us[3][BENCH_MAX_TRIALS], r[2][BENCH_MAX_TRIALS];
    to_us(t->join, t->reps, us[0]);
    to_us(t->remove, t->reps, us[1]);
    to_us(t->floor, t->reps, us[2]);
    over_floor(t, t->join, r[0]);
    over_floor(t, t->remove, r[1]);
    char s[5][64];
    printf("  %10s  %-30s %-30s %-30s %6.2f %6.2f %9.1f\n", head,
           bench_stat_text(s[0], sizeof s[0], us[0], t->reps),
           bench_stat_text(s[1], sizeof s[1], us[1], t->reps),
           bench_stat_text(s[2], sizeof s[2], us[2], t->reps),
           bench_stat_of(r[0], t->reps).median, bench_stat_of(r[1], t->reps).median,
           bench_stat_of(t->bare, t->reps).median / 1e3);
}

static void print_head(const char *first)
{
    printf("  %10s  %-30s %-30s %-30s %6s %6s %9s\n", first, "join", "removal",
           "floor (clone + count)", "j/fl", "r/fl", "bare");
}

void bench_section_publish(bench *b, const dch_map *m, uint32_t n,
                           publish_curve *curve)
{
    unsigned reps = n <= 1000 ? 41 : 21;
    if (b->o.quick)
        reps = 5;
    publish_times *t = malloc(sizeof *t);
    if (t == NULL) {
        b->failed = 1;
        return;
    }
    const int rc = run_publish(b, m, reps, t);
    if (rc != DCH_OK) {
        fprintf(stderr, "dch-bench: publishing a change failed at N=%u: %s\n",
                (unsigned)n, dch_strerror(rc));
        b->failed = 1;
        free(t);
        return;
    }
    const uint32_t p = dch_map_slot_count(m);
    record_times(b, "publish", n, p, t);
    char at[32], where[32], head[16];
    snprintf(at, sizeof at, "n%u", (unsigned)n);
    snprintf(where, sizeof where, "N=%u", (unsigned)n);
    snprintf(head, sizeof head, "%u", (unsigned)n);
    check_times(b, at, where, t, true);
    printf("\nChanges on a fresh clone at N = %u (P = %u), us per call, median "
           "[min .. max] of %u; j/fl, r/fl: medians of the ratios to the\n"
           "  floor; bare: a plain table copied and counted, median\n",
           (unsigned)n, (unsigned)p, reps);
    print_head("N");
    print_row(head, t);
    curve->p = p;
    curve_add(curve, n, t);
    free(t);
}

/* ---- Growth with N and with P ------------------------------------------ */

static unsigned log2_of(uint32_t p)
{
    unsigned bits = 0;
    while ((1u << bits) < p)
        bits++;
    return bits;
}

/*
 * How the medians grow from the curve's first point to its last: each
 * change's and the floor's factor, beside the factor of x itself, and the
 * exponent e in cost ~ x^e. `x` names the variable ("N" or "P"); keys end
 * in e.g. "_n100_n10000" or "_p2e14_p2e22".
 */
static void check_growth(bench *b, const publish_curve *c, const char *x)
{
    if (c->count < 2)
        return;
    const size_t last = c->count - 1;
    const bool is_p = strcmp(x, "P") == 0;
    char from[16], to[16], span[48];
    if (is_p) {
        snprintf(from, sizeof from, "p2e%u", log2_of(c->x[0]));
        snprintf(to, sizeof to, "p2e%u", log2_of(c->x[last]));
        snprintf(span, sizeof span, "P=2^%u..2^%u", log2_of(c->x[0]),
                 log2_of(c->x[last]));
    } else {
        snprintf(from, sizeof from, "n%u", (unsigned)c->x[0]);
        snprintf(to, sizeof to, "n%u", (unsigned)c->x[last]);
        snprintf(span, sizeof span, "N=%u..%u", (unsigned)c->x[0],
                 (unsigned)c->x[last]);
    }
    const double xf = (double)c->x[last] / c->x[0];
    printf("  %s grew %.0fx:", x, xf);
    static const char *const what[4] = {"join", "remove", "floor", "bare"};
    static const char *const name[4] = {
        "join on a fresh clone", "removal on a fresh clone", "floor (clone + count)",
        "bare table (copy + count)"};
    const double *v[4] = {c->join_ns, c->remove_ns, c->floor_ns, c->bare_ns};
    for (int k = 0; k < 4; k++) {
        const double f = v[k][last] / v[k][0];
        const double e = log2(f) / log2(xf);
        printf("%s %s %.2fx (~%s^%.2f)", k ? "," : "", what[k], f, x, e);
        char key[64], label[96];
        snprintf(key, sizeof key, "publish_%s_growth_%s_%s", what[k], from, to);
        snprintf(label, sizeof label, "%s, median growth, %s", name[k], span);
        bench_check_values(b, key, label, "x", &f, 1, BENCH_GOAL_NONE, 0);
    }
    printf("\n");
}

void bench_section_publish_growth(bench *b, const publish_curve *c)
{
    if (c->count == 0)
        return;
    printf("\nChanges on a fresh clone against N (P = %u), medians in us; j/fl, "
           "r/fl: medians of the ratios to the floor\n", (unsigned)c->p);
    printf("  %10s  %10s %10s %10s %6s %6s %9s\n", "N", "join", "removal", "floor",
           "j/fl", "r/fl", "bare");
    for (size_t i = 0; i < c->count; i++)
        printf("  %10u  %10.1f %10.1f %10.1f %6.2f %6.2f %9.1f\n", (unsigned)c->x[i],
               c->join_ns[i] / 1e3, c->remove_ns[i] / 1e3, c->floor_ns[i] / 1e3,
               c->join_ratio[i], c->remove_ratio[i], c->bare_ns[i] / 1e3);
    /* The goal in one line: the worst median of either change. */
    double worst = 0;
    const char *what = "join";
    uint32_t at = 0;
    for (size_t i = 0; i < c->count; i++) {
        if (c->join_ns[i] > worst) {
            worst = c->join_ns[i];
            what = "join";
            at = c->x[i];
        }
        if (c->remove_ns[i] > worst) {
            worst = c->remove_ns[i];
            what = "removal";
            at = c->x[i];
        }
    }
    worst /= 1e3;
    printf("  goal: each change on a fresh clone at most %.0f us (median) at N = 100, "
           "1,000 and 10,000: worst %.1f us (%s at N = %u), %s\n", GOAL_US, worst,
           what, (unsigned)at,
           b->o.quick         ? "smoke"
           : c->count < 3     ? "not every N measured"
           : worst <= GOAL_US ? "met"
                              : "MISSED");
    check_growth(b, c, "N");
}

void bench_section_publish_sweep(bench *b)
{
    const uint32_t n = b->o.max_nodes < SWEEP_NODES ? b->o.max_nodes : SWEEP_NODES;
    const unsigned hi = b->o.quick ? SWEEP_HI_QUICK : SWEEP_HI;
    const unsigned reps = b->o.quick ? 3 : 15;
    printf("\nChanges on a fresh clone against P (N = %u, 64 slots a unit), us per "
           "call, median [min .. max] of %u; j/fl, r/fl: medians of the ratios to the\n"
           "  floor; bare: a plain table copied and counted, median\n",
           (unsigned)n, reps);
    print_head("P");
    publish_curve curve;
    memset(&curve, 0, sizeof curve);
    publish_times *t = malloc(sizeof *t);
    for (unsigned k = SWEEP_LO; k <= hi && t != NULL; k++) {
        const uint32_t p = 1u << k;
        dch_map *m = bench_map_of(p, n);
        const int rc = m == NULL ? DCH_ENOMEM : run_publish(b, m, reps, t);
        dch_map_free(m);
        if (rc != DCH_OK) {
            fprintf(stderr, "dch-bench: publishing a change failed at P=%u: %s\n",
                    (unsigned)p, dch_strerror(rc));
            break;
        }
        record_times(b, "publish_sweep", n, p, t);
        char at[32], where[48], g[32];
        snprintf(at, sizeof at, "p2e%u", k);
        snprintf(where, sizeof where, "P=2^%u, N=%u", k, (unsigned)n);
        check_times(b, at, where, t, false);
        print_row(bench_grouped(g, sizeof g, p), t);
        fflush(stdout);
        curve_add(&curve, p, t);
    }
    if (t == NULL || curve.count < hi - SWEEP_LO + 1)
        b->failed = 1;
    free(t);
    check_growth(b, &curve, "P");
}

void bench_publish_unmeasured(bench *b)
{
    static const uint32_t goal_n[] = {100, 1000, 10000};
    if (!(b->o.sections & SEC_PUBLISH))
        return;
    for (size_t i = 0; i < sizeof goal_n / sizeof goal_n[0]; i++) {
        if (goal_n[i] <= b->o.max_nodes)
            continue;
        char key[64], label[96];
        snprintf(key, sizeof key, "publish_join_us_n%u", (unsigned)goal_n[i]);
        snprintf(label, sizeof label, "map add_node on a fresh clone, median, N=%u",
                 (unsigned)goal_n[i]);
        bench_check_values(b, key, label, "us", NULL, 0, BENCH_GOAL_AT_MOST, GOAL_US);
        snprintf(key, sizeof key, "publish_remove_us_n%u", (unsigned)goal_n[i]);
        snprintf(label, sizeof label, "map remove_node on a fresh clone, median, N=%u",
                 (unsigned)goal_n[i]);
        bench_check_values(b, key, label, "us", NULL, 0, BENCH_GOAL_AT_MOST, GOAL_US);
    }
}
