/* SPDX-License-Identifier: MIT */
/*
 * Tests of the consistent-hash ring (dch_ring).
 *
 * The oracle places points by the normative rule with its own code (snprintf
 * of "name#j", dch_siphash24), sorts them by (position, name bytes, j) and
 * takes the first point at or after a hash; a linear scan that knows nothing
 * of that sort checks the oracle itself on a sample. Lookups, ranges, member
 * state, monotonicity and balance are compared against it after seeded
 * random operation sequences. Error paths, fault injection included, must
 * leave the ring exactly as it was.
 *
 * DCH_TEST_SCALE (a double, default 1.0) scales the loop counts;
 * DCH_TEST_SEED overrides the base seed. Failures print the seed.
 */
#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the oracle ----------------------------------------------------------- */

typedef struct omember {
    char name[DCH_NAME_MAX + 1];
    uint32_t weight;
    uint32_t id;
} omember;

typedef struct oracle {
    uint32_t ppw;
    uint8_t key[16];
    omember *m;
    size_t n;
    size_t cap;
} oracle;

typedef struct opoint {
    uint64_t pos;
    const char *name;
    uint32_t j;
    uint32_t id;
} opoint;

/* An empty oracle placing points as the ring r does. */
static void oracle_init(oracle *o, const dch_ring *r)
{
    dch_ring_config cfg;
    dch_ring_get_config(r, &cfg);
    memset(o, 0, sizeof *o);
    o->ppw = cfg.points_per_weight;
    memcpy(o->key, cfg.hash_key, 16);
}

static void oracle_free(oracle *o)
{
    free(o->m);
    o->m = NULL;
    o->n = o->cap = 0;
}

/* The id the ring must give next: the lowest one no member holds. */
static uint32_t oracle_next_id(const oracle *o)
{
    for (uint32_t id = 0;; id++) {
        bool used = false;
        for (size_t i = 0; i < o->n && !used; i++)
            used = o->m[i].id == id;
        if (!used)
            return id;
    }
}

static void oracle_add(oracle *o, const char *name, uint32_t weight, uint32_t id)
{
    o->m = xgrow(o->m, o->n, &o->cap, sizeof *o->m);
    omember *m = &o->m[o->n++];
    snprintf(m->name, sizeof m->name, "%s", name);
    m->weight = weight;
    m->id = id;
}

static void oracle_remove_at(oracle *o, size_t i)
{
    o->m[i] = o->m[--o->n];
}

/* strcmp orders by unsigned char, which is the bytewise order. */
static int opoint_cmp(const void *pa, const void *pb)
{
    const opoint *a = pa, *b = pb;
    if (a->pos != b->pos)
        return a->pos < b->pos ? -1 : 1;
    int c = strcmp(a->name, b->name);
    if (c != 0)
        return c;
    return (a->j > b->j) - (a->j < b->j);
}

/* Every point of every member, sorted so the first at or after a hash wins. */
static opoint *oracle_points(const oracle *o, size_t *n_out)
{
    size_t total = 0;
    for (size_t i = 0; i < o->n; i++)
        total += (size_t)o->ppw * o->m[i].weight;
    opoint *pts = malloc((total ? total : 1) * sizeof *pts);
    cr_assert(pts != NULL, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < o->n; i++) {
        uint32_t k = o->ppw * o->m[i].weight;
        for (uint32_t j = 0; j < k; j++) {
            char buf[DCH_NAME_MAX + 16];
            int len = snprintf(buf, sizeof buf, "%s#%u", o->m[i].name, (unsigned)j);
            pts[n++] = (opoint){dch_siphash24(o->key, buf, (size_t)len),
                                o->m[i].name, j, o->m[i].id};
        }
    }
    qsort(pts, n, sizeof *pts, opoint_cmp);
    *n_out = n;
    return pts;
}

/* The index of the first point at or past h: n when there is none. */
static size_t oracle_first_at(const opoint *pts, size_t n, uint64_t h)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pts[mid].pos < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint32_t oracle_lookup(const opoint *pts, size_t n, uint64_t h)
{
    if (n == 0)
        return DCH_NODE_NONE;
    const size_t lo = oracle_first_at(pts, n, h);
    return pts[lo == n ? 0 : lo].id;
}

/* The successor by definition, in any order of pts: the smallest
 * (position, name, j) at or after h, else the smallest overall. */
static uint32_t scan_lookup(const opoint *pts, size_t n, uint64_t h)
{
    const opoint *after = NULL, *lowest = NULL;
    for (size_t i = 0; i < n; i++) {
        if (lowest == NULL || opoint_cmp(&pts[i], lowest) < 0)
            lowest = &pts[i];
        if (pts[i].pos >= h && (after == NULL || opoint_cmp(&pts[i], after) < 0))
            after = &pts[i];
    }
    if (lowest == NULL)
        return DCH_NODE_NONE;
    return after ? after->id : lowest->id;
}

/* The oracle's ranges: point i owns (position of point i - 1, its own]. */
static dch_range *oracle_ranges(const opoint *pts, size_t n, size_t *count)
{
    dch_range *out = malloc((n + 2) * sizeof *out);
    cr_assert(out != NULL, "out of memory");
    size_t c = 0;
    if (n == 0) {
        out[0] = (dch_range){0, UINT64_MAX, DCH_NODE_NONE};
        *count = 1;
        return out;
    }
    uint64_t lo = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && pts[i].pos == pts[i - 1].pos)
            continue;
        if (c > 0 && out[c - 1].owner == pts[i].id)
            out[c - 1].hi = pts[i].pos;
        else
            out[c++] = (dch_range){lo, pts[i].pos, pts[i].id};
        lo = pts[i].pos + 1;
    }
    if (pts[n - 1].pos != UINT64_MAX) {
        if (out[c - 1].owner == pts[0].id)
            out[c - 1].hi = UINT64_MAX;
        else
            out[c++] = (dch_range){lo, UINT64_MAX, pts[0].id};
    }
    *count = c;
    return out;
}

/* ---- ring helpers ----------------------------------------------------------- */

static dch_ring *new_ring(uint32_t ppw, const uint8_t key[16],
                          const dch_allocator *a)
{
    dch_ring_config cfg;
    dch_ring_config_default(&cfg);
    cfg.points_per_weight = ppw;
    if (key != NULL)
        memcpy(cfg.hash_key, key, 16);
    cfg.allocator = a;
    dch_ring *r = NULL;
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_OK, "dch_ring_new failed");
    return r;
}

/* Changes between two rings' ownership. */
static change_list diff_rings(const dch_ring *before, const dch_ring *after)
{
    size_t na, nb;
    dch_range *a = ring_ranges_of(before, &na);
    dch_range *b = ring_ranges_of(after, &nb);
    change_list cs = changes_between(a, na, b, nb);
    free(a);
    free(b);
    return cs;
}

/* A copy of r, to diff against once r has changed. */
static dch_ring *copy_of(const dch_ring *r)
{
    dch_ring *c;
    cr_assert_eq(dch_ring_clone(&c, r), DCH_OK, "clone");
    return c;
}

/* The changes from `before` (a copy_of, freed here) to `after`. */
static change_list changes_since(dch_ring *before, const dch_ring *after)
{
    change_list cs = diff_rings(before, after);
    dch_ring_free(before);
    return cs;
}

/* A ring of ppw points per weight hashed with key (the default when NULL),
 * holding a of weight wa and b of weight wb: ids 0 and 1. */
static dch_ring *ring_of_two(uint32_t ppw, const uint8_t key[16], const char *a, uint32_t wa,
                             const char *b, uint32_t wb)
{
    dch_ring *r = new_ring(ppw, key, NULL);
    uint32_t id[2];
    cr_assert_eq(dch_ring_add_node(r, a, wa, &id[0]), DCH_OK, "add %s", a);
    cr_assert_eq(dch_ring_add_node(r, b, wb, &id[1]), DCH_OK, "add %s", b);
    cr_assert(id[0] == 0 && id[1] == 1, "a fresh ring gives ids 0 and 1");
    return r;
}

/* A ring of ppw points per weight that members n0 .. n<count-1> of weight
 * i % 3 joined in order, getting the ids 0 .. count-1. */
static dch_ring *numbered_ring(uint32_t ppw, uint32_t count)
{
    dch_ring *r = new_ring(ppw, NULL, NULL);
    for (uint32_t i = 0; i < count; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%u", i);
        uint32_t id;
        cr_assert_eq(dch_ring_add_node(r, name, i % 3, &id), DCH_OK, "add");
        cr_assert_eq(id, i, "ids are given in order");
    }
    return r;
}

