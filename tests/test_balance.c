/* SPDX-License-Identifier: MIT */
/*
 * Balancing by load (dch/balance.h): the API's contracts and promises 1-7,
 * checked from the header's text by an outside oracle (tests/support/
 * balancing.c) that recomputes every target, bound, load and count in
 * exact integers from the public readers.
 *
 * Maps of 16 to 4,096 slots, R = 1 to 4, with and without zones, equal and
 * unequal weights, drains of both modes and names that come back under
 * reused ids; load vectors all zero, all on one slot, near-equal, Zipf
 * (s = 0.8 .. 1.2), heavy-tailed, a few hot slots, near UINT64_MAX in sum,
 * and sparse; histories that mix balancing with every other call. A twin
 * map gets every call but the balancing ones: the table below the layer
 * must be its table. Every failure message names the seed; rerun one case
 * with DCH_TEST_SEED.
 */
#include <criterion/criterion.h>

#include "balancing.h"
#include "dch/dch.h"
#include "drains.h"
#include "replica_maps.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE DCH_NODE_NONE

/* ---- A map, its twin and their history --------------------------------- */

/* What the calls did, for the log. */
typedef struct tally {
    unsigned calls, changed, moves, promotions, placement, budget, slack, kept, dropped;
} tally;

static void tally_add(tally *s, const tally *t)
{
    s->calls += t->calls;
    s->changed += t->changed;
    s->moves += t->moves;
    s->promotions += t->promotions;
    s->placement += t->placement;
    s->budget += t->budget;
    s->slack += t->slack;
    s->kept += t->kept;
    s->dropped += t->dropped;
}

typedef struct world {
    dch_map *m, *b; /* b: every call but dch_map_balance_load and _clear */
    uint64_t rng, seed;
    uint32_t R, zones, names, P;
    bool unequal, checks;
    uint64_t *loads;
    uint32_t *below; /* the table below m's layer after the last call */
    uint64_t digest; /* of every epoch and fingerprint, for determinism */
    tally t;
} world;

static void ok(const world *w, const char *bad, const char *what)
{
    cr_assert_null(bad, "seed %llu (R %u, zones %u, P %u), %s: %s",
                   (unsigned long long)w->seed, w->R, w->zones, w->P, what, bad);
}

static uint32_t draw_weight(world *w, bool adding)
{
    if (rng_below(&w->rng, 10) == 0 && !adding)
        return 0;
    if (!w->unequal)
        return 1;
    return rng_below(&w->rng, 12) == 0 ? 100 + rng_below(&w->rng, 900) : 1 + rng_below(&w->rng, 8);
}

static void note(world *w)
{
    w->digest = w->digest * 0x100000001b3u ^ dch_map_epoch(w->m);
    w->digest = w->digest * 0x100000001b3u ^ dch_map_fingerprint(w->m);
}

/* After every call: the layer (and the table below it, kept in w->below). */
static void after_call(world *w, const char *what)
{
    note(w);
    if (!w->checks)
        return;
    free(w->below);
    w->below = NULL;
    ok(w, bal_check_layer(w->m, w->b, &w->below), what);
    ok(w, bal_check_kept(w->m, w->b), what);
}

static void world_init(world *w, uint64_t seed, uint32_t R, uint32_t zones, bool checks)
{
    memset(w, 0, sizeof *w);
    w->seed = w->rng = seed;
    w->R = R;
    w->zones = zones;
    w->checks = checks;
    w->unequal = rng_below(&w->rng, 2) == 1;
    w->names = 6 + rng_below(&w->rng, 30);
    /* 16 .. 4,096 slots, mostly small. */
    const uint32_t lg = 4 + rng_below(&w->rng, rng_below(&w->rng, 4) == 0 ? 9 : 5);
    const uint32_t lu = rng_below(&w->rng, lg + 1);
    w->m = replica_map(UINT32_C(1) << lu, UINT32_C(1) << (lg - lu), R);
    w->b = replica_map(UINT32_C(1) << lu, UINT32_C(1) << (lg - lu), R);
    w->P = dch_map_slot_count(w->m);
    w->loads = xcalloc(w->P, sizeof *w->loads);
    after_call(w, "a new map");
}

