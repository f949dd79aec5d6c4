/* SPDX-License-Identifier: MIT */
/*
 * Tests of the explorer's engine (explorer/engine.c and report.c), built
 * natively here so that the sanitizer and valgrind passes check the C the
 * page runs as WebAssembly. The page itself, and its agreement with
 * dch-analysis, is checked in the browser (tests/browser/).
 *
 * Oracles: a refused call leaves the whole reported state byte for byte as it
 * was; undo gives back byte for byte the state before the change it drops
 * (the replay rebuilds the very same maps); every change moves keys only to
 * or from its subject, a DCH join moves exactly the slots the joiner then
 * owns, and a removal moves exactly what the leaver held; a random history
 * is a pure function of its seed. Random sequences print their seed on
 * failure; DCH_TEST_SEED replaces it and DCH_TEST_SCALE scales their length.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include "explorer.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SEED UINT64_C(0x6578706c6f726572)

/* ---- Harness ---------------------------------------------------------------- */

/* The full state as a string the caller owns. */
static char *snapshot(void)
{
    const char *s = ex_state(1);
    cr_assert_not_null(s, "ex_state failed: %s", ex_message());
    return xstrdup(s);
}

/* Name numbers of the present members, in id order of the DCH map. */
static uint32_t members(uint32_t *who)
{
    uint32_t n = 0;
    for (uint32_t id = 0; id < an_scheme_id_limit(&ex.sc[0]); id++) {
        const char *name = an_scheme_name(&ex.sc[0], id);
        if (name != NULL)
            who[n++] = ex_number_of(name);
    }
    return n;
}

/* One random change (join, removal or weight 0 .. 4); returns its code. */
static int random_change(uint64_t *rng, ex_op *op)
{
    uint32_t who[EX_MAX_NAMES];
    uint32_t n = members(who), r = dch__rng_below(rng, 4);
    if (n < 2 || r < 2) {
        op->kind = EX_ADD;
        op->weight = dch__rng_below(rng, 3);
        return ex_add(op->weight);
    }
    op->who = who[dch__rng_below(rng, n)];
    if (r == 2) {
        op->kind = EX_REMOVE;
        return ex_remove(op->who);
    }
    op->kind = EX_WEIGHT;
    op->weight = dch__rng_below(rng, 5);
    return ex_set_weight(op->who, op->weight);
}

/* ---- Refusals --------------------------------------------------------------- */

