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

Test(config, map_init_macro_init_call_and_default_agree)
{
    /* Filled with a pattern first, so a field an initializer forgets shows. */
    dch_map_config a, b, c = DCH_MAP_CONFIG_INIT;
    memset(&a, 0xA5, sizeof a);
    memset(&b, 0x5A, sizeof b);
    cr_assert_eq(dch_map_config_init(&a, DCH_MAP_CONFIG_VERSION), DCH_OK);
    dch_map_config_default(&b);
    const dch_map_config *all[] = {&a, &b, &c};
    for (int i = 0; i < 3; i++) {
        const dch_map_config *x = all[i];
        cr_assert_eq(x->version, DCH_MAP_CONFIG_VERSION, "config %d", i);
        cr_assert_eq(x->units, 1024u, "config %d", i);
        cr_assert_eq(x->slots_per_unit, 64u, "config %d", i);
        cr_assert_eq(x->replicas, 1u, "config %d", i);
        cr_assert_null(x->allocator, "config %d", i);
        for (int k = 0; k < 16; k++)
            cr_assert_eq(x->hash_key[k], 0, "config %d key byte %d", i, k);
    }
}

Test(config, map_init_refuses_unknown_versions_and_leaves_cfg)
{
    cr_assert_eq(dch_map_config_init(NULL, DCH_MAP_CONFIG_VERSION), DCH_EINVAL);
    for (size_t i = 0; i < NUNKNOWN; i++) {
        dch_map_config cfg, before;
        memset(&cfg, 0xA5, sizeof cfg);
        before = cfg;
        cr_assert_eq(dch_map_config_init(&cfg, UNKNOWN[i]), DCH_EINVAL, "version %u", UNKNOWN[i]);
        cr_assert_eq(memcmp(&cfg, &before, sizeof cfg), 0, "version %u wrote cfg", UNKNOWN[i]);
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

Test(config, ring_init_macro_init_call_and_default_agree)
{
    dch_ring_config a, b, c = DCH_RING_CONFIG_INIT;
    memset(&a, 0xA5, sizeof a);
    memset(&b, 0x5A, sizeof b);
    cr_assert_eq(dch_ring_config_init(&a, DCH_RING_CONFIG_VERSION), DCH_OK);
    dch_ring_config_default(&b);
    const dch_ring_config *all[] = {&a, &b, &c};
    for (int i = 0; i < 3; i++) {
        const dch_ring_config *x = all[i];
        cr_assert_eq(x->version, DCH_RING_CONFIG_VERSION, "config %d", i);
        cr_assert_eq(x->points_per_weight, 160u, "config %d", i);
        cr_assert_eq(x->placement, DCH_RING_PLACE_SIPHASH, "config %d", i);
        cr_assert_null(x->allocator, "config %d", i);
        for (int k = 0; k < 16; k++)
            cr_assert_eq(x->hash_key[k], 0, "config %d key byte %d", i, k);
    }
}

Test(config, ring_init_and_new_refuse_unknown_versions)
{
    cr_assert_eq(dch_ring_config_init(NULL, DCH_RING_CONFIG_VERSION), DCH_EINVAL);
    for (size_t i = 0; i < NUNKNOWN; i++) {
        dch_ring_config cfg, before;
        memset(&cfg, 0xA5, sizeof cfg);
        before = cfg;
        cr_assert_eq(dch_ring_config_init(&cfg, UNKNOWN[i]), DCH_EINVAL, "version %u", UNKNOWN[i]);
        cr_assert_eq(memcmp(&cfg, &before, sizeof cfg), 0, "version %u wrote cfg", UNKNOWN[i]);
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
