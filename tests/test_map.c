/* SPDX-License-Identifier: MIT */
/*
 * Tests of the DCH partition map: the invariants of map.h checked after every
 * operation of seeded random sequences, an exact key-level migration test,
 * and every error path. DCH_TEST_SCALE scales the number of sequences;
 * DCH_TEST_SEED replaces their base seed; failures print the seed.
 */
#include <criterion/criterion.h>

#include "dch/dch.h"
#include "map_engine.h" /* dch__search_work, dch__order_work: tests only */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Invariants ------------------------------------------------------- */

typedef enum op_kind { OP_ADD, OP_REMOVE, OP_WEIGHT, OP_CLONE } op_kind;

/* Whether N > S has held since the map last had no member of positive
 * weight: the history the exact-slice promise excludes. */
static int exceeded_s;

typedef struct worst {
    double global; /* max |count - q| seen */
    double unit;   /* max |per-unit count - s| seen */
    double spread; /* max |donation or receipt - ideal| seen, equal weights */
    uint32_t excess; /* most slots of a unit above ceil(S/N), equal weights */
    uint64_t repairs; /* slots moved between two members other than x */
} worst;

/*
 * Check every invariant of the map after one operation.
 * before/after: snapshots around the call; x: the member the operation named
 * (for add, its new id); equal: all positive weights are equal. Assertions
 * fire only on failure, so the loops stay cheap.
 */
static void check_invariants(const dch_map *m, const map_snap *before,
                             const map_snap *after, op_kind kind, uint32_t x,
                             int equal, uint64_t seed, int step, worst *w)
{
    const unsigned long long sd = (unsigned long long)seed;
    const uint32_t P = after->slots;
    dch_map_config cfg;
    dch_map_config_default(&cfg);
    dch_map_get_config(m, &cfg);
    const uint32_t S = cfg.slots_per_unit, U = cfg.units;
    const uint32_t limit = after->mb.limit;
    const uint64_t W = dch_map_total_weight(m);
    const uint32_t *own = after->owner;

    /* Coverage, and counts recomputed from the table. */
    uint32_t *count = calloc(limit + 1, sizeof *count);
    for (uint32_t s = 0; s < P; s++) {
        const uint32_t o = own[s];
        if (W == 0) {
            if (o != DCH_NODE_NONE)
                cr_assert_fail("seed %llu step %d: slot %u owned with no weight", sd, step, s);
            continue;
        }
        if (o >= limit || after->mb.names[o] == NULL || after->mb.weights[o] == 0)
            cr_assert_fail("seed %llu step %d: slot %u owned by %u, not a member of positive weight",
                           sd, step, s, o);
        count[o]++;
    }
    for (uint32_t id = 0; id < limit; id++)
        if (count[id] != after->counts[id])
            cr_assert_fail("seed %llu step %d: member %u counts %u slots, owns %u", sd, step, id,
                           after->counts[id], count[id]);

    /* Monotone, minimal movement. A move between two members other than x
     * is a repair move (map.h): never with equal weights; with unequal
     * weights they are counted, and the call's other moves still follow x's
     * direction. */
    uint32_t moved = 0, into_x = 0, out_of_x = 0, third = 0;
    for (uint32_t s = 0; s < P; s++) {
        const uint32_t a = before->owner[s], b = own[s];
        if (a == b)
            continue;
        moved++;
        into_x += b == x && a != DCH_NODE_NONE;
        out_of_x += a == x && b != DCH_NODE_NONE;
        if (a != DCH_NODE_NONE && b != DCH_NODE_NONE && a != x && b != x) {
            third++;
            if (equal)
                cr_assert_fail("seed %llu step %d: slot %u moved %u -> %u, neither is the "
                               "changed member %u", sd, step, s, a, b, x);
        }
    }
    w->repairs += third;
    if (third == 0) {
        cr_assert(into_x == 0 || out_of_x == 0,
                  "seed %llu step %d: slots moved both into and out of %u", sd, step, x);
        if (kind == OP_ADD)
            cr_assert_eq(out_of_x, 0, "seed %llu step %d", sd, step);
        if (kind == OP_REMOVE)
            cr_assert_eq(into_x, 0, "seed %llu step %d", sd, step);
    }
    if (kind == OP_CLONE)
        cr_assert_eq(moved, 0, "seed %llu step %d", sd, step);
    if (kind != OP_CLONE && third == 0 && (into_x == 0 || out_of_x == 0)) {
        /* Optimal volume: what moved is exactly what x gained or lost. */
        const uint32_t was = x < before->mb.limit ? before->counts[x] : 0;
        const uint32_t now = x < limit ? after->counts[x] : 0;
        const uint32_t delta = was > now ? was - now : now - was;
        cr_assert_eq(moved, delta, "seed %llu step %d: moved %u slots, x changed by %u", sd, step,
                     moved, delta);
    }

    /* Balance (map.h, docs/placement.md "Proofs of the promises"). Global: always
     * |count - P*w/W| < 2, and < 1 while every positive weight is equal.
     * Per unit, with equal weights: floor or ceil of S/N while N <= S, at
     * most ceil(S/N) + 1 when N > S. Unequal weights: measured only. */
    if (W == 0)
        exceeded_s = 0;
    if (W > 0) {
        uint32_t npos = 0;
        for (uint32_t id = 0; id < limit; id++)
            npos += after->mb.names[id] != NULL && after->mb.weights[id] > 0;
        if (npos > S)
            exceeded_s = 1;
        const int64_t bound = 2; /* in slots */
        for (uint32_t id = 0; id < limit; id++) {
            if (after->mb.names[id] == NULL)
                continue;
            /* exact: |count*W - P*w| < bound*W */
            const int64_t num = (int64_t)count[id] * (int64_t)W - (int64_t)P * after->mb.weights[id];
            const double dev = fabs((double)num / (double)W);
            if (dev > w->global)
                w->global = dev;
            if (!((num < 0 ? -num : num) < bound * (int64_t)W))
                cr_assert_fail("seed %llu step %d: member %u owns %u slots, share %.3f (bound %d)",
                               sd, step, id, count[id], (double)P * after->mb.weights[id] / (double)W,
                               (int)bound);
        }
        /* Exact slices while N <= S has held since the map last had no
         * member of positive weight; at most ceil(S/N) + 1 while N > S; no
         * per-unit promise when N has come back to S or below
         * (docs/placement.md gives the counterexample). */
        uint32_t lo = 0, hi = S;
        if (equal) {
            const int exact = npos <= S && !exceeded_s;
            lo = exact ? S / npos : 0;
            hi = exact || npos > S ? S / npos + (S % npos != 0) + (npos > S ? 1u : 0u) : S;
        }
        uint32_t *ucount = calloc(limit + 1, sizeof *ucount);
        uint32_t *seen = calloc(limit + 1, sizeof *seen);
        for (uint32_t u = 0; u < U; u++) {
            const uint32_t *o = own + (size_t)u * S;
            for (uint32_t i = 0; i < S; i++)
                ucount[o[i]]++;
            uint32_t present = 0;
            for (uint32_t i = 0; i < S; i++) {
                const uint32_t id = o[i];
                if (seen[id] == u + 1)
                    continue;
                seen[id] = u + 1;
                present++;
                const double dev = fabs(ucount[id] - (double)S * after->mb.weights[id] / (double)W);
                if (dev > w->unit)
                    w->unit = dev;
                if (equal && ucount[id] > S / npos + (S % npos != 0) &&
                    ucount[id] - (S / npos + (S % npos != 0)) > w->excess)
                    w->excess = ucount[id] - (S / npos + (S % npos != 0));
                if (ucount[id] > hi)
                    cr_assert_fail("seed %llu step %d (op %d on %u): unit %u: member %u holds %u of "
                                   "%u slots, %u members", sd, step, (int)kind, x, u, id,
                                   ucount[id], S, npos);
            }
            if (equal && lo > 0 && present < npos)
                cr_assert_fail("seed %llu step %d (op %d on %u): unit %u: only %u of %u members "
                               "hold a slot", sd, step, (int)kind, x, u, present, npos);
            for (uint32_t i = 0; i < S; i++) {
                const uint32_t id = o[i];
                if (ucount[id] < lo)
                    cr_assert_fail("seed %llu step %d (op %d on %u): unit %u: member %u holds %u, "
                                   "floor %u, %u members", sd, step, (int)kind, x, u, id,
                                   ucount[id], lo, npos);
            }
            for (uint32_t i = 0; i < S; i++)
                ucount[o[i]] = 0;
        }
        free(ucount);
        free(seen);
    }

    /* Spread migration with equal weights: every old member gives (or every
     * survivor receives) an equal sliver. */
    if (equal && W > 0 && before->owner[0] != DCH_NODE_NONE) {
        uint32_t n_before = 0;
        for (uint32_t id = 0; id < before->mb.limit; id++)
            n_before += before->mb.names[id] && before->mb.weights[id] > 0;
        const int growing = into_x > 0, shrinking = out_of_x > 0;
        for (uint32_t id = 0; id < before->mb.limit && (growing || shrinking); id++) {
            if (id == x || !before->mb.names[id] || before->mb.weights[id] == 0)
                continue;
            const double now = count[id], was = before->counts[id];
            double ideal, got;
            if (growing) { /* n_before old members, one joins */
                ideal = (double)P / ((double)n_before * (n_before + 1));
                got = was - now;
            } else { /* n_before members, one leaves */
                ideal = (double)P / ((double)n_before * (n_before - 1));
                got = now - was;
            }
            const double dev = fabs(got - ideal);
            if (dev > w->spread)
                w->spread = dev;
            if (!(dev < 4.0))
                cr_assert_fail("seed %llu step %d: member %u moved %.0f slots, ideal %.3f", sd,
                               step, id, got, ideal);
        }
    }
    free(count);
}