/* Members, weights, counts and ranges of the ring against the oracle. */
static void check_state(const dch_ring *r, const oracle *o, uint64_t seed)
{
    cr_assert_eq(dch_ring_node_count(r), (uint32_t)o->n, "seed %llu: count",
                 (unsigned long long)seed);
    uint64_t weight = 0, points = 0;
    uint32_t limit = 0;
    for (size_t i = 0; i < o->n; i++) {
        const omember *m = &o->m[i];
        weight += m->weight;
        points += (uint64_t)o->ppw * m->weight;
        if (m->id + 1 > limit)
            limit = m->id + 1;
        const char *name = dch_ring_node_name(r, m->id);
        cr_assert(name != NULL && strcmp(name, m->name) == 0,
                  "seed %llu: name of id %u", (unsigned long long)seed, m->id);
        cr_assert_eq(dch_ring_node_weight(r, m->id), m->weight,
                     "seed %llu: weight of id %u", (unsigned long long)seed, m->id);
        uint32_t id = DCH_NODE_NONE;
        cr_assert_eq(dch_ring_find_node(r, m->name, &id), DCH_OK,
                     "seed %llu: find %s", (unsigned long long)seed, m->name);
        cr_assert_eq(id, m->id, "seed %llu: find gives the id", (unsigned long long)seed);
    }
    cr_assert_eq(dch_ring_id_limit(r), limit, "seed %llu: id limit", (unsigned long long)seed);
    cr_assert_eq(dch_ring_total_weight(r), (uint32_t)weight, "seed %llu: weight sum",
                 (unsigned long long)seed);
    cr_assert_eq(dch_ring_point_count(r), (uint32_t)points, "seed %llu: points",
                 (unsigned long long)seed);
}

/*
 * Lookups against the oracle: `random` random hashes, 0 and 2^64-1, and each
 * point position with its neighbours (every point when there are at most
 * `point_cap`, else an even sample). Returns the random hashes checked.
 */
static size_t check_lookups(const dch_ring *r, const opoint *pts, size_t n,
                            uint64_t *g, size_t random, size_t point_cap,
                            uint64_t seed)
{
    for (size_t q = 0; q < random; q++) {
        uint64_t h = rng_next(g);
        uint32_t want = oracle_lookup(pts, n, h);
        cr_assert_eq(dch_ring_lookup_hash(r, h), want,
                     "seed %llu: hash %016llx", (unsigned long long)seed,
                     (unsigned long long)h);
        if (q % 256 == 0 && n <= 50000)
            cr_assert_eq(scan_lookup(pts, n, h), want,
                         "seed %llu: oracle disagrees with a scan at %016llx",
                         (unsigned long long)seed, (unsigned long long)h);
    }
    const uint64_t edges[] = {0, 1, UINT64_MAX - 1, UINT64_MAX};
    for (size_t e = 0; e < 4; e++)
        cr_assert_eq(dch_ring_lookup_hash(r, edges[e]), oracle_lookup(pts, n, edges[e]),
                     "seed %llu: edge hash %016llx", (unsigned long long)seed,
                     (unsigned long long)edges[e]);
    size_t step = n <= point_cap ? 1 : n / point_cap;
    for (size_t i = 0; i < n; i += step) {
        for (int d = -1; d <= 1; d++) {
            uint64_t h = pts[i].pos + (uint64_t)(int64_t)d;
            cr_assert_eq(dch_ring_lookup_hash(r, h), oracle_lookup(pts, n, h),
                         "seed %llu: hash %016llx next to a point",
                         (unsigned long long)seed, (unsigned long long)h);
        }
    }
    return random;
}

/* A name the ring has not seen: varied lengths and bytes, prefixes of each
 * other, a few near DCH_NAME_MAX. */
static void random_name(uint64_t *g, char *buf, size_t size, unsigned serial)
{
    int kind = (int)rng_below(g, 6);
    if (kind == 0) {
        size_t len = DCH_NAME_MAX - rng_below(g, 4);
        memset(buf, 'x', len);
        snprintf(buf + len - 8, 9, "%08x", serial);
    } else if (kind == 1) {
        snprintf(buf, size, "\xff\x20%u", serial);
    } else if (kind == 2) {
        snprintf(buf, size, "%u", serial);
    } else {
        snprintf(buf, size, "node-%u", serial);
    }
}

/* One random add, remove or set_weight, applied to ring and oracle alike. */
static void random_op(dch_ring *r, oracle *o, uint64_t *g, unsigned *serial,
                      size_t max_members, uint32_t max_weight, uint64_t seed)
{
    uint32_t choice = rng_below(g, 10);
    if (o->n == 0 || (choice < 4 && o->n < max_members)) {
        char name[DCH_NAME_MAX + 1];
        random_name(g, name, sizeof name, (*serial)++);
        uint32_t weight = rng_below(g, max_weight + 1);
        uint32_t want = oracle_next_id(o), id = DCH_NODE_NONE;
        cr_assert_eq(dch_ring_add_node(r, name, weight, &id), DCH_OK,
                     "seed %llu: add", (unsigned long long)seed);
        cr_assert_eq(id, want, "seed %llu: lowest free id", (unsigned long long)seed);
        oracle_add(o, name, weight, id);
    } else if (choice < 6) {
        size_t i = rng_below(g, (uint32_t)o->n);
        cr_assert_eq(dch_ring_remove_node(r, o->m[i].id), DCH_OK,
                     "seed %llu: remove", (unsigned long long)seed);
        oracle_remove_at(o, i);
    } else if (choice < 9) {
        size_t i = rng_below(g, (uint32_t)o->n);
        uint32_t weight = rng_below(g, max_weight + 1);
        cr_assert_eq(dch_ring_set_weight(r, o->m[i].id, weight), DCH_OK,
                     "seed %llu: set_weight", (unsigned long long)seed);
        o->m[i].weight = weight;
    } else {
        /* Leave and rejoin under the same name: the id is reused. */
        size_t i = rng_below(g, (uint32_t)o->n);
        omember m = o->m[i];
        cr_assert_eq(dch_ring_remove_node(r, m.id), DCH_OK, "seed %llu: remove",
                     (unsigned long long)seed);
        oracle_remove_at(o, i);
        uint32_t id = DCH_NODE_NONE;
        cr_assert_eq(dch_ring_add_node(r, m.name, m.weight, &id), DCH_OK,
                     "seed %llu: rejoin", (unsigned long long)seed);
        cr_assert_eq(id, oracle_next_id(o), "seed %llu: rejoin id",
                     (unsigned long long)seed);
        oracle_add(o, m.name, m.weight, id);
    }
}

/* A hash key of 16 bytes drawn from *g. */
static void random_key(uint64_t *g, uint8_t key[16])
{
    for (size_t i = 0; i < 16; i++)
        key[i] = (uint8_t)rng_next(g);
}

/* A seeded random history: `steps` random_op calls (at most `max_members`
 * members, weights up to `max_weight`) on a fresh ring of `ppw` points per
 * weight hashed with `key` (the default when NULL), its oracle alongside,
 * the two compared after every `every`-th call. */
typedef struct history {
    uint32_t ppw;
    const uint8_t *key;
    int steps;
    int every;
    size_t max_members;
    uint32_t max_weight;
} history;

/* Compares the ring with its oracle after operation `step`; *g is the
 * history's generator, free to draw from. */
typedef void history_check(const dch_ring *r, const oracle *o, uint64_t *g, uint64_t seed,
                           int step, void *ctx);

/* Runs the history h drawing from *g, calling check after every h->every-th
 * operation. */
static void run_history(const history *h, uint64_t seed, uint64_t *g, history_check *check,
                        void *ctx)
{
    dch_ring *r = new_ring(h->ppw, h->key, NULL);
    oracle o;
    oracle_init(&o, r);
    unsigned serial = 0;
    for (int step = 0; step < h->steps; step++) {
        random_op(r, &o, g, &serial, h->max_members, h->max_weight, seed);
        if (step % h->every == h->every - 1)
            check(r, &o, g, seed, step, ctx);
    }
    oracle_free(&o);
    dch_ring_free(r);
}

/* ---- lookups and ranges against the oracle ---------------------------------- */

/* history_check: the state and lookups; ctx counts the random hashes. */
static void state_and_lookups_agree(const dch_ring *r, const oracle *o, uint64_t *g,
                                    uint64_t seed, int step, void *ctx)
{
    (void)step;
    size_t *checked = ctx;
    check_state(r, o, seed);
    size_t n;
    opoint *pts = oracle_points(o, &n);
    *checked += check_lookups(r, pts, n, g, test_scaled(4000, 1), 4000, seed);
    free(pts);
}