Test(explorer, refused_calls_leave_the_state_as_it_was)
{
    cr_assert_eq(ex_reset(8, 8, 160, 1), DCH_OK);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(ex_add(1), DCH_OK);
    char *before = snapshot();
#define REFUSED(call, want)                                                   \
    do {                                                                      \
        int rc_ = (call);                                                     \
        cr_expect_eq(rc_, (want), "%s: %d, wanted %d", #call, rc_, (want));   \
        cr_expect_neq(ex_message()[0], '\0', "%s: no message", #call);        \
    } while (0)
    REFUSED(ex_add(EX_MAX_WEIGHT + 1), DCH_EINVAL);
    REFUSED(ex_set_weight(0, EX_MAX_WEIGHT + 1), DCH_EINVAL);
    REFUSED(ex_remove(50), DCH_ENOENT);
    REFUSED(ex_set_weight(50, 1), DCH_ENOENT);
    REFUSED(ex_set_views(0), DCH_EINVAL);
    REFUSED(ex_set_views(EX_MAX_VIEWS + 1), DCH_EINVAL);
    REFUSED(ex_reset(3, 8, 160, 1), DCH_EINVAL);
    REFUSED(ex_reset(8, 8, 0, 1), DCH_EINVAL);
    REFUSED(ex_reset(4096, 1024, 160, 1), DCH_EINVAL);
#undef REFUSED
    char *after = snapshot();
    cr_assert_str_eq(after, before);
    free(before);
    free(after);
    ex_free();
}

Test(explorer, a_full_cluster_refuses_one_more_member)
{
    cr_assert_eq(ex_reset(1, 1, 1, 1), DCH_OK);
    for (uint32_t i = 0; i < EX_MAX_MEMBERS; i++)
        cr_assert_eq(ex_add(0), DCH_OK, "join %u: %s", i, ex_message());
    char *before = snapshot();
    cr_assert_eq(ex_add(1), DCH_EFULL);
    char *after = snapshot();
    cr_assert_str_eq(after, before);
    free(before);
    free(after);
    ex_free();
}

Test(explorer, undo_of_an_empty_history_is_refused)
{
    cr_assert_eq(ex_reset(8, 8, 160, 1), DCH_OK);
    cr_assert_eq(ex_undo(), DCH_ENOENT);
    ex_free();
}

/* ---- Undo ------------------------------------------------------------------- */

Test(explorer, undo_gives_back_the_state_before_the_change)
{
    uint64_t seed = test_seed(DEFAULT_SEED), rng = seed;
    cr_assert_eq(ex_reset(16, 8, 20, 1), DCH_OK);
    unsigned steps = test_scaled(60, 8);
    for (unsigned k = 0; k < steps; k++) {
        char *before = snapshot();
        ex_op op = {EX_ADD, 0, 0, 0};
        uint64_t again = rng;
        if (random_change(&rng, &op) != DCH_OK) {
            free(before);
            continue;
        }
        cr_assert_eq(ex_undo(), DCH_OK, "seed %#llx step %u",
                     (unsigned long long)seed, k);
        char *after = snapshot();
        cr_assert_str_eq(after, before, "seed %#llx step %u: undo differs",
                         (unsigned long long)seed, k);
        /* Redo the same change to go on. */
        cr_assert_eq(random_change(&again, &op), DCH_OK);
        free(before);
        free(after);
    }
    ex_free();
}

/* ---- What moves ------------------------------------------------------------- */

Test(explorer, every_change_moves_keys_only_to_or_from_its_subject)
{
    uint64_t seed = test_seed(DEFAULT_SEED) ^ 1, rng = seed;
    cr_assert_eq(ex_reset(32, 16, 40, 1), DCH_OK);
    unsigned steps = test_scaled(120, 12), checked = 0;
    for (unsigned k = 0; k < steps; k++) {
        ex_op op = {EX_ADD, 0, 0, 0};
        if (random_change(&rng, &op) != DCH_OK)
            continue;
        const ex_op *done = &ex.ops[ex.nops - 1];
        for (int s = 0; s < EX_SCHEMES; s++) {
            const ex_change *c = &ex.last[s];
            cr_assert(c->valid);
            cr_assert_eq(c->mv.moved_other, 0.0,
                         "seed %#llx step %u scheme %d: %g moved between others",
                         (unsigned long long)seed, k, s, c->mv.moved_other);
            if (done->kind == EX_REMOVE)
                cr_assert_eq(c->mv.moved, c->optimum,
                             "seed %#llx step %u scheme %d: a removal moved %g, "
                             "the leaver held %g",
                             (unsigned long long)seed, k, s, c->mv.moved,
                             c->optimum);
        }
        if (done->kind == EX_ADD) {
            char name[16];
            uint32_t id;
            ex_name_of(name, sizeof name, done->who);
            cr_assert_eq(dch_map_find_node(ex.sc[0].map, name, &id), DCH_OK);
            double owned = (double)dch_map_node_slots(ex.sc[0].map, id) /
                           dch_map_slot_count(ex.sc[0].map);
            cr_assert_eq(ex.last[0].mv.moved, owned,
                         "seed %#llx step %u: a DCH join moved %g, the joiner "
                         "owns %g", (unsigned long long)seed, k,
                         ex.last[0].mv.moved, owned);
        }
        checked++;
    }
    cr_assert_gt(checked, steps / 2, "seed %#llx: too few changes were applied",
                 (unsigned long long)seed);
    ex_free();
}

Test(explorer, a_dch_join_takes_from_every_member)
{
    cr_assert_eq(ex_reset(64, 64, 160, 1), DCH_OK);
    for (uint32_t n = 1; n <= 8; n++) {
        cr_assert_eq(ex_add(1), DCH_OK);
        const ex_change *c = &ex.last[0];
        uint32_t p = dch_map_slot_count(ex.sc[0].map);
        cr_assert_leq(c->mv.moved - 1.0 / n, 2.0 / p, "join %u: %g", n, c->mv.moved);
        cr_assert_leq(1.0 / n - c->mv.moved, 2.0 / p, "join %u: %g", n, c->mv.moved);
        cr_assert_eq(c->parties, n - 1, "join %u: %u donors", n, c->parties);
        cr_assert_eq(c->eligible, n - 1);
    }
    ex_free();
}

/* ---- Random histories and the report ---------------------------------------- */

Test(explorer, a_random_history_is_a_pure_function_of_its_seed)
{
    cr_assert_eq(ex_reset(8, 8, 160, 1), DCH_OK);
    cr_assert_eq(ex_random_history(7, 20), DCH_OK, "%s", ex_message());
    cr_assert_eq(ex.nops, 20);
    char *first = snapshot();
    cr_assert_eq(ex_random_history(7, 20), DCH_OK);
    char *second = snapshot();
    cr_assert_str_eq(second, first);
    cr_assert_eq(ex_random_history(8, 20), DCH_OK);
    char *other = snapshot();
    cr_assert_str_neq(other, first);
    free(first);
    free(second);
    free(other);
    ex_free();
}

Test(explorer, the_report_is_balanced_json_with_every_member)
{
    cr_assert_eq(ex_reset(8, 8, 160, 1), DCH_OK);
    cr_assert_eq(ex_random_history(3, 20), DCH_OK);
    for (int full = 0; full < 2; full++) {
        const char *s = ex_state(full);
        cr_assert_not_null(s);
        int depth = 0;
        for (const char *p = s; *p; p++) {
            if (*p == '"') { /* names and keys hold no quote or brace */
                p = strchr(p + 1, '"');
                cr_assert_not_null(p);
                continue;
            }
            depth += (*p == '{' || *p == '[') - (*p == '}' || *p == ']');
            cr_assert_geq(depth, 0);
            cr_assert(depth > 0 || p[1] == '\0', "text after the object");
        }
        cr_assert_eq(depth, 0);
        cr_assert_eq(strncmp(s, full ? "{\"full\":true" : "{\"full\":false", 12 + (size_t)!full), 0);
        uint32_t who[EX_MAX_NAMES];
        uint32_t n = members(who);
        for (uint32_t i = 0; i < n; i++) {
            char name[32];
            snprintf(name, sizeof name, "\"name\":\"node-%02u\"", (unsigned)(who[i] + 1));
            cr_assert_not_null(strstr(s, name), "%s missing", name);
        }
        cr_assert_eq(strstr(s, "nan") == NULL && strstr(s, "inf") == NULL, 1);
    }
    ex_free();
}

/* ---- Drains ------------------------------------------------------------------- */

/* The shares of every member in the state's "members" list, per scheme, as
 * ranges by name number (an exact comparison of two states' ownership). */
static void ranges_now(an_ranges out[EX_SCHEMES])
{
    for (int s = 0; s < EX_SCHEMES; s++)
        cr_assert_eq(ex_ranges_by_number(&ex.sc[s], &out[s]), DCH_OK);
}

static bool same_ranges(const an_ranges *a, const an_ranges *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].lo != b->v[i].lo || a->v[i].hi != b->v[i].hi ||
            a->v[i].owner != b->v[i].owner)
            return false;
    return true;
}

