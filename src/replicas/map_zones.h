/* SPDX-License-Identifier: MIT */
/*
 * The zone names of a map: failure domains that members share. Internal to
 * libdch.
 *
 * A zone is stored once however many members name it, and freed when the
 * last of them leaves. Members refer to a zone by its index (stable while
 * the zone is in use); the engine compares zones only for equality, so no
 * result depends on which index a zone got. Adding is split like the
 * member table's (members.h): reserve allocates everything without touching
 * the table, commit cannot fail, cancel gives the reservation back.
 */
#ifndef DCH_SRC_MAP_ZONES_H
#define DCH_SRC_MAP_ZONES_H

#include "dch/common.h"

#include <stddef.h>
#include <stdint.h>

typedef struct dch__zones {
    const dch_allocator *alloc;
    char **names; /* cap entries; NULL where the index is free */
    uint32_t *refs; /* members naming each zone */
    uint32_t cap;
} dch__zones;

/** One zone reference in progress, filled by dch__zones_reserve. */
typedef struct dch__zone_add {
    uint32_t index; /* the zone's index once committed */
    char *copy; /* the name's copy, when the zone is new */
    char **names; /* larger arrays, when the table is full */
    uint32_t *refs;
    uint32_t cap;
} dch__zone_add;

/** An empty table; allocates nothing. */
void dch__zones_init(dch__zones *z, const dch_allocator *a);

void dch__zones_free(dch__zones *z);

/** Deep copy into *dst (overwritten, not freed): DCH_OK or DCH_ENOMEM, with
 *  *dst then empty. */
int dch__zones_clone(dch__zones *dst, const dch__zones *src);

/**
 * Prepare one more reference to zone `name` (valid under the member name
 * rules, which the caller checked). DCH_OK, or DCH_ENOMEM with nothing
 * allocated. O(zones).
 */
int dch__zones_reserve(const dch__zones *z, const char *name, dch__zone_add *add);

/** Give back what dch__zones_reserve allocated. */
void dch__zones_cancel(const dch__zones *z, dch__zone_add *add);

/** Take the reference: returns the zone's index. Cannot fail. */
uint32_t dch__zones_commit(dch__zones *z, dch__zone_add *add);

/** Drop one reference to zone `index`; the last one frees the name. */
void dch__zones_release(dch__zones *z, uint32_t index);

/** The name of zone `index`, NULL when the index is free or out of range. */
const char *dch__zones_name(const dch__zones *z, uint32_t index);

/** Bytes the table holds through its allocator. */
size_t dch__zones_memory(const dch__zones *z);

#endif /* DCH_SRC_MAP_ZONES_H */