static void world_free(world *w)
{
    dch_map_free(w->m);
    dch_map_free(w->b);
    free(w->loads);
    free(w->below);
}

/* ---- Calls --------------------------------------------------------------- */

static void balance(world *w, const dch_balance_config *cfg)
{
    const uint32_t cap = dch_map_id_limit(w->m) + 1;
    dch_balance_left *left = xmalloc(cap * sizeof *left);
    dch_balance_report rep;
    bal_report_prepare(&rep, left, cap);
    dch_map *before = w->checks ? map_clone_of(w->m) : NULL;
    bal_state b = {0}, a = {0};
    if (w->checks)
        bal_take(&b, w->m, w->loads);
    const int rc = dch_map_balance_load(w->m, w->loads, w->P, cfg, &rep);
    cr_assert_eq(rc, DCH_OK, "seed %llu: dch_map_balance_load returned %d",
                 (unsigned long long)w->seed, rc);
    w->t.calls++;
    if (getenv("DCH_TEST_TRACE") != NULL)
        fprintf(stderr, "seed %llu: balance (max_moves %u, count_slack %u): %u moves, %u "
                        "promotions, %u in force\n",
                (unsigned long long)w->seed, cfg ? cfg->max_moves : 0,
                cfg ? cfg->count_slack : UINT32_MAX, rep.moves, rep.promotions, rep.in_force);
    if (w->checks) {
        bal_take(&a, w->m, w->loads);
        ok(w, bal_check_call(&b, &a, w->m, cfg, &rep), "a balancing call");
        ok(w, bal_check_change(before, w->m), "a balancing call (promise 6)");
        ok(w, bal_check_fixed_point(w->m, w->loads, cfg, &rep), "a balancing call (promise 4)");
        bal_free(&b);
        bal_free(&a);
        w->t.changed += dch_map_epoch(w->m) != dch_map_epoch(before);
        for (uint32_t k = 0; k < rep.left_count; k++) {
            w->t.placement += left[k].why == DCH_BALANCE_LEFT_PLACEMENT;
            w->t.budget += left[k].why == DCH_BALANCE_LEFT_BUDGET;
            w->t.slack += left[k].why == DCH_BALANCE_LEFT_SLACK;
        }
    }
    w->t.moves += rep.moves;
    w->t.promotions += rep.promotions;
    dch_map_free(before);
    free(left);
    after_call(w, "a balancing call");
}

static void clear(world *w)
{
    dch_map *before = w->checks ? map_clone_of(w->m) : NULL;
    const uint32_t moves = dch_map_balance_moves(w->m);
    cr_assert_eq(dch_map_balance_clear(w->m), DCH_OK);
    if (w->checks) {
        ok(w, bal_check_change(before, w->m), "dch_map_balance_clear");
        uint32_t *eff = drain_table(w->m, false);
        cr_assert(drain_same_table(eff, w->below, w->P),
                  "seed %llu: dch_map_balance_clear does not give the table below",
                  (unsigned long long)w->seed);
        cr_assert_eq(dch_map_epoch(w->m), dch_map_epoch(before) + (moves > 0));
        free(eff);
    }
    dch_map_free(before);
    after_call(w, "dch_map_balance_clear");
}

/* A call other than balancing, on m and the twin alike, then the
 * keep/drop rule. kind: 0 add, 1 remove, 2 set_weight, 3 drain, 4 undrain,
 * 5 clone. */
