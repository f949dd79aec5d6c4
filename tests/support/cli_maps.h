/* SPDX-License-Identifier: MIT */
/*
 * The maps the cli tests build with the library, beside the ones they make
 * with the tool: a new map of R copies, and members whose weights and zones
 * cycle as the tests' tool-made maps do. Like support.h, plain C without
 * Criterion: a call that fails prints why on stderr and aborts, so the test
 * fails.
 */
#ifndef DCH_TESTS_SUPPORT_CLI_MAPS_H
#define DCH_TESTS_SUPPORT_CLI_MAPS_H

#include "dch/dch.h"

#include <stdint.h>

/* A new empty map: the default config (map_config) with units x
 * slots_per_unit slots and `replicas` copies of every slot. */
dch_map *map_with_copies(uint32_t units, uint32_t slots_per_unit, uint32_t replicas);

/* Add members named prefix0, prefix1, ... (count of them), member i of
 * weight 1 + i % 3 and, when zones > 0, in zone "z<i % zones>" (else in
 * none). */
void map_add_cycled_members(dch_map *m, const char *prefix, unsigned count, uint32_t zones);

#endif /* DCH_TESTS_SUPPORT_CLI_MAPS_H */
