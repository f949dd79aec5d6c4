/* SPDX-License-Identifier: MIT */
/*
 * Drains (dch/map.h, "Drains"): the API's contracts and promises 1-7 over
 * seeded random histories that mix drains, undrains, joins, removals and
 * weight changes (R 1 to 4, with and without zones, equal and unequal
 * weights). The oracle is a second map that gets the same joins, removals
 * and weights and never a drain (the base must be its table, promise 1),
 * and the effective table is checked against a clone of that map with the
 * FULL drains applied by dch_map_remove_node in the order drained, then
 * the PRIMARY drains as promotions. Every failure message names the seed;
 * rerun one history with DCH_TEST_SEED.
 */
#include <criterion/criterion.h>

#include "dch/dch.h"
#include "drains.h"
#include "replica_maps.h"
#include "mapfile_oracle.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXR DCH_MAP_MAX_REPLICAS
#define NONE DCH_NODE_NONE

static uint32_t replicas_of(const dch_map *m)
{
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    return cfg.replicas;
}

static uint32_t *table_of(const dch_map *m, int base)
{
    return drain_table(m, base != 0);
}

#define same_table drain_same_table
#define in_row drain_row_has
#define copies_moved drain_copies_moved
#define list drain_list
#define list_find drain_list_find
#define list_drop drain_list_drop

static bool same_set(const uint32_t *a, const uint32_t *b)
{
    for (uint32_t k = 0; k < MAXR; k++)
        if ((a[k] != NONE && !in_row(b, a[k])) || (b[k] != NONE && !in_row(a, b[k])))
            return false;
    return true;
}

static bool removes(const dch_map *m, uint32_t mode)
{
    return mode == DCH_DRAIN_FULL || replicas_of(m) == 1;
}

/* ---- Random histories --------------------------------------------------- */

/* One history's state: m gets every call, b the same calls but drains. */
typedef struct hist {
    dch_map *m, *b;
    list l;
    uint64_t rng, seed;
    uint32_t R, zones;
    bool unequal;
    uint32_t *before_last; /* the effective table before the last drain */
    bool fresh; /* no call since the last drain */
    uint64_t worst_extra, calls_measured;
    uint64_t worst_steady; /* the same where no copy count changed */
    double worst_steady_share; /* worst_steady over the copies the call
                                  moved without drains */
    uint64_t undrain_moved_worst; /* promise 4: copies moved by an undrain
                                     that is not of the last drained */
} hist;

static uint32_t draw_weight(hist *h)
{
    return h->unequal ? 1 + rng_below(&h->rng, 6) : 1;
}

/* A base call on both maps; both must answer alike. Returns its rc. */
static int base_call(hist *h, uint32_t kind, uint32_t x, uint32_t w, const char *name,
                     const char *zone)
{
    int a, b;
    if (kind == 0) {
        a = dch_map_add_node_in_zone(h->m, name, zone, w, NULL);
        b = dch_map_add_node_in_zone(h->b, name, zone, w, NULL);
    } else if (kind == 1) {
        a = dch_map_remove_node(h->m, x);
        b = dch_map_remove_node(h->b, x);
    } else {
        a = dch_map_set_weight(h->m, x, w);
        b = dch_map_set_weight(h->b, x, w);
    }
    cr_assert_eq(a, b, "seed %llu: the call answers %d with drains, %d without",
                 (unsigned long long)h->seed, a, b);
    return a;
}

static void do_drain(hist *h, uint32_t x)
{
    const uint32_t mode = rng_below(&h->rng, 2) ? DCH_DRAIN_FULL : DCH_DRAIN_PRIMARY;
    const uint32_t P = dch_map_slot_count(h->m);
    const uint64_t epoch = dch_map_epoch(h->m);
    uint32_t *before = table_of(h->m, 0);
    const bool same = list_find(&h->l, x) < h->l.n && h->l.modes[list_find(&h->l, x)] == mode;
    const bool alone = h->l.n == 0, was = list_find(&h->l, x) < h->l.n;
    cr_assert_eq(dch_map_drain(h->m, x, mode), DCH_OK);
    uint32_t *after = table_of(h->m, 0);
    if (same) {
        cr_assert_eq(dch_map_epoch(h->m), epoch, "seed %llu: a repeated drain changed the epoch",
                     (unsigned long long)h->seed);
        cr_assert(same_table(before, after, P));
        free(before);
    } else {
        cr_assert_eq(dch_map_epoch(h->m), epoch + 1);
        list_drop(&h->l, x);
        h->l.ids[h->l.n] = x;
        h->l.modes[h->l.n++] = mode;
        free(h->before_last);
        h->before_last = before;
        /* A change of mode is no fresh drain: x was in the list before. */
        h->fresh = !was;
    }
    if (!same && alone && removes(h->m, mode)) { /* promise 2, as map.h states it */
        dch_map *c = map_clone_of(h->b);
        cr_assert_eq(dch_map_remove_node(c, x), DCH_OK);
        uint32_t *want = table_of(c, 0);
        cr_assert(same_table(want, after, P), "seed %llu: FULL drain is not the removal",
                  (unsigned long long)h->seed);
        free(want);
        dch_map_free(c);
    }
    if (!was && !removes(h->m, mode)) /* promise 3: only the order changes */
        for (uint32_t s = 0; s < P; s++)
            cr_assert(same_set(h->before_last + (size_t)s * MAXR, after + (size_t)s * MAXR),
                      "seed %llu: a PRIMARY drain moved a copy", (unsigned long long)h->seed);
    free(after);
}