Test(ring, lookup_matches_brute_force_oracle)
{
    const uint32_t ppws[] = {1, 7, 40, 160};
    size_t checked = 0;
    for (size_t c = 0; c < 4; c++) {
        uint64_t seed = test_seed(0x5eed0000u) + c;
        uint64_t g = seed;
        uint8_t key[16];
        random_key(&g, key);
        const history h = {ppws[c], key, 48, 6, 24, 8};
        run_history(&h, seed, &g, state_and_lookups_agree, &checked);
    }
    cr_assert(checked >= test_scaled(100000, 1), "only %zu random hashes checked", checked);
}

Test(ring, lookup_matches_oracle_when_buckets_hold_many_points)
{
    /* About 4 points a bucket, so the in-bucket search does real work. */
    uint64_t seed = test_seed(0xb0c4e7u);
    uint64_t g = seed;
    size_t want = test_scaled(64, 1);
    uint32_t members = want < 8 ? 8 : want > 64 ? 64 : (uint32_t)want;
    dch_ring *r = new_ring(4096, NULL, NULL);
    oracle o;
    oracle_init(&o, r);
    for (uint32_t i = 0; i < members; i++) {
        char name[32];
        snprintf(name, sizeof name, "shard-%u", i);
        uint32_t id;
        cr_assert_eq(dch_ring_add_node(r, name, 1, &id), DCH_OK, "add");
        oracle_add(&o, name, 1, id);
    }
    for (int round = 0; round < 3; round++) {
        check_state(r, &o, seed);
        size_t n;
        opoint *pts = oracle_points(&o, &n);
        check_lookups(r, pts, n, &g, test_scaled(40000, 1), test_scaled(20000, 1), seed);
        free(pts);
        /* Lower one weight, raise another, drop a member. */
        size_t i = rng_below(&g, (uint32_t)o.n);
        cr_assert_eq(dch_ring_set_weight(r, o.m[i].id, 0), DCH_OK, "lower");
        o.m[i].weight = 0;
        i = rng_below(&g, (uint32_t)o.n);
        cr_assert_eq(dch_ring_set_weight(r, o.m[i].id, 2), DCH_OK, "raise");
        o.m[i].weight = 2;
        i = rng_below(&g, (uint32_t)o.n);
        cr_assert_eq(dch_ring_remove_node(r, o.m[i].id), DCH_OK, "remove");
        oracle_remove_at(&o, i);
    }
    oracle_free(&o);
    dch_ring_free(r);
}

/* ---- the successor walk ------------------------------------------------------- */

/* The walk by definition: from the first sorted point at or after h
 * (wrapping), each member the first time its point is met, at most cap. */
static size_t oracle_successors(const opoint *pts, size_t n, uint64_t h,
                                uint32_t *ids, size_t cap)
{
    const size_t lo = oracle_first_at(pts, n, h);
    size_t k = 0;
    for (size_t w = 0; w < n && k < cap; w++) {
        uint32_t id = pts[(lo + w) % n].id;
        bool seen = false;
        for (size_t q = 0; q < k && !seen; q++)
            seen = ids[q] == id;
        if (!seen)
            ids[k++] = id;
    }
    return k;
}

/* One hash: the ring's walk equals the oracle's for cap, and writes nothing
 * past what it returns. */
static void check_successors(const dch_ring *r, const opoint *pts, size_t n,
                             uint64_t h, size_t cap, uint64_t seed)
{
    uint32_t got[40], want[40];
    cr_assert(cap + 1 <= 40);
    for (size_t k = 0; k < 40; k++)
        got[k] = 0xdeadbeefu;
    size_t gn = dch_ring_successors_hash(r, h, got, cap);
    size_t wn = oracle_successors(pts, n, h, want, cap);
    cr_assert_eq(gn, wn, "seed %llu: hash %016llx cap %zu: %zu members, want %zu",
                 (unsigned long long)seed, (unsigned long long)h, cap, gn, wn);
    for (size_t k = 0; k < wn; k++)
        cr_assert_eq(got[k], want[k], "seed %llu: hash %016llx cap %zu: member %zu",
                     (unsigned long long)seed, (unsigned long long)h, cap, k);
    cr_assert_eq(got[gn], 0xdeadbeefu, "seed %llu: wrote past the count",
                 (unsigned long long)seed);
}

/* history_check: the successor walks. */
static void successors_agree(const dch_ring *r, const oracle *o, uint64_t *g, uint64_t seed,
                             int step, void *ctx)
{
    (void)step;
    (void)ctx;
    size_t n;
    opoint *pts = oracle_points(o, &n);
    const size_t hashes = test_scaled(600, 1);
    for (size_t q = 0; q < hashes; q++) {
        /* Random hashes, and hashes at, just past and just before
         * points, where the walk starts on a tie or a wrap. */
        uint64_t h = rng_next(g);
        if (n > 0 && q % 3 != 0)
            h = pts[rng_below(g, (uint32_t)n)].pos + (q % 3 == 1 ? 0 : 1);
        if (q == 0)
            h = 0;
        if (q == 1)
            h = UINT64_MAX;
        check_successors(r, pts, n, h, rng_below(g, (uint32_t)o->n + 3), seed);
    }
    free(pts);
}

Test(ring, successors_match_a_walk_over_the_oracle_points)
{
    const uint32_t ppws[] = {1, 3, 40, 160};
    for (size_t c = 0; c < 4; c++) {
        uint64_t seed = test_seed(0x5ccc0000u) + c;
        uint64_t g = seed;
        const history h = {ppws[c], NULL, 40, 5, 30, 4};
        run_history(&h, seed, &g, successors_agree, NULL);
    }
}

Test(ring, successors_of_a_null_ring_buffer_or_empty_ring_are_none)
{
    uint32_t ids[4] = {7, 7, 7, 7};
    cr_assert_eq(dch_ring_successors_hash(NULL, 1, ids, 4), 0);
    dch_ring *r = new_ring(160, NULL, NULL);
    cr_assert_eq(dch_ring_successors_hash(r, 1, ids, 4), 0, "no members");
    cr_assert_eq(dch_ring_add_node(r, "light", 0, NULL), DCH_OK);
    cr_assert_eq(dch_ring_successors_hash(r, 1, ids, 4), 0, "no points");
    cr_assert_eq(dch_ring_add_node(r, "a", 1, NULL), DCH_OK);
    cr_assert_eq(dch_ring_add_node(r, "b", 2, NULL), DCH_OK);
    cr_assert_eq(dch_ring_successors_hash(r, 1, NULL, 4), 0, "NULL ids");
    cr_assert_eq(dch_ring_successors_hash(r, 1, ids, 0), 0, "cap 0");
    for (size_t k = 0; k < 4; k++)
        cr_assert_eq(ids[k], 7, "nothing written");
    /* Two members with points: a cap of 4 gets both, the weightless one
     * never. */
    cr_assert_eq(dch_ring_successors_hash(r, 1, ids, 4), 2);
    cr_assert_eq(ids[0], dch_ring_lookup_hash(r, 1));
    cr_assert_neq(ids[0], ids[1]);
    cr_assert_eq(ids[2], 7);
    dch_ring_free(r);
}

Test(ring, ketama_successors_start_at_the_owner_and_extend_each_other)
{
    uint64_t seed = test_seed(0x6e7a3au);
    uint64_t g = seed;
    dch_ring_config cfg;
    dch_ring_config_default(&cfg);
    cfg.placement = DCH_RING_PLACE_KETAMA;
    dch_ring *r = NULL;
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_OK);
    uint32_t with_points = 0;
    for (uint32_t i = 0; i < 12; i++) {
        char name[32];
        snprintf(name, sizeof name, "10.0.0.%u:11211", (unsigned)i);
        uint32_t w = i == 5 ? 0 : 1 + rng_below(&g, 3);
        with_points += w > 0;
        cr_assert_eq(dch_ring_add_node(r, name, w, NULL), DCH_OK);
    }
    for (size_t q = 0; q < test_scaled(2000, 1); q++) {
        uint64_t h = rng_next(&g);
        uint32_t all[16], some[16];
        size_t n = dch_ring_successors_hash(r, h, all, 16);
        cr_assert_eq(n, with_points, "seed %llu: every member with points",
                     (unsigned long long)seed);
        cr_assert_eq(all[0], dch_ring_lookup_hash(r, h), "seed %llu: the owner first",
                     (unsigned long long)seed);
        for (size_t a = 0; a < n; a++) {
            cr_assert_gt(dch_ring_node_weight(r, all[a]), 0);
            for (size_t b = a + 1; b < n; b++)
                cr_assert_neq(all[a], all[b], "seed %llu: distinct",
                              (unsigned long long)seed);
        }
        size_t cap = rng_below(&g, with_points) + 1;
        cr_assert_eq(dch_ring_successors_hash(r, h, some, cap), cap);
        cr_assert_arr_eq(some, all, cap * sizeof *some, "seed %llu: a prefix",
                         (unsigned long long)seed);
    }
    dch_ring_free(r);
}

