/* SPDX-License-Identifier: MIT */
/*
 * Versioned configs (dch_map_config, dch_ring_config): `version` comes
 * first; DCH_*_CONFIG_INIT, dch_*_config_init and dch_*_config_default give
 * the same defaults; an unknown version (0 included) is refused by _init and
 * _new and changes nothing. Also the numeric version of the library.
 */
#include <criterion/criterion.h>

#include <stddef.h>
#include <string.h>

#include "dch/dch.h"

/* The versions a caller could pass that this library does not know. */
static const uint32_t UNKNOWN[] = {0, 2, 3, 255, UINT32_MAX};
#define NUNKNOWN (sizeof UNKNOWN / sizeof UNKNOWN[0])

Test(config, version_is_the_first_field)
{
    cr_assert_eq(offsetof(dch_map_config, version), 0);
    cr_assert_eq(offsetof(dch_ring_config, version), 0);
    cr_assert_eq(DCH_MAP_CONFIG_VERSION, 1u);
    cr_assert_eq(DCH_RING_CONFIG_VERSION, 1u);
}

/* ---- Both configs: the three ways to the defaults, and _init's refusal -- */

/* Room for either config. */
typedef union any_config {
    dch_map_config map;
    dch_ring_config ring;
} any_config;

/* What both configs default to: an all-zero hash key and libc's allocator. */
static void assert_no_key_no_allocator(const uint8_t key[16], const dch_allocator *a, int i)
{
    cr_assert_null(a, "config %d", i);
    for (int k = 0; k < 16; k++)
        cr_assert_eq(key[k], 0, "config %d key byte %d", i, k);
}

static int map_init(any_config *c, uint32_t version) { return dch_map_config_init(&c->map, version); }
static void map_default(any_config *c) { dch_map_config_default(&c->map); }
static void map_macro(any_config *c) { c->map = (dch_map_config)DCH_MAP_CONFIG_INIT; }
static void map_defaults(const any_config *c, int i)
{
    cr_assert_eq(c->map.units, 1024u, "config %d", i);
    cr_assert_eq(c->map.slots_per_unit, 64u, "config %d", i);
    cr_assert_eq(c->map.replicas, 1u, "config %d", i);
    assert_no_key_no_allocator(c->map.hash_key, c->map.allocator, i);
}

static int ring_init(any_config *c, uint32_t version)
{
    return dch_ring_config_init(&c->ring, version);
}
static void ring_default(any_config *c) { dch_ring_config_default(&c->ring); }
static void ring_macro(any_config *c) { c->ring = (dch_ring_config)DCH_RING_CONFIG_INIT; }
static void ring_defaults(const any_config *c, int i)
{
    cr_assert_eq(c->ring.points_per_weight, 160u, "config %d", i);
    cr_assert_eq(c->ring.placement, DCH_RING_PLACE_SIPHASH, "config %d", i);
    assert_no_key_no_allocator(c->ring.hash_key, c->ring.allocator, i);
}

/* One versioned config: its size, version, the three ways to its
 * defaults, and what the defaults are beyond the version. */
typedef struct config_kind {
    const char *name;
    size_t size;
    uint32_t version;
    int (*init)(any_config *c, uint32_t version);
    void (*set_default)(any_config *c);
    void (*macro)(any_config *c);
    void (*assert_defaults)(const any_config *c, int i);
} config_kind;

static const config_kind KINDS[] = {
    {"map", sizeof(dch_map_config), DCH_MAP_CONFIG_VERSION, map_init, map_default, map_macro,
     map_defaults},
    {"ring", sizeof(dch_ring_config), DCH_RING_CONFIG_VERSION, ring_init, ring_default,
     ring_macro, ring_defaults},
};

