/* SPDX-License-Identifier: MIT */
/*
 * Tests of the tests' own support code (tests/support): a snapshot that
 * missed a change, or a sweep that skipped a failure point, would let every
 * test built on it pass for the wrong reason. Each helper is shown to see
 * what it is there to see.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

Test(support, splitmix_gives_the_published_stream)
{
    /* SplitMix64 from seed 0: its first outputs as published with it. */
    uint64_t s = 0;
    cr_assert_eq(rng_next(&s), UINT64_C(0xe220a8397b1dcdaf));
    cr_assert_eq(rng_next(&s), UINT64_C(0x6e789e6aa1b965f4));
    cr_assert_eq(rng_next(&s), UINT64_C(0x06c45d188009454f));
    for (int i = 0; i < 1000; i++)
        cr_assert_lt(rng_below(&s, 7), 7);
}

Test(support, seed_and_scale_read_the_environment)
{
    cr_assert_eq(setenv("DCH_TEST_SEED", "0x10", 1), 0);
    cr_assert_eq(test_seed(5), 16);
    cr_assert_eq(setenv("DCH_TEST_SEED", "", 1), 0);
    cr_assert_eq(test_seed(5), 5, "an empty DCH_TEST_SEED is no seed");
    cr_assert_eq(unsetenv("DCH_TEST_SEED"), 0);
    cr_assert_eq(test_seed(5), 5);
    cr_assert_eq(setenv("DCH_TEST_SCALE", "0.5", 1), 0);
    cr_assert_eq(test_scaled(100, 1), 50);
    cr_assert_eq(test_scaled(100, 70), 70, "the floor");
    cr_assert_eq(setenv("DCH_TEST_SCALE", "-2", 1), 0);
    cr_assert_eq(test_scale(), 1.0, "a scale that is not positive is 1");
    cr_assert_eq(setenv("DCH_TEST_SCALE", "fast", 1), 0);
    cr_assert_eq(test_scale(), 1.0, "an unreadable scale is 1");
    cr_assert_eq(unsetenv("DCH_TEST_SCALE"), 0);
}

/* A call that makes `count` allocations, each one needed but the one
 * numbered `optional` (from 1; 0: none), whose failure it survives, and
 * frees them all. */
typedef struct fake_call {
    faulty *fa;
    int count, optional;
    bool leak;  /* keep the first block on failure... */
    void *kept; /* ...here, for the test to free */
} fake_call;

static int run_fake(fake_call *c)
{
    const dch_allocator a = faulty_allocator(c->fa);
    void *blocks[16] = {NULL};
    int rc = DCH_OK, n = 0;
    for (int i = 1; i <= c->count; i++) {
        void *p = a.alloc(a.ctx, 8);
        if (p == NULL && i != c->optional) {
            rc = DCH_ENOMEM;
            break;
        }
        if (p != NULL)
            blocks[n++] = p;
    }
    int i = 0;
    if (c->leak && rc != DCH_OK && n > 0)
        c->kept = blocks[i++];
    for (; i < n; i++)
        a.free(a.ctx, blocks[i]);
    return rc;
}

/* The points a sweep visits, as "k" or "k+" (k and every later one). */
static void sweep_points(fake_call *c, unsigned modes, long limit, char *out, size_t cap,
                         long *failed, long *leaked)
{
    out[0] = '\0';
    *leaked = 0;
    fault_sweep sw;
    for (fault_sweep_start(&sw, c->fa, modes, limit); fault_sweep_next(&sw);) {
        const int rc = run_fake(c);
        fault_sweep_done(&sw, rc);
        *leaked += sw.leaked;
        const size_t at = strlen(out);
        snprintf(out + at, cap - at, "%s%ld%s", at ? " " : "", sw.at, sw.after ? "+" : "");
    }
    *failed = sw.failed;
}

