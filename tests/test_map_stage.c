/* SPDX-License-Identifier: MIT */
/*
 * Tests of staged changes (map_stage.h) against an oracle built from the two
 * ends alone: the plan is, per slot, the owner's name in OLD and in NEW.
 * Every step of a staging must route each slot as OLD or as NEW does, change
 * a slot only from its OLD name to its NEW name, move at most K slots into
 * and out of any name, carry the documented members, weights, ids, epoch and
 * transition record, load back from its bytes to the same bytes, and give
 * the same next step when staged again from its loaded copy; the last step
 * must be NEW (byte for byte, or with only the epoch restamped). The number
 * of steps is checked against the bounds map_stage.h states.
 *
 * DCH_TEST_SCALE scales the random work; DCH_TEST_SEED replaces the seed.
 */
#include <criterion/criterion.h>

#include "dch/dch.h"
#include "mapfile_oracle.h"
#include "support.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Harness ---------------------------------------------------------- */

static dch_map *new_map(uint32_t units, uint32_t spu, const dch_allocator *a)
{
    dch_map_config cfg = map_config(units, spu);
    cfg.hash_key[3] = 7;
    cfg.allocator = a;
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    return m;
}

static void add(dch_map *m, const char *name, uint32_t weight)
{
    cr_assert_eq(dch_map_add_node(m, name, weight, NULL), DCH_OK, "add %s", name);
}

static uint32_t id_of(const dch_map *m, const char *name)
{
    uint32_t id;
    cr_assert_eq(dch_map_find_node(m, name, &id), DCH_OK, "no member %s", name);
    return id;
}

/* A clone of m that `name` joined with `weight`. */
static dch_map *with_joiner(const dch_map *m, const char *name, uint32_t weight)
{
    dch_map *c = map_clone_of(m);
    add(c, name, weight);
    return c;
}

/* The first step from old to target, K = k: it must be made, and be in
 * transition. */
static dch_map *first_step(const dch_map *old, const dch_map *target, uint32_t k)
{
    dch_map *step;
    cr_assert_eq(dch_map_stage_next(&step, old, target, k), DCH_OK);
    cr_assert(dch_map_in_transition(step, NULL));
    return step;
}

static const char *owner_name(const dch_map *m, uint32_t s)
{
    const uint32_t id = dch_map_slot_owner(m, s);
    return id == DCH_NODE_NONE ? NULL : dch_map_node_name(m, id);
}

static bool name_eq(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static uint32_t ceil_div(uint32_t a, uint32_t b)
{
    return a / b + (a % b != 0);
}

/* ---- The oracle ------------------------------------------------------- */

/* Per-name counters, by a small table of names (a few dozen at most). */
typedef struct tally {
    const char *name[64];
    uint32_t out[64], in[64];
    size_t n;
} tally;

static size_t tally_slot(tally *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->name[i], name) == 0)
            return i;
    cr_assert(t->n < 64);
    t->name[t->n] = name;
    t->out[t->n] = t->in[t->n] = 0;
    return t->n++;
}

/*
 * Stage OLD -> NEW with cap k and check everything the header promises.
 * Returns the number of steps. `ctx` names the case in failure messages.
 */