static void do_undrain(hist *h, uint32_t x)
{
    const uint32_t P = dch_map_slot_count(h->m);
    const uint64_t epoch = dch_map_epoch(h->m);
    const uint32_t i = list_find(&h->l, x);
    const bool last = i + 1 == h->l.n && h->fresh;
    uint32_t *before = table_of(h->m, 0);
    cr_assert_eq(dch_map_undrain(h->m, x), DCH_OK);
    uint32_t *after = table_of(h->m, 0);
    cr_assert_eq(dch_map_epoch(h->m), epoch + (i < h->l.n), "seed %llu: undrain's epoch",
                 (unsigned long long)h->seed);
    if (last) /* promise 4: exact return */
        cr_assert(same_table(h->before_last, after, P),
                  "seed %llu: undrain of the last drain is not an exact return",
                  (unsigned long long)h->seed);
    if (i < h->l.n && i + 1 < h->l.n) {
        /* Promise 4, measured: what moves beyond x's own copies coming back. */
        uint64_t moved = copies_moved(before, after, P), own = 0;
        for (uint32_t s = 0; s < P; s++)
            own += in_row(after + (size_t)s * MAXR, x) && !in_row(before + (size_t)s * MAXR, x);
        if (moved - own > h->undrain_moved_worst)
            h->undrain_moved_worst = moved - own;
    }
    list_drop(&h->l, x);
    h->fresh = false;
    free(before);
    free(after);
}

/* One base call, with promise 5 and promise 6's measure. */
static void do_call(hist *h, uint32_t r)
{
    const uint32_t P = dch_map_slot_count(h->m);
    uint32_t *e0 = table_of(h->m, 0), *b0 = table_of(h->b, 0);
    const size_t ne0 = dch_map_slot_replicas(h->m, 0, NULL, 0),
                 nb0 = dch_map_slot_replicas(h->b, 0, NULL, 0);
    char name[16], zone[8];
    uint32_t kind, x = NONE;
    if (dch_map_node_count(h->m) == 0 || r < 55) {
        kind = 0;
        snprintf(name, sizeof name, "n%u", rng_below(&h->rng, 24));
        snprintf(zone, sizeof zone, "z%u", rng_below(&h->rng, h->zones ? h->zones : 1));
    } else {
        kind = r < 75 ? 1 : 2;
        x = map_random_member(h->m, &h->rng);
    }
    /* Promise 6 is about calls on members that are not drained. */
    const bool on_drained = x != NONE && list_find(&h->l, x) < h->l.n;
    const bool sole_full = h->fresh && h->l.n == 1 && h->l.ids[0] == x &&
                           removes(h->m, h->l.modes[0]) && kind == 1;
    const uint32_t w = kind == 1 ? 0 : draw_weight(h);
    const uint32_t old_w = x != NONE ? dch_map_node_weight(h->m, x) : 0;
    const int rc = base_call(h, kind, x, w, name, h->zones ? zone : NULL);
    uint32_t *e1 = table_of(h->m, 0), *b1 = table_of(h->b, 0);
    if (rc == DCH_OK) {
        /* Removing a drained member or changing its weight ends its drain;
         * setting the weight it has changes nothing. */
        if (kind != 2 || w != old_w) {
            if (kind != 0)
                list_drop(&h->l, x);
            h->fresh = false;
        }
        if (sole_full)
            cr_assert(same_table(e0, e1, P), "seed %llu: removing the FULL-drained member "
                      "moved copies", (unsigned long long)h->seed);
        if (h->l.n > 0 && !on_drained) {
            const uint64_t with = copies_moved(e0, e1, P), without = copies_moved(b0, b1, P);
            const uint64_t extra = with > without ? with - without : 0;
            h->worst_extra = extra > h->worst_extra ? extra : h->worst_extra;
            /* Steady: no slot's copy count changed, in the base or the
             * effective table (a change there moves a copy of every slot). */
            if (ne0 == dch_map_slot_replicas(h->m, 0, NULL, 0) &&
                nb0 == dch_map_slot_replicas(h->b, 0, NULL, 0)) {
                h->worst_steady = extra > h->worst_steady ? extra : h->worst_steady;
                if (without > 0 && (double)extra / (double)without > h->worst_steady_share)
                    h->worst_steady_share = (double)extra / (double)without;
            }
            h->calls_measured++;
        }
    }
    free(e0);
    free(b0);
    free(e1);
    free(b1);
}