static void other(world *w, uint32_t kind)
{
    uint32_t *eff0 = w->checks ? drain_table(w->m, false) : NULL;
    const uint32_t before_moves = dch_map_balance_moves(w->m);
    int a = DCH_OK, b = DCH_OK;
    if (kind == 0 || dch_map_node_count(w->m) == 0) {
        char name[16], zone[16];
        snprintf(name, sizeof name, "n%u", rng_below(&w->rng, w->names));
        const bool zoned = w->zones > 0 && rng_below(&w->rng, 4) != 0;
        snprintf(zone, sizeof zone, "z%u", rng_below(&w->rng, w->zones ? w->zones : 1));
        const uint32_t wt = draw_weight(w, true);
        a = dch_map_add_node_in_zone(w->m, name, zoned ? zone : NULL, wt, NULL);
        b = dch_map_add_node_in_zone(w->b, name, zoned ? zone : NULL, wt, NULL);
    } else if (kind == 5) {
        dch_map *c = map_clone_of(w->m);
        dch_map_free(w->m);
        w->m = c;
    } else {
        const uint32_t x = map_random_member(w->m, &w->rng);
        if (kind == 1) {
            a = dch_map_remove_node(w->m, x);
            b = dch_map_remove_node(w->b, x);
        } else if (kind == 2) {
            const uint32_t wt = draw_weight(w, false);
            a = dch_map_set_weight(w->m, x, wt);
            b = dch_map_set_weight(w->b, x, wt);
        } else if (kind == 3) {
            const uint32_t mode = rng_below(&w->rng, 2) ? DCH_DRAIN_FULL : DCH_DRAIN_PRIMARY;
            a = dch_map_drain(w->m, x, mode);
            b = dch_map_drain(w->b, x, mode);
        } else {
            a = dch_map_undrain(w->m, x);
            b = dch_map_undrain(w->b, x);
        }
    }
    if (getenv("DCH_TEST_TRACE") != NULL)
        fprintf(stderr, "seed %llu: call %u (0 add, 1 remove, 2 set_weight, 3 drain, 4 undrain, "
                        "5 clone) -> %d; %u load moves in force before\n",
                (unsigned long long)w->seed, kind, a, before_moves);
    cr_assert_eq(a, b, "seed %llu: call %u answers %d with load moves, %d without",
                 (unsigned long long)w->seed, kind, a, b);
    cr_assert(a == DCH_OK || a == DCH_EEXIST, "seed %llu: call %u returned %d",
              (unsigned long long)w->seed, kind, a);
    if (w->checks) {
        uint32_t *below0 = w->below;
        w->below = NULL;
        after_call(w, "a call other than balancing");
        ok(w, bal_check_keep_drop(eff0, below0, w->below, w->m), "the keep/drop rule");
        const uint32_t now = dch_map_balance_moves(w->m);
        w->t.kept += now;
        w->t.dropped += before_moves > now ? before_moves - now : 0;
        free(below0);
        free(eff0);
    } else {
        note(w);
    }
}

static void fresh_loads(world *w)
{
    bal_loads(w->loads, w->P, rng_below(&w->rng, BAL_LOADS_KINDS), &w->rng);
}

static void grow(world *w, unsigned members)
{
    for (unsigned i = 0; i < members; i++)
        other(w, 0);
}

/* For each of the n replica_cases from the seed test_seed(fallback), `run`
 * on a fresh world that checks every call; what the calls did, summed. */
static tally over_cases(uint64_t fallback, unsigned n, void (*run)(world *w))
{
    replica_case c = {test_seed(fallback), n, 0, 0, 0, 0, false};
    tally sum = {0};
    while (replica_case_next(&c)) {
        world w;
        world_init(&w, c.seed, c.R, c.zones, true);
        run(&w);
        tally_add(&sum, &w.t);
        world_free(&w);
    }
    return sum;
}

/* ---- Promises 1-4 and 6 over fresh maps and every kind of load ---------- */