Test(ring, placement_matches_published_positions)
{
    /* Positions of "a#0", "b#1", "a#1", "b#0" under the zero key, computed
     * with libsodium's crypto_shorthash_siphash24 and read little-endian:
     * a fixed point that the placement rule itself has not drifted. */
    const uint64_t a0 = UINT64_C(0x3cd64949b364f42e), b1 = UINT64_C(0x48fdf2a61c7e48f3),
                   a1 = UINT64_C(0x51f754fdd15838fd), b0 = UINT64_C(0x691356df69b4b5b5);
    dch_ring *r = new_ring(2, NULL, NULL);
    uint32_t a, b;
    cr_assert_eq(dch_ring_add_node(r, "a", 1, &a), DCH_OK, "add");
    cr_assert_eq(dch_ring_add_node(r, "b", 1, &b), DCH_OK, "add");
    const dch_range want[] = {
        {0, a0, a}, {a0 + 1, b1, b}, {b1 + 1, a1, a}, {a1 + 1, b0, b}, {b0 + 1, UINT64_MAX, a}};
    size_t n;
    dch_range *got = ring_ranges_of(r, &n);
    cr_assert(n == 5 && ranges_equal(got, want, 5), "ranges of a and b");
    free(got);
    dch_ring_free(r);
}

/* history_check: the ranges, and lookups at both ends of each. */
static void ranges_agree(const dch_ring *r, const oracle *o, uint64_t *g, uint64_t seed,
                         int step, void *ctx)
{
    (void)g;
    (void)ctx;
    size_t n, nr, no;
    opoint *pts = oracle_points(o, &n);
    dch_range *got = ring_ranges_of(r, &nr);
    dch_range *want = oracle_ranges(pts, n, &no);
    cr_assert_eq(nr, no, "seed %llu step %d: range count", (unsigned long long)seed, step);
    double covered = 0.0;
    for (size_t i = 0; i < nr; i++) {
        cr_assert(got[i].lo == want[i].lo && got[i].hi == want[i].hi &&
                      got[i].owner == want[i].owner,
                  "seed %llu step %d: range %zu", (unsigned long long)seed, step, i);
        /* Exactly once: starts at 0, each starts after the last ends,
         * ends at 2^64-1; adjacent owners differ (merged). */
        cr_assert(got[i].lo <= got[i].hi, "seed %llu: empty range", (unsigned long long)seed);
        if (i == 0)
            cr_assert_eq(got[i].lo, 0, "seed %llu: first range starts at 0",
                         (unsigned long long)seed);
        else
            cr_assert(got[i].lo == got[i - 1].hi + 1 && got[i].owner != got[i - 1].owner,
                      "seed %llu: ranges %zu and %zu", (unsigned long long)seed, i - 1, i);
        cr_assert_eq(dch_ring_lookup_hash(r, got[i].lo), got[i].owner,
                     "seed %llu: lookup at lo of range %zu", (unsigned long long)seed, i);
        cr_assert_eq(dch_ring_lookup_hash(r, got[i].hi), got[i].owner,
                     "seed %llu: lookup at hi of range %zu", (unsigned long long)seed, i);
        covered += dch_range_fraction(got[i].lo, got[i].hi);
    }
    cr_assert_eq(got[nr - 1].hi, UINT64_MAX, "seed %llu: last range ends at 2^64-1",
                 (unsigned long long)seed);
    cr_assert(covered > 1.0 - 1e-9 && covered < 1.0 + 1e-9, "seed %llu: covered %.12f",
              (unsigned long long)seed, covered);
    free(pts);
    free(got);
    free(want);
}

Test(ring, ranges_match_oracle_and_lookups_at_every_boundary)
{
    uint64_t seed = test_seed(0x7a9e5u);
    uint64_t g = seed;
    const history h = {20, NULL, 60, 1, 16, 6};
    run_history(&h, seed, &g, ranges_agree, NULL);
}

Test(ring, empty_and_weightless_rings_have_one_unowned_range)
{
    dch_ring *r = new_ring(160, NULL, NULL);
    for (int round = 0; round < 2; round++) {
        size_t n;
        dch_range *rg = ring_ranges_of(r, &n);
        cr_assert(n == 1 && rg[0].lo == 0 && rg[0].hi == UINT64_MAX &&
                      rg[0].owner == DCH_NODE_NONE,
                  "round %d: one unowned range", round);
        free(rg);
        cr_assert_eq(dch_ring_lookup_hash(r, 0), DCH_NODE_NONE, "no owner");
        cr_assert_eq(dch_ring_lookup_hash(r, UINT64_MAX), DCH_NODE_NONE, "no owner");
        cr_assert_eq(dch_ring_lookup(r, "key", 3), DCH_NODE_NONE, "no owner");
        cr_assert_eq(dch_ring_point_count(r), 0, "no points");
        uint32_t id;
        cr_assert_eq(dch_ring_add_node(r, round ? "b" : "a", 0, &id), DCH_OK, "weightless add");
    }
    /* A member that loses all its points leaves the ring empty again. */
    uint32_t id;
    cr_assert_eq(dch_ring_add_node(r, "c", 1, &id), DCH_OK, "add");
    cr_assert_eq(dch_ring_lookup_hash(r, 12345), id, "sole owner");
    size_t n;
    dch_range *rg = ring_ranges_of(r, &n);
    cr_assert(n == 1 && rg[0].owner == id, "one member owns one range");
    free(rg);
    cr_assert_eq(dch_ring_set_weight(r, id, 0), DCH_OK, "drain");
    cr_assert_eq(dch_ring_lookup_hash(r, 12345), DCH_NODE_NONE, "no owner after drain");
    cr_assert_eq(dch_ring_node_count(r), 3, "weightless members stay");
    dch_ring_free(r);
}

Test(ring, ownership_depends_only_on_the_member_set)
{
    uint64_t seed = test_seed(0x0bde4u);
    uint64_t g = seed;
    enum { N = 12 };
    char names[N][16];
    uint32_t weights[N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "m%d", i);
        weights[i] = 1 + rng_below(&g, 3);
    }
    /* Ring a: in order. Ring b: reversed, with a detour through extra
     * members and other weights. */
    dch_ring *a = new_ring(50, NULL, NULL), *b = new_ring(50, NULL, NULL);
    uint32_t id;
    for (int i = 0; i < N; i++)
        cr_assert_eq(dch_ring_add_node(a, names[i], weights[i], &id), DCH_OK, "add a");
    uint32_t extra;
    cr_assert_eq(dch_ring_add_node(b, "extra", 3, &extra), DCH_OK, "add extra");
    for (int i = N - 1; i >= 0; i--) {
        cr_assert_eq(dch_ring_add_node(b, names[i], weights[i] + 2, &id), DCH_OK, "add b");
        cr_assert_eq(dch_ring_set_weight(b, id, weights[i]), DCH_OK, "settle b");
    }
    cr_assert_eq(dch_ring_remove_node(b, extra), DCH_OK, "remove extra");
    size_t na, nb;
    dch_range *ra = ring_ranges_of(a, &na), *rb = ring_ranges_of(b, &nb);
    cr_assert_eq(na, nb, "seed %llu: range counts", (unsigned long long)seed);
    for (size_t i = 0; i < na; i++)
        cr_assert(ra[i].lo == rb[i].lo && ra[i].hi == rb[i].hi &&
                      strcmp(dch_ring_node_name(a, ra[i].owner),
                             dch_ring_node_name(b, rb[i].owner)) == 0,
                  "seed %llu: range %zu", (unsigned long long)seed, i);
    free(ra);
    free(rb);
    dch_ring_free(a);
    dch_ring_free(b);
}

/*
 * Two points at one position. Under the zero key, point 0 of these two names
 * collide (a distinguished-point search of about 2^32 SipHash-2-4 calls over
 * names that are 16 hex digits found them; libsodium agrees). The bytewise
 * smaller name, "0363...", must win the tie whichever joined first.
 */
#define TIE_SMALL "0363de49210dbe99"
#define TIE_LARGE "c20135946c1ea6b6"
#define TIE_POS UINT64_C(0x3b754b6117f5f94a)

#include <sodium.h>