/* Promise 7 on the map as it is: clones keep everything; the fingerprint
 * covers the list. */
static void check_kept(hist *h)
{
    dch_map *c = map_clone_of(h->m);
    const uint32_t P = dch_map_slot_count(h->m);
    uint32_t *a = table_of(h->m, 0), *b = table_of(c, 0);
    cr_assert(same_table(a, b, P), "seed %llu: a clone's effective table differs",
              (unsigned long long)h->seed);
    cr_assert_eq(dch_map_fingerprint(c), dch_map_fingerprint(h->m));
    cr_assert_eq(dch_map_epoch(c), dch_map_epoch(h->m));
    const char *bad = drain_check(c, h->b, &h->l);
    cr_assert_null(bad, "seed %llu: the clone: %s", (unsigned long long)h->seed, bad);
    size_t len;
    uint8_t *bytes = map_bytes(h->m, &len);
    cr_assert_eq(le_read(bytes + 8, 4) == DCH_MAP_FORMAT_VERSION_DRAINS, h->l.n > 0,
                 "seed %llu: version 4 exactly when a drain is in force",
                 (unsigned long long)h->seed);
    dch_map *back;
    cr_assert_eq(dch_map_load(&back, bytes, len), DCH_OK, "seed %llu: a saved map does not load",
                 (unsigned long long)h->seed);
    uint32_t *d = table_of(back, 0);
    cr_assert(same_table(a, d, P), "seed %llu: a loaded map's effective table differs",
              (unsigned long long)h->seed);
    cr_assert_eq(dch_map_fingerprint(back), dch_map_fingerprint(h->m));
    cr_assert(same_map_bytes(back, h->m));
    bad = drain_check(back, h->b, &h->l);
    cr_assert_null(bad, "seed %llu: the loaded map: %s", (unsigned long long)h->seed, bad);
    free(d);
    free(bytes);
    dch_map_free(back);
    free(a);
    free(b);
    dch_map_free(c);
}

/* After every call: the base is b's table (promise 1 and 6), the effective
 * table is the oracle's, the readers agree with it. */
static void check_all(hist *h, unsigned step)
{
    const char *bad = drain_check(h->m, h->b, &h->l);
    cr_assert_null(bad, "seed %llu step %u: %s", (unsigned long long)h->seed, step, bad);
    if (step % 8 == 0)
        check_kept(h);
}

static void run_history(hist *h, unsigned steps)
{
    for (unsigned step = 0; step < steps; step++) {
        const uint32_t r = rng_below(&h->rng, 100);
        if (dch_map_node_count(h->m) < 2 || r >= 45)
            do_call(h, r < 45 ? 0 : r);
        else if (r < 25)
            do_drain(h, map_random_member(h->m, &h->rng));
        else
            do_undrain(h, h->l.n > 0 && r < 40 ? h->l.ids[rng_below(&h->rng, h->l.n)]
                                                  : map_random_member(h->m, &h->rng));
        check_all(h, step);
    }
}

Test(map_drain, promises_over_random_histories)
{
    replica_case c = {test_seed(2026), test_scaled(12, 2), 0, 0, 0, 0, false};
    uint64_t worst_extra = 0, worst_undrain = 0, measured = 0, worst_steady = 0;
    double worst_share = 0;
    while (replica_case_next(&c)) {
        hist h;
        memset(&h, 0, sizeof h);
        h.seed = c.seed;
        h.rng = c.seed;
        h.R = c.R;
        h.zones = c.zones;
        h.unequal = c.i % 2 == 1;
        h.m = replica_map(16, 16, c.R);
        h.b = replica_map(16, 16, c.R);
        for (int i = 0; i < 6; i++)
            do_call(&h, 0);
        run_history(&h, test_scaled(120, 24));
        worst_extra = h.worst_extra > worst_extra ? h.worst_extra : worst_extra;
        worst_undrain = h.undrain_moved_worst > worst_undrain ? h.undrain_moved_worst
                                                              : worst_undrain;
        measured += h.calls_measured;
        worst_steady = h.worst_steady > worst_steady ? h.worst_steady : worst_steady;
        worst_share = h.worst_steady_share > worst_share ? h.worst_steady_share : worst_share;
        free(h.before_last);
        dch_map_free(h.m);
        dch_map_free(h.b);
    }
    cr_log_info("promise 6: worst extra copies moved by a call with drains in force: %llu "
                "(of 256 slots, %llu calls); where no copy count changed: %llu, %.2f times "
                "what the call moved without drains; promise 4: worst moved by an undrain "
                "beyond the member's own copies: %llu",
                (unsigned long long)worst_extra, (unsigned long long)measured,
                (unsigned long long)worst_steady, worst_share,
                (unsigned long long)worst_undrain);
}