static uint32_t check_staging(const dch_map *old, const dch_map *target, uint32_t k,
                              const char *ctx)
{
    const uint32_t P = dch_map_slot_count(old);
    const uint64_t fp = dch_map_fingerprint(target);
    const bool nobody = dch_map_total_weight(old) == 0 || dch_map_total_weight(target) == 0;

    /* The plan and its per-name loads. */
    tally plan = {.n = 0};
    uint32_t planned = 0;
    for (uint32_t s = 0; s < P; s++) {
        const char *a = owner_name(old, s), *b = owner_name(target, s);
        if (name_eq(a, b))
            continue;
        planned++;
        if (a != NULL)
            plan.out[tally_slot(&plan, a)]++;
        if (b != NULL)
            plan.in[tally_slot(&plan, b)]++;
    }
    uint32_t D = 0;
    for (size_t i = 0; i < plan.n; i++) {
        D = plan.out[i] > D ? plan.out[i] : D;
        D = plan.in[i] > D ? plan.in[i] : D;
    }
    /* The upper bound over planned pairs, and whether one member is in
     * every move. */
    uint32_t upper = 1;
    bool shared = true;
    for (uint32_t s = 0; s < P && !nobody; s++) {
        const char *a = owner_name(old, s), *b = owner_name(target, s);
        if (name_eq(a, b))
            continue;
        const uint32_t u = ceil_div(plan.out[tally_slot(&plan, a)], k) +
                           ceil_div(plan.in[tally_slot(&plan, b)], k) - 1;
        upper = u > upper ? u : upper;
    }
    /* One member in every move: one of the first move's two is in all. */
    for (int side = 0; side < 2 && !nobody && planned > 0; side++) {
        const char *cand = NULL;
        bool all = true;
        for (uint32_t s = 0; s < P; s++) {
            const char *a = owner_name(old, s), *b = owner_name(target, s);
            if (name_eq(a, b))
                continue;
            if (cand == NULL)
                cand = side == 0 ? a : b;
            if (!name_eq(a, cand) && !name_eq(b, cand)) {
                all = false;
                break;
            }
        }
        shared = all;
        if (all)
            break;
    }

    uint32_t n;
    cr_assert_eq(dch_map_stage_steps(old, target, k, &n), DCH_OK, "%s", ctx);
    if (nobody || planned == 0) {
        cr_assert_eq(n, 1, "%s: a plan with nothing to stage has one step", ctx);
    } else {
        cr_assert(n >= ceil_div(D, k), "%s: %u steps, fewer than ceil(%u/%u)", ctx, n, D, k);
        cr_assert(n <= upper, "%s: %u steps, over the bound %u", ctx, n, upper);
        if (shared)
            cr_assert_eq(n, ceil_div(D, k), "%s: one member in every move, D=%u k=%u", ctx, D,
                         k);
    }

    dch_map *prev = map_clone_of(old);
    for (uint32_t i = 1;; i++) {
        cr_assert(i <= n, "%s: more steps than the %u counted", ctx, n);
        dch_map *step;
        cr_assert_eq(dch_map_stage_next(&step, prev, target, k), DCH_OK, "%s step %u", ctx, i);
        dch_map *again;
        cr_assert_eq(dch_map_stage_next(&again, prev, target, k), DCH_OK);
        cr_assert(same_map_bytes(step, again), "%s step %u: not a pure function", ctx, i);
        dch_map_free(again);

        /* Slots: OLD or NEW, changed only along the plan, within the caps. */
        tally moved = {.n = 0};
        for (uint32_t s = 0; s < P; s++) {
            const char *o = owner_name(old, s), *t = owner_name(target, s);
            const char *a = owner_name(prev, s), *b = owner_name(step, s);
            cr_assert(name_eq(b, o) || name_eq(b, t), "%s step %u slot %u: neither end", ctx,
                      i, s);
            if (name_eq(a, b))
                continue;
            cr_assert(name_eq(a, o) && name_eq(b, t), "%s step %u slot %u: off the plan", ctx,
                      i, s);
            if (a != NULL)
                moved.out[tally_slot(&moved, a)]++;
            if (b != NULL)
                moved.in[tally_slot(&moved, b)]++;
        }
        if (!nobody)
            for (size_t j = 0; j < moved.n; j++)
                cr_assert(moved.out[j] <= k && moved.in[j] <= k,
                          "%s step %u: %s gives %u, takes %u, cap %u", ctx, i, moved.name[j],
                          moved.out[j], moved.in[j], k);

        dch_map_transition tr = {0, 0, 0};
        const bool last = !dch_map_in_transition(step, &tr);
        if (!last) {
            cr_assert_eq(dch_map_epoch(step), dch_map_epoch(old) + i, "%s step %u", ctx, i);
            cr_assert(tr.target_fingerprint == fp && tr.step == i && tr.steps == n,
                      "%s step %u: record %u of %u", ctx, i, tr.step, tr.steps);
            uint32_t left;
            cr_assert_eq(dch_map_stage_steps(step, target, k, &left), DCH_OK);
            cr_assert_eq(left, n - i, "%s step %u", ctx, i);
            /* Members: NEW's at NEW's ids, each leaver with its OLD weight;
             * NEW's weight unless it is 0, then OLD's. */
            for (uint32_t id = 0; id < dch_map_id_limit(target); id++) {
                const char *name = dch_map_node_name(target, id);
                if (name == NULL)
                    continue;
                cr_assert_str_eq(dch_map_node_name(step, id), name, "%s step %u", ctx, i);
                uint32_t w = dch_map_node_weight(target, id), oid;
                if (w == 0 && dch_map_find_node(old, name, &oid) == DCH_OK)
                    w = dch_map_node_weight(old, oid);
                cr_assert_eq(dch_map_node_weight(step, id), w, "%s step %u: %s", ctx, i, name);
            }
            uint32_t leavers = 0;
            for (uint32_t id = 0; id < dch_map_id_limit(old); id++) {
                const char *name = dch_map_node_name(old, id);
                uint32_t tid;
                if (name == NULL || dch_map_find_node(target, name, &tid) == DCH_OK)
                    continue;
                leavers++;
                const uint32_t sid = id_of(step, name);
                cr_assert_eq(dch_map_node_weight(step, sid), dch_map_node_weight(old, id));
                if (dch_map_node_name(target, id) == NULL)
                    cr_assert_eq(sid, id, "%s: a leaver whose id is free keeps it", ctx);
            }
            cr_assert_eq(dch_map_node_count(step), dch_map_node_count(target) + leavers);
        }

        /* The bytes: a step map is version 2, loads back with its record,
         * and staging from the loaded copy continues the same way. */
        size_t len;
        uint8_t *bytes = map_bytes(step, &len);
        uint32_t version = (uint32_t)bytes[8] | (uint32_t)bytes[9] << 8;
        cr_assert_eq(version, last ? DCH_MAP_FORMAT_VERSION : DCH_MAP_FORMAT_VERSION_STEP);
        dch_map *loaded;
        cr_assert_eq(dch_map_load(&loaded, bytes, len), DCH_OK, "%s step %u", ctx, i);
        dch_map_transition tr2 = {0, 0, 0};
        cr_assert_eq(dch_map_in_transition(loaded, &tr2), !last);
        cr_assert(memcmp(&tr, &tr2, sizeof tr) == 0);
        cr_assert(same_map_bytes(loaded, step), "%s step %u: save, load, save differs", ctx, i);
        free(bytes);
        dch_map_free(prev);
        prev = loaded;
        dch_map_free(step);
        if (last) {
            cr_assert_eq(i, n, "%s: ended after %u of %u steps", ctx, i, n);
            break;
        }
    }

    /* The last step is NEW: the same bytes, or the same but the epoch. */
    const uint64_t want_epoch = dch_map_epoch(target) >= dch_map_epoch(old) + n
                                    ? dch_map_epoch(target)
                                    : dch_map_epoch(old) + n;
    cr_assert_eq(dch_map_epoch(prev), want_epoch, "%s", ctx);
    cr_assert(dch_map_fingerprint(prev) == fp, "%s", ctx);
    size_t la, lb;
    uint8_t *pa = map_bytes(prev, &la), *pb = map_bytes(target, &lb);
    cr_assert_eq(la, lb);
    for (unsigned b = 0; b < 8; b++)
        pb[48 + b] = (uint8_t)(want_epoch >> (8 * b));
    static const uint8_t ck[16] = {'d', 'c', 'h', ' ', 'm', 'a', 'p', ' ',
                                   'c', 'h', 'e', 'c', 'k', 's', 'u', 'm'};
    const uint64_t sum = dch_siphash24(ck, pb, lb - 8);
    for (unsigned b = 0; b < 8; b++)
        pb[lb - 8 + b] = (uint8_t)(sum >> (8 * b));
    cr_assert(memcmp(pa, pb, la) == 0, "%s: the last step is not the target", ctx);
    if (want_epoch == dch_map_epoch(target))
        cr_assert(same_map_bytes(prev, target), "%s: not the target byte for byte", ctx);
    free(pa);
    free(pb);
    dch_map_free(prev);
    return n;
}