/* check_invariants after a call, then *before moves on to the map as it is
 * now, ready for the next call. */
static void check_and_advance(const dch_map *m, map_snap *before, op_kind kind, uint32_t x,
                              int equal, uint64_t seed, int step, worst *w)
{
    map_snap after;
    map_snap_take(&after, m);
    check_invariants(m, before, &after, kind, x, equal, seed, step, w);
    map_snap_free(before);
    *before = after;
}

/* ---- Random sequences ------------------------------------------------- */

/*
 * The regimes where balance is tight: N from S - 2 to S + 8 members of
 * positive weight for S in {1, 2, 4, ..., 64}, long histories, weights drained
 * to 0 and restored, and (unequal) weight ratios up to 10^6.
 */
typedef struct shape {
    uint32_t units, spu;
} shape;

static const uint32_t spus[] = {1, 2, 4, 8, 16, 32, 64};

static uint32_t random_weight(uint64_t *rng, int equal)
{
    static const uint32_t picks[] = {1, 2, 3, 4, 7, 10, 16, 100, 1000, 1000000};
    if (equal)
        return 1;
    const uint32_t r = rng_below(rng, 12);
    return r < 10 ? picks[r] : 1 + rng_below(rng, 1000000);
}

static worst run_sequence(uint64_t seed, int ops, int equal)
{
    uint64_t rng = seed;
    const uint32_t S = spus[rng_below(&rng, sizeof spus / sizeof spus[0])];
    /* P from S up to 2^14 slots, so long histories stay quick. */
    uint32_t U = 1u << rng_below(&rng, 15);
    while ((uint64_t)U * S > (1u << 14))
        U >>= 1;
    dch_map_config cfg = map_config(U, S);
    for (int i = 0; i < 16; i++)
        cfg.hash_key[i] = (uint8_t)rng_next(&rng);
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    const uint32_t lo = S > 2 ? S - 2 : 1, hi = S + 8;
    uint32_t next_name = 0;
    worst w = {0, 0, 0, 0, 0};

    map_snap before;
    map_snap_take(&before, m);
    exceeded_s = 0;
    for (int step = 0; step < ops; step++) {
        uint32_t npos = 0;
        for (uint32_t id = 0; id < dch_map_id_limit(m); id++)
            npos += dch_map_node_weight(m, id) > 0;
        const uint32_t n = dch_map_node_count(m);
        const uint32_t r = rng_below(&rng, 100);
        op_kind kind;
        uint32_t x = DCH_NODE_NONE;
        if (n == 0 || npos < lo || (r < 40 && npos <= hi)) {
            kind = OP_ADD;
            char name[32];
            snprintf(name, sizeof name, "node-%u", next_name++);
            const uint32_t wt = rng_below(&rng, 20) == 0 ? 0 : random_weight(&rng, equal);
            cr_assert_eq(dch_map_add_node(m, name, wt, &x), DCH_OK, "seed %llu step %d",
                         (unsigned long long)seed, step);
            uint32_t found;
            cr_assert_eq(dch_map_find_node(m, name, &found), DCH_OK);
            cr_assert_eq(found, x);
        } else {
            const uint32_t id = map_random_member(m, &rng);
            x = id;
            if (r < 70 || npos > hi) {
                kind = OP_REMOVE;
                cr_assert_eq(dch_map_remove_node(m, id), DCH_OK);
            } else if (r < 97) {
                kind = OP_WEIGHT;
                const uint32_t wt = rng_below(&rng, 3) == 0 ? 0 : random_weight(&rng, equal);
                cr_assert_eq(dch_map_set_weight(m, id, wt), DCH_OK);
                cr_assert_eq(dch_map_node_weight(m, id), wt);
            } else {
                kind = OP_CLONE;
                dch_map *c;
                cr_assert_eq(dch_map_clone(&c, m), DCH_OK);
                dch_map_free(m);
                m = c;
            }
        }
        check_and_advance(m, &before, kind, x, equal, seed, step, &w);
    }
    map_snap_free(&before);
    dch_map_free(m);
    return w;
}