/* ---- The API's contracts ------------------------------------------------ */

Test(map_drain, errors_change_nothing)
{
    dch_map *m = replica_map(8, 8, 3);
    map_add_members(m, "n", 5, NULL, 0);
    cr_assert_eq(dch_map_drain(NULL, 0, DCH_DRAIN_FULL), DCH_EINVAL);
    cr_assert_eq(dch_map_undrain(NULL, 0), DCH_EINVAL);
    cr_assert_eq(dch_map_node_drained(NULL, 0), 0);
    cr_assert_eq(dch_map_drains(NULL, NULL, NULL, 0), 0);
    cr_assert_eq(dch_map_base_owner(NULL, 0), DCH_NODE_NONE);
    cr_assert_eq(dch_map_base_replicas(NULL, 0, NULL, 0), 0);
    cr_assert_eq(dch_map_base_owner(m, 64), DCH_NODE_NONE, "slot out of range");
    uint32_t ids[4];
    cr_assert_eq(dch_map_base_replicas(m, 0, NULL, 2), 0, "NULL ids with a cap");
    cr_assert_eq(dch_map_base_replicas(m, 0, ids, 0), 3, "cap 0 sizes");
    cr_assert_eq(dch_map_drain(m, 1, DCH_DRAIN_PRIMARY), DCH_OK);
    map_snap s;
    map_snap_take(&s, m);
    cr_assert_eq(dch_map_drain(m, 2, 0), DCH_EINVAL);
    cr_assert_eq(dch_map_drain(m, 2, 3), DCH_EINVAL);
    cr_assert_eq(dch_map_drain(m, 9, DCH_DRAIN_FULL), DCH_ENOENT);
    cr_assert_eq(dch_map_undrain(m, 9), DCH_ENOENT);
    cr_assert_eq(dch_map_undrain(m, 2), DCH_OK, "undrain of a member not drained");
    cr_assert_eq(dch_map_drain(m, 1, DCH_DRAIN_PRIMARY), DCH_OK, "the same drain again");
    cr_assert_eq(dch_map_set_weight(m, 1, 1), DCH_OK, "the weight it has");
    cr_assert_eq(dch_map_add_node(m, "n0", 1, NULL), DCH_EEXIST);
    const char *d = map_snap_differs(&s, m, true);
    cr_assert_null(d, "%s", d);
    map_snap_free(&s);
    cr_assert_eq(dch_map_node_drained(m, 1), DCH_DRAIN_PRIMARY);
    cr_assert_eq(dch_map_node_drained(m, 9), 0);
    uint32_t got[2] = {7, 7}, modes[2] = {7, 7};
    cr_assert_eq(dch_map_drains(m, got, NULL, 2), 1);
    cr_assert_eq(got[0], 1);
    cr_assert_eq(dch_map_drains(m, NULL, modes, 2), 1);
    cr_assert_eq(modes[0], DCH_DRAIN_PRIMARY);
    cr_assert_eq(modes[1], 7, "nothing past the count");
    /* A change of mode: the old drain ends, the new one is last. */
    cr_assert_eq(dch_map_drain(m, 3, DCH_DRAIN_FULL), DCH_OK);
    cr_assert_eq(dch_map_drain(m, 1, DCH_DRAIN_FULL), DCH_OK);
    cr_assert_eq(dch_map_drains(m, got, modes, 2), 2);
    cr_assert(got[0] == 3 && got[1] == 1 && modes[1] == DCH_DRAIN_FULL);
    /* Removing a drained member, or changing its weight, ends its drain. */
    cr_assert_eq(dch_map_set_weight(m, 3, 2), DCH_OK);
    cr_assert_eq(dch_map_node_drained(m, 3), 0);
    cr_assert_eq(dch_map_remove_node(m, 1), DCH_OK);
    cr_assert_eq(dch_map_drains(m, NULL, NULL, 0), 0);
    for (uint32_t s2 = 0; s2 < 64; s2++)
        cr_assert_eq(dch_map_slot_owner(m, s2), dch_map_base_owner(m, s2));
    dch_map_free(m);
}