/*
 * A drain and its undrain: DCH's drain moves exactly what the member held,
 * as its removal does (its base arcs, all served by others, listed under
 * "drains"), and its undrain gives every scheme back exactly the ownership
 * it had, the rings by the member's join again. While drained, the member's
 * removal and weight are refused and the state stays as it was; a second
 * drain is refused, as is an undrain of a member that is not drained.
 */
Test(explorer, a_drain_and_its_undrain_give_back_exactly_what_was_held)
{
    const uint64_t seed = test_seed(DEFAULT_SEED);
    uint64_t rng = seed;
    cr_assert_eq(ex_reset(16, 16, 40, 3), DCH_OK);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(ex_add(1 + dch__rng_below(&rng, 3)), DCH_OK);
    const uint32_t who = dch__rng_below(&rng, 6);
    an_ranges before[EX_SCHEMES], after[EX_SCHEMES];
    ranges_now(before);
    char name[16];
    ex_name_of(name, sizeof name, who);
    const double share = an_share_of(&before[0], who);

    cr_assert_eq(ex_drain(who), DCH_OK, "%s", ex_message());
    cr_assert_float_eq(ex.last[0].mv.moved, share, 1e-12, "seed %llu", (unsigned long long)seed);
    cr_assert_eq(ex.last[0].mv.moved_other, 0.0);
    cr_assert_float_eq(ex.last[0].optimum, share, 1e-12);
    char *drained = snapshot();
    char want[64];
    snprintf(want, sizeof want, "\"drains\":[{\"name\":\"%s\",\"base\":", name);
    cr_assert_not_null(strstr(drained, want), "%s", drained);
    snprintf(want, sizeof want, "\"name\":\"%s\",\"weight\"", name);
    const char *row = strstr(drained, want);
    cr_assert(row != NULL && strstr(row, "\"drained\":true") != NULL);
    cr_assert_eq(ex_drain(who), DCH_EINVAL);
    cr_assert_eq(ex_remove(who), DCH_EINVAL);
    cr_assert_eq(ex_set_weight(who, 2), DCH_EINVAL);
    cr_assert_eq(ex_undrain((who + 1) % 6), DCH_EINVAL);
    char *still = snapshot();
    cr_assert_str_eq(still, drained, "a refused call changed the state");

    cr_assert_eq(ex_undrain(who), DCH_OK, "%s", ex_message());
    ranges_now(after);
    for (int s = 0; s < EX_SCHEMES; s++) {
        cr_assert(same_ranges(&before[s], &after[s]), "scheme %d did not come back, seed %llu",
                  s, (unsigned long long)seed);
        cr_assert_eq(ex.last[s].mv.moved_other, 0.0, "scheme %d", s);
        an_ranges_free(&before[s]);
        an_ranges_free(&after[s]);
    }
    cr_assert_float_eq(ex.last[0].mv.moved, share, 1e-12);
    char *back = snapshot();
    cr_assert_not_null(strstr(back, "\"drains\":[]"), "%s", back);
    cr_assert_eq(ex_undo(), DCH_OK);
    char *undone = snapshot();
    cr_assert_str_eq(undone, drained, "undo of the undrain");
    free(drained);
    free(still);
    free(back);
    free(undone);
    ex_free();
}