/* ---- Named cases ------------------------------------------------------ */

static dch_map *members_map(uint32_t units, uint32_t spu, uint32_t count)
{
    dch_map *m = new_map(units, spu, NULL);
    for (uint32_t i = 0; i < count; i++) {
        char name[16];
        snprintf(name, sizeof name, "node%u", i);
        add(m, name, 1);
    }
    return m;
}

Test(map_stage, a_join_of_a_ninth_member_in_steps_of_512_at_defaults)
{
    dch_map *old = members_map(1024, 64, 8);
    dch_map *target = with_joiner(old, "node8", 1);
    const uint32_t gained = dch_map_node_slots(target, id_of(target, "node8"));
    const uint32_t n = check_staging(old, target, 512, "join 8 -> 9, K=512");
    cr_assert_eq(n, ceil_div(gained, 512), "join: %u steps for %u slots", n, gained);
    cr_assert(n > 1, "the join is really staged");
    dch_map_free(old);
    dch_map_free(target);
}

Test(map_stage, a_leave_and_a_weight_change_are_staged_within_the_caps)
{
    dch_map *old = members_map(1024, 64, 9);
    dch_map *leave = map_clone_of(old);
    cr_assert_eq(dch_map_remove_node(leave, id_of(leave, "node3")), DCH_OK);
    const uint32_t lost = dch_map_node_slots(old, id_of(old, "node3"));
    cr_assert_eq(check_staging(old, leave, 512, "leave 9 -> 8"), ceil_div(lost, 512));
    dch_map *heavier = map_clone_of(old);
    cr_assert_eq(dch_map_set_weight(heavier, id_of(heavier, "node5"), 3), DCH_OK);
    check_staging(old, heavier, 300, "weight 1 -> 3");
    dch_map *drained = map_clone_of(old);
    cr_assert_eq(dch_map_set_weight(drained, id_of(drained, "node0"), 0), DCH_OK);
    check_staging(old, drained, 1000, "weight 1 -> 0");
    dch_map_free(old);
    dch_map_free(leave);
    dch_map_free(heavier);
    dch_map_free(drained);
}