Test(map_drain, one_copy_primary_acts_as_full_and_all_drained_is_unowned)
{
    dch_map *m = replica_map(8, 8, 1);
    uint32_t a, b;
    cr_assert_eq(dch_map_add_node(m, "a", 1, &a), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "b", 1, &b), DCH_OK);
    cr_assert_eq(dch_map_drain(m, a, DCH_DRAIN_PRIMARY), DCH_OK);
    cr_assert_eq(dch_map_node_drained(m, a), DCH_DRAIN_PRIMARY, "the mode as asked");
    cr_assert_eq(dch_map_node_slots(m, a), 0);
    cr_assert_eq(dch_map_node_slots(m, b), 64);
    cr_assert_eq(dch_map_drain(m, b, DCH_DRAIN_FULL), DCH_OK);
    cr_assert_eq(dch_map_lookup_hash(m, 12345), DCH_NODE_NONE, "every member drained");
    cr_assert_eq(dch_map_slot_owner(m, 0), DCH_NODE_NONE);
    cr_assert_eq(dch_map_base_owner(m, 0) == a || dch_map_base_owner(m, 0) == b, true);
    size_t n;
    cr_assert_eq(dch_map_ranges(m, NULL, 0, &n), DCH_EFULL);
    cr_assert_eq(n, 1);
    cr_assert_eq(dch_map_undrain(m, a), DCH_OK);
    cr_assert_eq(dch_map_node_slots(m, a), 64);
    cr_assert_eq(dch_map_lookup_hash(m, 12345), a);
    dch_map_free(m);
}

Test(map_drain, failed_allocations_change_nothing)
{
    faulty_map f;
    dch_map *m = faulty_map_new(&f, 16, 16, 3);
    map_add_members(m, "n", 9, NULL, 0);
    cr_assert_eq(dch_map_drain(m, 2, DCH_DRAIN_PRIMARY), DCH_OK);
    for (int call = 0; call < 6; call++) {
        map_snap s;
        map_snap_take(&s, m);
        fault_sweep sw;
        for (fault_sweep_start(&sw, &f.fa, SWEEP_BOTH, SWEEP_UNTIL_OK); fault_sweep_next(&sw);) {
            int rc;
            switch (call) {
            case 0: rc = dch_map_drain(m, 4, DCH_DRAIN_FULL); break;
            case 1: rc = dch_map_add_node(m, "new", 2, NULL); break;
            case 2: rc = dch_map_set_weight(m, 5, 3); break;
            case 3: rc = dch_map_remove_node(m, 4); break;
            case 4: rc = dch_map_undrain(m, 2); break;
            default: {
                dch_map *c = NULL;
                rc = dch_map_clone(&c, m);
                dch_map_free(c);
            }
            }
            fault_sweep_done(&sw, rc);
            if (rc == DCH_OK)
                break;
            const char *d = faulty_call_changed(&sw, rc, &s, m);
            cr_assert_null(d, "call %d, allocation %ld: %s", call, sw.at, d);
        }
        cr_assert_gt(sw.failed, 0, "call %d allocates", call);
        map_snap_free(&s);
    }
    dch_map_free(m);
    cr_assert_eq(f.fa.live, 0);
}

/* ---- Promise 3's bound -------------------------------------------------- */

/* The most any member gains when x is PRIMARY-drained alone, against the
 * bound 1.25 * mean + 2, mean = k / c over the c members that share one of
 * x's k slots; returns max - (1.25 * mean + 2) and sets *ratio to max/mean. */
static double primary_gain_excess(const dch_map *m, uint32_t x, double *ratio)
{
    dch_map *c = map_clone_of(m);
    cr_assert_eq(dch_map_drain(c, x, DCH_DRAIN_PRIMARY), DCH_OK);
    const uint32_t P = dch_map_slot_count(m), limit = dch_map_id_limit(m);
    uint32_t *gain = xcalloc(limit, sizeof *gain), *shares = xcalloc(limit, sizeof *shares);
    uint32_t k = 0, sharers = 0, most = 0;
    for (uint32_t s = 0; s < P; s++) {
        if (dch_map_slot_owner(m, s) != x)
            continue;
        k++;
        uint32_t row[MAXR];
        const size_t n = dch_map_slot_replicas(m, s, row, MAXR);
        for (size_t j = 1; j < n; j++)
            sharers += shares[row[j]]++ == 0;
        const uint32_t y = dch_map_slot_owner(c, s);
        cr_assert_neq(y, x, "x stayed primary of slot %u", s);
        gain[y]++;
        most = gain[y] > most ? gain[y] : most;
    }
    dch_map_free(c);
    free(gain);
    free(shares);
    const double mean = sharers ? (double)k / sharers : 0;
    *ratio = mean > 0 ? most / mean : 0;
    return most - (1.25 * mean + 2);
}

