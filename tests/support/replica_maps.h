/* SPDX-License-Identifier: MIT */
/*
 * Maps of R copies a slot to start a test from, on libc's allocator or on
 * the failing one (support.h's `faulty`), and the check every failed call of
 * an allocation sweep on the latter must pass: shared by the tests of the
 * map's drains, replicas and balancing.
 *
 * Plain C without Criterion, like support.h: a map that cannot be made
 * aborts; the check returns what is wrong for the test to assert.
 */
#ifndef DCH_TESTS_SUPPORT_REPLICA_MAPS_H
#define DCH_TESTS_SUPPORT_REPLICA_MAPS_H

#include "dch/dch.h"
#include "support.h"

/* A new empty map of units x slots_per_unit slots and `replicas` copies,
 * map_config's defaults otherwise. */
dch_map *replica_map(uint32_t units, uint32_t slots_per_unit, uint32_t replicas);

/* The failing allocator and the count it keeps. The map holds a pointer to
 * `al`, so the struct stays where it is while its map lives. */
typedef struct faulty_map {
    faulty fa;
    dch_allocator al;
} faulty_map;

/* replica_map allocating through f, whose counts start at zero. */
dch_map *faulty_map_new(faulty_map *f, uint32_t units, uint32_t slots_per_unit,
                        uint32_t replicas);

/*
 * After a call under the sweep sw failed (returned rc, not DCH_OK): NULL
 * when rc is DCH_ENOMEM, the call leaked nothing and, when s is not NULL,
 * m matches the snapshot s taken before the call, memory included; else
 * what is wrong (a static buffer, valid until the next call).
 */
const char *faulty_call_changed(const fault_sweep *sw, int rc, const map_snap *s,
                                const dch_map *m);

#endif /* DCH_TESTS_SUPPORT_REPLICA_MAPS_H */