Test(map_stage, a_leaver_whose_id_was_reused_moves_aside_and_keeps_its_weight)
{
    dch_map *old = members_map(64, 16, 3);
    cr_assert_eq(dch_map_set_weight(old, 1, 2), DCH_OK);
    dch_map *target = map_clone_of(old);
    cr_assert_eq(dch_map_remove_node(target, 1), DCH_OK);
    add(target, "late", 1); /* takes id 1 */
    cr_assert_eq(id_of(target, "late"), 1);
    dch_map *step = first_step(old, target, 8);
    cr_assert_eq(id_of(step, "late"), 1);
    cr_assert_eq(id_of(step, "node1"), 3, "the lowest id nobody holds");
    cr_assert_eq(dch_map_node_weight(step, 3), 2);
    dch_map_free(step);
    check_staging(old, target, 8, "leave and join on one id");
    dch_map_free(old);
    dch_map_free(target);
}

Test(map_stage, plans_without_moves_or_without_owners_take_one_step)
{
    dch_map *old = members_map(16, 4, 3);
    dch_map *weightless = with_joiner(old, "idle", 0);
    cr_assert_eq(check_staging(old, weightless, 1, "a member of weight 0"), 1);
    dch_map *empty = new_map(16, 4, NULL);
    dch_map *first = with_joiner(empty, "a", 1);
    add(first, "b", 2);
    cr_assert_eq(check_staging(empty, first, 1, "from nobody"), 1);
    dch_map *none = map_clone_of(old);
    for (uint32_t id = 0; id < 3; id++)
        cr_assert_eq(dch_map_set_weight(none, id, 0), DCH_OK);
    cr_assert_eq(check_staging(old, none, 1, "to nobody"), 1);
    dch_map_free(old);
    dch_map_free(weightless);
    dch_map_free(empty);
    dch_map_free(first);
    dch_map_free(none);
}

/* A new member mostly of weight 1 .. 4 (a third weightless), a changed one
 * 0 .. 4. */
static uint32_t change_weight(uint64_t *rng, uint32_t r, bool adding)
{
    return adding ? 1 + rng_below(rng, 4) * (r % 3 != 0) : rng_below(rng, 5);
}

