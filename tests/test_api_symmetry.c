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

#include <stdlib.h>
#include <string.h>

Test(api_symmetry, a_null_map_gets_the_documented_answers)
{
    uint32_t id = 7;
    dch_map_config cfg;
    memset(&cfg, 0xA5, sizeof cfg);
    cr_assert_eq(dch_map_clone(NULL, NULL), DCH_EINVAL);
    cr_assert_eq(dch_map_add_node(NULL, "a", 1, &id), DCH_EINVAL);
    cr_assert_eq(dch_map_remove_node(NULL, 0), DCH_EINVAL);
    cr_assert_eq(dch_map_set_weight(NULL, 0, 1), DCH_EINVAL);
    cr_assert_eq(dch_map_find_node(NULL, "a", &id), DCH_EINVAL);
    cr_assert_eq(id, 7, "id untouched");
    cr_assert_null(dch_map_node_name(NULL, 0));
    cr_assert_eq(dch_map_node_weight(NULL, 0), 0);
    cr_assert_eq(dch_map_node_slots(NULL, 0), 0);
    cr_assert_eq(dch_map_node_count(NULL), 0);
    cr_assert_eq(dch_map_id_limit(NULL), 0);
    cr_assert_eq(dch_map_total_weight(NULL), 0);
    dch_map_get_config(NULL, &cfg);
    cr_assert_eq(cfg.units, 0xA5A5A5A5u, "get_config with a NULL map writes nothing");
    cr_assert_eq(dch_map_slot_count(NULL), 0);
    cr_assert_eq(dch_map_slot_owner(NULL, 0), DCH_NODE_NONE);
    cr_assert_eq(dch_map_slot_of(NULL, UINT64_MAX), 0);
    cr_assert_eq(dch_map_hash(NULL, "k", 1), 0);
    cr_assert_eq(dch_map_lookup_hash(NULL, 5), DCH_NODE_NONE);
    cr_assert_eq(dch_map_lookup(NULL, "k", 1), DCH_NODE_NONE);
    size_t n = 3;
    cr_assert_eq(dch_map_ranges(NULL, NULL, 0, &n), DCH_EINVAL);
    cr_assert_eq(n, 3, "count untouched");
    cr_assert_eq(dch_map_epoch(NULL), 0);
    cr_assert_eq(dch_map_memory(NULL), 0);
    cr_assert_eq(dch_map_fingerprint(NULL), 0);
    cr_assert_eq(dch_map_save(NULL, NULL, 0, &n), DCH_EINVAL);
    dch_map_free(NULL);
    dch_map_config_default(NULL);
}

Test(api_symmetry, a_null_ring_gets_the_documented_answers)
{
    uint32_t id = 7;
    dch_ring_config cfg;
    memset(&cfg, 0xA5, sizeof cfg);
    cr_assert_eq(dch_ring_clone(NULL, NULL), DCH_EINVAL);
    cr_assert_eq(dch_ring_add_node(NULL, "a", 1, &id), DCH_EINVAL);
    cr_assert_eq(dch_ring_remove_node(NULL, 0), DCH_EINVAL);
    cr_assert_eq(dch_ring_set_weight(NULL, 0, 1), DCH_EINVAL);
    cr_assert_eq(dch_ring_find_node(NULL, "a", &id), DCH_EINVAL);
    cr_assert_eq(id, 7, "id untouched");
    cr_assert_null(dch_ring_node_name(NULL, 0));
    cr_assert_eq(dch_ring_node_weight(NULL, 0), 0);
    cr_assert_eq(dch_ring_node_count(NULL), 0);
    cr_assert_eq(dch_ring_id_limit(NULL), 0);
    cr_assert_eq(dch_ring_total_weight(NULL), 0);
    cr_assert_eq(dch_ring_point_count(NULL), 0);
    dch_ring_get_config(NULL, &cfg);
    cr_assert_eq(cfg.points_per_weight, 0xA5A5A5A5u, "get_config with a NULL ring writes nothing");
    cr_assert_eq(dch_ring_hash(NULL, "k", 1), 0);
    cr_assert_eq(dch_ring_lookup_hash(NULL, 5), DCH_NODE_NONE);
    cr_assert_eq(dch_ring_lookup(NULL, "k", 1), DCH_NODE_NONE);
    size_t n = 3;
    cr_assert_eq(dch_ring_ranges(NULL, NULL, 0, &n), DCH_EINVAL);
    cr_assert_eq(n, 3, "count untouched");
    cr_assert_eq(dch_ring_memory(NULL), 0);
    dch_ring_free(NULL);
    dch_ring_config_default(NULL);
}

