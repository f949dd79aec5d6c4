/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's replica section: reading every copy of a hash
 * (dch_map_lookup_replicas_hash into a caller's array) against reading its
 * primary alone (dch_map_lookup_hash), on one map that keeps 3 copies of
 * every slot, in the two modes of the lookup section. A client that writes
 * to every copy, or picks the nearest, pays the first; the target is at most
 * twice the second, since a slot's copies share one aligned block of the
 * table (map.h). Both answers are checked against each other before timing.
 */
#include "bench.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>

#define COPIES 3u
/* A cluster of a hundred members in four zones: the size of the lookup
 * section's middle checkpoint, and enough zones for 3 copies. */
#define MEMBERS 100u
#define ZONES 4u

/* Every copy of a hash, each id read: their sum. */
static uint32_t all_copies(const dch_map *m, uint64_t h)
{
    uint32_t ids[COPIES];
    const size_t n = dch_map_lookup_replicas_hash(m, h, ids, COPIES);
    uint32_t sum = 0;
    for (size_t k = 0; k < n && k < COPIES; k++)
        sum += ids[k];
    return sum;
}

/* The same through the floor: what reading a block of the table costs. */
static uint32_t floor_copies(const bench_copies_floor *f, uint64_t h)
{
    uint32_t ids[COPIES];
    return bench_copies_floor_lookup(f, h, ids);
}

BENCH_LOOPS(primary, dch_map, dch_map_lookup_hash)
BENCH_LOOPS(copies, dch_map, all_copies)
BENCH_LOOPS(copies_floor, bench_copies_floor, floor_copies)

static const char *const modes[2] = {"independent", "dependent"};

static dch_map *replica_map(void)
{
    dch_map_config cfg;
    dch_map_config_default(&cfg);
    cfg.replicas = COPIES;
    dch_map *m = NULL;
    if (dch_map_new(&m, &cfg) != DCH_OK)
        return NULL;
    for (uint32_t i = 0; i < MEMBERS; i++) {
        char name[32], zone[32];
        snprintf(name, sizeof name, "node-%u", (unsigned)i);
        snprintf(zone, sizeof zone, "zone-%u", (unsigned)(i % ZONES));
        if (dch_map_add_node_in_zone(m, name, zone, 1, NULL) != DCH_OK) {
            dch_map_free(m);
            return NULL;
        }
    }
    return m;
}

/* The floor's table: every slot's copies from dch_map_slot_replicas, in
 * blocks of 4 as the map keeps them for 3 copies. */
static int copies_floor_of(const dch_map *m, bench_copies_floor *f)
{
    const uint32_t p = dch_map_slot_count(m);
    uint16_t *t = calloc((size_t)p * 4u, sizeof *t);
    if (t == NULL)
        return -1;
    for (uint32_t s = 0; s < p; s++) {
        uint32_t ids[COPIES];
        const size_t n = dch_map_slot_replicas(m, s, ids, COPIES);
        for (size_t k = 0; k < n && k < COPIES; k++)
            t[(size_t)s * 4u + k] = (uint16_t)ids[k];
    }
    unsigned bits = 0;
    while ((1u << bits) < p)
        bits++;
    *f = (bench_copies_floor){t, 32u - bits, 4u, COPIES};
    return 0;
}

/* Every hash used has COPIES distinct copies, the primary first, and the
 * floor gives the same ones. */
static int copies_agree(const bench *b, const dch_map *m, const bench_copies_floor *f,
                        uint64_t mask)
{
    for (uint64_t i = 0; i <= mask; i++) {
        uint32_t ids[COPIES], fl[COPIES];
        const uint64_t h = b->hashes[i];
        if (dch_map_lookup_replicas_hash(m, h, ids, COPIES) != COPIES ||
            ids[0] != dch_map_lookup_hash(m, h) || ids[0] == ids[1] ||
            ids[0] == ids[2] || ids[1] == ids[2])
            return 0;
        (void)bench_copies_floor_lookup(f, h, fl);
        for (size_t k = 0; k < COPIES; k++)
            if (fl[k] != ids[k])
                return 0;
    }
    return 1;
}

void bench_section_replicas(bench *b)
{
    dch_map *m = replica_map();
    if (m == NULL) {
        fprintf(stderr, "dch-bench: cannot build the map with %u copies\n", COPIES);
        b->failed = 1;
        return;
    }
    const uint32_t p = dch_map_slot_count(m);
    const uint64_t mask = (p < HASHES_MIN ? HASHES_MIN : p > HASHES_MAX ? HASHES_MAX : p) - 1;
    bench_copies_floor *fl = calloc(1, sizeof *fl); /* on the heap: see lookup.c */
    if (fl == NULL || copies_floor_of(m, fl) != 0 || !copies_agree(b, m, fl, mask)) {
        fprintf(stderr, "dch-bench: dch_map_lookup_replicas_hash disagrees with "
                        "dch_map_lookup_hash or the floor (or no memory)\n");
        b->failed = 1;
        if (fl != NULL)
            free((void *)fl->table);
        free(fl);
        dch_map_free(m);
        return;
    }
    char g1[32], g2[32];
    printf("\nEvery copy of a hash against its primary, %u copies, N = %s in %u "
           "zones, P = %s; ns per lookup, median [min .. max]\n", COPIES,
           bench_grouped(g1, sizeof g1, MEMBERS), ZONES, bench_grouped(g2, sizeof g2, p));
    contender c[2][3];
    for (int mode = 0; mode < 2; mode++) {
        c[mode][0] = (contender){"dch_map_lookup_replicas_hash",
                                 mode ? copies_dependent : copies_independent, m, 0, {0}};
        c[mode][1] = (contender){"dch_map_lookup_hash",
                                 mode ? primary_dependent : primary_independent, m, 0, {0}};
        c[mode][2] = (contender){"floor: one block, 3 ids",
                                 mode ? copies_floor_dependent : copies_floor_independent,
                                 fl, 0, {0}};
        bench_run_group(b, c[mode], 3, mask);
        for (int i = 0; i < 3; i++)
            bench_record(b, "replicas", &c[mode][i], modes[mode], MEMBERS, p, 0);
    }
    printf("  %-30s %-28s %-28s\n", "", "independent (throughput)", "dependent (latency)");
    for (int i = 0; i < 3; i++) {
        char s0[64], s1[64];
        printf("  %-30s %-28s %-28s\n", c[0][i].subject,
               bench_stat_text(s0, sizeof s0, c[0][i].ns, b->o.trials),
               bench_stat_text(s1, sizeof s1, c[1][i].ns, b->o.trials));
    }
    for (int mode = 0; mode < 2; mode++) {
        char key[64], label[96];
        snprintf(key, sizeof key, "replicas_over_primary_%s_n%u", modes[mode],
                 (unsigned)MEMBERS);
        snprintf(label, sizeof label, "all %u copies / primary lookup_hash, %s, N=%u",
                 COPIES, mode ? "latency" : "throughput", (unsigned)MEMBERS);
        bench_check_ratio(b, key, label, &c[mode][0], &c[mode][1], BENCH_GOAL_AT_MOST,
                          2.0);
        snprintf(key, sizeof key, "replicas_over_floor_%s_n%u", modes[mode],
                 (unsigned)MEMBERS);
        snprintf(label, sizeof label, "all %u copies / floor, %s, N=%u", COPIES,
                 mode ? "latency" : "throughput", (unsigned)MEMBERS);
        bench_check_ratio(b, key, label, &c[mode][0], &c[mode][2], BENCH_GOAL_NONE, 0);
    }
    free((void *)fl->table);
    free(fl);
    dch_map_free(m);
}