Test(support, the_sweep_fails_every_allocation_in_turn_until_the_call_succeeds)
{
    faulty fa = {0, 0, false, 0};
    fake_call c = {&fa, 3, 0, false, NULL};
    char seen[256];
    long failed, leaked;
    sweep_points(&c, SWEEP_ALONE, SWEEP_UNTIL_OK, seen, sizeof seen, &failed, &leaked);
    cr_assert_str_eq(seen, "1 2 3 4");
    cr_assert_eq(failed, 3);
    sweep_points(&c, SWEEP_LATER, SWEEP_UNTIL_OK, seen, sizeof seen, &failed, &leaked);
    cr_assert_str_eq(seen, "1+ 2+ 3+ 4+");
    cr_assert_eq(failed, 3);
    sweep_points(&c, SWEEP_BOTH, SWEEP_UNTIL_OK, seen, sizeof seen, &failed, &leaked);
    cr_assert_str_eq(seen, "1 1+ 2 2+ 3 3+ 4 4+");
    cr_assert_eq(failed, 6);
    cr_assert_eq(leaked, 0);

    /* An optional second allocation: failing it alone succeeds and ends
     * that way, while failing it with the later ones still reaches the
     * third, needed one... */
    c = (fake_call){&fa, 3, 2, false, NULL};
    sweep_points(&c, SWEEP_BOTH, SWEEP_UNTIL_OK, seen, sizeof seen, &failed, &leaked);
    cr_assert_str_eq(seen, "1 1+ 2 2+ 3+ 4+");
    cr_assert_eq(failed, 4);
    /* ...and a limit visits every point up to it, whatever the call says. */
    sweep_points(&c, SWEEP_ALONE, 3, seen, sizeof seen, &failed, &leaked);
    cr_assert_str_eq(seen, "1 2 3");
    cr_assert_eq(failed, 2);
    sweep_points(&c, SWEEP_ALONE, 0, seen, sizeof seen, &failed, &leaked);
    cr_assert_str_eq(seen, "", "limit 0: no point");

    /* A call that leaks on failure is caught. */
    c = (fake_call){&fa, 2, 0, true, NULL};
    sweep_points(&c, SWEEP_ALONE, SWEEP_UNTIL_OK, seen, sizeof seen, &failed, &leaked);
    cr_assert_eq(leaked, 1, "the block kept when allocation 2 fails");
    cr_assert_eq(fa.live, 1);
    faulty_allocator(&fa).free(&fa, c.kept);
    cr_assert_eq(fa.live, 0);
}

