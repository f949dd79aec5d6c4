/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's lookup sections, on precomputed 64-bit hashes in two modes:
 * independent (throughput: the next hash never waits for an answer) and
 * dependent (latency: the next hash's index is derived from the previous
 * answer). The map is measured against its floor, a bare copy of its table;
 * the ring against the branchy binary search over its points; Jump
 * consistent hash beside both. Every peer must give libdch's answers on the
 * hashes used before it is timed. Peers that are not libdch's live in
 * kernels.c behind calls the compiler cannot inline, as libdch's are.
 */
#include "bench.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Members of the maps in the P sweep: a lookup's cost does not depend on
 * it, and building a 2^22-slot map costs O(P) per member. */
#define SWEEP_NODES 10u

BENCH_LOOPS(dch, dch_map, dch_map_lookup_hash)
BENCH_LOOPS(floor, bench_floor, bench_floor_lookup)
BENCH_LOOPS(ring, dch_ring, dch_ring_lookup_hash)
BENCH_LOOPS(bsearch, bench_sorted, bench_bsearch_lookup)
BENCH_LOOPS(jump, uint32_t, bench_jump_lookup)

static const char *const modes[2] = {"independent", "dependent"};

/* ---- Peers built from the library's state ----------------------------- */

/*
 * The peers' descriptors. They live on the heap, as the library's objects
 * do: with the floor's descriptor on the caller's stack, its loads inside
 * the call were measured slower on this project's machine (1.9 against
 * 1.4 ns a lookup, at every P), which would tilt the comparison.
 */
typedef struct peers {
    bench_floor fl;
    bench_sorted sorted;
    uint32_t buckets;
} peers;

static void peers_free(peers *pe)
{
    if (pe == NULL)
        return;
    free((void *)pe->fl.table);
    free((void *)pe->sorted.pos);
    free((void *)pe->sorted.owner);
    free(pe);
}

static unsigned floor_shift(uint32_t p)
{
    unsigned bits = 0;
    while ((1u << bits) < p)
        bits++;
    return 32u - bits;
}

/* The floor's table: a copy of the map's, so both give the same answers. */
static int floor_of(const dch_map *m, bench_floor *out)
{
    const uint32_t p = dch_map_slot_count(m);
    uint16_t *t = malloc((size_t)p * sizeof *t);
    if (t == NULL)
        return -1;
    for (uint32_t s = 0; s < p; s++)
        t[s] = (uint16_t)dch_map_slot_owner(m, s);
    *out = (bench_floor){t, floor_shift(p)};
    return 0;
}

typedef struct point {
    uint64_t pos;
    uint32_t id;
    uint32_t j;
} point;

/* The ring whose names break ties in point_cmp (qsort has no context). */
static const dch_ring *sort_ring;

/* Ring order (ring.h): position, then name bytes, then j. */
static int point_cmp(const void *pa, const void *pb)
{
    const point *a = pa, *b = pb;
    if (a->pos != b->pos)
        return a->pos < b->pos ? -1 : 1;
    if (a->id != b->id) {
        const int c = strcmp(dch_ring_node_name(sort_ring, a->id),
                             dch_ring_node_name(sort_ring, b->id));
        if (c != 0)
            return c;
    }
    return (a->j > b->j) - (a->j < b->j);
}

/*
 * The ring's points, recomputed from ring.h's placement rule (point j of
 * `name` sits at SipHash-2-4 of "name#j"), sorted, as positions and owners.
 * On failure out holds whatever was allocated, for peers_free.
 */