Test(map_drain, primary_drains_spread_evenly)
{
    uint64_t rng = test_seed(77);
    double worst[MAXR + 1] = {0}, worst_ratio[MAXR + 1] = {0};
    const unsigned rounds = test_scaled(10, 3);
    for (uint32_t R = 2; R <= 4; R++)
        for (unsigned i = 0; i < rounds; i++) {
            dch_map *m = replica_map(64, 64, R);
            const unsigned n = 6 + rng_below(&rng, 15);
            map_add_members(m, "n", n, NULL, 0);
            for (unsigned j = 0; j < 3; j++) /* a history, not just joins */
                cr_assert_eq(dch_map_remove_node(m, map_random_member(m, &rng)), DCH_OK);
            map_add_members(m, "late", 3, NULL, 0);
            for (uint32_t x = 0; x < dch_map_id_limit(m); x++) {
                if (dch_map_node_name(m, x) == NULL)
                    continue;
                double ratio;
                const double excess = primary_gain_excess(m, x, &ratio);
                worst[R] = excess > worst[R] || (x == 0 && i == 0) ? excess : worst[R];
                worst_ratio[R] = ratio > worst_ratio[R] ? ratio : worst_ratio[R];
                if (R >= 3)
                    cr_assert_leq(excess, 0, "R %u, %u members, x %u: gains beyond the bound "
                                  "by %.2f", R, n, x, excess);
            }
            dch_map_free(m);
        }
    for (uint32_t R = 2; R <= 4; R++)
        cr_log_info("PRIMARY drain, R = %u: most gained / mean at most %.3f; most gained - "
                    "(1.25 mean + 2) at most %.2f", R, worst_ratio[R], worst[R]);
}

/* ---- Promises 5 and 6, measured at a realistic size --------------------- */

/* Copies moved in m's effective table by `call` (0 join, 1 removal of y,
 * 2 weight of y doubled), on m and on a drain-free clone of its base; the
 * effective table after the call must be the oracle's. */
static void moved_by(dch_map *m, int call, uint32_t y, uint64_t *with, uint64_t *without)
{
    const uint32_t P = dch_map_slot_count(m);
    dch_map *b = map_clone_of(m);
    uint32_t ids[64], modes[64];
    const size_t n = dch_map_drains(m, ids, modes, 64);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(dch_map_undrain(b, ids[i]), DCH_OK);
    uint32_t *e0 = table_of(m, 0), *b0 = table_of(b, 0);
    dch_map *both[2] = {m, b};
    const uint32_t doubled = 2 * dch_map_node_weight(m, y);
    for (int k = 0; k < 2; k++) {
        int rc = call == 0   ? dch_map_add_node(both[k], "joiner", 1, NULL)
                 : call == 1 ? dch_map_remove_node(both[k], y)
                             : dch_map_set_weight(both[k], y, doubled);
        cr_assert_eq(rc, DCH_OK);
    }
    uint32_t *e1 = table_of(m, 0), *b1 = table_of(b, 0);
    *with = copies_moved(e0, e1, P);
    *without = copies_moved(b0, b1, P);
    list l = {0};
    l.n = (uint32_t)n;
    memcpy(l.ids, ids, n * sizeof *ids);
    memcpy(l.modes, modes, n * sizeof *modes);
    const char *bad = drain_check(m, b, &l);
    cr_assert_null(bad, "R %u, call %d, drain mode %u: %s", replicas_of(m), call,
                   n ? modes[0] : 0, bad);
    free(e0);
    free(b0);
    free(e1);
    free(b1);
    dch_map_free(b);
}