/*
 * Histories of 500 to 1,000 calls. The README's test command runs a tenth of
 * the sequences (DCH_TEST_SCALE=0.1); CI's full-size stage runs them all.
 */
static void run_many(int equal, uint64_t base)
{
    const unsigned seqs = test_scaled(400, 8);
    worst all = {0, 0, 0, 0, 0};
    for (unsigned i = 0; i < seqs; i++) {
        const uint64_t seed = base + i;
        uint64_t len = seed * UINT64_C(0x9e3779b97f4a7c15);
        const worst w = run_sequence(seed, 500 + (int)rng_below(&len, 501), equal);
        if (w.global > all.global)
            all.global = w.global;
        if (w.unit > all.unit)
            all.unit = w.unit;
        if (w.spread > all.spread)
            all.spread = w.spread;
        if (w.excess > all.excess)
            all.excess = w.excess;
        all.repairs += w.repairs;
        if ((i + 1) % 20 == 0 || i + 1 == seqs)
            fprintf(stderr, "progress: map, %s weights: %u of %u sequences checked\n",
                    equal ? "equal" : "unequal", i + 1, seqs);
    }
    fprintf(stderr, "%s weights, %u sequences: worst |count-q| %.4f, per-unit %.3f, spread %.3f, "
            "most above ceil(S/N) in a unit %u, repair moves %llu\n",
            equal ? "equal" : "unequal", seqs, all.global, all.unit, all.spread, all.excess,
            (unsigned long long)all.repairs);
}

Test(map, equal_weights_keep_every_invariant_over_random_sequences, .timeout = 1800)
{
    run_many(1, test_seed(1000));
}

Test(map, unequal_weights_keep_coverage_monotonicity_and_bounds, .timeout = 1800)
{
    run_many(0, test_seed(500000));
}

/* The default shape with many members: the regime of N far above S. */
/*
 * Seeds whose equal-weight histories need the chain search's quota swaps
 * (partner() ending a chain at a member whose quota another carries): with
 * chains that end only at members with quota left, seed 5007 leaves a
 * member below floor(S/N) of a unit at call 20, seed 9008 a member above
 * ceil(S/N) + 1 at call 45 (docs/placement.md, section 8).
 */
Test(map, quota_swaps_keep_the_equal_weight_slices_on_recorded_seeds, .timeout = 600)
{
    static const uint64_t seeds[] = {5007, 9008, 13003, 17003};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        (void)run_sequence(seeds[i], 120, 1);
}

Test(map, equal_weights_at_the_default_shape_with_many_members, .timeout = 1800)
{
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, NULL), DCH_OK);
    uint64_t rng = test_seed(77);
    worst w = {0, 0, 0, 0, 0};
    map_snap before;
    map_snap_take(&before, m);
    exceeded_s = 0;
    const int ops = (int)test_scaled(300, 40);
    uint32_t next = 0;
    for (int step = 0; step < ops; step++) {
        const uint32_t n = dch_map_node_count(m);
        uint32_t x;
        op_kind kind;
        if (n < 60 || (rng_below(&rng, 2) == 0 && n < 140)) {
            char name[32];
            snprintf(name, sizeof name, "m%u", next++);
            cr_assert_eq(dch_map_add_node(m, name, 1, &x), DCH_OK);
            kind = OP_ADD;
        } else {
            do
                x = rng_below(&rng, dch_map_id_limit(m));
            while (dch_map_node_name(m, x) == NULL);
            cr_assert_eq(dch_map_remove_node(m, x), DCH_OK);
            kind = OP_REMOVE;
        }
        check_and_advance(m, &before, kind, x, 1, 77, step, &w);
    }
    map_snap_free(&before);
    fprintf(stderr, "default shape, %d calls: worst |count-q| %.4f, per-unit %.3f, spread %.3f\n",
            ops, w.global, w.unit, w.spread);
    dch_map_free(m);
}

/*
 * The proof in docs/placement.md that no engine moving only x's slots keeps
 * a constant bound: a heavy member, then many members whose share is a
 * quarter of a slot, then the ones that own nothing leave. Without repair
 * moves the heavy member would end far below its share; here every call
 * keeps the bound and the repair moves are there to see.
 */
Test(map, members_owning_nothing_leave_and_repair_keeps_the_bound)
{
    dch_map_config cfg;
    dch_map_config_default(&cfg);
    cfg.units = 4;
    cfg.slots_per_unit = 16; /* P = 64 */
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    worst w = {0, 0, 0, 0, 0};
    map_snap before;
    map_snap_take(&before, m);
    exceeded_s = 0;
    int step = 0;
    uint32_t x;
    for (uint32_t i = 0; i <= 128; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%u", i);
        cr_assert_eq(dch_map_add_node(m, name, i == 0 ? 128 : 1, &x), DCH_OK);
        check_and_advance(m, &before, OP_ADD, x, 0, 0, step++, &w);
    }
    for (uint32_t id = 1; id <= 128; id++) {
        if (dch_map_node_slots(m, id) != 0)
            continue;
        cr_assert_eq(dch_map_remove_node(m, id), DCH_OK);
        check_and_advance(m, &before, OP_REMOVE, id, 0, 0, step++, &w);
    }
    map_snap_free(&before);
    cr_assert_gt(w.repairs, 0, "the history should have needed repair moves");
    fprintf(stderr, "members owning nothing leave: worst |count-q| %.4f, %llu repair moves\n",
            w.global, (unsigned long long)w.repairs);
    dch_map_free(m);
}