/* Adds, removals and new weights, names from a pool of 10. */
static const map_change_rule rule = {45, 70, 10, change_weight};

Test(map_stage, random_histories_are_staged_as_the_header_promises, .timeout = 600)
{
    static const uint32_t shapes[][2] = {{1, 1}, {4, 1}, {4, 4}, {16, 8}, {64, 16}, {64, 64}};
    const uint64_t seed = test_seed(UINT64_C(0x57a9ed));
    uint64_t rng = seed;
    const unsigned cases = test_scaled(150, 20);
    for (unsigned c = 0; c < cases; c++) {
        const uint32_t *sh = shapes[rng_below(&rng, 6)];
        dch_map *old = new_map(sh[0], sh[1], NULL);
        const uint32_t history = rng_below(&rng, 12);
        for (uint32_t h = 0; h < history; h++)
            map_random_change(old, &rng, &rule);
        dch_map *target = map_clone_of(old);
        const uint32_t changes = 1 + rng_below(&rng, 4);
        for (uint32_t h = 0; h < changes; h++)
            map_random_change(target, &rng, &rule);
        if (dch_map_epoch(target) == dch_map_epoch(old))
            add(target, "fresh", 1);
        const uint32_t P = sh[0] * sh[1];
        const uint32_t ks[] = {1, 2, 3, 1 + P / 64, 1 + rng_below(&rng, P), P};
        const uint32_t k = ks[rng_below(&rng, 6)];
        char ctx[96];
        snprintf(ctx, sizeof ctx, "seed 0x%llx case %u (%ux%u, K=%u)",
                 (unsigned long long)seed, c, sh[0], sh[1], k);
        check_staging(old, target, k, ctx);
        dch_map_free(old);
        dch_map_free(target);
    }
}

/* ---- Bad input -------------------------------------------------------- */

/* A map of one slot and DCH_MAP_MAX_NODES members, only id 0 weighted: every
 * id is in use. Built from bytes, which is far quicker than 65,535 adds. */
static dch_map *full_map(void)
{
    const uint32_t n = DCH_MAP_MAX_NODES;
    const size_t len = 56 + (size_t)n * (11 + 6) + 1 + 2 + 8;
    uint8_t *p = calloc(1, len);
    cr_assert_not_null(p);
    memcpy(p, "\x89" "DCH\r\n\x1a\n", 8);
    le_write(p + 8, 1, 4);
    le_write(p + 12, n, 4);
    le_write(p + 16, len, 8);
    le_write(p + 24, 1, 4);
    le_write(p + 28, 1, 4);
    le_write(p + 48, 1, 8);
    size_t at = 56;
    for (uint32_t id = 0; id < n; id++, at += 17) {
        le_write(p + at, id, 2);
        le_write(p + at + 2, id == 0, 4);
        le_write(p + at + 6, id == 0, 4);
        p[at + 10] = 6;
        char name[8];
        snprintf(name, sizeof name, "m%05u", id);
        memcpy(p + at + 11, name, 6);
    }
    p[at++] = 0; /* raw table: the one slot is id 0's */
    le_write(p + at, 0, 2);
    fix_checksum(p, len);
    dch_map *m;
    cr_assert_eq(dch_map_load(&m, p, len), DCH_OK);
    free(p);
    return m;
}

/* A step map of `old` -> `target` loaded back with its epoch set to `epoch`. */
static dch_map *step_with_epoch(const dch_map *old, const dch_map *target, uint32_t k,
                                uint64_t epoch)
{
    dch_map *step = first_step(old, target, k);
    size_t len;
    uint8_t *p = map_bytes(step, &len);
    le_write(p + 48, epoch, 8);
    fix_checksum(p, len);
    dch_map_free(step);
    cr_assert_eq(dch_map_load(&step, p, len), DCH_OK);
    free(p);
    return step;
}

/* Call both functions with (cur, target, k); each must give `want` and
 * change nothing. */