Test(ring, tied_points_go_to_the_bytewise_smaller_name)
{
    const uint8_t zero[16] = {0};
    const char *names[2] = {TIE_SMALL "#0", TIE_LARGE "#0"};
    for (int i = 0; i < 2; i++) {
        unsigned char out[8];
        crypto_shorthash_siphash24(out, (const unsigned char *)names[i], strlen(names[i]), zero);
        uint64_t le = 0;
        for (int b = 7; b >= 0; b--)
            le = le << 8 | out[b];
        cr_assert_eq(le, TIE_POS, "libsodium places %s at the tie", names[i]);
        cr_assert_eq(dch_siphash24(zero, names[i], strlen(names[i])), TIE_POS,
                     "dch_siphash24 places %s at the tie", names[i]);
    }
    for (int order = 0; order < 2; order++) {
        dch_ring *r = new_ring(3, NULL, NULL);
        oracle o;
        oracle_init(&o, r);
        const char *join[3] = {order ? TIE_SMALL : TIE_LARGE, order ? TIE_LARGE : TIE_SMALL,
                               "third"};
        uint32_t id[3];
        for (int i = 0; i < 3; i++) {
            cr_assert_eq(dch_ring_add_node(r, join[i], 1, &id[i]), DCH_OK, "add");
            oracle_add(&o, join[i], 1, id[i]);
        }
        uint32_t small = id[order ? 0 : 1], large = id[order ? 1 : 0];
        for (int step = 0; step < 4; step++) {
            /* 0: both; 1: the winner drained; 2: raised back; 3: removed. */
            uint32_t want = step == 1 || step == 3 ? large : small;
            for (uint64_t d = 0; d < 3; d++)
                cr_assert_eq(dch_ring_lookup_hash(r, TIE_POS - d), want,
                             "order %d step %d: hash tie - %llu", order, step,
                             (unsigned long long)d);
            size_t n, nr, no;
            opoint *pts = oracle_points(&o, &n);
            cr_assert_eq(oracle_lookup(pts, n, TIE_POS), want, "the oracle agrees");
            dch_range *got = ring_ranges_of(r, &nr);
            dch_range *exp = oracle_ranges(pts, n, &no);
            cr_assert(nr == no && ranges_equal(got, exp, nr), "order %d step %d: ranges",
                      order, step);
            size_t in = 0;
            while (got[in].hi < TIE_POS)
                in++;
            cr_assert_eq(got[in].owner, want, "order %d step %d: the range holding the tie",
                         order, step);
            free(pts);
            free(got);
            free(exp);
            size_t at = 0;
            while (at < o.n && o.m[at].id != small)
                at++;
            if (step == 0) {
                cr_assert_eq(dch_ring_set_weight(r, small, 0), DCH_OK, "drain");
                o.m[at].weight = 0;
            } else if (step == 1) {
                cr_assert_eq(dch_ring_set_weight(r, small, 1), DCH_OK, "raise");
                o.m[at].weight = 1;
            } else if (step == 2) {
                cr_assert_eq(dch_ring_remove_node(r, small), DCH_OK, "remove");
                oracle_remove_at(&o, at);
            }
        }
        oracle_free(&o);
        dch_ring_free(r);
    }
}

/* ---- monotonicity ---------------------------------------------------------- */

/* A ring of `points` points per weight holding n0 .. n<count-1> of weight
 * 1 .. max_weight drawn from *g, their ids in ids (unless NULL). */
static dch_ring *grown_ring(uint32_t points, unsigned count, uint32_t max_weight, uint64_t *g,
                           uint32_t *ids)
{
    dch_ring *r = new_ring(points, NULL, NULL);
    ring_add_members(r, "n", count, max_weight, g, ids);
    return r;
}

/* How a member changes in moves_of. */
typedef enum move { MOVE_JOIN, MOVE_LEAVE, MOVE_WEIGH } move;

/*
 * The ownership changes of one step on r: "joiner" joins with weight w (its
 * id written to *id), member *id leaves, or its weight becomes w. Checked:
 * something moves exactly when the member's weight (0 outside the ring)
 * changes, and every change goes to the member when it rose, comes from it
 * when it fell. The caller frees the list.
 */
static change_list moves_of(dch_ring *r, move how, uint32_t *id, uint32_t w, uint64_t seed)
{
    static const char *const what[] = {"add", "remove", "set_weight"};
    const uint32_t old = how == MOVE_JOIN ? 0 : dch_ring_node_weight(r, *id);
    const uint32_t now = how == MOVE_LEAVE ? 0 : w;
    dch_ring *before = copy_of(r);
    const int rc = how == MOVE_JOIN    ? dch_ring_add_node(r, "joiner", w, id)
                   : how == MOVE_LEAVE ? dch_ring_remove_node(r, *id)
                                       : dch_ring_set_weight(r, *id, w);
    cr_assert_eq(rc, DCH_OK, "%s", what[how]);
    change_list cs = changes_since(before, r);
    cr_assert(now == old ? cs.n == 0 : cs.n > 0,
              "seed %llu: %s of %u, weight %u -> %u, moved %zu ranges",
              (unsigned long long)seed, what[how], *id, old, now, cs.n);
    for (size_t i = 0; i < cs.n; i++)
        cr_assert(now > old ? cs.v[i].to == *id : cs.v[i].from == *id,
                  "seed %llu: %s of %u, weight %u -> %u: change %zu is %u -> %u",
                  (unsigned long long)seed, what[how], *id, old, now, i, cs.v[i].from,
                  cs.v[i].to);
    return cs;
}

Test(ring, add_moves_arcs_only_to_the_new_member)
{
    uint64_t seed = test_seed(0xadd0u);
    uint64_t g = seed;
    uint32_t id;
    dch_ring *r = grown_ring(160, 20, 3, &g, NULL);
    change_list cs = moves_of(r, MOVE_JOIN, &id, 2, seed);
    double moved = 0.0;
    for (size_t i = 0; i < cs.n; i++)
        moved += dch_range_fraction(cs.v[i].lo, cs.v[i].hi);
    /* Everything that moved is what the joiner now owns. */
    size_t n;
    dch_range *rg = ring_ranges_of(r, &n);
    double owned = 0.0;
    for (size_t i = 0; i < n; i++)
        if (rg[i].owner == id)
            owned += dch_range_fraction(rg[i].lo, rg[i].hi);
    cr_assert(moved > owned - 1e-12 && moved < owned + 1e-12, "moved %.12f owned %.12f",
              moved, owned);
    free(rg);
    free(cs.v);
    dch_ring_free(r);
}

/* `rounds` times a random member of a grown_ring (from the seed
 * test_seed(fallback)) leaves or takes a random weight 0 .. 6, as `how` says,
 * each step checked by moves_of; a member that has left is passed over. */
static void random_moves(uint64_t fallback, uint32_t points, unsigned count,
                         uint32_t max_weight, int rounds, move how)
{
    uint64_t seed = test_seed(fallback);
    uint64_t g = seed;
    uint32_t ids[20];
    cr_assert(count <= 20, "at most 20 members");
    dch_ring *r = grown_ring(points, count, max_weight, &g, ids);
    for (int round = 0; round < rounds; round++) {
        uint32_t id = ids[rng_below(&g, count)];
        if (dch_ring_node_name(r, id) == NULL)
            continue;
        const uint32_t w = how == MOVE_WEIGH ? rng_below(&g, 7) : 0;
        free(moves_of(r, how, &id, w, seed).v);
    }
    dch_ring_free(r);
}

Test(ring, remove_moves_arcs_only_from_the_leaver)
{
    random_moves(0x4e30u, 160, 20, 3, 5, MOVE_LEAVE);
}

Test(ring, set_weight_moves_arcs_only_to_or_from_the_member)
{
    random_moves(0x3e16u, 40, 10, 4, 20, MOVE_WEIGH);
}

Test(ring, set_weight_there_and_back_restores_the_ring)
{
    dch_ring *r = ring_of_two(30, NULL, "a", 3, "b", 2);
    const uint32_t a = 0;
    size_t n0;
    dch_range *r0 = ring_ranges_of(r, &n0);
    const uint32_t detours[] = {7, 1, 0, 3};
    for (size_t d = 0; d < 4; d++) {
        cr_assert_eq(dch_ring_set_weight(r, a, detours[d]), DCH_OK, "detour");
        cr_assert_eq(dch_ring_set_weight(r, a, 3), DCH_OK, "back");
        size_t n;
        dch_range *rg = ring_ranges_of(r, &n);
        cr_assert(n == n0 && ranges_equal(rg, r0, n),
                  "weight 3 -> %u -> 3 changed the ring", detours[d]);
        free(rg);
    }
    free(r0);
    dch_ring_free(r);
}

/* ---- balance ---------------------------------------------------------------- */

/* Shares of the hash space per id, from the ranges. */
static double *shares_of(const dch_ring *r)
{
    uint32_t limit = dch_ring_id_limit(r);
    double *share = calloc(limit ? limit : 1, sizeof *share);
    cr_assert(share != NULL, "out of memory");
    size_t n;
    dch_range *rg = ring_ranges_of(r, &n);
    for (size_t i = 0; i < n; i++)
        if (rg[i].owner != DCH_NODE_NONE)
            share[rg[i].owner] += dch_range_fraction(rg[i].lo, rg[i].hi);
    free(rg);
    return share;
}

