/* SPDX-License-Identifier: MIT */
/*
 * The map and the ring mirror each other: one NULL policy, one code for a
 * buffer that is too small.
 *
 * NULL (map.h, ring.h): every function accepts a NULL object; getters and
 * lookups answer 0, NULL or DCH_NODE_NONE, functions returning an error code
 * answer DCH_EINVAL, and the rest do nothing. Each function of both objects
 * is called with NULL here, the request path included.
 *
 * A too-small buffer (error.h): DCH_EFULL from dch_map_save, dch_map_ranges
 * and dch_ring_ranges alike, with the size needed reported and the object
 * unchanged; dch_map_save writes nothing, the ranges calls the first cap.
 */
#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"

#include <stdlib.h>
#include <string.h>

/*
 * What a NULL map and a NULL ring answer alike, through every function the
 * two objects share: `obj` is map or ring, `field` a config field that
 * get_config must leave as it was.
 */
#define ASSERT_NULL_ANSWERS(obj, field)                                             \
    do {                                                                            \
        uint32_t id = 7;                                                            \
        size_t n = 3;                                                               \
        dch_##obj##_config cfg;                                                     \
        memset(&cfg, 0xA5, sizeof cfg);                                             \
        cr_assert_eq(dch_##obj##_clone(NULL, NULL), DCH_EINVAL);                    \
        cr_assert_eq(dch_##obj##_add_node(NULL, "a", 1, &id), DCH_EINVAL);          \
        cr_assert_eq(dch_##obj##_remove_node(NULL, 0), DCH_EINVAL);                 \
        cr_assert_eq(dch_##obj##_set_weight(NULL, 0, 1), DCH_EINVAL);               \
        cr_assert_eq(dch_##obj##_find_node(NULL, "a", &id), DCH_EINVAL);            \
        cr_assert_eq(id, 7, "id untouched");                                        \
        cr_assert_null(dch_##obj##_node_name(NULL, 0));                             \
        cr_assert_eq(dch_##obj##_node_weight(NULL, 0), 0);                          \
        cr_assert_eq(dch_##obj##_node_count(NULL), 0);                              \
        cr_assert_eq(dch_##obj##_id_limit(NULL), 0);                                \
        cr_assert_eq(dch_##obj##_total_weight(NULL), 0);                            \
        dch_##obj##_get_config(NULL, &cfg);                                         \
        cr_assert_eq(cfg.field, 0xA5A5A5A5u, "get_config with a NULL " #obj         \
                                             " writes nothing");                    \
        cr_assert_eq(dch_##obj##_hash(NULL, "k", 1), 0);                            \
        cr_assert_eq(dch_##obj##_lookup_hash(NULL, 5), DCH_NODE_NONE);              \
        cr_assert_eq(dch_##obj##_lookup(NULL, "k", 1), DCH_NODE_NONE);              \
        cr_assert_eq(dch_##obj##_ranges(NULL, NULL, 0, &n), DCH_EINVAL);            \
        cr_assert_eq(n, 3, "count untouched");                                      \
        cr_assert_eq(dch_##obj##_memory(NULL), 0);                                  \
        dch_##obj##_free(NULL);                                                     \
        dch_##obj##_config_default(NULL);                                           \
    } while (0)

Test(api_symmetry, a_null_map_gets_the_documented_answers)
{
    ASSERT_NULL_ANSWERS(map, units);
    size_t n = 3;
    cr_assert_eq(dch_map_node_slots(NULL, 0), 0);
    cr_assert_eq(dch_map_slot_count(NULL), 0);
    cr_assert_eq(dch_map_slot_owner(NULL, 0), DCH_NODE_NONE);
    cr_assert_eq(dch_map_slot_of(NULL, UINT64_MAX), 0);
    cr_assert_eq(dch_map_epoch(NULL), 0);
    cr_assert_eq(dch_map_fingerprint(NULL), 0);
    cr_assert_eq(dch_map_save(NULL, NULL, 0, &n), DCH_EINVAL);
}

Test(api_symmetry, a_null_ring_gets_the_documented_answers)
{
    ASSERT_NULL_ANSWERS(ring, points_per_weight);
    cr_assert_eq(dch_ring_point_count(NULL), 0);
}

/* The members of the map (all three) and the ring (the first two) whose
 * short buffers are tested: member i has weight i + 1. */
static const char *const member_names[] = {"a", "b", "c"};

static dch_map *some_map(void)
{
    dch_map *m = map_shaped(16, 8);
    for (uint32_t i = 0; i < 3; i++)
        cr_assert_eq(dch_map_add_node(m, member_names[i], i + 1, NULL), DCH_OK);
    return m;
}

static dch_ring *some_ring(void)
{
    dch_ring_config cfg;
    dch_ring_config_default(&cfg);
    cfg.points_per_weight = 5;
    dch_ring *r = NULL;
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_OK);
    for (uint32_t i = 0; i < 2; i++)
        cr_assert_eq(dch_ring_add_node(r, member_names[i], i + 1, NULL), DCH_OK);
    return r;
}

Test(api_symmetry, a_short_save_buffer_is_efull_and_nothing_is_written)
{
    dch_map *m = some_map();
    map_snap before;
    map_snap_take(&before, m);
    size_t need = 0;
    cr_assert_eq(dch_map_save(m, NULL, 0, &need), DCH_OK, "the sizing call");
    unsigned char *buf = xmalloc(need);
    for (size_t cap = 0; cap < need; cap += 1 + cap / 3) {
        memset(buf, 0x5A, need);
        size_t got = 0;
        cr_assert_eq(dch_map_save(m, buf, cap, &got), DCH_EFULL, "cap %zu", cap);
        cr_assert_eq(got, need, "the size needed is reported");
        for (size_t i = 0; i < need; i++)
            cr_assert_eq(buf[i], 0x5A, "byte %zu written to a short buffer", i);
    }
    const char *why = map_snap_differs(&before, m, true);
    cr_assert_null(why, "a refused save changed the map's %s", why);
    map_snap_free(&before);
    free(buf);
    dch_map_free(m);
}

/* Both ranges calls: DCH_EFULL for every cap below the count, the first cap
 * ranges written as the full list has them, nothing past them. */
static void check_short_ranges(int (*ranges)(const void *obj, dch_range *out, size_t cap,
                                             size_t *count_out),
                               const void *obj)
{
    size_t n = 0;
    cr_assert_eq(ranges(obj, NULL, 0, &n), DCH_EFULL, "sizing with cap 0");
    cr_assert_gt(n, 1);
    dch_range *all = xcalloc(n, sizeof *all), *some = xcalloc(n, sizeof *some);
    size_t got = 0;
    cr_assert_eq(ranges(obj, all, n, &got), DCH_OK);
    cr_assert_eq(got, n);
    for (size_t cap = 1; cap < n; cap++) {
        memset(some, 0x5A, n * sizeof *some);
        got = 0;
        cr_assert_eq(ranges(obj, some, cap, &got), DCH_EFULL, "cap %zu of %zu", cap, n);
        cr_assert_eq(got, n);
        cr_assert(ranges_equal(some, all, cap), "the first %zu ranges", cap);
        const unsigned char *rest = (const unsigned char *)(some + cap);
        for (size_t i = 0; i < (n - cap) * sizeof *some; i++)
            cr_assert_eq(rest[i], 0x5A, "written past cap %zu", cap);
    }
    free(all);
    free(some);
}

static int map_ranges(const void *obj, dch_range *out, size_t cap, size_t *count_out)
{
    return dch_map_ranges(obj, out, cap, count_out);
}

static int ring_ranges(const void *obj, dch_range *out, size_t cap, size_t *count_out)
{
    return dch_ring_ranges(obj, out, cap, count_out);
}

Test(api_symmetry, short_range_arrays_are_efull_for_map_and_ring)
{
    dch_map *m = some_map();
    dch_ring *r = some_ring();
    map_snap map_before;
    ring_snap ring_before;
    map_snap_take(&map_before, m);
    ring_snap_take(&ring_before, r);
    check_short_ranges(map_ranges, m);
    check_short_ranges(ring_ranges, r);
    const char *why = map_snap_differs(&map_before, m, true);
    cr_assert_null(why, "a short ranges call changed the map's %s", why);
    why = ring_snap_differs(&ring_before, r, true);
    cr_assert_null(why, "a short ranges call changed the ring's %s", why);
    map_snap_free(&map_before);
    ring_snap_free(&ring_before);
    size_t n = 0;
    cr_assert_eq(dch_map_ranges(m, NULL, 1, &n), DCH_EINVAL, "NULL out with cap > 0");
    cr_assert_eq(dch_ring_ranges(r, NULL, 1, &n), DCH_EINVAL, "NULL out with cap > 0");
    cr_assert_eq(dch_map_ranges(m, NULL, 0, NULL), DCH_EINVAL);
    cr_assert_eq(dch_ring_ranges(r, NULL, 0, NULL), DCH_EINVAL);
    dch_map_free(m);
    dch_ring_free(r);
}