/*
 * The chain search's budget (docs/placement.md, "Complexity"): one move
 * reads at most 4 (P + N) + 4096 table entries and ids in chain searches,
 * plus the one step that crosses the limit (here at most 2S + 8N). Issue 24's history of
 * heterogeneous weights made its last call search for ~4,600 (P + N) at
 * 1024x64 before the budget, and more as the units grew (quadratic time);
 * every call is also checked against map.h's promises (check_invariants),
 * which the budget must not weaken. Fails if the budget is taken out.
 */
static void replay_slow_history(uint32_t units, int64_t *worst_work)
{
    static const struct {
        char op;
        const char *name;
        uint32_t weight;
    } h[] = {{'a', "n0", 7},     {'a', "n1", 116},    {'r', "n1", 0},   {'a', "n2", 419256},
             {'s', "n0", 722},   {'r', "n0", 0},      {'a', "n3", 1830}, {'a', "n4", 84},
             {'a', "n5", 31},    {'a', "n6", 30},     {'a', "n8", 347},  {'a', "n10", 7255},
             {'a', "n11", 3},    {'s', "n6", 11},     {'s', "n6", 718866}};
    dch_map *m;
    dch_map_config cfg = map_config(units, 64);
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    worst w = {0, 0, 0, 0, 0};
    map_snap before;
    map_snap_take(&before, m);
    exceeded_s = 0;
    for (int step = 0; step < (int)(sizeof h / sizeof h[0]); step++) {
        uint32_t x = DCH_NODE_NONE;
        op_kind kind = OP_ADD;
        if (h[step].op == 'a') {
            cr_assert_eq(dch_map_add_node(m, h[step].name, h[step].weight, &x), DCH_OK);
        } else {
            cr_assert_eq(dch_map_find_node(m, h[step].name, &x), DCH_OK);
            kind = h[step].op == 'r' ? OP_REMOVE : OP_WEIGHT;
            cr_assert_eq(h[step].op == 'r' ? dch_map_remove_node(m, x)
                                           : dch_map_set_weight(m, x, h[step].weight),
                         DCH_OK);
        }
        const int64_t p = (int64_t)units * 64, n = dch_map_id_limit(m);
        const int64_t limit = 4 * (p + n) + 4096 + 2 * 64 + 8 * n;
        cr_assert_leq(dch__search_work, limit, "%ux64 call %d: the chain search read %lld, limit %lld",
                      units, step, (long long)dch__search_work, (long long)limit);
        if (dch__search_work > *worst_work)
            *worst_work = dch__search_work;
        check_and_advance(m, &before, kind, x, 0, 0, step, &w);
    }
    map_snap_free(&before);
    dch_map_free(m);
}

Test(map, the_slow_history_keeps_the_promises_within_the_search_budget, .timeout = 600)
{
    int64_t worst_work = 0;
    replay_slow_history(256, &worst_work);
    replay_slow_history(1024, &worst_work);
    cr_assert_gt(worst_work, 0, "the history should need chain searches");
    fprintf(stderr, "slow history: the chain search read at most %lld entries in one call\n",
            (long long)worst_work);
}

/*
 * The fast paths of docs/placement.md ("Fast paths"): with more members
 * than slots a unit every band is [0, 1], so a join (banded take) and a
 * removal (lazy give) mark the units they visit instead of counting each
 * member there. They change no choice (engine_trace is the same without
 * them), only the work: this checks that few units are counted (14 of the
 * 81 the join takes from, none for the removal). Without the banded take
 * the join counts 95; without the lazy give the removal counts every unit
 * it gives in.
 */
Test(map, with_more_members_than_slots_a_unit_changes_mark_units_not_count_them)
{
    dch_map_config cfg = map_config(1024, 16);
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    for (uint32_t i = 0; i < 200; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%u", i);
        cr_assert_eq(dch_map_add_node(m, name, 1, NULL), DCH_OK);
    }
    uint32_t x;
    cr_assert_eq(dch_map_add_node(m, "joiner", 1, &x), DCH_OK);
    const uint32_t took = dch_map_node_slots(m, x);
    cr_assert_gt(took, 40);
    cr_assert_leq(dch__units_counted, took / 4, "the join counted %lld units for %u slots",
                  (long long)dch__units_counted, took);
    cr_assert_eq(dch_map_remove_node(m, 7), DCH_OK);
    cr_assert_leq(dch__units_counted, took / 8, "the removal counted %lld units",
                  (long long)dch__units_counted);
    dch_map_free(m);
}

/*
 * The order of quotas and the unit picks cost O(1) a pick when the picks go
 * round counterparties of equal quota (docs/placement.md, "Complexity"): a
 * heavy member leaving or returning beside 300 of weight 1 moves nearly every
 * slot, and its ordering steps stay within a few a slot moved plus the heap
 * builds, where a heap alone would spend about log2(300) > 8 levels a slot.
 * (The join at 64 slots a unit is left out: there each donor holds one slot
 * of a unit and is picked once, so the unit's picks are a sort, log S each.)
 */
static void ordering_round(dch_map *m, int join)
{
    uint32_t big;
    if (join)
        cr_assert_eq(dch_map_add_node(m, "big", 1000000, &big), DCH_OK);
    else
        cr_assert_eq(dch_map_find_node(m, "big", &big), DCH_OK);
    const uint32_t held = dch_map_node_slots(m, big);
    if (!join)
        cr_assert_eq(dch_map_remove_node(m, big), DCH_OK);
    cr_assert_gt(held, dch_map_slot_count(m) * 9 / 10);
    cr_assert_leq(dch__order_work, 3 * (int64_t)held + 20 * 300,
                  "%s of %u slots: %lld ordering steps", join ? "join" : "removal", held,
                  (long long)dch__order_work);
}