Test(ring, shares_are_balanced_with_160_points_per_weight)
{
    /* With 160 points a member's share has a relative standard deviation of
     * about 1/sqrt(160) = 8%, so a max/avg of 1.5 is over six deviations. */
    uint64_t seed = test_seed(0xba1a4ceu);
    uint64_t g = seed;
    uint8_t key[16];
    random_key(&g, key);
    dch_ring *r = new_ring(160, key, NULL);
    for (int i = 0; i < 100; i++) {
        char name[16];
        snprintf(name, sizeof name, "node-%d", i);
        uint32_t id;
        cr_assert_eq(dch_ring_add_node(r, name, 1, &id), DCH_OK, "add");
    }
    double *share = shares_of(r);
    double sum = 0.0, max = 0.0, min = 1.0;
    for (int i = 0; i < 100; i++) {
        sum += share[i];
        max = share[i] > max ? share[i] : max;
        min = share[i] < min ? share[i] : min;
    }
    cr_assert(sum > 1.0 - 1e-9 && sum < 1.0 + 1e-9, "shares sum to %.12f", sum);
    cr_assert(max / 0.01 < 1.5, "seed %llu: max/avg %.3f", (unsigned long long)seed, max / 0.01);
    cr_assert(min / 0.01 > 0.5, "seed %llu: min/avg %.3f", (unsigned long long)seed, min / 0.01);
    free(share);

    /* Weight 3 members get about three times a weight 1 member's share. */
    for (uint32_t id = 50; id < 100; id++)
        cr_assert_eq(dch_ring_set_weight(r, id, 3), DCH_OK, "set_weight");
    share = shares_of(r);
    double light = 0.0, heavy = 0.0;
    for (int i = 0; i < 50; i++) {
        light += share[i];
        heavy += share[i + 50];
    }
    cr_assert(heavy / light > 2.5 && heavy / light < 3.5, "seed %llu: heavy/light %.3f",
              (unsigned long long)seed, heavy / light);
    free(share);
    dch_ring_free(r);
}

/* ---- the rest of the API ------------------------------------------------------ */

Test(ring, config_defaults_and_round_trip)
{
    dch_ring_config cfg;
    memset(&cfg, 0xab, sizeof cfg);
    dch_ring_config_default(&cfg);
    cr_assert_eq(cfg.points_per_weight, 160, "default points per weight");
    cr_assert(cfg.allocator == NULL, "default allocator is libc");
    for (size_t i = 0; i < 16; i++)
        cr_assert_eq(cfg.hash_key[i], 0, "default key is zero");
    dch_ring_config_default(NULL);

    cfg.points_per_weight = 3;
    cfg.hash_key[5] = 9;
    dch_ring *r;
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_OK, "new");
    dch_ring_config got;
    dch_ring_get_config(r, &got);
    cr_assert(got.points_per_weight == 3 && got.hash_key[5] == 9 && got.allocator == NULL,
              "config round trip");
    dch_ring_get_config(r, NULL);
    dch_ring_free(r);
    cr_assert_eq(dch_ring_new(&r, NULL), DCH_OK, "NULL config means defaults");
    dch_ring_get_config(r, &got);
    cr_assert_eq(got.points_per_weight, 160, "defaults");
    dch_ring_free(r);
    dch_ring_free(NULL);
}

static void *never_alloc(void *ctx, size_t size)
{
    (void)ctx;
    (void)size;
    return NULL;
}

Test(ring, new_rejects_bad_configs)
{
    dch_ring_config cfg;
    dch_ring_config_default(&cfg);
    dch_ring *r = (dch_ring *)&cfg; /* a sentinel that must survive */
    cr_assert_eq(dch_ring_new(NULL, &cfg), DCH_EINVAL, "NULL out");
    cfg.points_per_weight = 0;
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_EINVAL, "zero points per weight");
    cfg.points_per_weight = 1;
    dch_allocator half = {never_alloc, NULL, NULL, NULL};
    cfg.allocator = &half;
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_EINVAL, "allocator lacking functions");
    cr_assert(r == (dch_ring *)&cfg, "out untouched on error");
}

Test(ring, hash_and_lookup_use_the_configured_key)
{
    uint8_t key[16];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)(i * 7 + 1);
    dch_ring *r = ring_of_two(10, key, "a", 1, "b", 1);
    for (int i = 0; i < 100; i++) {
        char k[16];
        int len = snprintf(k, sizeof k, "key%d", i);
        uint64_t h = dch_siphash24(key, k, (size_t)len);
        cr_assert_eq(dch_ring_hash(r, k, (size_t)len), h, "hash uses the ring's key");
        cr_assert_eq(dch_ring_lookup(r, k, (size_t)len), dch_ring_lookup_hash(r, h),
                     "lookup is lookup_hash of hash");
    }
    cr_assert_eq(dch_ring_hash(r, NULL, 0), dch_siphash24(key, NULL, 0), "empty key");
    dch_ring_free(r);
}

Test(ring, ids_are_lowest_free_first_and_stable)
{
    dch_ring *r = numbered_ring(5, 6);
    cr_assert_eq(dch_ring_remove_node(r, 1), DCH_OK, "remove 1");
    cr_assert_eq(dch_ring_remove_node(r, 4), DCH_OK, "remove 4");
    cr_assert_eq(dch_ring_node_name(r, 1), NULL, "1 is gone");
    cr_assert_eq(strcmp(dch_ring_node_name(r, 5), "n5"), 0, "5 keeps its id");
    uint32_t id;
    cr_assert_eq(dch_ring_add_node(r, "x", 1, &id), DCH_OK, "add");
    cr_assert_eq(id, 1, "lowest free id");
    cr_assert_eq(dch_ring_add_node(r, "y", 1, NULL), DCH_OK, "add without id_out");
    cr_assert_eq(dch_ring_find_node(r, "y", &id), DCH_OK, "find");
    cr_assert_eq(id, 4, "next lowest free id");
    cr_assert_eq(dch_ring_id_limit(r), 6, "id limit");
    cr_assert_eq(dch_ring_remove_node(r, 5), DCH_OK, "remove the highest");
    cr_assert_eq(dch_ring_id_limit(r), 5, "id limit follows the highest id");
    cr_assert_eq(dch_ring_find_node(r, "n5", &id), DCH_ENOENT, "removed name is gone");
    dch_ring_free(r);
}

Test(ring, ranges_reports_count_and_efull_when_cap_is_short)
{
    dch_ring *r = ring_of_two(8, NULL, "a", 1, "b", 1);
    size_t n;
    dch_range *all = ring_ranges_of(r, &n);
    cr_assert(n > 2, "two members of 8 points interleave");
    dch_range part[2];
    size_t count = 0;
    cr_assert_eq(dch_ring_ranges(r, part, 2, &count), DCH_EFULL, "short cap");
    cr_assert_eq(count, n, "count is the full count");
    cr_assert(ranges_equal(part, all, 2), "the first cap ranges are written");
    cr_assert_eq(dch_ring_ranges(NULL, part, 2, &count), DCH_EINVAL, "NULL ring");
    cr_assert_eq(dch_ring_ranges(r, part, 2, NULL), DCH_EINVAL, "NULL count");
    cr_assert_eq(dch_ring_ranges(r, NULL, 2, &count), DCH_EINVAL, "NULL out with cap");
    free(all);
    dch_ring_free(r);
}

static int stop_at_third(const dch_range *rg, void *ctx)
{
    (void)rg;
    int *calls = ctx;
    return ++*calls == 3 ? 42 : 0;
}

Test(ring, foreach_range_stops_at_callbacks_nonzero_return)
{
    dch_ring *r = ring_of_two(8, NULL, "a", 1, "b", 1);
    int calls = 0;
    cr_assert_eq(dch_ring_foreach_range(r, stop_at_third, &calls), 42, "fn's value returned");
    cr_assert_eq(calls, 3, "no call after the stop");
    cr_assert_eq(dch_ring_foreach_range(r, NULL, NULL), DCH_EINVAL, "NULL fn");
    cr_assert_eq(dch_ring_foreach_range(NULL, stop_at_third, &calls), DCH_EINVAL, "NULL ring");
    dch_ring_free(r);
}