Test(config, init_macro_init_call_and_default_agree)
{
    for (size_t k = 0; k < sizeof KINDS / sizeof KINDS[0]; k++) {
        const config_kind *kd = &KINDS[k];
        /* Filled with a pattern first, so a field an initializer forgets
         * shows. */
        any_config all[3];
        memset(&all[0], 0xA5, sizeof all[0]);
        memset(&all[1], 0x5A, sizeof all[1]);
        cr_assert_eq(kd->init(&all[0], kd->version), DCH_OK, "%s", kd->name);
        kd->set_default(&all[1]);
        kd->macro(&all[2]);
        for (int i = 0; i < 3; i++) {
            /* Either config starts with its uint32_t version, a common
             * initial sequence of the union, so .map.version reads it. */
            cr_assert_eq(all[i].map.version, kd->version, "%s config %d", kd->name, i);
            kd->assert_defaults(&all[i], i);
        }
    }
}

Test(config, init_refuses_unknown_versions_and_leaves_cfg)
{
    cr_assert_eq(dch_map_config_init(NULL, DCH_MAP_CONFIG_VERSION), DCH_EINVAL);
    cr_assert_eq(dch_ring_config_init(NULL, DCH_RING_CONFIG_VERSION), DCH_EINVAL);
    for (size_t k = 0; k < sizeof KINDS / sizeof KINDS[0]; k++) {
        for (size_t i = 0; i < NUNKNOWN; i++) {
            any_config cfg, before;
            memset(&cfg, 0xA5, sizeof cfg);
            before = cfg;
            cr_assert_eq(KINDS[k].init(&cfg, UNKNOWN[i]), DCH_EINVAL, "%s version %u",
                         KINDS[k].name, UNKNOWN[i]);
            cr_assert_eq(memcmp(&cfg, &before, KINDS[k].size), 0, "%s version %u wrote cfg",
                         KINDS[k].name, UNKNOWN[i]);
        }
    }
}

Test(config, map_new_refuses_unknown_versions)
{
    for (size_t i = 0; i < NUNKNOWN; i++) {
        dch_map_config cfg = DCH_MAP_CONFIG_INIT;
        cfg.version = UNKNOWN[i];
        dch_map *m = (dch_map *)&cfg; /* any non-NULL value: must stay */
        cr_assert_eq(dch_map_new(&m, &cfg), DCH_EINVAL, "version %u", UNKNOWN[i]);
        cr_assert_eq((void *)m, (void *)&cfg, "version %u: *out was written", UNKNOWN[i]);
    }
    /* A zeroed config (as a caller that predates the field would pass). */
    dch_map_config zero;
    memset(&zero, 0, sizeof zero);
    zero.units = 16;
    zero.slots_per_unit = 4;
    dch_map *m = NULL;
    cr_assert_eq(dch_map_new(&m, &zero), DCH_EINVAL);
    cr_assert_null(m);
}

Test(config, map_get_config_reports_the_version)
{
    dch_map_config cfg = DCH_MAP_CONFIG_INIT, got;
    cfg.units = 16;
    cfg.slots_per_unit = 8;
    cfg.replicas = 2;
    dch_map *m = NULL;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    memset(&got, 0, sizeof got);
    dch_map_get_config(m, &got);
    cr_assert_eq(got.version, DCH_MAP_CONFIG_VERSION);
    cr_assert_eq(got.units, 16u);
    cr_assert_eq(got.slots_per_unit, 8u);
    cr_assert_eq(got.replicas, 2u);
    dch_map_free(m);
}

Test(config, ring_new_refuses_unknown_versions)
{
    for (size_t i = 0; i < NUNKNOWN; i++) {
        dch_ring_config ok = DCH_RING_CONFIG_INIT;
        ok.version = UNKNOWN[i];
        dch_ring *r = NULL;
        cr_assert_eq(dch_ring_new(&r, &ok), DCH_EINVAL, "version %u", UNKNOWN[i]);
        cr_assert_null(r);
    }
    dch_ring_config cfg = DCH_RING_CONFIG_INIT, got;
    dch_ring *r = NULL;
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_OK);
    memset(&got, 0, sizeof got);
    dch_ring_get_config(r, &got);
    cr_assert_eq(got.version, DCH_RING_CONFIG_VERSION);
    dch_ring_free(r);
}