Test(map, ordering_picks_costs_a_few_steps_a_slot_moved)
{
    const uint32_t shapes[][2] = {{1024, 64}, {1, 65536}};
    for (size_t k = 0; k < 2; k++) {
        dch_map *m = map_shaped(shapes[k][0], shapes[k][1]);
        cr_assert_eq(dch_map_add_node(m, "big", 1000000, NULL), DCH_OK);
        for (uint32_t i = 0; i < 300; i++) {
            char name[16];
            snprintf(name, sizeof name, "t%u", i);
            cr_assert_eq(dch_map_add_node(m, name, 1, NULL), DCH_OK);
        }
        for (int round = 0; round < 2; round++) {
            ordering_round(m, 0);
            if (k == 1)
                ordering_round(m, 1);
            else
                cr_assert_eq(dch_map_add_node(m, "big", 1000000, NULL), DCH_OK);
        }
        dch_map_free(m);
    }
}

/* The history that broke the earlier engine at 4096 units x 4 slots. */
Test(map, regression_4096x4_history_keeps_the_bounds)
{
    dch_map *m = map_shaped(4096, 4);
    static const struct { char op; int n; uint32_t w; } calls[] = {
        {'a', 2, 1}, {'a', 4, 1}, {'r', 2, 0}, {'a', 6, 1}, {'a', 9, 1}, {'a', 10, 1},
        {'r', 4, 0}, {'a', 0, 0}, {'a', 11, 1}, {'a', 12, 1}, {'r', 0, 0}, {'r', 9, 0},
        {'a', 13, 1}, {'a', 14, 1}, {'r', 6, 0}, {'a', 15, 1}, {'r', 13, 0},
    };
    worst w = {0, 0, 0, 0, 0};
    map_snap before;
    map_snap_take(&before, m);
    exceeded_s = 0;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", calls[i].n);
        uint32_t x;
        op_kind kind;
        if (calls[i].op == 'a') {
            cr_assert_eq(dch_map_add_node(m, name, calls[i].w, &x), DCH_OK);
            kind = OP_ADD;
        } else {
            cr_assert_eq(dch_map_find_node(m, name, &x), DCH_OK);
            cr_assert_eq(dch_map_remove_node(m, x), DCH_OK);
            kind = OP_REMOVE;
        }
        check_and_advance(m, &before, kind, x, 1, 0, (int)i, &w);
    }
    map_snap_free(&before);
    dch_map_free(m);
}

/* ---- Exact key-level migration ---------------------------------------- */

Test(map, after_an_add_exactly_the_keys_in_moved_slots_change_owner)
{
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, NULL), DCH_OK);
    for (int i = 0; i < 7; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        cr_assert_eq(dch_map_add_node(m, name, 1, NULL), DCH_OK);
    }
    const uint32_t nkeys = test_scaled(1000000, 20000);
    uint32_t *owner = malloc(nkeys * sizeof *owner);
    map_snap before;
    map_snap_take(&before, m);
    for (uint32_t k = 0; k < nkeys; k++)
        owner[k] = dch_map_lookup(m, &k, sizeof k);
    uint32_t x;
    cr_assert_eq(dch_map_add_node(m, "joiner", 1, &x), DCH_OK);
    uint32_t changed = 0;
    for (uint32_t k = 0; k < nkeys; k++) {
        const uint64_t h = dch_map_hash(m, &k, sizeof k);
        const uint32_t slot = dch_map_slot_of(m, h);
        const uint32_t now = dch_map_lookup(m, &k, sizeof k);
        const int slot_moved = before.owner[slot] != dch_map_slot_owner(m, slot);
        cr_assert_eq(now != owner[k], slot_moved, "key %u", k);
        if (now != owner[k]) {
            cr_assert_eq(now, x);
            changed++;
        }
    }
    /* 1/8 of the keys should move; 1,000,000 keys put 5 sigma near 0.0017. */
    const double frac = (double)changed / nkeys, expect = 1.0 / 8;
    cr_assert(fabs(frac - expect) < 5 * sqrt(expect * (1 - expect) / nkeys) + 1.0 / 65536,
              "moved %.5f of keys, expected %.5f", frac, expect);
    map_snap_free(&before);
    free(owner);
    dch_map_free(m);
}

/* ---- Lookup edges ----------------------------------------------------- */

Test(map, empty_or_weightless_maps_route_nowhere)
{
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, NULL), DCH_OK);
    cr_assert_eq(dch_map_lookup_hash(m, 0), DCH_NODE_NONE);
    uint32_t id;
    cr_assert_eq(dch_map_add_node(m, "idle", 0, &id), DCH_OK);
    cr_assert_eq(dch_map_lookup_hash(m, UINT64_MAX), DCH_NODE_NONE);
    cr_assert_eq(dch_map_set_weight(m, id, 3), DCH_OK);
    cr_assert_eq(dch_map_lookup_hash(m, UINT64_MAX), id);
    cr_assert_eq(dch_map_node_slots(m, id), dch_map_slot_count(m));
    cr_assert_eq(dch_map_set_weight(m, id, 0), DCH_OK);
    cr_assert_eq(dch_map_lookup_hash(m, 12345), DCH_NODE_NONE);
    dch_map_free(m);
}

Test(map, a_hash_falls_in_the_slot_of_its_top_bits)
{
    dch_map *m = map_shaped(4, 2);
    cr_assert_eq(dch_map_slot_of(m, 0), 0);
    cr_assert_eq(dch_map_slot_of(m, UINT64_MAX), 7);
    cr_assert_eq(dch_map_slot_of(m, UINT64_C(0x2000000000000000)), 1);
    cr_assert_eq(dch_map_slot_of(m, UINT64_C(0x1fffffffffffffff)), 0);
    dch_map_free(m);
    m = map_shaped(1, 1);
    cr_assert_eq(dch_map_slot_of(m, UINT64_MAX), 0);
    dch_map_free(m);
}

/* ---- Errors leave the map unchanged ----------------------------------- */

static dch_map *small_map(void)
{
    dch_map *m = map_shaped(16, 8);
    cr_assert_eq(dch_map_add_node(m, "a", 1, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "b", 2, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "c", 0, NULL), DCH_OK);
    return m;
}