/* The hot spot and balancing (explorer.h, ex_hot, ex_balance): refused
 * calls leave the state; a balance leaves every node within its bound
 * (one copy a slot: balance.h, promise 1), a second one moves nothing,
 * clearing and taking the hot spot off give back the count-balanced state
 * byte for byte, and a change of the cluster drops the load moves. */
Test(explorer, the_hot_spot_balances_and_clears_back_exactly)
{
    cr_assert_eq(ex_reset(8, 8, 160, 3), DCH_OK);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(ex_add(1 + (uint32_t)i % 2), DCH_OK);
    char *plain = snapshot();
    cr_assert_eq(ex_balance(), DCH_EINVAL, "no hot spot: nothing to balance by");
    cr_assert_eq(ex_hot(1, EX_MAX_ZIPF + 1), DCH_EINVAL);
    char *same = snapshot();
    cr_assert_str_eq(same, plain, "refused calls change nothing");
    free(same);
    const uint32_t zipfs[] = {0, 8, 10};
    for (size_t k = 0; k < 3; k++) {
        cr_assert_eq(ex_hot(1, zipfs[k]), DCH_OK);
        cr_assert_eq(ex_balance(), DCH_OK, "%s", ex_message());
        dch_map *m = ex.sc[0].map;
        cr_assert_not_null(m);
        dch_balance_report r;
        cr_assert_eq(dch_map_balance_load(m, ex.hot.load, ex.hot.nslots, NULL, &r),
                     DCH_OK);
        cr_assert_eq(r.moves + r.promotions, 0, "s = %u: a second balance moves nothing",
                     zipfs[k]);
        cr_assert_eq(r.above_after, 0, "s = %u: every node within its bound", zipfs[k]);
        cr_assert_eq(ex_balance_clear(), DCH_OK);
        cr_assert_eq(dch_map_balance_moves(m), 0);
    }
    cr_assert_eq(ex_balance(), DCH_OK);
    cr_assert_eq(ex_add(1), DCH_OK);
    cr_assert_eq(dch_map_balance_moves(ex.sc[0].map), 0,
                 "a change of the cluster drops the load moves");
    cr_assert_eq(ex_undo(), DCH_OK);
    cr_assert_eq(ex_hot(0, 0), DCH_OK);
    char *back = snapshot();
    cr_assert_str_eq(back, plain, "undo and the hot spot off give back the plain state");
    free(back);
    free(plain);
    ex_free();
}