Test(map_drain, other_calls_and_removals_measured)
{
    uint64_t rng = test_seed(31);
    const unsigned rounds = test_scaled(8, 2);
    uint64_t p5_moved = 0, p5_cases = 0, p5_broken = 0;
    uint64_t worst[4][3][2] = {{{0}}}, base_of[4][3][2] = {{{0}}};
    uint64_t p4_other[4] = {0}, p4_own[4] = {0};
    for (uint32_t R = 1; R <= 3; R++)
        for (unsigned i = 0; i < rounds; i++) {
            dch_map *m = replica_map(64, 64, R);
            map_add_members(m, "n", 10, NULL, 0);
            const uint32_t a = map_random_member(m, &rng);
            uint32_t x = map_random_member(m, &rng), y = map_random_member(m, &rng);
            while (x == a)
                x = map_random_member(m, &rng);
            while (y == a || y == x)
                y = map_random_member(m, &rng);
            const uint32_t mode = i % 2 ? DCH_DRAIN_PRIMARY : DCH_DRAIN_FULL;
            cr_assert_eq(dch_map_drain(m, a, mode), DCH_OK);
            for (int call = 0; call < 3; call++) {
                dch_map *c = map_clone_of(m);
                uint64_t with, without;
                moved_by(c, call, y, &with, &without);
                const uint64_t extra = with > without ? with - without : 0;
                if (extra >= worst[R][call][i % 2]) {
                    worst[R][call][i % 2] = extra;
                    base_of[R][call][i % 2] = without;
                }
                dch_map_free(c);
            }
            /* Promise 4 measured: a, then x drained FULL; undrain a. */
            {
                dch_map *c = map_clone_of(m);
                cr_assert_eq(dch_map_drain(c, x, DCH_DRAIN_FULL), DCH_OK);
                uint32_t *u0 = table_of(c, 0);
                cr_assert_eq(dch_map_undrain(c, a), DCH_OK);
                uint32_t *u1 = table_of(c, 0);
                const uint32_t P = dch_map_slot_count(c);
                uint64_t own = 0;
                for (uint32_t s = 0; s < P; s++)
                    own += in_row(u1 + (size_t)s * MAXR, a) && !in_row(u0 + (size_t)s * MAXR, a);
                const uint64_t other = copies_moved(u0, u1, P) - own;
                if (other >= p4_other[R]) {
                    p4_other[R] = other;
                    p4_own[R] = own;
                }
                free(u0);
                free(u1);
                dch_map_free(c);
            }
            /* Promise 5 beyond its statement: x drained FULL after a. */
            cr_assert_eq(dch_map_drain(m, x, DCH_DRAIN_FULL), DCH_OK);
            uint32_t *e0 = table_of(m, 0);
            cr_assert_eq(dch_map_remove_node(m, x), DCH_OK);
            uint32_t *e1 = table_of(m, 0);
            const uint64_t moved = copies_moved(e0, e1, dch_map_slot_count(m));
            p5_cases++;
            p5_broken += moved > 0;
            p5_moved = moved > p5_moved ? moved : p5_moved;
            free(e0);
            free(e1);
            dch_map_free(m);
        }
    static const char *const calls[] = {"a join", "a removal", "a doubled weight"};
    for (uint32_t R = 1; R <= 3; R++)
        for (int call = 0; call < 3; call++)
            for (int p = 0; p < 2; p++)
                cr_log_info("promise 6, 4096 slots, 10 members, R %u, one %s drain, %s: "
                            "worst extra copies %llu (the call moved %llu without drains)",
                            R, p ? "PRIMARY" : "FULL", calls[call],
                            (unsigned long long)worst[R][call][p],
                            (unsigned long long)base_of[R][call][p]);
    for (uint32_t R = 1; R <= 3; R++)
        cr_log_info("promise 4, R %u: a then x drained (a FULL or PRIMARY, x FULL), undrain "
                    "a: at most %llu copies moved beside the %llu of a's that came back", R,
                    (unsigned long long)p4_other[R], (unsigned long long)p4_own[R]);
    cr_log_info("promise 5 with a drain before x's: %llu of %llu removals moved copies, "
                "at most %llu", (unsigned long long)p5_broken, (unsigned long long)p5_cases,
                (unsigned long long)p5_moved);
}

/* ---- Map file format version 4 ------------------------------------------ */

/* The drains sit at the end: D entries of (u16 id, u8 mode), then u32 D,
 * then the checksum (map_file.h). Each damage behind a good checksum is
 * DCH_ECORRUPT, and a map file of version 4 without a drain cannot exist. */