static dch_map *some_map(void)
{
    dch_map_config cfg;
    dch_map_config_default(&cfg);
    cfg.units = 16;
    cfg.slots_per_unit = 8;
    dch_map *m = NULL;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "a", 1, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "b", 2, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "c", 3, NULL), DCH_OK);
    return m;
}

static dch_ring *some_ring(void)
{
    dch_ring_config cfg;
    dch_ring_config_default(&cfg);
    cfg.points_per_weight = 5;
    dch_ring *r = NULL;
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_OK);
    cr_assert_eq(dch_ring_add_node(r, "a", 1, NULL), DCH_OK);
    cr_assert_eq(dch_ring_add_node(r, "b", 2, NULL), DCH_OK);
    return r;
}

Test(api_symmetry, a_short_save_buffer_is_efull_and_nothing_is_written)
{
    dch_map *m = some_map();
    const uint64_t fp = dch_map_fingerprint(m), epoch = dch_map_epoch(m);
    size_t need = 0;
    cr_assert_eq(dch_map_save(m, NULL, 0, &need), DCH_OK);
    unsigned char *buf = malloc(need);
    cr_assert(buf != NULL);
    for (size_t cap = 0; cap < need; cap += 1 + cap / 3) {
        memset(buf, 0x5A, need);
        size_t got = 0;
        cr_assert_eq(dch_map_save(m, buf, cap, &got), DCH_EFULL, "cap %zu", cap);
        cr_assert_eq(got, need, "the size needed is reported");
        for (size_t i = 0; i < need; i++)
            cr_assert_eq(buf[i], 0x5A, "byte %zu written to a short buffer", i);
    }
    cr_assert_eq(dch_map_fingerprint(m), fp);
    cr_assert_eq(dch_map_epoch(m), epoch);
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
    dch_range *all = calloc(n, sizeof *all), *some = calloc(n, sizeof *some);
    cr_assert(all != NULL && some != NULL);
    size_t got = 0;
    cr_assert_eq(ranges(obj, all, n, &got), DCH_OK);
    cr_assert_eq(got, n);
    for (size_t cap = 1; cap < n; cap++) {
        memset(some, 0x5A, n * sizeof *some);
        got = 0;
        cr_assert_eq(ranges(obj, some, cap, &got), DCH_EFULL, "cap %zu of %zu", cap, n);
        cr_assert_eq(got, n);
        cr_assert(memcmp(some, all, cap * sizeof *some) == 0, "the first %zu ranges", cap);
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
    const uint64_t fp = dch_map_fingerprint(m);
    const uint32_t points = dch_ring_point_count(r);
    check_short_ranges(map_ranges, m);
    check_short_ranges(ring_ranges, r);
    cr_assert_eq(dch_map_fingerprint(m), fp);
    cr_assert_eq(dch_ring_point_count(r), points);
    size_t n = 0;
    cr_assert_eq(dch_map_ranges(m, NULL, 1, &n), DCH_EINVAL, "NULL out with cap > 0");
    cr_assert_eq(dch_ring_ranges(r, NULL, 1, &n), DCH_EINVAL, "NULL out with cap > 0");
    cr_assert_eq(dch_map_ranges(m, NULL, 0, NULL), DCH_EINVAL);
    cr_assert_eq(dch_ring_ranges(r, NULL, 0, NULL), DCH_EINVAL);
    dch_map_free(m);
    dch_ring_free(r);
}