static int sorted_points(const dch_ring *r, bench_sorted *out)
{
    dch_ring_config cfg;
    dch_ring_get_config(r, &cfg);
    const uint32_t n = dch_ring_point_count(r);
    point *pts = malloc((size_t)n * sizeof *pts);
    uint64_t *pos = malloc((size_t)n * sizeof *pos);
    uint16_t *owner = malloc((size_t)n * sizeof *owner);
    *out = (bench_sorted){pos, owner, 0};
    if (pts == NULL || pos == NULL || owner == NULL || n == 0) {
        free(pts);
        return -1;
    }
    uint32_t k = 0;
    char buf[DCH_NAME_MAX + 16];
    for (uint32_t id = 0; id < dch_ring_id_limit(r); id++) {
        const char *name = dch_ring_node_name(r, id);
        if (name == NULL)
            continue;
        const uint64_t pts_of =
            (uint64_t)cfg.points_per_weight * dch_ring_node_weight(r, id);
        for (uint32_t j = 0; j < pts_of && k < n; j++) {
            const int len = snprintf(buf, sizeof buf, "%s#%u", name, (unsigned)j);
            pts[k].pos = dch_siphash24(cfg.hash_key, buf, (size_t)len);
            pts[k].id = id;
            pts[k].j = j;
            k++;
        }
    }
    sort_ring = r;
    qsort(pts, k, sizeof *pts, point_cmp);
    for (uint32_t i = 0; i < k; i++) {
        pos[i] = pts[i].pos;
        owner[i] = (uint16_t)pts[i].id;
    }
    free(pts);
    out->n = k;
    return k == n ? 0 : -1;
}

/* ---- Lookups ---------------------------------------------------------- */

static uint64_t mask_for(uint32_t p)
{
    uint64_t h = p < HASHES_MIN ? HASHES_MIN : p > HASHES_MAX ? HASHES_MAX : p;
    return h - 1;
}

/* The map and the floor must give the same answer for every hash used. */
static int same_as_floor(bench *b, const dch_map *m, const bench_floor *f,
                         uint64_t mask)
{
    for (uint64_t i = 0; i <= mask; i++)
        if (dch_map_lookup_hash(m, b->hashes[i]) !=
            bench_floor_lookup(f, b->hashes[i])) {
            fprintf(stderr, "dch-bench: the floor table disagrees with the map\n");
            b->failed = 1;
            return 0;
        }
    return 1;
}

/* The ring's baseline and Jump must agree with libdch on the hash set, and
 * the baseline at every point's exact position (a hash equal to a point
 * belongs to it). */
static int peers_agree(const bench *b, const dch_ring *r, const peers *pe,
                       uint64_t mask)
{
    const bench_sorted *sorted = &pe->sorted;
    int ok = 1;
    for (uint64_t i = 0; ok && i <= mask; i++)
        ok = dch_ring_lookup_hash(r, b->hashes[i]) ==
             bench_bsearch_lookup(sorted, b->hashes[i]);
    for (uint32_t i = 0; ok && i < sorted->n; i += 7)
        ok = dch_ring_lookup_hash(r, sorted->pos[i]) ==
             bench_bsearch_lookup(sorted, sorted->pos[i]);
    for (uint64_t i = 0; ok && i <= mask; i++)
        ok = bench_jump_lookup(&pe->buckets, b->hashes[i]) < pe->buckets;
    return ok;
}

/* The ratio checks of one mode at N members (x: the five contenders). */
static void check_lookup(bench *b, const contender *x, int mode, uint32_t n)
{
    const char *mw = mode ? "latency" : "throughput";
    char key[64], label[96];
    snprintf(key, sizeof key, "lookup_dch_over_floor_%s_n%u", modes[mode], (unsigned)n);
    snprintf(label, sizeof label, "dch lookup_hash / floor, %s, N=%u", mw, (unsigned)n);
    bench_check_ratio(b, key, label, &x[0], &x[1],
                      mode ? BENCH_GOAL_NONE : BENCH_GOAL_AT_MOST, 1.5);
    snprintf(key, sizeof key, "lookup_jump_over_dch_%s_n%u", modes[mode], (unsigned)n);
    snprintf(label, sizeof label, "jump / dch lookup_hash (speed-up), %s, N=%u", mw,
             (unsigned)n);
    const bool target = mode == 0 && n == 1000;
    bench_check_ratio(b, key, label, &x[4], &x[0],
                      target ? BENCH_GOAL_AT_LEAST : BENCH_GOAL_NONE, 20);
    snprintf(key, sizeof key, "lookup_bsearch_over_ring_%s_n%u", modes[mode],
             (unsigned)n);
    snprintf(label, sizeof label,
             "binary search / ring lookup_hash (speed-up), %s, N=%u", mw, (unsigned)n);
    bench_check_ratio(b, key, label, &x[3], &x[2],
                      target ? BENCH_GOAL_AT_LEAST : BENCH_GOAL_NONE, 2.5);
}