static void every_kind_of_load(world *w)
{
    grow(w, 2 + rng_below(&w->rng, 20));
    if (rng_below(&w->rng, 3) == 0)
        other(w, 3); /* a drain, of either mode */
    for (unsigned kind = 0; kind < BAL_LOADS_KINDS; kind++) {
        bal_loads(w->loads, w->P, kind, &w->rng);
        balance(w, NULL);
        /* Balancing again with other loads, over the moves in force. */
        fresh_loads(w);
        balance(w, NULL);
    }
}

Test(balance, bound_and_least_movement_over_every_kind_of_load)
{
    const tally t = over_cases(26, test_scaled(40, 1), every_kind_of_load);
    cr_log_info("%u calls, %u copy moves, %u promotions, %u members left above for placement",
                t.calls, t.moves, t.promotions, t.placement);
}

/* ---- Promise 5: budgets ---------------------------------------------------- */

static void budget_rounds(world *w)
{
    grow(w, 3 + rng_below(&w->rng, 16));
    for (unsigned round = 0; round < 6; round++) {
        fresh_loads(w);
        dch_balance_config cfg;
        cr_assert_eq(dch_balance_config_init(&cfg, DCH_BALANCE_CONFIG_VERSION), DCH_OK);
        const uint32_t pick = rng_below(&w->rng, 4);
        if (pick != 1)
            cfg.max_moves = 1 + rng_below(&w->rng, pick == 0 ? 1 : 5);
        if (pick != 0)
            cfg.count_slack = rng_below(&w->rng, 4);
        /* The same loads again and again: budgets spent call by call. */
        for (unsigned k = 0; k < 12; k++)
            balance(w, &cfg);
    }
}

Test(balance, budgets_bound_the_moves_and_the_counts)
{
    const tally t = over_cases(2605, test_scaled(24, 1), budget_rounds);
    cr_log_info("%u calls; members left above: %u for max_moves, %u for count_slack", t.calls,
                t.budget, t.slack);
}

/* ---- Promises 6 and 7 over histories that mix every call ----------------- */

static void run_history(world *w, unsigned steps)
{
    grow(w, 2 + rng_below(&w->rng, 8));
    fresh_loads(w);
    for (unsigned i = 0; i < steps; i++) {
        const uint32_t r = rng_below(&w->rng, 100);
        if (r < 22) {
            if (rng_below(&w->rng, 3) != 0)
                fresh_loads(w);
            dch_balance_config cfg;
            dch_balance_config_init(&cfg, DCH_BALANCE_CONFIG_VERSION);
            if (rng_below(&w->rng, 4) == 0)
                cfg.max_moves = 1 + rng_below(&w->rng, 3);
            if (rng_below(&w->rng, 5) == 0)
                cfg.count_slack = rng_below(&w->rng, 3);
            balance(w, rng_below(&w->rng, 2) ? &cfg : NULL);
        } else if (r < 27) {
            clear(w);
        } else if (r < 45) {
            other(w, 0);
        } else if (r < 55) {
            other(w, 1);
        } else if (r < 67) {
            other(w, 2);
        } else if (r < 79) {
            other(w, 3);
        } else if (r < 91) {
            other(w, 4);
        } else {
            other(w, 5);
        }
    }
}

static void mixed_history(world *w)
{
    run_history(w, test_scaled(100, 12));
}

Test(balance, histories_mixing_every_call_keep_or_drop_moves_by_the_rule)
{
    /* At least two cases: at the smallest scales one history of 12 calls
     * may hold no balancing call that changes its table. */
    const tally t = over_cases(2607, test_scaled(40, 2), mixed_history);
    cr_log_info("%u balancing calls (%u changed the table); load moves seen kept after other "
                "calls: %u, dropped: %u",
                t.calls, t.changed, t.kept, t.dropped);
    cr_assert_gt(t.changed, 0, "no balancing call changed a table: the histories test nothing");
}

