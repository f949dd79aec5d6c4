/* SPDX-License-Identifier: MIT */
/*
 * The library-made maps of the cli tests (cli_maps.h).
 */
#include "cli_maps.h"

#include "support.h"

#include <stdio.h>
#include <stdlib.h>

dch_map *map_with_copies(uint32_t units, uint32_t slots_per_unit, uint32_t replicas)
{
    dch_map_config cfg = map_config(units, slots_per_unit);
    cfg.replicas = replicas;
    dch_map *m = NULL;
    const int rc = dch_map_new(&m, &cfg);
    if (rc != DCH_OK) {
        fprintf(stderr, "test support: dch_map_new(%u x %u, %u copies): %d\n", units,
                slots_per_unit, replicas, rc);
        abort();
    }
    return m;
}

void map_add_cycled_members(dch_map *m, const char *prefix, unsigned count, uint32_t zones)
{
    for (unsigned i = 0; i < count; i++) {
        char name[64], zone[16];
        snprintf(name, sizeof name, "%s%u", prefix, i);
        if (zones > 0)
            snprintf(zone, sizeof zone, "z%u", i % zones);
        const int rc = dch_map_add_node_in_zone(m, name, zones > 0 ? zone : NULL, 1 + i % 3, NULL);
        if (rc != DCH_OK) {
            fprintf(stderr, "test support: add %s: %d\n", name, rc);
            abort();
        }
    }
}
