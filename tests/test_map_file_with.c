/*
 * Tests of dch_map_load_file_with: reading a map file through a caller's
 * allocator.
 *
 * A counting allocator shows that the bytes and the map go through it and
 * that every block comes back; failing its Nth allocation, for every N up to
 * the first load that needs no failure, must give DCH_ENOMEM with *out
 * untouched and nothing left allocated. The map read equals the map saved
 * (fingerprint, epoch, members), and the error paths are those of
 * dch_map_load_file.
 *
 * DCH_TEST_SEED overrides the seed of the random map; failures print it.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include "dch/dch.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct counting {
    dch_allocator a;
    size_t calls, live;
    size_t fail_at; /* fail the call with this number (1-based); 0: never */
} counting;

static void *c_alloc(void *ctx, size_t n)
{
    counting *c = ctx;
    if (++c->calls == c->fail_at)
        return NULL;
    void *p = malloc(n);
    c->live += p != NULL;
    return p;
}

static void *c_realloc(void *ctx, void *p, size_t n)
{
    counting *c = ctx;
    if (++c->calls == c->fail_at)
        return NULL;
    void *q = realloc(p, n);
    c->live += p == NULL && q != NULL;
    return q;
}

static void c_free(void *ctx, void *p)
{
    counting *c = ctx;
    c->live -= p != NULL;
    free(p);
}

static void counting_init(counting *c)
{
    memset(c, 0, sizeof *c);
    c->a.alloc = c_alloc;
    c->a.realloc = c_realloc;
    c->a.free = c_free;
    c->a.ctx = c;
}

static uint64_t seed_of(uint64_t fallback)
{
    const char *s = getenv("DCH_TEST_SEED");
    return s != NULL ? strtoull(s, NULL, 0) : fallback;
}

/* A map with a few members of random weights, one removed (a hole in the ids). */
static dch_map *random_map(uint64_t seed)
{
    dch_map_config cfg;
    dch_map_config_default(&cfg);
    cfg.units = 64;
    cfg.slots_per_unit = 16;
    cfg.hash_key[3] = (uint8_t)seed;
    dch_map *m = NULL;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    uint64_t s = seed;
    for (int i = 0; i < 9; i++) {
        char name[32];
        s = s * 6364136223846793005u + 1442695040888963407u;
        snprintf(name, sizeof name, "member-%d", i);
        cr_assert_eq(dch_map_add_node(m, name, 1 + (uint32_t)(s >> 60), NULL), DCH_OK);
    }
    cr_assert_eq(dch_map_remove_node(m, (uint32_t)(s >> 33) % 9), DCH_OK);
    return m;
}

typedef struct fixture {
    char dir[64];
    char path[96];
    dch_map *saved;
    uint64_t seed;
} fixture;

static void fixture_init(fixture *fx)
{
    snprintf(fx->dir, sizeof fx->dir, "/tmp/dch-load-with-XXXXXX");
    cr_assert_not_null(mkdtemp(fx->dir));
    snprintf(fx->path, sizeof fx->path, "%s/map", fx->dir);
    fx->seed = seed_of(11);
    fx->saved = random_map(fx->seed);
    cr_assert_eq(dch_map_save_file(fx->saved, fx->path), DCH_OK);
}

static void fixture_fini(fixture *fx)
{
    dch_map_free(fx->saved);
    unlink(fx->path);
    rmdir(fx->dir);
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
    counting c;
    counting_init(&c);
    dch_map *m = NULL;
    cr_assert_eq(dch_map_load_file_with(&m, fx.path, &c.a), DCH_OK);
    check_same(fx.saved, m, fx.seed);
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    cr_assert_eq(cfg.allocator, &c.a, "the map keeps the allocator");
    cr_assert_gt(c.calls, 1, "the bytes and the map went through the allocator");
    cr_assert_gt(c.live, 0);
    dch_map_free(m);
    cr_assert_eq(c.live, 0, "every block given back");

    dch_map *plain = NULL;
    cr_assert_eq(dch_map_load_file(&plain, fx.path), DCH_OK);
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
    size_t failures = 0;
    for (size_t n = 1; n < 10000; n++) {
        counting c;
        counting_init(&c);
        c.fail_at = n;
        dch_map *sentinel = (dch_map *)&fx;
        dch_map *m = sentinel;
        const int rc = dch_map_load_file_with(&m, fx.path, &c.a);
        if (rc == DCH_OK) {
            cr_assert_gt(c.calls, 0);
            cr_assert_lt(c.calls, n, "succeeded although allocation %zu failed", n);
            check_same(fx.saved, m, fx.seed);
            dch_map_free(m);
            cr_assert_eq(c.live, 0);
            break;
        }
        failures++;
        cr_assert_eq(rc, DCH_ENOMEM, "allocation %zu failed: %s", n, dch_strerror(rc));
        cr_assert_eq(m, sentinel, "allocation %zu failed: *out changed", n);
        cr_assert_eq(c.live, 0, "allocation %zu failed: %zu blocks leaked", n, c.live);
    }
    cr_assert_gt(failures, 1, "the sweep failed more than the first allocation");
    fixture_fini(&fx);
}

Test(map_file_with, bad_arguments_and_bad_files_are_refused_without_allocating)
{
    fixture fx;
    fixture_init(&fx);
    counting c;
    counting_init(&c);
    dch_allocator partial = c.a;
    partial.free = NULL;
    dch_map *m = NULL;
    cr_assert_eq(dch_map_load_file_with(NULL, fx.path, &c.a), DCH_EINVAL);
    cr_assert_eq(dch_map_load_file_with(&m, NULL, &c.a), DCH_EINVAL);
    cr_assert_eq(dch_map_load_file_with(&m, fx.path, &partial), DCH_EINVAL,
                 "an allocator lacking a function");
    char missing[128];
    snprintf(missing, sizeof missing, "%s/none", fx.dir);
    cr_assert_eq(dch_map_load_file_with(&m, missing, &c.a), DCH_EIO);
    cr_assert_null(m);
    cr_assert_eq(c.calls, 0, "nothing allocated before the file is judged");

    /* A damaged file: its bytes are read through the allocator and given back. */
    FILE *f = fopen(fx.path, "r+b");
    cr_assert_not_null(f);
    cr_assert_eq(fseek(f, 60, SEEK_SET), 0);
    const int byte = fgetc(f);
    cr_assert_neq(byte, EOF);
    cr_assert_eq(fseek(f, 60, SEEK_SET), 0);
    cr_assert_eq(fputc(byte ^ 0xFF, f), byte ^ 0xFF);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(dch_map_load_file_with(&m, fx.path, &c.a), DCH_ECORRUPT);
    cr_assert_null(m);
    cr_assert_gt(c.calls, 0);
    cr_assert_eq(c.live, 0, "the bytes of a damaged file are given back");
    fixture_fini(&fx);
}