/* The rule by example: a call elsewhere keeps the moves, draining or
 * re-weighting a member a move names drops that move, and a removal drops
 * the moves of the slots it moves below the layer. */
Test(balance, keep_and_drop_by_example)
{
    world w;
    world_init(&w, test_seed(2608), 1, 0, true);
    w.unequal = false;
    dch_map_free(w.m);
    dch_map_free(w.b);
    w.m = replica_map(16, 8, 1);
    w.b = replica_map(16, 8, 1);
    w.P = 128;
    free(w.loads);
    w.loads = xcalloc(w.P, sizeof *w.loads);
    after_call(&w, "a new map");
    map_add_members(w.m, "n", 6, NULL, 0);
    map_add_members(w.b, "n", 6, NULL, 0);
    after_call(&w, "six members");
    for (uint32_t s = 0; s < w.P; s++)
        w.loads[s] = dch_map_slot_owner(w.m, s) <= 1 ? 50 + s : 1;
    balance(&w, NULL);
    const uint32_t moves = dch_map_balance_moves(w.m);
    cr_assert_gt(moves, 0, "members 0 and 1 carry 25 times the others' load");
    /* A member of weight 0 joins: nothing moves below, every move stays. */
    cr_assert_eq(dch_map_add_node(w.b, "idle", 0, NULL), DCH_OK);
    uint32_t *eff0 = drain_table(w.m, false), *below0 = w.below;
    w.below = NULL;
    cr_assert_eq(dch_map_add_node(w.m, "idle", 0, NULL), DCH_OK);
    after_call(&w, "an idle member joins");
    ok(&w, bal_check_keep_drop(eff0, below0, w.below, w.m), "an idle member joins");
    cr_assert_eq(dch_map_balance_moves(w.m), moves, "a call that moves nothing below");
    free(eff0);
    free(below0);
    /* Drain the member that received the first moved slot. */
    uint32_t first;
    cr_assert_eq(dch_map_balance_slots(w.m, &first, 1), moves);
    const uint32_t r = dch_map_slot_owner(w.m, first);
    uint32_t named = 0;
    for (uint32_t s = 0; s < w.P; s++)
        named += dch_map_slot_owner(w.m, s) == r && dch_map_slot_owner(w.m, s) != dch_map_base_owner(w.m, s);
    cr_assert_eq(dch_map_drain(w.b, r, DCH_DRAIN_PRIMARY), DCH_OK);
    eff0 = drain_table(w.m, false);
    below0 = w.below;
    w.below = NULL;
    cr_assert_eq(dch_map_drain(w.m, r, DCH_DRAIN_PRIMARY), DCH_OK);
    after_call(&w, "a receiver drained");
    ok(&w, bal_check_keep_drop(eff0, below0, w.below, w.m), "a receiver drained");
    cr_assert_leq(dch_map_balance_moves(w.m), moves - named, "the receiver's moves are dropped");
    for (uint32_t s = 0; s < w.P; s++)
        cr_assert_neq(dch_map_slot_owner(w.m, s), r, "a drained member serves slot %u", s);
    free(eff0);
    free(below0);
    world_free(&w);
}

/* ---- Promise 7 (determinism) --------------------------------------------- */

Test(balance, two_maps_built_alike_are_byte_equal)
{
    const unsigned cases = test_scaled(6, 2);
    for (unsigned i = 0; i < cases; i++) {
        const uint64_t seed = test_seed(2609) + i;
        world x, y;
        world_init(&x, seed, 1 + i % 4, i % 2 ? 3 : 0, false);
        world_init(&y, seed, 1 + i % 4, i % 2 ? 3 : 0, false);
        run_history(&x, test_scaled(80, 20));
        run_history(&y, test_scaled(80, 20));
        cr_assert_eq(x.digest, y.digest, "seed %llu: the epochs and fingerprints differ",
                     (unsigned long long)seed);
        cr_assert(same_map_bytes(x.m, y.m), "seed %llu: the maps save differently",
                  (unsigned long long)seed);
        cr_assert_gt(x.t.calls, 0);
        world_free(&x);
        world_free(&y);
    }
}