Test(map_drain, version_4_files_keep_drains_and_refuse_bad_ones)
{
    dch_map *m = replica_map(4, 4, 2);
    map_add_members(m, "n", 4, NULL, 0);
    cr_assert_eq(dch_map_drain(m, 1, DCH_DRAIN_PRIMARY), DCH_OK);
    cr_assert_eq(dch_map_drain(m, 3, DCH_DRAIN_FULL), DCH_OK);
    size_t len;
    uint8_t *bytes = map_bytes(m, &len);
    cr_assert_eq(le_read(bytes + 8, 4), DCH_MAP_FORMAT_VERSION_DRAINS);
    cr_assert_eq(le_read(bytes + len - 12, 4), 2, "the drain count");
    cr_assert_eq(le_read(bytes + len - 18, 2), 1);
    cr_assert_eq(bytes[len - 16], DCH_DRAIN_PRIMARY);
    cr_assert_eq(le_read(bytes + len - 15, 2), 3);
    cr_assert_eq(bytes[len - 13], DCH_DRAIN_FULL);
    dch_map *back;
    cr_assert_eq(dch_map_load(&back, bytes, len), DCH_OK);
    cr_assert(same_map_bytes(back, m));
    dch_map_free(back);
    uint8_t *p = xmalloc(len);
    /* (offset from the end, new value, bytes) */
    const struct { size_t at; uint32_t v; int n; const char *what; } bad[] = {
        {16, 0, 1, "mode 0"},          {16, 3, 1, "mode 3"},
        {13, 255, 1, "mode 255"},      {18, 7, 2, "a free id"},
        {18, 65535, 2, "id 65535"},    {18, 3, 2, "a member drained twice"},
        {12, 0, 4, "no drain"},        {12, 3, 4, "more drains than written"},
        {12, 1, 4, "fewer drains than written (a table too long)"},
        {12, UINT32_MAX, 4, "a count past the file"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        memcpy(p, bytes, len);
        le_write(p + len - bad[k].at, bad[k].v, bad[k].n);
        fix_checksum(p, len);
        dch_map *out = NULL;
        cr_assert_eq(dch_map_load(&out, p, len), DCH_ECORRUPT, "%s", bad[k].what);
        cr_assert_null(out);
    }
    /* With no drain left the map saves as version 3 again. */
    cr_assert_eq(dch_map_undrain(m, 1), DCH_OK);
    cr_assert_eq(dch_map_undrain(m, 3), DCH_OK);
    uint8_t *plain = map_bytes(m, &len);
    cr_assert_eq(le_read(plain + 8, 4), DCH_MAP_FORMAT_VERSION_REPLICAS);
    free(plain);
    free(p);
    free(bytes);
    dch_map_free(m);
}

/* ---- Diffs and staging across drains ------------------------------------ */

static int count_move(const dch_move *mv, void *ctx)
{
    (void)mv;
    ++*(unsigned *)ctx;
    return 0;
}

/* A drain is a change like any other: the diff lists what it moves, and
 * staging reaches a last step that is the drained map itself. */
Test(map_drain, diffs_and_staging_see_the_effective_table)
{
    dch_map *cur = replica_map(16, 16, 1);
    map_add_members(cur, "n", 6, NULL, 0);
    dch_map *target = map_clone_of(cur);
    cr_assert_eq(dch_map_drain(target, 2, DCH_DRAIN_FULL), DCH_OK);
    unsigned ranges = 0;
    cr_assert_eq(dch_map_diff(cur, target, count_move, &ranges), DCH_OK);
    cr_assert_gt(ranges, 0, "a FULL drain moves member 2's slots");
    uint32_t steps = 0;
    cr_assert_eq(dch_map_stage_steps(cur, target, 8, &steps), DCH_OK);
    cr_assert_gt(steps, 1);
    dch_map *at = map_clone_of(cur);
    for (uint32_t i = 0; i < steps; i++) {
        dch_map *next;
        cr_assert_eq(dch_map_stage_next(&next, at, target, 8), DCH_OK, "step %u", i + 1);
        dch_map_free(at);
        at = next;
    }
    cr_assert_eq(dch_map_in_transition(at, NULL), 0, "the last step is settled");
    cr_assert_eq(dch_map_fingerprint(at), dch_map_fingerprint(target));
    cr_assert_eq(dch_map_node_drained(at, 2), DCH_DRAIN_FULL, "the last step keeps the drain");
    for (uint32_t s = 0; s < dch_map_slot_count(at); s++)
        cr_assert_eq(dch_map_slot_owner(at, s), dch_map_slot_owner(target, s));
    /* And back: undraining is staged the same way. */
    dch_map *back = map_clone_of(target);
    cr_assert_eq(dch_map_undrain(back, 2), DCH_OK);
    ranges = 0;
    cr_assert_eq(dch_map_diff(target, back, count_move, &ranges), DCH_OK);
    cr_assert_gt(ranges, 0);
    for (uint32_t s = 0; s < dch_map_slot_count(back); s++)
        cr_assert_eq(dch_map_slot_owner(back, s), dch_map_slot_owner(cur, s),
                     "undrain gives back exactly the slots");
    cr_assert_eq(dch_map_stage_steps(target, back, 8, &steps), DCH_OK);
    dch_map *from = map_clone_of(target);
    for (uint32_t i = 0; i < steps; i++) {
        dch_map *next;
        cr_assert_eq(dch_map_stage_next(&next, from, back, 8), DCH_OK, "back, step %u", i + 1);
        cr_assert_eq(dch_map_node_drained(next, 2), 0, "a step map has no drain");
        dch_map_free(from);
        from = next;
    }
    cr_assert_eq(dch_map_fingerprint(from), dch_map_fingerprint(back));
    dch_map_free(from);
    dch_map_free(back);
    dch_map_free(at);
    dch_map_free(target);
    dch_map_free(cur);
}