void bench_section_lookup(bench *b, const dch_map *m, const dch_ring *r, uint32_t n)
{
    const uint32_t p = dch_map_slot_count(m);
    const uint64_t mask = mask_for(p);
    peers *pe = calloc(1, sizeof *pe);
    if (pe == NULL || floor_of(m, &pe->fl) != 0 || sorted_points(r, &pe->sorted) != 0) {
        fprintf(stderr, "dch-bench: out of memory for the lookup peers\n");
        b->failed = 1;
        peers_free(pe);
        return;
    }
    pe->buckets = n;
    if (!same_as_floor(b, m, &pe->fl, mask) || !peers_agree(b, r, pe, mask)) {
        fprintf(stderr, "dch-bench: a lookup peer disagrees with libdch at N=%u\n",
                (unsigned)n);
        b->failed = 1;
        peers_free(pe);
        return;
    }

    char g1[32], g2[32], g3[32];
    printf("\nLookups at N = %s (map P = %s; ring %s points), ns per lookup, "
           "median [min .. max]\n", bench_grouped(g1, sizeof g1, n),
           bench_grouped(g2, sizeof g2, p),
           bench_grouped(g3, sizeof g3, dch_ring_point_count(r)));
    contender c[2][5];
    for (int mode = 0; mode < 2; mode++) {
        contender *x = c[mode];
        x[0] = (contender){"dch_map_lookup_hash", mode ? dch_dependent : dch_independent,
                           m, 0, {0}};
        x[1] = (contender){"floor", mode ? floor_dependent : floor_independent,
                           &pe->fl, 0, {0}};
        x[2] = (contender){"dch_ring_lookup_hash",
                           mode ? ring_dependent : ring_independent, r, 0, {0}};
        x[3] = (contender){"branchy binary search",
                           mode ? bsearch_dependent : bsearch_independent, &pe->sorted,
                           0, {0}};
        x[4] = (contender){"jump consistent hash",
                           mode ? jump_dependent : jump_independent, &pe->buckets, 0,
                           {0}};
        bench_run_group(b, x, 5, mask);
        for (int i = 0; i < 5; i++)
            bench_record(b, "lookup", &x[i], modes[mode], n, i >= 2 && i <= 3 ?
                         dch_ring_point_count(r) : i == 4 ? 0 : p, 0);
    }
    printf("  %-24s %-28s %-28s\n", "", "independent (throughput)",
           "dependent (latency)");
    for (int i = 0; i < 5; i++) {
        char s0[64], s1[64];
        printf("  %-24s %-28s %-28s\n", c[0][i].subject,
               bench_stat_text(s0, sizeof s0, c[0][i].ns, b->o.trials),
               bench_stat_text(s1, sizeof s1, c[1][i].ns, b->o.trials));
    }
    for (int mode = 0; mode < 2; mode++)
        check_lookup(b, c[mode], mode, n);
    peers_free(pe);
}

int bench_map_call(dch_map *m, char op, const char *name, uint32_t weight)
{
    uint32_t id = 0;
    if (op == 'a')
        return dch_map_add_node(m, name, weight, NULL);
    int rc = dch_map_find_node(m, name, &id);
    if (rc != DCH_OK)
        return rc;
    return op == 'r' ? dch_map_remove_node(m, id) : dch_map_set_weight(m, id, weight);
}