Test(map, bad_configs_are_rejected)
{
    dch_map *m = (dch_map *)&m; /* must stay untouched */
    dch_map *const sentinel = m;
    dch_map_config cfg;
    dch_map_config_default(&cfg);
    cr_assert_eq(dch_map_new(NULL, &cfg), DCH_EINVAL);
    cfg.units = 0;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_EINVAL);
    cfg.units = 3;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_EINVAL);
    cfg.units = 4;
    cfg.slots_per_unit = 0;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_EINVAL);
    cfg.slots_per_unit = 6;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_EINVAL);
    cfg.units = 1u << 16;
    cfg.slots_per_unit = 1u << 9;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_EFULL);
    cfg.units = 1u << 31;
    cfg.slots_per_unit = 1u << 31;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_EFULL);
    dch_allocator half = {NULL, NULL, NULL, NULL};
    dch_map_config_default(&cfg);
    cfg.allocator = &half;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_EINVAL);
    cr_assert_eq(m, sentinel);
    cfg.allocator = NULL;
    cfg.units = 1u << 12;
    cfg.slots_per_unit = 1u << 12;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK, "2^24 slots is within the limit");
    dch_map_free(m);
    dch_map_free(NULL);
}

Test(map, every_error_leaves_the_map_unchanged)
{
    dch_map *m = small_map();
    map_snap sn;
    map_snap_take(&sn, m);
    char longname[DCH_NAME_MAX + 2];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    char unterminated[DCH_NAME_MAX + 1];
    memset(unterminated, 'y', sizeof unterminated);
    uint32_t id;

    cr_assert_eq(dch_map_add_node(NULL, "z", 1, &id), DCH_EINVAL);
    cr_assert_eq(dch_map_add_node(m, NULL, 1, &id), DCH_EINVAL);
    cr_assert_eq(dch_map_add_node(m, "", 1, &id), DCH_EINVAL);
    cr_assert_eq(dch_map_add_node(m, longname, 1, &id), DCH_EINVAL);
    cr_assert_eq(dch_map_add_node(m, unterminated, 1, &id), DCH_EINVAL);
    cr_assert_eq(dch_map_add_node(m, "a", 1, &id), DCH_EEXIST);
    cr_assert_eq(dch_map_add_node(m, "z", UINT32_MAX, &id), DCH_EFULL);
    cr_assert_eq(dch_map_remove_node(NULL, 0), DCH_EINVAL);
    cr_assert_eq(dch_map_remove_node(m, 3), DCH_ENOENT);
    cr_assert_eq(dch_map_remove_node(m, DCH_NODE_NONE), DCH_ENOENT);
    cr_assert_eq(dch_map_set_weight(NULL, 0, 1), DCH_EINVAL);
    cr_assert_eq(dch_map_set_weight(m, 7, 1), DCH_ENOENT);
    cr_assert_eq(dch_map_set_weight(m, 0, UINT32_MAX - 1), DCH_EFULL);
    cr_assert_eq(dch_map_find_node(m, "nope", &id), DCH_ENOENT);
    cr_assert_eq(dch_map_find_node(m, NULL, &id), DCH_EINVAL);
    cr_assert_eq(dch_map_find_node(m, "a", NULL), DCH_EINVAL);
    cr_assert_eq(dch_map_find_node(m, unterminated, &id), DCH_EINVAL);
    cr_assert_eq(dch_map_clone(NULL, m), DCH_EINVAL);
    cr_assert_eq(dch_map_clone(&(dch_map *){NULL}, NULL), DCH_EINVAL);
    cr_assert_eq(dch_map_set_weight(m, 1, 2), DCH_OK, "same weight is no change");
    cr_assert(map_snap_differs(&sn, m, false) == NULL, "a failed or empty call changed the map");
    cr_assert_null(dch_map_node_name(m, 3));
    cr_assert_eq(dch_map_node_weight(m, 99), 0);
    cr_assert_eq(dch_map_slot_owner(m, dch_map_slot_count(m)), DCH_NODE_NONE);

    size_t n;
    cr_assert_eq(dch_map_ranges(NULL, NULL, 0, &n), DCH_EINVAL);
    cr_assert_eq(dch_map_ranges(m, NULL, 1, &n), DCH_EINVAL);
    cr_assert_eq(dch_map_ranges(m, NULL, 0, &n), DCH_EFULL);
    cr_assert_gt(n, 0);
    map_snap_free(&sn);
    dch_map_free(m);
}

typedef enum fop { F_ADD, F_ADD_IDLE, F_REMOVE, F_WEIGHT_UP, F_WEIGHT_DOWN, F_CLONE } fop;

static int run_fop(dch_map *m, fop op, dch_map **clone)
{
    switch (op) {
    case F_ADD: return dch_map_add_node(m, "newcomer", 3, NULL);
    case F_ADD_IDLE: return dch_map_add_node(m, "idle", 0, NULL);
    case F_REMOVE: return dch_map_remove_node(m, 0);
    case F_WEIGHT_UP: return dch_map_set_weight(m, 0, 5);
    case F_WEIGHT_DOWN: return dch_map_set_weight(m, 0, 0);
    case F_CLONE: return dch_map_clone(clone, m);
    }
    return DCH_EINVAL;
}

/* Every allocation of each call fails in turn, with every later one. */
Test(map, allocation_failure_at_every_point_leaves_the_map_unchanged)
{
    const uint32_t sizes[] = {1, 5, 40};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (fop op = F_ADD; op <= F_CLONE; op++) {
            faulty f = {0, 0, false, 0};
            const dch_allocator a = faulty_allocator(&f);
            fault_sweep sw;
            for (fault_sweep_start(&sw, &f, SWEEP_LATER, SWEEP_UNTIL_OK); fault_sweep_next(&sw);) {
                const long k = sw.at;
                faulty_arm(&f, 0, false);
                dch_map_config cfg = map_config(64, 16);
                cfg.allocator = &a;
                dch_map *m;
                cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
                for (uint32_t i = 0; i < sizes[si]; i++) {
                    char name[16];
                    snprintf(name, sizeof name, "m%u", i);
                    cr_assert_eq(dch_map_add_node(m, name, 1 + i % 3, NULL), DCH_OK);
                }
                map_snap sn;
                map_snap_take(&sn, m);
                const long live = f.live;
                faulty_arm(&f, k, true);
                dch_map *clone = NULL;
                const int rc = run_fop(m, op, &clone);
                fault_sweep_done(&sw, rc);
                if (rc == DCH_OK) {
                    dch_map_free(clone);
                    map_snap_free(&sn);
                    dch_map_free(m);
                    cr_assert_eq(f.live, 0, "leak after success");
                    continue; /* k passed the call's last allocation */
                }
                cr_assert_eq(rc, DCH_ENOMEM, "op %d k %ld", op, k);
                cr_assert_eq(f.live, live, "op %d k %ld leaked", op, k);
                cr_assert(map_snap_differs(&sn, m, false) == NULL, "op %d k %ld changed the map",
                          op, k);
                map_snap_free(&sn);
                dch_map_free(m);
                cr_assert_eq(f.live, 0);
            }
        }
    }
}

