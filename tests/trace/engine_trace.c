/* SPDX-License-Identifier: MIT */
/*
 * The engine's fingerprint over random histories: for every config of a
 * fixed list (one copy and replicas, zones, equal and unequal weights, the
 * smallest shapes and the corners of the promises), a seeded history of
 * joins, removals and weight changes, and after every call a hash of its
 * result code and of every slot's copies, primary first.
 *
 * Prints one line per config, "config U S R ZONES WEIGHTS CALLS HASH", or
 * with -v one more line per call (its index, operation and running hash),
 * so that two builds can be compared call by call. The test engine_trace
 * compares the lines with tests/golden/engine-trace.txt: a change that
 * moves any slot of any table in these histories fails it. A restructuring
 * must leave the file as it is; a fix that changes tables rewrites it
 * (engine_trace > tests/golden/engine-trace.txt) and says where and why
 * in CHANGELOG.md. tests/trace/differential runs the same histories
 * against another revision's library.
 *
 * Public API only, so the program builds against any revision.
 */
#include "dch/dch.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct trace_config {
    uint32_t units, spu, replicas;
    int zones; /* members get one of this many zones; 0: none */
    int weights; /* 0 equal, 1 a few values, 2 anything up to 2^20 */
    uint32_t calls, max_members;
    /* A row stands for one config per replica count from `replicas` to this
     * (0: `replicas` only), in that order. */
    uint32_t replicas_last;
} trace_config;

static const trace_config configs[] = {
    {1, 1, 1, 0, 0, 60, 4, 0},        {1, 4, 1, 0, 1, 120, 8, 0},
    {4, 4, 1, 0, 0, 300, 24, 0},      {4, 4, 1, 0, 2, 300, 24, 0},
    {16, 8, 1, 0, 1, 400, 40, 0},     {64, 16, 1, 0, 2, 400, 60, 0},
    {1024, 64, 1, 0, 0, 120, 300, 0}, {1024, 64, 1, 0, 2, 120, 40, 0},
    {256, 1, 1, 0, 1, 200, 20, 0},    {1, 256, 1, 0, 2, 200, 20, 0},
    {32, 4, 2, 0, 0, 300, 40, 4},     {64, 8, 5, 0, 0, 250, 60, 8},
    {64, 8, 2, 0, 2, 250, 30, 0},     {64, 8, 3, 0, 1, 250, 30, 0},
    {64, 8, 3, 3, 0, 250, 30, 0},     {64, 8, 2, 2, 1, 250, 30, 0},
    {32, 8, 4, 5, 2, 250, 30, 0},     {8, 2, 3, 0, 0, 200, 12, 0},
    {256, 16, 3, 0, 0, 80, 120, 0},
};

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint32_t below(uint64_t *s, uint32_t n)
{
    return (uint32_t)(rng(s) % n);
}

/* FNV-1a over 32-bit words, little-endian. */
static uint64_t mix(uint64_t h, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        h ^= (v >> (8 * i)) & 0xFF;
        h *= UINT64_C(0x100000001B3);
    }
    return h;
}

static uint64_t table_hash(const dch_map *m, uint64_t h, int rc)
{
    uint32_t ids[DCH_MAP_MAX_REPLICAS];
    h = mix(h, (uint32_t)rc);
    const uint32_t p = dch_map_slot_count(m);
    for (uint32_t s = 0; s < p; s++) {
        const size_t n = dch_map_slot_replicas(m, s, ids, DCH_MAP_MAX_REPLICAS);
        h = mix(h, (uint32_t)n);
        for (size_t i = 0; i < n; i++)
            h = mix(h, ids[i]);
    }
    return h;
}

static uint32_t weight(const trace_config *c, uint64_t *s)
{
    static const uint32_t few[] = {1, 2, 3, 5, 8, 100};
    if (c->weights == 0)
        return 100;
    if (c->weights == 1)
        return few[below(s, 6)];
    return 1 + below(s, 1u << (1 + below(s, 20)));
}

/* A member id chosen at random among the members, or UINT32_MAX. */
static uint32_t some_member(const dch_map *m, uint64_t *s)
{
    const uint32_t n = dch_map_node_count(m);
    if (n == 0)
        return UINT32_MAX;
    uint32_t k = below(s, n);
    for (uint32_t id = 0;; id++)
        if (dch_map_node_name(m, id) != NULL && k-- == 0)
            return id;
}

static uint64_t run(const trace_config *c, uint64_t seed, int verbose, size_t index)
{
    dch_map_config cfg;
    dch_map_config_default(&cfg);
    cfg.units = c->units;
    cfg.slots_per_unit = c->spu;
    cfg.replicas = c->replicas;
    dch_map *m = NULL;
    if (dch_map_new(&m, &cfg) != DCH_OK) {
        fprintf(stderr, "engine_trace: dch_map_new failed for config %zu\n", index);
        exit(2);
    }
    uint64_t h = UINT64_C(0xCBF29CE484222325), s = seed;
    uint32_t next_name = 0;
    for (uint32_t call = 0; call < c->calls; call++) {
        const uint32_t r = below(&s, 100), n = dch_map_node_count(m);
        const uint32_t who = some_member(m, &s);
        int rc;
        char op;
        if (who == UINT32_MAX || (r < 50 && n < c->max_members)) {
            char name[32], zone[16];
            snprintf(name, sizeof name, "n%" PRIu32, next_name++);
            snprintf(zone, sizeof zone, "z%" PRIu32, c->zones ? below(&s, (uint32_t)c->zones) : 0);
            const uint32_t w = weight(c, &s);
            rc = dch_map_add_node_in_zone(m, name, c->zones ? zone : NULL, w, NULL);
            op = 'a';
        } else if (r < 75) {
            rc = dch_map_remove_node(m, who);
            op = 'r';
        } else {
            const uint32_t w = below(&s, 10) == 0 ? 0 : weight(c, &s);
            rc = dch_map_set_weight(m, who, w);
            op = 'w';
        }
        h = table_hash(m, h, rc);
        if (verbose)
            printf("  %zu.%" PRIu32 " %c %016" PRIx64 "\n", index, call, op, h);
    }
    dch_map_free(m);
    return h;
}

int main(int argc, char **argv)
{
    const int verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    if (argc > 1 + verbose) {
        fprintf(stderr, "usage: engine_trace [-v]\n");
        return 2;
    }
    size_t n = 0; /* configs traced so far: each one's seed */
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        trace_config c = configs[i];
        const uint32_t last = c.replicas_last ? c.replicas_last : c.replicas;
        for (; c.replicas <= last; c.replicas++, n++) {
            const uint64_t h = run(&c, UINT64_C(0x5EED) + n, verbose, n);
            printf("config %" PRIu32 " %" PRIu32 " %" PRIu32 " %d %d %" PRIu32 " %016" PRIx64
                   "\n",
                   c.units, c.spu, c.replicas, c.zones, c.weights, c.calls, h);
            fflush(stdout);
        }
    }
    return 0;
}