Test(support, map_snapshots_see_every_kind_of_change)
{
    dch_map *m = map_shaped(16, 4);
    cr_assert_eq(dch_map_add_node(m, "a", 2, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "b", 1, NULL), DCH_OK);
    map_snap s;
    map_snap_take(&s, m);
    cr_assert_null(map_snap_differs(&s, m, true));
    dch_map *c;
    cr_assert_eq(dch_map_clone(&c, m), DCH_OK);
    cr_assert_null(map_snap_differs(&s, c, false), "a clone is the same map");
    dch_map_free(c);

    cr_assert_eq(dch_map_set_weight(m, 1, 2), DCH_OK);
    cr_assert_str_eq(map_snap_differs(&s, m, false), "member count, id limit or weight sum");
    cr_assert_eq(dch_map_set_weight(m, 1, 1), DCH_OK);
    cr_assert_not_null(map_snap_differs(&s, m, false), "changed and changed back: a new epoch");

    dch_map *other = map_shaped(16, 8);
    cr_assert_str_eq(map_snap_differs(&s, other, false), "config");
    dch_map_free(other);

    /* The same members under other names: only the names differ. */
    other = map_shaped(16, 4);
    cr_assert_eq(dch_map_add_node(other, "x", 2, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(other, "y", 1, NULL), DCH_OK);
    const char *why = map_snap_differs(&s, other, false);
    cr_assert(why != NULL, "other names are another map");
    dch_map_free(other);
    map_snap_free(&s);
    dch_map_free(m);
}

Test(support, ring_snapshots_see_every_kind_of_change)
{
    dch_ring *r;
    cr_assert_eq(dch_ring_new(&r, NULL), DCH_OK);
    uint64_t rng = 1;
    uint32_t ids[3];
    ring_add_members(r, "m", 3, 3, &rng, ids);
    ring_snap s;
    ring_snap_take(&s, r);
    cr_assert_null(ring_snap_differs(&s, r, true));
    cr_assert_eq(dch_ring_set_weight(r, ids[0], dch_ring_node_weight(r, ids[0]) + 1), DCH_OK);
    cr_assert_not_null(ring_snap_differs(&s, r, false));
    ring_snap_free(&s);

    ring_snap_take(&s, r);
    dch_ring *renamed;
    cr_assert_eq(dch_ring_new(&renamed, NULL), DCH_OK);
    rng = 1;
    ring_add_members(renamed, "n", 3, 3, &rng, NULL);
    cr_assert_eq(dch_ring_set_weight(renamed, ids[0], dch_ring_node_weight(r, ids[0])), DCH_OK);
    cr_assert_not_null(ring_snap_differs(&s, renamed, false), "other names");
    ring_snap_free(&s);
    dch_ring_free(renamed);
    dch_ring_free(r);
}

static uint32_t one_to_three(uint64_t *rng, uint32_t r, bool adding)
{
    (void)r;
    (void)adding;
    return 1 + rng_below(rng, 3);
}

Test(support, ranges_of_agree_with_the_walks)
{
    dch_map *m = map_shaped(64, 4);
    uint64_t rng = 9;
    const map_change_rule rule = {60, 80, 8, one_to_three};
    for (int i = 0; i < 12; i++)
        map_random_change(m, &rng, &rule);
    size_t n;
    dch_range *v = map_ranges_of(m, &n);
    range_list walk = {NULL, 0, 0};
    cr_assert_eq(dch_map_foreach_range(m, ranges_push, &walk), DCH_OK);
    cr_assert(n == walk.n && ranges_equal(v, walk.v, n));
    cr_assert(n < 2 || !ranges_equal(v, v + 1, 1), "ranges_equal sees a difference");
    free(v);
    free(walk.v);
    dch_map_free(m);
}

Test(support, map_bytes_are_what_the_map_saves)
{
    dch_map *m = map_shaped(16, 4);
    cr_assert_eq(dch_map_add_node(m, "a", 2, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "b", 1, NULL), DCH_OK);
    size_t len = 0, need = 0;
    uint8_t *bytes = map_bytes(m, &len);
    /* map_file.h's sizing call: no buffer, DCH_OK and the length. */
    cr_assert_eq(dch_map_save(m, NULL, 0, &need), DCH_OK);
    cr_assert_eq(len, need);
    dch_map *back;
    cr_assert_eq(dch_map_load(&back, bytes, len), DCH_OK);
    cr_assert(same_map_bytes(m, back), "the bytes load back to the same map");
    cr_assert_eq(dch_map_set_weight(back, 0, 3), DCH_OK);
    cr_assert(!same_map_bytes(m, back), "same_map_bytes sees a new weight");
    free(bytes);
    dch_map_free(back);
    dch_map_free(m);
}

Test(support, files_read_back_as_written)
{
    scratch sc;
    scratch_make(&sc, "support", "f");
    char big[10000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)('a' + i % 26);
    write_file(sc.path, big, sizeof big);
    size_t len = 0;
    char *back = slurp(sc.path, &len);
    cr_assert(back != NULL && len == sizeof big && memcmp(back, big, len) == 0);
    cr_assert_eq(back[len], '\0');
    free(back);
    remove_dir(sc.dir);
    cr_assert_eq(access(sc.dir, F_OK), -1, "the directory is gone");
    cr_assert_null(slurp(sc.path, NULL), "a missing file reads as NULL");
}