/* ---- Clones and determinism ------------------------------------------- */

Test(map, the_same_calls_give_the_same_table_and_clones_are_independent)
{
    uint64_t rng = 77;
    dch_map *a, *b;
    cr_assert_eq(dch_map_new(&a, NULL), DCH_OK);
    cr_assert_eq(dch_map_new(&b, NULL), DCH_OK);
    for (int i = 0; i < 60; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        const uint32_t w = 1 + rng_below(&rng, 5);
        cr_assert_eq(dch_map_add_node(a, name, w, NULL), DCH_OK);
        cr_assert_eq(dch_map_add_node(b, name, w, NULL), DCH_OK);
        if (i % 7 == 3) {
            cr_assert_eq(dch_map_remove_node(a, (uint32_t)i / 2), DCH_OK);
            cr_assert_eq(dch_map_remove_node(b, (uint32_t)i / 2), DCH_OK);
        }
    }
    map_snap sa;
    map_snap_take(&sa, a);
    cr_assert(map_snap_differs(&sa, b, false) == NULL);
    dch_map *c;
    cr_assert_eq(dch_map_clone(&c, a), DCH_OK);
    cr_assert(map_snap_differs(&sa, c, false) == NULL);
    cr_assert_eq(dch_map_memory(c), dch_map_memory(a));
    cr_assert_eq(dch_map_add_node(c, "only-in-clone", 2, NULL), DCH_OK);
    cr_assert(map_snap_differs(&sa, a, false) == NULL, "changing a clone changed the original");
    map_snap_free(&sa);
    dch_map_free(a);
    dch_map_free(b);
    dch_map_free(c);
}

/* ---- Ranges ----------------------------------------------------------- */

Test(map, ranges_cover_the_ring_once_and_agree_with_lookups_at_every_boundary)
{
    uint64_t rng = 4242;
    const shape cases[] = {{1, 1}, {4, 4}, {1024, 64}, {16, 2}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        dch_map *m = map_shaped(cases[c].units, cases[c].spu);
        for (uint32_t i = 0; i < 1 + c * 7; i++) {
            char name[16];
            snprintf(name, sizeof name, "r%u", i);
            cr_assert_eq(dch_map_add_node(m, name, 1 + rng_below(&rng, 4), NULL), DCH_OK);
        }
        size_t n;
        cr_assert_eq(dch_map_ranges(m, NULL, 0, &n), n > 0 ? DCH_EFULL : DCH_OK);
        dch_range *r = malloc(n * sizeof *r);
        size_t n2;
        cr_assert_eq(dch_map_ranges(m, r, n, &n2), DCH_OK);
        cr_assert_eq(n, n2);
        cr_assert_eq(r[0].lo, 0);
        cr_assert_eq(r[n - 1].hi, UINT64_MAX);
        uint64_t covered_slots = 0;
        for (size_t i = 0; i < n; i++) {
            cr_assert_leq(r[i].lo, r[i].hi);
            if (i > 0) {
                cr_assert_eq(r[i].lo, r[i - 1].hi + 1, "gap or overlap at range %zu", i);
                cr_assert_neq(r[i].owner, r[i - 1].owner, "unmerged neighbours at %zu", i);
            }
            cr_assert_eq(dch_map_lookup_hash(m, r[i].lo), r[i].owner);
            cr_assert_eq(dch_map_lookup_hash(m, r[i].hi), r[i].owner);
            covered_slots += dch_map_slot_of(m, r[i].hi) - dch_map_slot_of(m, r[i].lo) + 1;
        }
        cr_assert_eq(covered_slots, dch_map_slot_count(m));
        free(r);
        dch_map_free(m);
    }
}

Test(map, an_empty_map_is_one_unowned_range)
{
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, NULL), DCH_OK);
    dch_range r[2];
    size_t n;
    cr_assert_eq(dch_map_ranges(m, r, 2, &n), DCH_OK);
    cr_assert_eq(n, 1);
    cr_assert_eq(r[0].lo, 0);
    cr_assert_eq(r[0].hi, UINT64_MAX);
    cr_assert_eq(r[0].owner, DCH_NODE_NONE);
    dch_map_free(m);
}

/* Counts how many ranges a foreach visits, stopping at `stop`. */
static int count_until(const dch_range *r, void *ctx)
{
    (void)r;
    int *left = ctx;
    return --*left == 0 ? 7 : 0;
}

Test(map, a_nonzero_callback_return_stops_the_walk_and_is_returned)
{
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "a", 1, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "b", 1, NULL), DCH_OK);
    int left = 3;
    cr_assert_eq(dch_map_foreach_range(m, count_until, &left), 7);
    cr_assert_eq(left, 0);
    cr_assert_eq(dch_map_foreach_range(m, NULL, NULL), DCH_EINVAL);
    dch_map_free(m);
}

/*
 * Memory, exactly: a map of one copy a slot keeps its table, an entry and 2
 * bytes of name index a member id of capacity, and the names; the default
 * map of 1,000 members fits in 160 KiB. An entry is a name pointer and two
 * 32-bit counts (src/map_engine.h), 16 bytes on 64-bit targets and 12 on
 * 32-bit ones; the test spells that layout out rather than take the
 * library's sizeof, so that an entry that grows a field fails it. A
 * member's zone adds a per-id array of 4 bytes an id, from the first zone
 * on; a later member that reuses a zoned member's id has no zone.
 */