/* ---- The API's contracts -------------------------------------------------- */

Test(balance, config_init)
{
    dch_balance_config cfg;
    memset(&cfg, 0x5A, sizeof cfg);
    cr_assert_eq(dch_balance_config_init(&cfg, DCH_BALANCE_CONFIG_VERSION), DCH_OK);
    cr_assert_eq(cfg.version, DCH_BALANCE_CONFIG_VERSION);
    cr_assert_eq(cfg.max_moves, 0);
    cr_assert_eq(cfg.count_slack, UINT32_MAX);
    cr_assert_eq(dch_balance_config_init(NULL, DCH_BALANCE_CONFIG_VERSION), DCH_EINVAL);
    cr_assert_eq(dch_balance_config_init(&cfg, 0), DCH_EINVAL);
    cr_assert_eq(dch_balance_config_init(&cfg, DCH_BALANCE_CONFIG_VERSION + 1), DCH_EINVAL);
    cr_assert_eq(dch_map_balance_clear(NULL), DCH_EINVAL);
    cr_assert_eq(dch_map_balance_moves(NULL), 0);
    cr_assert_eq(dch_map_balance_slots(NULL, NULL, 0), 0);
}

/* Every refused call leaves the map byte for byte and the report unwritten. */
Test(balance, errors_change_nothing)
{
    dch_map *m = replica_map(8, 8, 2);
    map_add_members(m, "n", 5, (const uint32_t[]){1, 3, 2}, 3);
    const uint32_t P = dch_map_slot_count(m);
    uint64_t *loads = xcalloc(P + 1, sizeof *loads);
    for (uint32_t s = 0; s < P; s++)
        loads[s] = (uint64_t)s * s + 1;
    cr_assert_eq(dch_map_balance_load(m, loads, P, NULL, NULL), DCH_OK, "a NULL report");
    cr_assert_gt(dch_map_balance_moves(m), 0, "these loads move something");
    size_t len0;
    uint8_t *bytes0 = map_bytes(m, &len0);
    const uint64_t epoch = dch_map_epoch(m);
    dch_balance_config bad_version;
    dch_balance_config_init(&bad_version, DCH_BALANCE_CONFIG_VERSION);
    bad_version.version = 0;
    dch_balance_config next_version = bad_version;
    next_version.version = DCH_BALANCE_CONFIG_VERSION + 1;
    uint64_t *full = xcalloc(P, sizeof *full);
    full[3] = UINT64_MAX / 2 + 1;
    full[P - 1] = UINT64_MAX / 2 + 1;
    uint64_t *just = xcalloc(P, sizeof *just);
    just[0] = UINT64_MAX;
    just[1] = 1;
    dch_balance_report rep, poison;
    struct {
        dch_map *m;
        const uint64_t *loads;
        uint32_t n;
        const dch_balance_config *cfg;
        int rc;
    } cases[] = {
        {NULL, loads, P, NULL, DCH_EINVAL},        {m, NULL, P, NULL, DCH_EINVAL},
        {m, loads, P - 1, NULL, DCH_EINVAL},       {m, loads, P + 1, NULL, DCH_EINVAL},
        {m, loads, 0, NULL, DCH_EINVAL},           {m, loads, P, &bad_version, DCH_EINVAL},
        {m, loads, P, &next_version, DCH_EINVAL}, {m, full, P, NULL, DCH_EFULL},
        {m, just, P, NULL, DCH_EFULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bal_report_prepare(&rep, NULL, 0);
        poison = rep;
        cr_assert_eq(dch_map_balance_load(cases[i].m, cases[i].loads, cases[i].n, cases[i].cfg,
                                          &rep),
                     cases[i].rc, "case %zu", i);
        cr_assert(memcmp(&rep, &poison, sizeof rep) == 0, "case %zu wrote the report", i);
        size_t len;
        uint8_t *bytes = map_bytes(m, &len);
        cr_assert(len == len0 && memcmp(bytes, bytes0, len) == 0, "case %zu changed the map", i);
        cr_assert_eq(dch_map_epoch(m), epoch, "case %zu changed the epoch", i);
        free(bytes);
    }
    /* A sum of exactly UINT64_MAX is no error. */
    just[1] = 0;
    cr_assert_eq(dch_map_balance_load(m, just, P, NULL, NULL), DCH_OK);
    free(bytes0);
    free(full);
    free(just);
    free(loads);
    dch_map_free(m);
}

/* balance_clear: nothing in force, nothing changes; in force, the table
 * below comes back and the epoch moves once. A map without members, or
 * with every member drained, balances to nothing. */
Test(balance, clear_and_empty_maps)
{
    dch_map *m = replica_map(16, 4, 1);
    const uint32_t P = dch_map_slot_count(m);
    uint64_t *loads = xcalloc(P, sizeof *loads);
    loads[5] = 7;
    dch_balance_report rep;
    bal_report_prepare(&rep, NULL, 0);
    cr_assert_eq(dch_map_balance_load(m, loads, P, NULL, &rep), DCH_OK, "no member");
    cr_assert_eq(rep.members, 0);
    cr_assert_eq(rep.moves + rep.promotions, 0);
    cr_assert_eq(rep.total_load, 7);
    cr_assert_eq(dch_map_epoch(m), 0);
    cr_assert_eq(dch_map_balance_clear(m), DCH_OK);
    cr_assert_eq(dch_map_epoch(m), 0, "a clear with nothing in force");
    map_add_members(m, "n", 4, NULL, 0);
    const uint64_t e = dch_map_epoch(m);
    for (uint32_t s = 0; s < P; s++)
        loads[s] = dch_map_slot_owner(m, s) == 0 ? 100 : 1;
    cr_assert_eq(dch_map_balance_load(m, loads, P, NULL, &rep), DCH_OK);
    cr_assert_gt(rep.moves, 0, "member 0 holds 4 times its share of the load");
    cr_assert_eq(dch_map_epoch(m), e + 1);
    cr_assert_eq(dch_map_balance_moves(m), rep.moves);
    cr_assert_eq(dch_map_balance_clear(m), DCH_OK);
    cr_assert_eq(dch_map_epoch(m), e + 2);
    cr_assert_eq(dch_map_balance_moves(m), 0);
    for (uint32_t s = 0; s < P; s++)
        cr_assert_eq(dch_map_slot_owner(m, s), dch_map_base_owner(m, s));
    for (uint32_t id = 0; id < 4; id++)
        cr_assert_eq(dch_map_drain(m, id, DCH_DRAIN_FULL), DCH_OK);
    const uint64_t e2 = dch_map_epoch(m);
    cr_assert_eq(dch_map_balance_load(m, loads, P, NULL, &rep), DCH_OK, "all drained");
    cr_assert_eq(rep.members, 0);
    cr_assert_eq(dch_map_epoch(m), e2);
    free(loads);
    dch_map_free(m);
}

/* ---- Failed allocations -------------------------------------------------- */

static void snap_bytes(const dch_map *m, uint8_t **bytes, size_t *len)
{
    *bytes = map_bytes(m, len);
}

Test(balance, failed_allocations_change_nothing)
{
    for (uint32_t R = 1; R <= 3; R += 2) {
        faulty_map f;
        dch_map *m = faulty_map_new(&f, 16, 16, R);
        map_add_members(m, "n", 9, (const uint32_t[]){1, 2, 3}, 3);
        cr_assert_eq(dch_map_drain(m, 2, DCH_DRAIN_PRIMARY), DCH_OK);
        const uint32_t P = dch_map_slot_count(m);
        uint64_t *loads = xcalloc(P, sizeof *loads), rng = 77;
        bal_loads(loads, P, BAL_LOADS_ZIPF, &rng);
        for (int call = 0; call < 9; call++) {
            map_snap s;
            map_snap_take(&s, m);
            uint8_t *bytes0;
            size_t len0;
            snap_bytes(m, &bytes0, &len0);
            const uint32_t moves0 = dch_map_balance_moves(m);
            fault_sweep sw;
            dch_map *c = NULL;
            for (fault_sweep_start(&sw, &f.fa, SWEEP_BOTH, SWEEP_UNTIL_OK); fault_sweep_next(&sw);) {
                int rc;
                switch (call) {
                case 0: case 6: rc = dch_map_balance_load(m, loads, P, NULL, NULL); break;
                case 1: rc = dch_map_add_node(m, "new", 2, NULL); break;
                case 2: rc = dch_map_set_weight(m, 5, 4); break;
                case 3: rc = dch_map_drain(m, 4, DCH_DRAIN_FULL); break;
                case 4: rc = dch_map_undrain(m, 2); break;
                case 5: rc = dch_map_remove_node(m, 4); break;
                case 7: rc = dch_map_clone(&c, m); break;
                default: rc = dch_map_balance_clear(m); break;
                }
                fault_sweep_done(&sw, rc);
                if (c != NULL) {
                    const char *d = bal_check_kept(c, NULL);
                    cr_assert_null(d, "R %u, a clone under the faulty allocator: %s", R, d);
                    dch_map_free(c);
                    c = NULL;
                }
                if (rc == DCH_OK)
                    break;
                const char *d = faulty_call_changed(&sw, rc, &s, m);
                cr_assert_null(d, "R %u, call %d, allocation %ld: %s", R, call, sw.at, d);
                uint8_t *bytes;
                size_t len;
                snap_bytes(m, &bytes, &len);
                cr_assert(len == len0 && memcmp(bytes, bytes0, len) == 0,
                          "R %u, call %d, allocation %ld: the saved bytes", R, call, sw.at);
                cr_assert_eq(dch_map_balance_moves(m), moves0);
                free(bytes);
            }
            /* A balancing call or a clear may find nothing to do. */
            if (call != 6 && call != 8)
                cr_assert_gt(sw.failed, 0, "R %u, call %d allocates", R, call);
            if (call == 0)
                cr_assert_gt(dch_map_balance_moves(m), 0, "R %u: the loads move something", R);
            map_snap_free(&s);
            free(bytes0);
        }
        free(loads);
        dch_map_free(m);
        cr_assert_eq(f.fa.live, 0);
    }
}

/* A failed-allocation run ends where a run without failures does. */
Test(balance, a_call_that_succeeds_after_failures_gives_the_same_map)
{
    faulty_map f;
    dch_map *m = faulty_map_new(&f, 32, 8, 2);
    map_add_members(m, "n", 7, (const uint32_t[]){1, 5}, 2);
    const uint32_t P = dch_map_slot_count(m);
    uint64_t *loads = xcalloc(P, sizeof *loads), rng = 99;
    bal_loads(loads, P, BAL_LOADS_HOT, &rng);
    dch_map *want = map_clone_of(m);
    cr_assert_eq(dch_map_balance_load(want, loads, P, NULL, NULL), DCH_OK);
    fault_sweep sw;
    for (fault_sweep_start(&sw, &f.fa, SWEEP_ALONE, SWEEP_UNTIL_OK); fault_sweep_next(&sw);) {
        const int rc = dch_map_balance_load(m, loads, P, NULL, NULL);
        fault_sweep_done(&sw, rc);
        if (rc == DCH_OK)
            break;
    }
    cr_assert(same_map_bytes(m, want), "the map after failures differs from one without");
    dch_map_free(want);
    dch_map_free(m);
    free(loads);
}