Test(ring, clone_is_equal_and_independent)
{
    dch_ring *r = numbered_ring(16, 10);
    cr_assert_eq(dch_ring_remove_node(r, 4), DCH_OK, "leave a hole");
    dch_ring *c;
    cr_assert_eq(dch_ring_clone(&c, r), DCH_OK, "clone");
    change_list cs = diff_rings(r, c);
    cr_assert_eq(cs.n, 0, "same ownership");
    free(cs.v);
    cr_assert_eq(dch_ring_id_limit(c), dch_ring_id_limit(r), "same ids");
    for (uint32_t i = 0; i < dch_ring_id_limit(r); i++) {
        const char *a = dch_ring_node_name(r, i), *b = dch_ring_node_name(c, i);
        cr_assert((a == NULL) == (b == NULL) && (a == NULL || strcmp(a, b) == 0), "id %u", i);
        cr_assert_eq(dch_ring_node_weight(r, i), dch_ring_node_weight(c, i), "id %u", i);
    }
    uint32_t id;
    cr_assert_eq(dch_ring_add_node(c, "new", 2, &id), DCH_OK, "change the clone");
    cr_assert_eq(id, 4, "clone reuses the hole");
    cr_assert_eq(dch_ring_node_name(r, 4), NULL, "original untouched");
    cr_assert_eq(dch_ring_node_count(r), 9, "original untouched");
    cr_assert_eq(dch_ring_clone(NULL, r), DCH_EINVAL, "NULL out");
    cr_assert_eq(dch_ring_clone(&c, NULL), DCH_EINVAL, "NULL ring");
    dch_ring_free(c);
    dch_ring_free(r);
}

Test(ring, memory_is_eight_bytes_a_point_plus_a_fixed_index_and_members)
{
    dch_ring *r = new_ring(160, NULL, NULL);
    size_t empty = dch_ring_memory(r);
    cr_assert(empty < 1024, "an empty ring is small: %zu", empty);
    uint32_t id;
    size_t names = 0;
    for (int i = 0; i < 200; i++) {
        char name[16];
        names += (size_t)snprintf(name, sizeof name, "node-%d", i) + 1;
        cr_assert_eq(dch_ring_add_node(r, name, 1, &id), DCH_OK, "add");
    }
    size_t points = dch_ring_point_count(r);
    size_t fixed = (65536 + 1) * sizeof(uint32_t);
    size_t mem = dch_ring_memory(r);
    cr_assert(mem >= 8 * points + fixed, "memory %zu counts points and index", mem);
    cr_assert(mem <= 8 * points + fixed + empty + names + 64 * 200,
              "memory %zu: at most 8 bytes a point, the index and O(N)", mem);
    for (uint32_t i = 0; i < 200; i++)
        cr_assert_eq(dch_ring_remove_node(r, i), DCH_OK, "remove");
    cr_assert(dch_ring_memory(r) < 64 * 200 + 1024, "removing everything gives memory back");
    cr_assert_eq(dch_ring_memory(NULL), 0, "NULL");
    dch_ring_free(r);
}

Test(ring, getters_tolerate_null_and_non_members)
{
    cr_assert_eq(dch_ring_node_name(NULL, 0), NULL, "name");
    cr_assert_eq(dch_ring_node_weight(NULL, 0), 0, "weight");
    cr_assert_eq(dch_ring_node_count(NULL), 0, "count");
    cr_assert_eq(dch_ring_id_limit(NULL), 0, "id limit");
    cr_assert_eq(dch_ring_total_weight(NULL), 0, "weight sum");
    cr_assert_eq(dch_ring_point_count(NULL), 0, "points");
    cr_assert_eq(dch_ring_lookup_hash(NULL, 5), DCH_NODE_NONE, "lookup");
    cr_assert_eq(dch_ring_lookup(NULL, "k", 1), DCH_NODE_NONE, "lookup");
    dch_ring *r = new_ring(4, NULL, NULL);
    cr_assert_eq(dch_ring_node_name(r, 0), NULL, "no member 0");
    cr_assert_eq(dch_ring_node_name(r, DCH_NODE_NONE), NULL, "no member NONE");
    cr_assert_eq(dch_ring_node_weight(r, 7), 0, "no member 7");
    dch_ring_free(r);
}

/* ---- errors leave the ring unchanged ------------------------------------------- */

/* The ring now matches the snapshot: config, members, ids, weights, points,
 * ownership, and (when `memory` is set) the bytes it holds. */
static void expect_snap(const dch_ring *r, const ring_snap *want, bool memory,
                        const char *what)
{
    const char *why = ring_snap_differs(want, r, memory);
    cr_assert_null(why, "%s: %s changed", what, why);
}

/* A 10-point ring holding "a" of weight 2 (its id, 0, in *id), and its
 * snapshot in *s: the starting point of the refusal tests. */
static dch_ring *ring_of_a(uint32_t *id, ring_snap *s)
{
    dch_ring *r = new_ring(10, NULL, NULL);
    *id = 77;
    cr_assert_eq(dch_ring_add_node(r, "a", 2, id), DCH_OK, "add");
    cr_assert_eq(*id, 0);
    ring_snap_take(s, r);
    return r;
}

Test(ring, null_arguments_are_rejected_and_change_nothing)
{
    uint32_t id;
    ring_snap s;
    dch_ring *r = ring_of_a(&id, &s);
    cr_assert_eq(dch_ring_add_node(NULL, "b", 1, &id), DCH_EINVAL, "add to NULL");
    cr_assert_eq(dch_ring_add_node(r, NULL, 1, &id), DCH_EINVAL, "add NULL name");
    cr_assert_eq(dch_ring_remove_node(NULL, 0), DCH_EINVAL, "remove from NULL");
    cr_assert_eq(dch_ring_set_weight(NULL, 0, 1), DCH_EINVAL, "set_weight on NULL");
    cr_assert_eq(dch_ring_find_node(NULL, "a", &id), DCH_EINVAL, "find in NULL");
    cr_assert_eq(dch_ring_find_node(r, NULL, &id), DCH_EINVAL, "find NULL name");
    cr_assert_eq(dch_ring_find_node(r, "a", NULL), DCH_EINVAL, "find into NULL");
    cr_assert_eq(id, 0, "id_out untouched on error");
    expect_snap(r, &s, true, "NULL arguments");
    ring_snap_free(&s);
    dch_ring_free(r);
}

Test(ring, bad_names_are_rejected_and_change_nothing)
{
    uint32_t id;
    ring_snap s;
    dch_ring *r = ring_of_a(&id, &s);
    /* 256 bytes with no NUL among them: the ring must not read further. */
    char *long_name = malloc(DCH_NAME_MAX + 1);
    cr_assert(long_name != NULL, "out of memory");
    memset(long_name, 'z', DCH_NAME_MAX + 1);
    id = 77;
    cr_assert_eq(dch_ring_add_node(r, "", 1, &id), DCH_EINVAL, "empty name");
    cr_assert_eq(dch_ring_add_node(r, long_name, 1, &id), DCH_EINVAL, "256-byte name");
    cr_assert_eq(dch_ring_find_node(r, "", &id), DCH_EINVAL, "find empty");
    cr_assert_eq(dch_ring_find_node(r, long_name, &id), DCH_EINVAL, "find 256 bytes");
    cr_assert_eq(id, 77, "id_out untouched");
    expect_snap(r, &s, true, "bad names");
    /* 255 bytes is the longest name and works. */
    long_name[DCH_NAME_MAX] = '\0';
    cr_assert_eq(dch_ring_add_node(r, long_name, 1, &id), DCH_OK, "255-byte name");
    cr_assert_eq(strcmp(dch_ring_node_name(r, id), long_name), 0, "name copied");
    free(long_name);
    ring_snap_free(&s);
    dch_ring_free(r);
}

Test(ring, duplicate_name_is_rejected_and_changes_nothing)
{
    dch_ring *r = ring_of_two(10, NULL, "a", 2, "ab", 0);
    uint32_t id;
    ring_snap s;
    ring_snap_take(&s, r);
    cr_assert_eq(dch_ring_add_node(r, "a", 1, &id), DCH_EEXIST, "duplicate");
    cr_assert_eq(dch_ring_add_node(r, "ab", 3, &id), DCH_EEXIST, "weightless duplicate");
    expect_snap(r, &s, true, "duplicate");
    ring_snap_free(&s);
    dch_ring_free(r);
}

Test(ring, unknown_ids_are_rejected_and_change_nothing)
{
    dch_ring *r = ring_of_two(10, NULL, "a", 2, "b", 2);
    uint32_t id;
    cr_assert_eq(dch_ring_add_node(r, "c", 2, &id), DCH_OK, "add");
    cr_assert_eq(dch_ring_remove_node(r, 1), DCH_OK, "remove");
    ring_snap s;
    ring_snap_take(&s, r);
    const uint32_t bad[] = {1, 3, 1000, DCH_RING_MAX_NODES, DCH_NODE_NONE};
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(dch_ring_remove_node(r, bad[i]), DCH_ENOENT, "remove %u", bad[i]);
        cr_assert_eq(dch_ring_set_weight(r, bad[i], 1), DCH_ENOENT, "set_weight %u", bad[i]);
    }
    cr_assert_eq(dch_ring_find_node(r, "b", &id), DCH_ENOENT, "find removed");
    expect_snap(r, &s, true, "unknown ids");
    ring_snap_free(&s);
    dch_ring_free(r);
}