static void expect_refused(const dch_map *cur, const dch_map *target, uint32_t k, int want,
                           const char *what)
{
    size_t lc = 0, lt = 0;
    uint8_t *bc = cur ? map_bytes(cur, &lc) : NULL, *bt = target ? map_bytes(target, &lt) : NULL;
    dch_map *sentinel = (dch_map *)&lc, *out = sentinel;
    uint32_t steps = 77;
    cr_assert_eq(dch_map_stage_next(&out, cur, target, k), want, "%s: stage_next", what);
    cr_assert_eq(dch_map_stage_steps(cur, target, k, &steps), want, "%s: stage_steps", what);
    cr_assert(out == sentinel && steps == 77, "%s: an out-parameter changed", what);
    if (cur != NULL) {
        size_t l;
        uint8_t *b = map_bytes(cur, &l);
        cr_assert(l == lc && memcmp(b, bc, l) == 0, "%s: the current map changed", what);
        free(b);
    }
    if (target != NULL) {
        size_t l;
        uint8_t *b = map_bytes(target, &l);
        cr_assert(l == lt && memcmp(b, bt, l) == 0, "%s: the target changed", what);
        free(b);
    }
    free(bc);
    free(bt);
}

Test(map_stage, bad_input_gets_the_documented_code_and_changes_nothing)
{
    dch_map *old = members_map(64, 16, 4);
    dch_map *target = with_joiner(old, "node4", 1);

    expect_refused(NULL, target, 8, DCH_EINVAL, "NULL current map");
    expect_refused(old, NULL, 8, DCH_EINVAL, "NULL target");
    expect_refused(old, target, 0, DCH_EINVAL, "K = 0");
    cr_assert_eq(dch_map_stage_next(NULL, old, target, 8), DCH_EINVAL);
    cr_assert_eq(dch_map_stage_steps(old, target, 8, NULL), DCH_EINVAL);

    /* Another config: units, slots per unit, hash key. */
    dch_map *other = members_map(32, 32, 5);
    expect_refused(old, other, 8, DCH_EINVAL, "other units");
    dch_map_free(other);
    other = members_map(64, 8, 5);
    expect_refused(old, other, 8, DCH_EINVAL, "other slots per unit");
    dch_map_free(other);
    dch_map_config cfg;
    dch_map_get_config(old, &cfg);
    cfg.hash_key[0] ^= 1;
    cr_assert_eq(dch_map_new(&other, &cfg), DCH_OK);
    for (uint32_t i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "node%u", i);
        add(other, name, 1);
    }
    expect_refused(old, other, 8, DCH_EINVAL, "other hash key");
    dch_map_free(other);

    /* Not derived: a target that is not newer. */
    dch_map *same = map_clone_of(old);
    expect_refused(old, same, 8, DCH_EINVAL, "same epoch");
    expect_refused(target, old, 8, DCH_EINVAL, "older target");
    dch_map_free(same);

    /* A target in transition; a step heading for another target. */
    dch_map *step = first_step(old, target, 8);
    expect_refused(old, step, 8, DCH_EINVAL, "target in transition");
    dch_map *elsewhere = with_joiner(target, "node5", 1);
    expect_refused(step, elsewhere, 8, DCH_EINVAL, "step towards another target");
    dch_map_free(elsewhere);
    dch_map_free(step);

    /* A step whose epoch cannot grow. */
    step = step_with_epoch(old, target, 8, UINT64_MAX);
    expect_refused(step, target, 8, DCH_EFULL, "epoch at its limit");
    dch_map_free(step);

    /* The union of the two memberships over the weight sum. */
    dch_map *heavy = new_map(64, 16, NULL);
    add(heavy, "a", UINT32_C(1) << 31);
    add(heavy, "b", (UINT32_C(1) << 31) - 1);
    dch_map *swapped = map_clone_of(heavy);
    cr_assert_eq(dch_map_remove_node(swapped, 0), DCH_OK);
    add(swapped, "c", UINT32_C(1) << 31);
    expect_refused(heavy, swapped, 8, DCH_EFULL, "union weight sum");
    dch_map_free(heavy);
    dch_map_free(swapped);

    /* ... and over the ids: every id in use, and a leaver's id reused. */
    dch_map *full = full_map();
    dch_map *reused = map_clone_of(full);
    cr_assert_eq(dch_map_remove_node(reused, 5), DCH_OK);
    add(reused, "newcomer", 0);
    cr_assert_eq(id_of(reused, "newcomer"), 5);
    expect_refused(full, reused, 8, DCH_EFULL, "union of ids");
    dch_map_free(full);
    dch_map_free(reused);

    cr_assert_eq(dch_map_in_transition(NULL, NULL), 0);
    dch_map_free(old);
    dch_map_free(target);
}