Test(map, memory_of_one_copy_without_zones_and_with_a_zone)
{
    struct entry_layout {
        char *name;
        uint32_t weight, slots;
    };
    const size_t per_id = sizeof(struct entry_layout) + sizeof(uint16_t);
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, NULL), DCH_OK);
    size_t names = 0;
    for (uint32_t i = 0; i < 1000; i++) {
        char name[16];
        snprintf(name, sizeof name, "node-%u", (unsigned)i);
        names += strlen(name) + 1;
        cr_assert_eq(dch_map_add_node(m, name, 1, NULL), DCH_OK);
    }
    const size_t table = (size_t)dch_map_slot_count(m) * 2;
    const size_t plain = dch_map_memory(m);
    /* Capacity doubles from 8: 1,024 ids for 1,000 members. The rest, under
     * 1 KiB, is the map's own struct. */
    cr_assert_geq(plain, table + 1024 * per_id + names);
    cr_assert_leq(plain, table + 1024 * per_id + names + 1024, "%zu bytes", plain);
    cr_assert_leq(plain, (size_t)160 * 1024, "%zu bytes at N = 1000", plain);

    uint32_t id;
    cr_assert_eq(dch_map_add_node_in_zone(m, "zoned", "rack-1", 1, &id), DCH_OK);
    cr_assert_str_eq(dch_map_node_zone(m, id), "rack-1");
    const size_t zoned = dch_map_memory(m);
    cr_assert_geq(zoned, plain + 1024 * 4, "the zones' array of 4 bytes an id");
    cr_assert_eq(dch_map_remove_node(m, id), DCH_OK);
    uint32_t again;
    cr_assert_eq(dch_map_add_node(m, "plain", 1, &again), DCH_OK);
    cr_assert_eq(again, id, "the freed id is reused");
    cr_assert_null(dch_map_node_zone(m, again));
    for (uint32_t k = 0; k < dch_map_id_limit(m); k++)
        if (dch_map_node_name(m, k) != NULL)
            cr_assert_null(dch_map_node_zone(m, k));
    dch_map_free(m);
}

/* A map of units x spu slots through allocator al, with n members of
 * weight 1 named n0, n1, ... */
static dch_map *map_of_equals(uint32_t units, uint32_t spu, const dch_allocator *al,
                              uint32_t n)
{
    dch_map_config cfg = map_config(units, spu);
    cfg.allocator = al;
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    for (uint32_t i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%u", (unsigned)i);
        cr_assert_eq(dch_map_add_node(m, name, 1, NULL), DCH_OK);
    }
    return m;
}

/* The first zone of a map of one copy allocates the zones' array: a failed
 * allocation at any point of that add, or of the add that grows the
 * member table past it, leaves the map as it was and leaks nothing. */
Test(map, a_first_zone_that_fails_to_allocate_changes_nothing)
{
    faulty fa = {0};
    const dch_allocator al = faulty_allocator(&fa);
    dch_map *m = map_of_equals(64, 16, &al, 7);
    /* The 8th member fills the table's first 8 ids, the 9th grows it. */
    static const char *const zones[2] = {"rack-1", "rack-2"};
    for (int call = 0; call < 2; call++) {
        const uint64_t fp = dch_map_fingerprint(m);
        const size_t memory = dch_map_memory(m);
        const uint32_t count = dch_map_node_count(m);
        fault_sweep sw;
        int rc = DCH_ENOMEM;
        for (fault_sweep_start(&sw, &fa, SWEEP_BOTH, SWEEP_UNTIL_OK); fault_sweep_next(&sw);) {
            char name[8];
            snprintf(name, sizeof name, "z%d", call);
            rc = dch_map_add_node_in_zone(m, name, zones[call], 1, NULL);
            fault_sweep_done(&sw, rc);
            if (rc == DCH_OK)
                break;
            cr_assert_eq(rc, DCH_ENOMEM);
            cr_assert_eq(sw.leaked, 0, "call %d leaked at allocation %ld", call, sw.at);
            cr_assert_eq(dch_map_fingerprint(m), fp);
            cr_assert_eq(dch_map_memory(m), memory);
            cr_assert_eq(dch_map_node_count(m), count);
        }
        cr_assert_eq(rc, DCH_OK);
        cr_assert_gt(sw.failed, 0, "call %d allocates", call);
        cr_assert_str_eq(dch_map_node_zone(m, dch_map_node_count(m) - 1), zones[call]);
    }
    cr_assert_null(dch_map_node_zone(m, 0));
    dch_map_free(m);
    cr_assert_eq(fa.live, 0);
}

/* An allocator that remembers the largest single request. */
static void *largest_alloc(void *ctx, size_t size)
{
    size_t *largest = ctx;
    *largest = size > *largest ? size : *largest;
    return malloc(size);
}

static void *largest_realloc(void *ctx, void *ptr, size_t size)
{
    size_t *largest = ctx;
    *largest = size > *largest ? size : *largest;
    return realloc(ptr, size);
}

static void largest_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

/*
 * A change's scratch follows the change, not P: at 2^20 slots (16,384 units
 * of 64) and 100 members, a join's largest allocation is its scratch of
 * about 88 bytes an id, 8 a unit and 12 a move it can make (some 10,400
 * here), well under 1 MiB, where sizing the moves by the slots x does not
 * hold would take 12 MiB. A removal's is sized by the slots x holds.
 */
Test(map, a_change_allocates_for_its_moves_not_for_every_slot)
{
    size_t largest = 0;
    const dch_allocator al = {largest_alloc, largest_realloc, largest_free, &largest};
    dch_map *m = map_of_equals(16384, 64, &al, 100);
    const size_t table = (size_t)dch_map_slot_count(m) * 2;
    for (int call = 0; call < 2; call++) {
        largest = 0;
        uint32_t id = 0;
        if (call == 0)
            cr_assert_eq(dch_map_add_node(m, "joining", 1, &id), DCH_OK);
        else
            cr_assert_eq(dch_map_remove_node(m, 7), DCH_OK);
        cr_assert_gt(largest, 0);
        cr_assert_lt(largest, (size_t)1 << 20, "call %d allocated %zu bytes at once", call,
                     largest);
        cr_assert_lt(largest, table / 2);
    }
    dch_map_free(m);
}