Test(ring, weight_and_point_limits_give_efull_and_change_nothing)
{
    /* 2^16 points per weight: weight 256 is exactly DCH_RING_MAX_POINTS. */
    dch_ring *r = new_ring(1u << 16, NULL, NULL);
    uint32_t a, b;
    cr_assert_eq(dch_ring_add_node(r, "a", 1, &a), DCH_OK, "add");
    cr_assert_eq(dch_ring_add_node(r, "b", 0, &b), DCH_OK, "add");
    ring_snap s;
    ring_snap_take(&s, r);
    uint32_t id = 77;
    cr_assert_eq(dch_ring_add_node(r, "c", 256, &id), DCH_EFULL, "points past the limit");
    cr_assert_eq(dch_ring_add_node(r, "c", UINT32_MAX, &id), DCH_EFULL, "weight past the limit");
    cr_assert_eq(dch_ring_set_weight(r, b, 256), DCH_EFULL, "raise past the point limit");
    cr_assert_eq(dch_ring_set_weight(r, a, 257), DCH_EFULL, "raise past the point limit");
    cr_assert_eq(dch_ring_set_weight(r, b, UINT32_MAX), DCH_EFULL, "weight sum past UINT32_MAX");
    cr_assert_eq(id, 77, "id_out untouched");
    expect_snap(r, &s, true, "limits");
    ring_snap_free(&s);
    dch_ring_free(r);

    /* One point per weight: the point limit is a weight limit too. */
    r = new_ring(1, NULL, NULL);
    cr_assert_eq(dch_ring_add_node(r, "w", 0, &a), DCH_OK, "add");
    cr_assert_eq(dch_ring_set_weight(r, a, DCH_RING_MAX_POINTS + 1), DCH_EFULL, "raise");
    cr_assert_eq(dch_ring_node_weight(r, a), 0, "unchanged");
    dch_ring_free(r);
}

Test(ring, member_limit_gives_efull_and_changes_nothing)
{
    dch_ring *r = new_ring(1, NULL, NULL);
    char name[16];
    uint32_t id;
    for (uint32_t i = 0; i < DCH_RING_MAX_NODES; i++) {
        snprintf(name, sizeof name, "%05u", i);
        cr_assert_eq(dch_ring_add_node(r, name, i < 100 ? 1u : 0u, &id), DCH_OK, "add %u", i);
    }
    cr_assert_eq(id, DCH_RING_MAX_NODES - 1, "the last id");
    ring_snap s;
    ring_snap_take(&s, r);
    cr_assert_eq(dch_ring_add_node(r, "one-more", 1, &id), DCH_EFULL, "member limit");
    expect_snap(r, &s, true, "member limit");
    ring_snap_free(&s);
    /* The last id holds points like any other. */
    cr_assert_eq(dch_ring_set_weight(r, DCH_RING_MAX_NODES - 1, 1000), DCH_OK, "raise");
    double *share = shares_of(r);
    cr_assert(share[DCH_RING_MAX_NODES - 1] > 0.5, "the highest id owns its share");
    free(share);
    dch_ring_free(r);
}

enum op {
    OP_ADD,
    OP_ADD_WEIGHTLESS,
    OP_REMOVE,
    OP_RAISE,
    OP_LOWER,
    OP_DRAIN,
    OP_CLONE,
    OP_COUNT
};
static const char *const op_names[OP_COUNT] = {
    "add", "add weightless", "remove", "raise", "lower", "drain", "clone"};

static int apply(dch_ring *r, enum op op, uint32_t target, dch_ring **clone_out)
{
    uint32_t w = dch_ring_node_weight(r, target);
    switch (op) {
    case OP_ADD:
        return dch_ring_add_node(r, "joiner", 2, NULL);
    case OP_ADD_WEIGHTLESS:
        return dch_ring_add_node(r, "idle", 0, NULL);
    case OP_REMOVE:
        return dch_ring_remove_node(r, target);
    case OP_RAISE:
        return dch_ring_set_weight(r, target, w + 2);
    case OP_LOWER:
        return dch_ring_set_weight(r, target, w / 2);
    case OP_DRAIN:
        return dch_ring_set_weight(r, target, 0);
    case OP_CLONE:
    case OP_COUNT:
        break;
    }
    return dch_ring_clone(clone_out, r);
}

/*
 * Ops whose every allocation is needed, so failing any must fail the op.
 * Removing and lowering only ever shrink, and a failed shrink is no error.
 */
static bool must_allocate(enum op op)
{
    return op == OP_ADD || op == OP_ADD_WEIGHTLESS || op == OP_RAISE || op == OP_CLONE;
}

Test(ring, every_failed_allocation_leaves_the_ring_unchanged_and_leaks_nothing)
{
    faulty f = {0, 0, false, 0};
    dch_allocator alloc = faulty_allocator(&f);
    const size_t sizes[] = {0, 1, 5, 12};
    for (size_t si = 0; si < 4; si++) {
        size_t members = sizes[si];
        dch_ring *base = new_ring(16, NULL, &alloc);
        for (size_t i = 0; i < members; i++) {
            char name[32];
            snprintf(name, sizeof name, "m%zu", i);
            cr_assert_eq(dch_ring_add_node(base, name, 1 + (uint32_t)(i % 3), NULL), DCH_OK,
                         "add");
        }
        if (members > 2)
            cr_assert_eq(dch_ring_remove_node(base, 1), DCH_OK, "leave a hole");
        uint32_t target = members > 0 ? 0 : DCH_NODE_NONE;
        for (int op = 0; op < OP_COUNT; op++) {
            if (members == 0 && op != OP_ADD && op != OP_ADD_WEIGHTLESS && op != OP_CLONE)
                continue;
            /* The reference: the op with nothing failing, and its calls. */
            dch_ring *ref, *ref_clone = NULL;
            cr_assert_eq(dch_ring_clone(&ref, base), DCH_OK, "clone");
            f.calls = 0;
            cr_assert_eq(apply(ref, (enum op)op, target, &ref_clone), DCH_OK, "%s",
                         op_names[op]);
            long calls = f.calls;
            cr_assert(!must_allocate((enum op)op) || calls > 0,
                      "%s with %zu members allocates", op_names[op], members);
            ring_snap want;
            ring_snap_take(&want, op == OP_CLONE ? ref_clone : ref);
            for (long k = 1; k <= calls; k++) {
                dch_ring *c, *c_clone = (dch_ring *)&f;
                cr_assert_eq(dch_ring_clone(&c, base), DCH_OK, "clone");
                ring_snap before;
                ring_snap_take(&before, c);
                faulty_arm(&f, k, false);
                int rc = apply(c, (enum op)op, target, &c_clone);
                faulty_arm(&f, 0, false);
                if (rc == DCH_ENOMEM) {
                    expect_snap(c, &before, true, op_names[op]);
                    cr_assert(c_clone == (dch_ring *)&f, "%s: out untouched", op_names[op]);
                } else {
                    cr_assert(rc == DCH_OK && !must_allocate((enum op)op),
                              "%s with %zu members, allocation %ld failed: rc %d",
                              op_names[op], members, k, rc);
                    /* An optional allocation failed (a shrink): the result
                     * is still right, and later changes work on it. */
                    expect_snap(c, &want, false, op_names[op]);
                    cr_assert_eq(dch_ring_add_node(c, "later", 1, NULL), DCH_OK, "later");
                    cr_assert_eq(dch_ring_add_node(ref, "later", 1, NULL), DCH_OK, "later");
                    ring_snap later;
                    ring_snap_take(&later, ref);
                    expect_snap(c, &later, false, "a change after a failed shrink");
                    ring_snap_free(&later);
                    uint32_t later_id;
                    cr_assert_eq(dch_ring_find_node(ref, "later", &later_id), DCH_OK, "find");
                    cr_assert_eq(dch_ring_remove_node(ref, later_id), DCH_OK, "undo");
                }
                ring_snap_free(&before);
                if (c_clone != (dch_ring *)&f)
                    dch_ring_free(c_clone);
                dch_ring_free(c);
            }
            ring_snap_free(&want);
            dch_ring_free(ref_clone);
            dch_ring_free(ref);
        }
        dch_ring_free(base);
        cr_assert_eq(f.live, 0, "%zu members: %ld blocks leaked", members, f.live);
    }

    /* dch_ring_new itself. */
    dch_ring_config cfg;
    dch_ring_config_default(&cfg);
    cfg.allocator = &alloc;
    dch_ring *r = (dch_ring *)&f;
    faulty_arm(&f, 1, false);
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_ENOMEM, "new fails");
    cr_assert(r == (dch_ring *)&f, "out untouched");
    faulty_arm(&f, 0, false);
    cr_assert_eq(f.live, 0, "nothing leaked");
}
