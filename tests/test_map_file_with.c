/* SPDX-License-Identifier: MIT */
/*
 * Tests of dch_map_load_file_with: reading a map file through a caller's
 * allocator.
 *
 * A counting allocator (support.h's faulty) shows that the bytes and the
 * map go through it and that every block comes back; failing its Nth
 * allocation, for every N up to the first load that needs no failure, must
 * give DCH_ENOMEM with *out untouched and nothing left allocated. The map
 * read equals the map saved (fingerprint, epoch, members), and the error
 * paths are those of dch_map_load_file.
 *
 * DCH_TEST_SEED overrides the seed of the random map; failures print it.
 */
#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A map with a few members of random weights, one removed (a hole in the ids). */
static dch_map *random_map(uint64_t seed)
{
    dch_map_config cfg = map_config(64, 16);
    cfg.hash_key[3] = (uint8_t)seed;
    dch_map *m = NULL;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    uint64_t s = seed;
    for (int i = 0; i < 9; i++) {
        char name[32];
        snprintf(name, sizeof name, "member-%d", i);
        cr_assert_eq(dch_map_add_node(m, name, 1 + rng_below(&s, 16), NULL), DCH_OK);
    }
    cr_assert_eq(dch_map_remove_node(m, rng_below(&s, 9)), DCH_OK);
    return m;
}

/* A random map saved in a scratch directory of its own, and a counting
 * allocator to load it through. */
typedef struct fixture {
    scratch sc;
    dch_map *saved;
    uint64_t seed;
    faulty f;
    dch_allocator alloc;
} fixture;

static void fixture_init(fixture *fx)
{
    scratch_make(&fx->sc, "load-with", "map");
    fx->seed = test_seed(11);
    fx->saved = random_map(fx->seed);
    cr_assert_eq(dch_map_save_file(fx->saved, fx->sc.path), DCH_OK);
    fx->f = (faulty){0, 0, false, 0};
    fx->alloc = faulty_allocator(&fx->f);
}

static void fixture_fini(fixture *fx)
{
    dch_map_free(fx->saved);
    remove_dir(fx->sc.dir);
}

static void check_same(const dch_map *a, const dch_map *b, uint64_t seed)
{
    cr_assert_eq(dch_map_fingerprint(a), dch_map_fingerprint(b), "seed %llu",
                 (unsigned long long)seed);
    cr_assert_eq(dch_map_epoch(a), dch_map_epoch(b), "seed %llu", (unsigned long long)seed);
    cr_assert_eq(dch_map_id_limit(a), dch_map_id_limit(b));
    for (uint32_t id = 0; id < dch_map_id_limit(a); id++) {
        const char *na = dch_map_node_name(a, id), *nb = dch_map_node_name(b, id);
        cr_assert((na == NULL) == (nb == NULL) && (na == NULL || strcmp(na, nb) == 0),
                  "seed %llu: id %u", (unsigned long long)seed, id);
    }
}

Test(map_file_with, loads_through_the_allocator_and_gives_every_block_back)
{
    fixture fx;
    fixture_init(&fx);
    dch_map *m = NULL;
    cr_assert_eq(dch_map_load_file_with(&m, fx.sc.path, &fx.alloc), DCH_OK);
    check_same(fx.saved, m, fx.seed);
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    cr_assert_eq(cfg.allocator, &fx.alloc, "the map keeps the allocator");
    cr_assert_gt(fx.f.calls, 1, "the bytes and the map went through the allocator");
    cr_assert_gt(fx.f.live, 0);
    dch_map_free(m);
    cr_assert_eq(fx.f.live, 0, "every block given back");

    dch_map *plain = NULL;
    cr_assert_eq(dch_map_load_file(&plain, fx.sc.path), DCH_OK);
    check_same(fx.saved, plain, fx.seed);
    dch_map_get_config(plain, &cfg);
    cr_assert_null(cfg.allocator, "dch_map_load_file uses libc");
    dch_map_free(plain);
    fixture_fini(&fx);
}

Test(map_file_with, every_failed_allocation_is_enomem_and_leaks_nothing)
{
    fixture fx;
    fixture_init(&fx);
    fault_sweep sw;
    for (fault_sweep_start(&sw, &fx.f, SWEEP_ALONE, SWEEP_UNTIL_OK); fault_sweep_next(&sw);) {
        cr_assert_lt(sw.at, 10000, "seed %llu: no load succeeded", (unsigned long long)fx.seed);
        dch_map *sentinel = (dch_map *)&fx;
        dch_map *m = sentinel;
        const int rc = dch_map_load_file_with(&m, fx.sc.path, &fx.alloc);
        fault_sweep_done(&sw, rc);
        if (rc == DCH_OK) {
            cr_assert_gt(fx.f.calls, 0);
            cr_assert_lt(fx.f.calls, sw.at, "succeeded although allocation %ld failed", sw.at);
            check_same(fx.saved, m, fx.seed);
            dch_map_free(m);
            cr_assert_eq(fx.f.live, 0);
            continue;
        }
        cr_assert_eq(rc, DCH_ENOMEM, "allocation %ld failed: %s", sw.at, dch_strerror(rc));
        cr_assert_eq(m, sentinel, "allocation %ld failed: *out changed", sw.at);
        cr_assert_eq(fx.f.live, 0, "allocation %ld failed: %ld blocks leaked", sw.at, fx.f.live);
    }
    cr_assert_gt(sw.failed, 1, "the sweep failed more than the first allocation");
    fixture_fini(&fx);
}

Test(map_file_with, bad_arguments_and_bad_files_are_refused_without_allocating)
{
    fixture fx;
    fixture_init(&fx);
    dch_allocator partial = fx.alloc;
    partial.free = NULL;
    dch_map *m = NULL;
    cr_assert_eq(dch_map_load_file_with(NULL, fx.sc.path, &fx.alloc), DCH_EINVAL);
    cr_assert_eq(dch_map_load_file_with(&m, NULL, &fx.alloc), DCH_EINVAL);
    cr_assert_eq(dch_map_load_file_with(&m, fx.sc.path, &partial), DCH_EINVAL,
                 "an allocator lacking a function");
    char missing[128];
    snprintf(missing, sizeof missing, "%s/none", fx.sc.dir);
    cr_assert_eq(dch_map_load_file_with(&m, missing, &fx.alloc), DCH_EIO);
    cr_assert_null(m);
    cr_assert_eq(fx.f.calls, 0, "nothing allocated before the file is judged");

    /* A damaged file: its bytes are read through the allocator and given back. */
    size_t len;
    char *bytes = slurp(fx.sc.path, &len);
    cr_assert_not_null(bytes);
    cr_assert_gt(len, 60);
    bytes[60] = (char)~bytes[60];
    write_file(fx.sc.path, bytes, len);
    free(bytes);
    cr_assert_eq(dch_map_load_file_with(&m, fx.sc.path, &fx.alloc), DCH_ECORRUPT);
    cr_assert_null(m);
    cr_assert_gt(fx.f.calls, 0);
    cr_assert_eq(fx.f.live, 0, "the bytes of a damaged file are given back");
    fixture_fini(&fx);
}