Test(map_stage, a_changed_step_map_is_settled_and_a_clone_keeps_the_record)
{
    dch_map *old = members_map(64, 16, 4);
    dch_map *target = with_joiner(old, "node4", 1);
    dch_map *step;
    cr_assert_eq(dch_map_stage_next(&step, old, target, 8), DCH_OK);
    dch_map_transition tr, tc;
    cr_assert(dch_map_in_transition(step, &tr));
    dch_map *copy = map_clone_of(step);
    cr_assert(dch_map_in_transition(copy, &tc));
    cr_assert(memcmp(&tr, &tc, sizeof tr) == 0);
    cr_assert_eq(dch_map_set_weight(copy, 0, 1), DCH_OK, "the same weight changes nothing");
    cr_assert(dch_map_in_transition(copy, NULL));
    cr_assert_eq(dch_map_set_weight(copy, 0, 2), DCH_OK);
    cr_assert(!dch_map_in_transition(copy, NULL));
    size_t len;
    uint8_t *p = map_bytes(copy, &len);
    cr_assert_eq(p[8], DCH_MAP_FORMAT_VERSION, "a settled map is written as version 1");
    free(p);
    dch_map_free(copy);

    /* A damaged record: step 0, step n of n, and n below 2. */
    p = map_bytes(step, &len);
    const size_t record = len - 8 - 16;
    const uint32_t bad[][2] = {{0, 5}, {5, 5}, {6, 5}, {1, 1}, {0, 0}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t *q = malloc(len);
        memcpy(q, p, len);
        le_write(q + record + 8, bad[i][0], 4);
        le_write(q + record + 12, bad[i][1], 4);
        fix_checksum(q, len);
        dch_map *m = NULL;
        cr_assert_eq(dch_map_load(&m, q, len), DCH_ECORRUPT, "step %u of %u", bad[i][0],
                     bad[i][1]);
        free(q);
    }
    free(p);
    dch_map_free(step);
    dch_map_free(old);
    dch_map_free(target);
}

/* ---- Failed allocations ----------------------------------------------- */

/* Copy `m` into a map that allocates through `a`. */
static dch_map *with_allocator(const dch_map *m, const dch_allocator *a)
{
    size_t len;
    uint8_t *p = map_bytes(m, &len);
    dch_map *c;
    cr_assert_eq(dch_map_load_with(&c, p, len, a), DCH_OK);
    free(p);
    return c;
}

/*
 * Fail every allocation of dch_map_stage_next and dch_map_stage_steps in
 * turn, alone and with every later one: DCH_ENOMEM, nothing leaked, the
 * inputs and the out-parameter unchanged; then the call succeeds with the
 * reference result. Returns the failure points tried.
 */
static long sweep(const dch_map *cur_libc, const dch_map *target, uint32_t k, const char *what)
{
    faulty fa = {0, 0, false, 0};
    const dch_allocator a = faulty_allocator(&fa);
    dch_map *cur = with_allocator(cur_libc, &a);
    dch_map *ref;
    uint32_t ref_steps;
    cr_assert_eq(dch_map_stage_next(&ref, cur, target, k), DCH_OK, "%s", what);
    cr_assert_eq(dch_map_stage_steps(cur, target, k, &ref_steps), DCH_OK);
    size_t lc;
    uint8_t *bc = map_bytes(cur, &lc);
    long tried = 0;
    for (int fn = 0; fn < 2; fn++) {
        fault_sweep sw;
        for (fault_sweep_start(&sw, &fa, SWEEP_BOTH, SWEEP_UNTIL_OK); fault_sweep_next(&sw);) {
            dch_map *sentinel = (dch_map *)&fa, *out = sentinel;
            uint32_t steps = 77;
            const int rc = fn == 0 ? dch_map_stage_next(&out, cur, target, k)
                                   : dch_map_stage_steps(cur, target, k, &steps);
            fault_sweep_done(&sw, rc);
            if (rc == DCH_OK) {
                cr_assert(fn == 0 ? same_map_bytes(out, ref) : steps == ref_steps,
                          "%s: a success with failures armed differs", what);
                if (fn == 0)
                    dch_map_free(out);
                continue;
            }
            cr_assert_eq(rc, DCH_ENOMEM, "%s: fn %d, allocation %ld", what, fn, sw.at);
            cr_assert(out == sentinel && steps == 77, "%s: out changed", what);
            cr_assert_eq(sw.leaked, 0, "%s: fn %d allocation %ld leaked", what, fn, sw.at);
            size_t l;
            uint8_t *b = map_bytes(cur, &l);
            cr_assert(l == lc && memcmp(b, bc, l) == 0, "%s: the map changed", what);
            free(b);
        }
        tried += sw.failed;
    }
    free(bc);
    dch_map_free(ref);
    dch_map_free(cur);
    cr_assert_eq(fa.live, 0, "%s: blocks left", what);
    return tried;
}

