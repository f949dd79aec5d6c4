/* SPDX-License-Identifier: MIT */
/*
 * Maps of R copies a slot, and failed calls on them (replica_maps.h).
 */
#include "replica_maps.h"

#include <stdio.h>
#include <stdlib.h>

static dch_map *map_on(uint32_t units, uint32_t slots_per_unit, uint32_t replicas,
                       const dch_allocator *al)
{
    dch_map_config cfg = map_config(units, slots_per_unit);
    cfg.replicas = replicas;
    cfg.allocator = al;
    dch_map *m = NULL;
    const int rc = dch_map_new(&m, &cfg);
    if (rc != DCH_OK) {
        fprintf(stderr, "test support: dch_map_new(%u x %u slots, %u copies%s): %d\n", units,
                slots_per_unit, replicas, al != NULL ? ", the failing allocator" : "", rc);
        abort();
    }
    return m;
}

dch_map *replica_map(uint32_t units, uint32_t slots_per_unit, uint32_t replicas)
{
    return map_on(units, slots_per_unit, replicas, NULL);
}

dch_map *faulty_map_new(faulty_map *f, uint32_t units, uint32_t slots_per_unit,
                        uint32_t replicas)
{
    f->fa = (faulty){0, 0, false, 0};
    f->al = faulty_allocator(&f->fa);
    return map_on(units, slots_per_unit, replicas, &f->al);
}

const char *faulty_call_changed(const fault_sweep *sw, int rc, const map_snap *s,
                                const dch_map *m)
{
    static char why[128];
    if (rc != DCH_ENOMEM) {
        snprintf(why, sizeof why, "returned %d, not DCH_ENOMEM", rc);
        return why;
    }
    if (sw->leaked != 0) {
        snprintf(why, sizeof why, "leaked %ld blocks", sw->leaked);
        return why;
    }
    const char *d = s != NULL ? map_snap_differs(s, m, true) : NULL;
    if (d != NULL) {
        snprintf(why, sizeof why, "%s changed", d);
        return why;
    }
    return NULL;
}