dch_map *bench_map_of(uint32_t p, uint32_t n)
{
    dch_map_config cfg;
    dch_map_config_default(&cfg);
    cfg.slots_per_unit = 64;
    cfg.units = p / 64;
    dch_map *m = NULL;
    if (dch_map_new(&m, &cfg) != DCH_OK) {
        fprintf(stderr, "dch-bench: cannot make a map of %u slots\n", (unsigned)p);
        return NULL;
    }
    char name[32];
    for (uint32_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "node-%u", (unsigned)i);
        if (dch_map_add_node(m, name, 1, NULL) != DCH_OK) {
            dch_map_free(m);
            return NULL;
        }
    }
    return m;
}

/* Map lookups at one P, against the floor, both modes. */
static int sweep_one(bench *b, unsigned k)
{
    const uint32_t p = 1u << k;
    const uint64_t mask = mask_for(p);
    dch_map *m = bench_map_of(p, SWEEP_NODES);
    peers *pe = calloc(1, sizeof *pe); /* on the heap: see peers */
    if (m == NULL || pe == NULL || floor_of(m, &pe->fl) != 0 ||
        !same_as_floor(b, m, &pe->fl, mask)) {
        peers_free(pe);
        dch_map_free(m);
        return -1;
    }
    contender c[2][2];
    for (int mode = 0; mode < 2; mode++) {
        c[mode][0] = (contender){"dch_map_lookup_hash",
                                 mode ? dch_dependent : dch_independent, m, 0, {0}};
        c[mode][1] = (contender){"floor", mode ? floor_dependent : floor_independent,
                                 &pe->fl, 0, {0}};
        bench_run_group(b, c[mode], 2, mask);
        bench_record(b, "sweep", &c[mode][0], modes[mode], SWEEP_NODES, p, 0);
        bench_record(b, "sweep", &c[mode][1], modes[mode], SWEEP_NODES, p, 0);
        char key[64], label[96];
        snprintf(key, sizeof key, "sweep_dch_over_floor_%s_p2e%u", modes[mode], k);
        snprintf(label, sizeof label, "dch lookup_hash / floor, %s, P=2^%u",
                 mode ? "latency" : "throughput", k);
        bench_check_ratio(b, key, label, &c[mode][0], &c[mode][1],
                          mode ? BENCH_GOAL_NONE : BENCH_GOAL_AT_MOST, 1.5);
    }
    char g[32], s[4][64];
    printf("  %10s  %-26s %-26s %-26s %-26s\n", bench_grouped(g, sizeof g, p),
           bench_stat_text(s[0], sizeof s[0], c[0][0].ns, b->o.trials),
           bench_stat_text(s[1], sizeof s[1], c[0][1].ns, b->o.trials),
           bench_stat_text(s[2], sizeof s[2], c[1][0].ns, b->o.trials),
           bench_stat_text(s[3], sizeof s[3], c[1][1].ns, b->o.trials));
    const double bytes = (double)dch_map_memory(m);
    bench_record_values(b, "sweep", "dch_map_memory", SWEEP_NODES, p, "bytes", &bytes,
                        1, -1);
    peers_free(pe);
    dch_map_free(m);
    return 0;
}

void bench_section_sweep(bench *b)
{
    const unsigned lo = 12, hi = b->o.quick ? 14 : 22;
    printf("\nMap lookups against P (N = %u, 64 slots a unit), ns per lookup, "
           "median [min .. max]\n", SWEEP_NODES);
    printf("  %10s  %-26s %-26s %-26s %-26s\n", "P", "dch (throughput)",
           "floor (throughput)", "dch (latency)", "floor (latency)");
    for (unsigned k = lo; k <= hi; k++)
        if (sweep_one(b, k) != 0) {
            b->failed = 1;
            return;
        }
}