Test(map_stage, every_failed_allocation_changes_nothing)
{
    dch_map *old = members_map(64, 16, 5);
    dch_map *join = with_joiner(old, "node5", 2);
    dch_map *swap = map_clone_of(old);
    cr_assert_eq(dch_map_remove_node(swap, 1), DCH_OK);
    add(swap, "other", 1);
    dch_map *idle = with_joiner(old, "idle", 0);
    dch_map *empty = new_map(64, 16, NULL);
    dch_map *step;
    cr_assert_eq(dch_map_stage_next(&step, old, join, 4), DCH_OK);
    long tried = 0;
    tried += sweep(old, join, 4, "first step of a join");
    tried += sweep(step, join, 4, "second step of a join");
    tried += sweep(old, join, 1000, "a join in one step");
    tried += sweep(old, swap, 3, "a leave and a join on one id");
    tried += sweep(old, idle, 3, "no moves");
    tried += sweep(empty, old, 3, "from nobody");
    printf("staging: %ld allocation failure points tried\n", tried);
    cr_assert(tried > 20);
    dch_map_free(step);
    dch_map_free(old);
    dch_map_free(join);
    dch_map_free(swap);
    dch_map_free(idle);
    dch_map_free(empty);
}

Test(map_stage, the_golden_step_map_loads_with_its_record)
{
    dch_map *m = NULL;
    cr_assert_eq(dch_map_load_file(&m, DCH_SOURCE_DIR "/tests/golden/join-step-2.dchmap"),
                 DCH_OK);
    dch_map_transition tr;
    cr_assert(dch_map_in_transition(m, &tr));
    cr_assert(tr.step == 2 && tr.steps == 4, "step %u of %u", tr.step, tr.steps);
    cr_assert(tr.target_fingerprint != dch_map_fingerprint(m));
    dch_map_free(m);
}

/* Zones of a map with one copy a slot survive staging: the last step is the
 * target, zones included. */
Test(map_stage, the_last_step_keeps_the_zones)
{
    dch_map *old = map_shaped(16, 8), *new_map;
    cr_assert_eq(dch_map_add_node_in_zone(old, "a", "rack-1", 1, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node_in_zone(old, "b", "rack-2", 1, NULL), DCH_OK);
    cr_assert_eq(dch_map_clone(&new_map, old), DCH_OK);
    cr_assert_eq(dch_map_add_node_in_zone(new_map, "c", "rack-1", 1, NULL), DCH_OK);
    dch_map *cur = NULL, *next;
    const dch_map *from = old;
    do {
        cr_assert_eq(dch_map_stage_next(&next, from, new_map, 4), DCH_OK);
        dch_map_free(cur);
        cur = next;
        from = cur;
    } while (dch_map_in_transition(cur, NULL));
    for (uint32_t id = 0; id < dch_map_id_limit(new_map); id++) {
        const char *want = dch_map_node_zone(new_map, id), *got = dch_map_node_zone(cur, id);
        cr_assert((want == NULL) == (got == NULL) && (want == NULL || strcmp(want, got) == 0),
                  "id %u: zone %s, expected %s", id, got ? got : "-", want ? want : "-");
    }
    dch_map_free(cur);
    dch_map_free(new_map);
    dch_map_free(old);
}
